package km_test

import (
	"testing"

	"github.com/kmkit/kmkit/km"
	"github.com/kmkit/kmkit/query"
)

// rowKeyFilter binds "R op value" and names its field the row key, as the OData service
// does with its generated key property.
func rowKeyFilter(t *testing.T, m *km.KnowledgeModel, record, src string) query.Expr {
	t.Helper()
	sch := query.MapSchema{"R": query.TypeInteger}
	for _, fl := range m.Record(record).Fields {
		sch[fl.ID] = fl.Type
	}
	for _, rec := range m.Records {
		for _, fl := range rec.Fields {
			sch[rec.ID+"."+fl.ID] = fl.Type
		}
	}
	e, err := query.ParseAndBind(src, sch)
	if err != nil {
		t.Fatal(err)
	}
	e, err = query.MapFields(e, func(r query.FieldRef) (query.FieldRef, error) {
		if r.Name == "R" {
			r.Name = km.RowField
		}
		return r, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return e
}

func TestPlanRowKey(t *testing.T) {
	m := demoKM(t)
	r := &km.PlanRequest{Record: "ORDERS", RowKey: true,
		Fields: []string{km.RowField, "STATUS"}, PageSize: 10,
		Sort: []query.SortTerm{{Field: km.RowField, Desc: true}},
	}
	r.Filters = []query.Expr{rowKeyFilter(t, m, "ORDERS", "R gt 3 or CUSTOMERS.COUNTRY eq 'DE'")}
	p, err := km.NewPlan(m, r)
	if err != nil {
		t.Fatal(err)
	}
	want := km.ColumnRef{Record: "ORDERS", Field: km.RowField, Type: query.TypeInteger}
	if p.Fields[0] != want || p.Columns[0].Type != query.TypeInteger || p.Columns[0].Field != nil || p.Columns[0].Name != km.RowField {
		t.Errorf("row key column: %+v %+v", p.Fields[0], p.Columns[0])
	}
	if len(p.Sort) != 1 || p.Sort[0].Column != 0 || !p.Sort[0].Desc {
		t.Errorf("sort %+v", p.Sort)
	}
	cj := p.Filter[0]
	if got := query.Format(cj.Expr); got != "ORDERS.#row gt 3 or CUSTOMERS.COUNTRY eq 'DE'" || cj.Home != "ORDERS" || steps(cj.Reads) != "ORDERS.CUSTOMER_ID>CUSTOMERS.CUSTOMER_ID" {
		t.Errorf("conjunct %s home %s reads %s", got, cj.Home, steps(cj.Reads))
	}
	if km.RowKeyRecord("ORDERS.#row") != "ORDERS" || km.RowKeyRecord("ORDERS.ROW") != "" || km.RowKeyRecord("#row") != "" {
		t.Error("RowKeyRecord")
	}
	if typ, ok := m.RowKeySchema("ORDERS").FieldType(km.RowField); !ok || typ != query.TypeInteger {
		t.Errorf("RowKeySchema: %v %v", typ, ok)
	}
	if _, ok := m.FilterSchema("ORDERS").FieldType(km.RowField); ok {
		t.Error("FilterSchema resolves the row key")
	}

	// Without RowKey, and at KM level, the row key is no field.
	for _, r := range []*km.PlanRequest{
		{Record: "ORDERS", Fields: []string{km.RowField}, PageSize: 10},
		{RowKey: true, Fields: []string{"ORDERS." + km.RowField}, PageSize: 10},
	} {
		_, err := km.NewPlan(m, r)
		if st, code, _ := problemOf(t, err); st != 400 || code != query.CodeFieldNotFound {
			t.Errorf("%+v: %d %s", r, st, code)
		}
	}
	r = &km.PlanRequest{Record: "ORDERS", Fields: []string{"STATUS"}, PageSize: 10}
	r.Filters = []query.Expr{rowKeyFilter(t, m, "ORDERS", "R gt 3")}
	if _, err := km.NewPlan(m, r); err == nil {
		t.Error("a filter on the row key compiled without RowKey")
	}
}
