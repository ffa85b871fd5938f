package km

import (
	"fmt"

	"github.com/kmkit/kmkit/query"
)

// AdHocKPI compiles a KPI that m does not define, for one request: expr is an expression
// of the KPI language over m's fields ("sum(ORDERS.NET_VALUE)", "countdistinct(ORDERS.CUST)",
// "count()"), record the record a bare count() counts ("" when the expression names
// one record). The KPI has no parameters; its Type is the metric's, as for a loaded KPI.
// It is checked as a definition is (fields exist and can be aggregated, the grains can be
// joined); the error says why not. A Request (or PlanRequest) names it in KPIs and carries
// it in AdHocKPIs: the OData $apply service builds "NET with sum as TOTAL" so, and the plan
// answers what the same KPI defined in the KM would. MetricKPI does the same for an
// expression already parsed.
func (m *KnowledgeModel) AdHocKPI(id, expr, record string) (*KPI, error) {
	k := &KPI{ID: id, Name: id, Expr: expr, Record: record, Direction: "None"}
	if err := m.compileKPI(k, nil); err != nil {
		return nil, fmt.Errorf("%s: %w", expr, err)
	}
	return k, nil
}

// MetricKPI is AdHocKPI for an expression already parsed and bound against m's KM-level
// field names (query.ParseAndBindKPI over m's fields, or a tree built so, as a host that
// composes KPIs programmatically has it). The KPI has no Expr text and no parameters.
func (m *KnowledgeModel) MetricKPI(id string, metric query.Metric, record string) (*KPI, error) {
	if metric == nil {
		return nil, fmt.Errorf("KPI %s: no expression", id)
	}
	k := &KPI{ID: id, Name: id, Record: record, Direction: "None"}
	if err := m.checkKPIMetric(k, metric); err != nil {
		return nil, err
	}
	if err := m.setMetric(k, metric); err != nil {
		return nil, err
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
