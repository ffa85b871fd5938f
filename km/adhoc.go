package km

import "fmt"

// AdHocKPI compiles a KPI that m does not define, for one request: expr is an expression
// of the KPI language over m's fields ("sum(ORDERS.NET_VALUE)", "countdistinct(ORDERS.CUST)",
// "count()"), record the record a bare count() counts ("" when the expression names
// one record). The KPI has no parameters; its Type is the metric's, as for a loaded KPI.
// It is checked as a definition is (fields exist and can be aggregated, the grains can be
// joined); the error says why not. A Request (or PlanRequest) names it in KPIs and carries
// it in AdHocKPIs: the OData $apply service builds "NET with sum as TOTAL" so, and the plan
// answers what the same KPI defined in the KM would.
func (m *KnowledgeModel) AdHocKPI(id, expr, record string) (*KPI, error) {
	k := &KPI{ID: id, Name: id, Expr: expr, Record: record, Direction: "None"}
	if err := m.compileKPI(k, nil); err != nil {
		return nil, fmt.Errorf("%s: %w", expr, err)
	}
	return k, nil
}

// adHocKPI returns the KPI of ks with the given id, or nil.
func adHocKPI(ks []*KPI, id string) *KPI {
	for _, k := range ks {
		if k.ID == id {
			return k
		}
	}
	return nil
}
