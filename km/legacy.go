package km

import (
	"fmt"
	"strings"

	"github.com/kmkit/kmkit/query"
)

// Legacy returns the plan in the form stores took before plans: a record-level or joined
// query.Request with the old meaning (KPIs over the joined table, filters of the queried
// record only). It fails for a plan that form cannot state: a record-level filter naming
// another record.
//
// Legacy is transitional, for a store that does not translate plans yet (sqlstore, until
// it does): the legacy form does not have the plan's semantics. A store executes the Plan
// itself.
func (p *Plan) Legacy() (*Query, error) {
	q := &Query{Record: p.Record}
	for _, c := range p.Columns {
		if c.KPI == nil {
			q.Fields = append(q.Fields, c.Name)
		}
	}
	for _, k := range p.KPIs {
		q.KPIs = append(q.KPIs, query.KPI{ID: k.ID, Metric: k.source})
	}
	var conj []query.Expr
	for _, cj := range p.Filter {
		e := cj.Expr
		if p.Record != "" {
			var err error
			prefix := p.Record + "."
			e, err = query.MapFields(e, func(r query.FieldRef) (query.FieldRef, error) {
				name, ok := strings.CutPrefix(r.Name, prefix)
				if !ok {
					return r, fmt.Errorf("km: the legacy form of a plan of record %s cannot filter on %s", p.Record, r.Name)
				}
				r.Name = name
				return r, nil
			})
			if err != nil {
				return nil, err
			}
		}
		conj = append(conj, e)
	}
	q.Filter = andAll(conj)
	name := func(r ColumnRef) string {
		if p.Record != "" {
			return r.Field
		}
		return r.Name()
	}
	if p.Search != nil {
		q.Search = &query.Search{Term: p.Search.Term, Precision: p.Search.Precision}
		for _, f := range p.Search.Fields {
			q.Search.Fields = append(q.Search.Fields, name(f))
		}
	}
	for _, k := range p.Sort {
		q.Sort = append(q.Sort, query.SortKey{Field: p.Columns[k.Column].Name, Desc: k.Desc})
	}
	q.Page, q.PageSize, q.Distinct, q.Count = p.Page, p.PageSize, p.Distinct, p.Count
	if p.Record == "" {
		recs, err := referencedRecords(p.KM, q)
		if err != nil {
			return nil, err
		}
		if q.Join, err = p.KM.Plan(recs); err != nil {
			return nil, err
		}
	}
	return q, nil
}
