package km_test

import (
	"os"
	"strings"
	"testing"

	"github.com/kmkit/kmkit/km"
	"github.com/kmkit/kmkit/problem"
	"github.com/kmkit/kmkit/query"
)

// demoKM loads the demo's o2c KM (records CUSTOMERS, MATERIALS, ORDERS, ORDER_ITEMS,
// ACTIVITIES; ORDERS -> CUSTOMERS, ORDER_ITEMS -> ORDERS, ORDER_ITEMS -> MATERIALS,
// ACTIVITIES -> ORDERS).
func demoKM(t testing.TB) *km.KnowledgeModel {
	t.Helper()
	ms, err := km.Load(os.DirFS("../internal/demodata"))
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range ms {
		if m.ID == "o2c" {
			return m
		}
	}
	t.Fatal("no o2c KM")
	return nil
}

// planOf compiles a request; filters are filterExpr texts bound as the handler binds them.
func planOf(t *testing.T, m *km.KnowledgeModel, record string, fields, kpis []string, filters ...string) (*km.Plan, error) {
	t.Helper()
	r := &km.PlanRequest{Record: record, Fields: fields, KPIs: kpis, PageSize: 10}
	for _, f := range filters {
		if pf := m.Filter(f); pf != nil {
			r.Filters = append(r.Filters, pf.Bound())
			continue
		}
		e, err := query.ParseAndBind(f, m.FilterSchema(record))
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		r.Filters = append(r.Filters, e)
	}
	return km.NewPlan(m, r)
}

func mustPlan(t *testing.T, m *km.KnowledgeModel, record string, fields, kpis []string, filters ...string) *km.Plan {
	t.Helper()
	p, err := planOf(t, m, record, fields, kpis, filters...)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func steps(s []km.Step) string {
	out := make([]string, len(s))
	for i, st := range s {
		out[i] = st.String()
	}
	return strings.Join(out, " ")
}

func TestPlanResolvesColumnsAndTypes(t *testing.T) {
	m := demoKM(t)
	p := mustPlan(t, m, "", []string{"CUSTOMERS.COUNTRY", "ORDERS.ORDER_DATE"}, []string{"TOTAL_NET", "ORDER_COUNT", "NET_PER_CUSTOMER"})
	want := []struct {
		name string
		typ  query.Type
	}{{"CUSTOMERS.COUNTRY", query.TypeString}, {"ORDERS.ORDER_DATE", query.TypeDate}, {"TOTAL_NET", query.TypeFloat}, {"ORDER_COUNT", query.TypeInteger}, {"NET_PER_CUSTOMER", query.TypeFloat}}
	if len(p.Columns) != len(want) {
		t.Fatalf("columns %+v", p.Columns)
	}
	for i, w := range want {
		if p.Columns[i].Name != w.name || p.Columns[i].Type != w.typ {
			t.Errorf("column %d: %s %s, want %s %s", i, p.Columns[i].Name, p.Columns[i].Type, w.name, w.typ)
		}
	}
	if p.Fields[0] != (km.ColumnRef{Record: "CUSTOMERS", Field: "COUNTRY", Type: query.TypeString}) {
		t.Errorf("field 0: %+v", p.Fields[0])
	}
	// NET_PER_CUSTOMER = sum(ORDERS.NET_VALUE) / countdistinct(ORDERS.CUSTOMER_ID): two aggregates.
	if len(p.Aggregates) != 4 {
		t.Fatalf("aggregates: %d", len(p.Aggregates))
	}
	for i, a := range p.Aggregates {
		if a.Index != i || a.Grain != "ORDERS" {
			t.Errorf("aggregate %d: index %d grain %s", i, a.Index, a.Grain)
		}
		// ORDERS reaches CUSTOMERS up; ORDERS itself needs no step.
		if got := steps(a.Expand); got != "ORDERS.CUSTOMER_ID>CUSTOMERS.CUSTOMER_ID" {
			t.Errorf("aggregate %d expands %s", i, got)
		}
	}
	ar, ok := p.KPIs[2].Metric.(*km.Arith)
	if !ok || ar.Op != '/' || ar.L.(*km.Aggregate) != p.Aggregates[2] || ar.R.(*km.Aggregate).Func != query.AggCountDistinct {
		t.Errorf("NET_PER_CUSTOMER metric %#v", p.KPIs[2].Metric)
	}
	if p.Grain != "" || p.RowJoin != nil {
		t.Errorf("KPI plan has row grain %q", p.Grain)
	}
	if strings.Join(p.Records, ",") != "ORDERS,CUSTOMERS" {
		t.Errorf("records %v", p.Records)
	}
}

func TestPlanGrains(t *testing.T) {
	m := demoKM(t)
	// Each aggregate at its own grain, expanding to the dimensions through any path.
	p := mustPlan(t, m, "", []string{"MATERIALS.MATERIAL_GROUP"}, []string{"TOTAL_NET", "ITEM_QUANTITY", "ACTIVITY_COUNT", "ACTIVITY_SHARE"})
	cases := []struct{ grain, expand string }{
		{"ORDERS", "ORDERS.ORDER_ID<ORDER_ITEMS.ORDER_ID ORDER_ITEMS.MATERIAL_ID>MATERIALS.MATERIAL_ID"},
		{"ORDER_ITEMS", "ORDER_ITEMS.MATERIAL_ID>MATERIALS.MATERIAL_ID"},
		{"ACTIVITIES", "ACTIVITIES.ORDER_ID>ORDERS.ORDER_ID ORDERS.ORDER_ID<ORDER_ITEMS.ORDER_ID ORDER_ITEMS.MATERIAL_ID>MATERIALS.MATERIAL_ID"},
		{"ACTIVITIES", "ACTIVITIES.ORDER_ID>ORDERS.ORDER_ID ORDERS.ORDER_ID<ORDER_ITEMS.ORDER_ID ORDER_ITEMS.MATERIAL_ID>MATERIALS.MATERIAL_ID"},
	}
	for i, c := range cases {
		a := p.Aggregates[i]
		if a.Grain != c.grain || steps(a.Expand) != c.expand {
			t.Errorf("aggregate %d: grain %s expand %s; want %s %s", i, a.Grain, steps(a.Expand), c.grain, c.expand)
		}
	}
	// ratio's grain is the home of its condition, which is on the grain itself.
	share := p.Aggregates[3]
	if share.Func != query.AggRatio || share.Cond == nil || share.Cond.Home != "ACTIVITIES" || len(share.Cond.Reach["ACTIVITIES"]) != 0 {
		t.Errorf("ACTIVITY_SHARE: %+v", share)
	}
	// No dimensions: no expansion.
	p = mustPlan(t, m, "", nil, []string{"TOTAL_NET", "ITEM_QUANTITY"})
	if p.Aggregates[0].Grain != "ORDERS" || p.Aggregates[1].Grain != "ORDER_ITEMS" || len(p.Aggregates[0].Expand)+len(p.Aggregates[1].Expand) != 0 {
		t.Errorf("no dimensions: %+v %+v", p.Aggregates[0], p.Aggregates[1])
	}
}

func TestPlanRowGrain(t *testing.T) {
	m := demoKM(t)
	cases := []struct {
		fields []string
		grain  string
		join   string
	}{
		{[]string{"ORDERS.ORDER_ID", "CUSTOMERS.COUNTRY"}, "ORDERS", "ORDERS.CUSTOMER_ID>CUSTOMERS.CUSTOMER_ID"},
		{[]string{"CUSTOMERS.COUNTRY"}, "CUSTOMERS", ""},
		{[]string{"ORDERS.ORDER_ID", "MATERIALS.MATERIAL_GROUP"}, "ORDER_ITEMS", "ORDER_ITEMS.ORDER_ID>ORDERS.ORDER_ID ORDER_ITEMS.MATERIAL_ID>MATERIALS.MATERIAL_ID"},
		{[]string{"CUSTOMERS.COUNTRY", "MATERIALS.MATERIAL_GROUP"}, "ORDER_ITEMS", "ORDER_ITEMS.ORDER_ID>ORDERS.ORDER_ID ORDERS.CUSTOMER_ID>CUSTOMERS.CUSTOMER_ID ORDER_ITEMS.MATERIAL_ID>MATERIALS.MATERIAL_ID"},
		{[]string{"ACTIVITIES.ACTIVITY", "CUSTOMERS.CITY"}, "ACTIVITIES", "ACTIVITIES.ORDER_ID>ORDERS.ORDER_ID ORDERS.CUSTOMER_ID>CUSTOMERS.CUSTOMER_ID"},
	}
	for _, c := range cases {
		p := mustPlan(t, m, "", c.fields, nil)
		if p.Grain != c.grain || steps(p.RowJoin) != c.join {
			t.Errorf("%v: grain %s join %s; want %s %s", c.fields, p.Grain, steps(p.RowJoin), c.grain, c.join)
		}
	}
	// Record level: the record is the grain, whatever the filter names.
	p := mustPlan(t, m, "ORDER_ITEMS", []string{"ITEM_ID"}, nil, "OPEN_ORDERS")
	if p.Grain != "ORDER_ITEMS" || len(p.RowJoin) != 0 || p.Columns[0].Name != "ITEM_ID" || p.Fields[0].Name() != "ORDER_ITEMS.ITEM_ID" {
		t.Errorf("record level: %+v", p)
	}
}

func TestPlanFilterHomes(t *testing.T) {
	m := demoKM(t)
	// Record level, a filter on the parent: home ORDERS, reaching ORDER_ITEMS down.
	p := mustPlan(t, m, "ORDER_ITEMS", []string{"ITEM_ID"}, nil, "OPEN_ORDERS", "QUANTITY gt 2", "ACTIVITIES.ACTIVITY eq 'Ship' and MATERIALS.MATERIAL_GROUP eq 'X'")
	if len(p.Filter) != 4 {
		t.Fatalf("%d conjuncts", len(p.Filter))
	}
	want := []struct{ expr, home, reach string }{
		{"ORDERS.STATUS eq 'OPEN'", "ORDERS", "ORDERS.ORDER_ID<ORDER_ITEMS.ORDER_ID"},
		{"ORDER_ITEMS.QUANTITY gt 2", "ORDER_ITEMS", ""},
		{"ACTIVITIES.ACTIVITY eq 'Ship'", "ACTIVITIES", "ACTIVITIES.ORDER_ID>ORDERS.ORDER_ID ORDERS.ORDER_ID<ORDER_ITEMS.ORDER_ID"},
		{"MATERIALS.MATERIAL_GROUP eq 'X'", "MATERIALS", "MATERIALS.MATERIAL_ID<ORDER_ITEMS.MATERIAL_ID"},
	}
	for i, w := range want {
		cj := p.Filter[i]
		if got := query.Format(cj.Expr); got != w.expr || cj.Home != w.home || steps(cj.Reach["ORDER_ITEMS"]) != w.reach || len(cj.Reach) != 1 {
			t.Errorf("conjunct %d: %s home %s reach %s (%d); want %s %s %s", i, got, cj.Home, steps(cj.Reach["ORDER_ITEMS"]), len(cj.Reach), w.expr, w.home, w.reach)
		}
	}
	// A conjunct over a child and its parents: home the child, reading the parents up.
	p = mustPlan(t, m, "", nil, []string{"TOTAL_NET"}, "ORDER_ITEMS.QUANTITY gt 2 or CUSTOMERS.COUNTRY eq 'DE' or MATERIALS.MATERIAL_GROUP eq 'X'")
	cj := p.Filter[0]
	if cj.Home != "ORDER_ITEMS" || steps(cj.Reads) != "ORDER_ITEMS.ORDER_ID>ORDERS.ORDER_ID ORDERS.CUSTOMER_ID>CUSTOMERS.CUSTOMER_ID ORDER_ITEMS.MATERIAL_ID>MATERIALS.MATERIAL_ID" {
		t.Errorf("home %s reads %s", cj.Home, steps(cj.Reads))
	}
	if steps(cj.Reach["ORDERS"]) != "ORDER_ITEMS.ORDER_ID>ORDERS.ORDER_ID" {
		t.Errorf("reach %v", cj.Reach)
	}
}

// problemOf returns the status, code and detail of a plan error.
func problemOf(t *testing.T, err error) (int, string, string) {
	t.Helper()
	switch e := err.(type) {
	case *problem.Problem:
		return e.Status, e.ErrorCode, e.Detail
	case *query.Error:
		return 400, e.Code, e.Error()
	}
	t.Fatalf("error %T %v", err, err)
	return 0, "", ""
}

func TestPlanErrors(t *testing.T) {
	m := demoKM(t)
	cases := []struct {
		name           string
		record         string
		fields, kpis   []string
		filters        []string
		code, contains string
	}{
		{"unknown fields", "", []string{"ORDERS.NOPE", "X"}, nil, nil, "KM_FIELD_NOTFOUND", "unknown fields: ORDERS.NOPE, X"},
		{"unknown KPI", "", nil, []string{"NOPE"}, nil, "KM_FIELD_NOTFOUND", "unknown KPI: NOPE"},
		{"nothing selected", "", nil, nil, nil, "GENERAL_PARAMETER_MISSING", "at least one field"},
		{"KPIs at record level", "ORDERS", []string{"ORDER_ID"}, []string{"TOTAL_NET"}, nil, "GENERAL_PARAMETER_ILLEGAL", "only accepted by the knowledge model endpoints"},
		{"sibling rows", "", []string{"ACTIVITIES.ACTIVITY", "ORDER_ITEMS.QUANTITY"}, nil, nil, "KM_JOIN_NOT_POSSIBLE", "ACTIVITIES, ORDER_ITEMS cannot be listed together"},
		{"sibling conjunct", "", []string{"ORDERS.ORDER_ID"}, nil, []string{"ACTIVITIES.ACTIVITY eq 'Ship' or ORDER_ITEMS.QUANTITY gt 5"}, "GENERAL_PARAMETER_ILLEGAL", "records ACTIVITIES, ORDER_ITEMS"},
		{"bare field of another record", "ORDER_ITEMS", []string{"ITEM_ID"}, nil, []string{"STATUS eq 'OPEN'"}, "KM_FIELD_NOTFOUND", `unknown field "STATUS"`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := &km.PlanRequest{Record: c.record, Fields: c.fields, KPIs: c.kpis, PageSize: 10}
			for _, f := range c.filters {
				e, err := query.ParseAndBind(f, m.FilterSchema(c.record))
				if err != nil {
					st, code, detail := problemOf(t, err)
					if st != 400 || code != c.code || !strings.Contains(detail, c.contains) {
						t.Fatalf("bind: %d %s %s", st, code, detail)
					}
					return
				}
				r.Filters = append(r.Filters, e)
			}
			_, err := km.NewPlan(m, r)
			if err == nil {
				t.Fatal("no error")
			}
			st, code, detail := problemOf(t, err)
			if st != 400 || code != c.code || !strings.Contains(detail, c.contains) {
				t.Errorf("got %d %s %q; want %s containing %q", st, code, detail, c.code, c.contains)
			}
		})
	}
}

// diamond is a KM where D reaches A through B and through C: the path is ambiguous.
func diamond(t *testing.T) *km.KnowledgeModel {
	t.Helper()
	rec := func(id string, fields ...string) *km.Record {
		r := &km.Record{ID: id, Key: "ID"}
		for _, f := range append([]string{"ID"}, fields...) {
			r.Fields = append(r.Fields, &km.Field{ID: f, Type: query.TypeString})
		}
		return r
	}
	m := &km.KnowledgeModel{ID: "diamond",
		Records: []*km.Record{rec("A"), rec("B", "A_ID"), rec("C", "A_ID"), rec("D", "B_ID", "C_ID")},
		Relationships: []km.Relationship{
			{From: km.FieldPath{Record: "B", Field: "A_ID"}, To: km.FieldPath{Record: "A", Field: "ID"}},
			{From: km.FieldPath{Record: "C", Field: "A_ID"}, To: km.FieldPath{Record: "A", Field: "ID"}},
			{From: km.FieldPath{Record: "D", Field: "B_ID"}, To: km.FieldPath{Record: "B", Field: "ID"}},
			{From: km.FieldPath{Record: "D", Field: "C_ID"}, To: km.FieldPath{Record: "C", Field: "ID"}},
		},
		KPIs: []*km.KPI{{ID: "N_D", Expr: "count(D.ID)"}},
	}
	if err := m.Compile(); err != nil {
		t.Fatal(err)
	}
	return m
}

func TestPlanAmbiguousPath(t *testing.T) {
	m := diamond(t)
	if _, err := m.PathBetween("D", "A"); err == nil || !strings.Contains(err.Error(), "D-B-A or D-C-A") {
		t.Errorf("PathBetween: %v", err)
	}
	_, err := planOf(t, m, "", []string{"A.ID"}, []string{"N_D"})
	st, code, detail := problemOf(t, err)
	if st != 400 || code != km.CodeJoinAmbiguous || !strings.Contains(detail, "D-B-A or D-C-A") {
		t.Errorf("KPI through a diamond: %d %s %s", st, code, detail)
	}
	_, err = planOf(t, m, "", []string{"D.ID", "A.ID"}, nil)
	st, code, detail = problemOf(t, err)
	if st != 400 || code != km.CodeJoinAmbiguous || !strings.Contains(detail, "D-B-A or D-C-A") {
		t.Errorf("rows through a diamond: %d %s %s", st, code, detail)
	}
	// A filter on A at record level D.
	_, err = planOf(t, m, "D", []string{"ID"}, nil, "A.ID eq 'x'")
	st, code, _ = problemOf(t, err)
	if st != 400 || code != km.CodeJoinAmbiguous {
		t.Errorf("filter through a diamond: %d %s", st, code)
	}
	// B to C: B-A-C and B-D-C both have length 2.
	if _, err := m.PathBetween("B", "C"); err == nil {
		t.Error("B to C should be ambiguous")
	}
	// D to B is one step.
	if p, err := m.PathBetween("D", "B"); err != nil || p.String() != "D-B" {
		t.Errorf("D to B: %v %v", p, err)
	}
}

func TestCountGrainDefinitions(t *testing.T) {
	base := func(expr, record string) *km.KnowledgeModel {
		return &km.KnowledgeModel{ID: "k",
			Records: []*km.Record{
				{ID: "P", Key: "ID", Fields: []*km.Field{{ID: "ID", Type: query.TypeString}, {ID: "V", Type: query.TypeFloat}}},
				{ID: "C", Key: "ID", Fields: []*km.Field{{ID: "ID", Type: query.TypeString}, {ID: "P_ID", Type: query.TypeString}, {ID: "V", Type: query.TypeFloat}}},
			},
			Relationships: []km.Relationship{{From: km.FieldPath{Record: "C", Field: "P_ID"}, To: km.FieldPath{Record: "P", Field: "ID"}}},
			KPIs:          []*km.KPI{{ID: "K", Expr: expr, Record: record}},
		}
	}
	cases := []struct {
		expr, record, grain, err string
	}{
		{"count()", "C", "C", ""},
		{"count()", "", "", "count() names no record"},
		{"count() / sum(P.V)", "", "P", ""},
		{"count() / sum(P.V) + sum(C.V)", "", "", "count() could count the rows of P or C"},
		{"count() / sum(P.V) + sum(C.V)", "C", "C", ""},
		{"count()", "NOPE", "", "record NOPE"},
		{"min(C.ID) + 1", "", "", "min of C.ID is a string and cannot take part in arithmetic"},
		{"min(C.ID)", "", "C", ""},
		{"ratio(C.V gt 0 or P.V gt 0)", "", "C", ""},
	}
	for _, c := range cases {
		m := base(c.expr, c.record)
		err := m.Compile()
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%s record %q: error %v, want %q", c.expr, c.record, err, c.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", c.expr, err)
			continue
		}
		p := mustPlan(t, m, "", nil, []string{"K"})
		if p.Aggregates[0].Grain != c.grain {
			t.Errorf("%s record %q: grain %s, want %s", c.expr, c.record, p.Aggregates[0].Grain, c.grain)
		}
	}
}

// min and max take a field of every type and have its type; a condition as last argument
// keeps it.
func TestMinMaxTakeTheFieldType(t *testing.T) {
	types := []query.Type{query.TypeString, query.TypeInteger, query.TypeFloat, query.TypeBoolean,
		query.TypeDate, query.TypeDateTime, query.TypeTimestamp, query.TypeTime}
	rec := &km.Record{ID: "R", Key: "ID", Fields: []*km.Field{{ID: "ID", Type: query.TypeString}}}
	var kpis []*km.KPI
	var ids []string
	for _, typ := range types {
		f := "F_" + strings.ToUpper(typ.String())
		rec.Fields = append(rec.Fields, &km.Field{ID: f, Type: typ})
		kpis = append(kpis, &km.KPI{ID: "MIN_" + f, Expr: "min(R." + f + ")"}, &km.KPI{ID: "MAX_" + f, Expr: "max(R." + f + ", R.ID ne 'x')"})
		ids = append(ids, "MIN_"+f, "MAX_"+f)
	}
	m := &km.KnowledgeModel{ID: "k", Records: []*km.Record{rec}, KPIs: kpis}
	if err := m.Compile(); err != nil {
		t.Fatal(err)
	}
	p := mustPlan(t, m, "", nil, ids)
	for i, k := range p.KPIs {
		if want := types[i/2]; k.Type != want || p.Columns[i].Type != want {
			t.Errorf("%s: type %v (column %v), want %v", k.ID, k.Type, p.Columns[i].Type, want)
		}
	}
}

func TestSortAndSearchChecked(t *testing.T) {
	m := demoKM(t)
	r := &km.PlanRequest{Fields: []string{"CUSTOMERS.COUNTRY"}, KPIs: []string{"TOTAL_NET"}, PageSize: 5,
		Sort: []query.SortTerm{{Field: "TOTAL_NET", Desc: true}, {Field: "CUSTOMERS.COUNTRY"}}}
	p, err := km.NewPlan(m, r)
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Sort) != 2 || p.Sort[0] != (km.OutputOrder{Column: 1, Desc: true}) || p.Sort[1] != (km.OutputOrder{Column: 0}) {
		t.Errorf("sort %+v", p.Sort)
	}
	r.Sort = []query.SortTerm{{Field: "ORDERS.STATUS"}}
	if _, err := km.NewPlan(m, r); err == nil {
		t.Error("sort on an unselected field accepted")
	}
	r.Sort = nil
	r.Search = &km.SearchRequest{Term: "x", Fields: []string{"ORDERS.STATUS"}, Precision: 80}
	if _, err := km.NewPlan(m, r); err == nil || !strings.Contains(err.Error(), "not a selected field") {
		t.Errorf("search of an unselected field with KPIs: %v", err)
	}
	r.Search.Fields = []string{"CUSTOMERS.COUNTRY"}
	if p, err = km.NewPlan(m, r); err != nil || p.Search.Fields[0].Name() != "CUSTOMERS.COUNTRY" {
		t.Errorf("search: %v", err)
	}
}

// joinsKM builds, in code, the two shapes of issue 29: LINES reach PLANTS directly (their
// delivery plant) and through ORDERS (the order's plant); INVOICES reach PURCHASE_ORDERS
// by a lookup chain through PO_LINES and by two paths of the same length that change
// direction (a shared vendor, a shared company), and VENDORS reach COMPANIES by two such
// paths only.
func joinsKM(t *testing.T) *km.KnowledgeModel {
	t.Helper()
	rec := func(id string, fields ...string) *km.Record {
		r := &km.Record{ID: id, Key: fields[0]}
		for _, f := range fields {
			r.Fields = append(r.Fields, &km.Field{ID: f, Type: query.TypeString})
		}
		return r
	}
	rel := func(from, field, to, key string) km.Relationship {
		return km.Relationship{From: km.FieldPath{Record: from, Field: field}, To: km.FieldPath{Record: to, Field: key}}
	}
	m := &km.KnowledgeModel{ID: "joins",
		Records: []*km.Record{
			rec("PLANTS", "PLANT_ID", "REGION"), rec("ORDERS", "ORDER_ID", "PLANT_ID"), rec("LINES", "LINE_ID", "ORDER_ID", "DELIVERY_PLANT_ID"),
			rec("COMPANIES", "COMPANY_CODE", "NAME"), rec("VENDORS", "VENDOR_ID", "NAME"),
			rec("PURCHASE_ORDERS", "PO_ID", "VENDOR_ID", "COMPANY_CODE", "STATUS"), rec("PO_LINES", "PO_LINE_ID", "PO_ID"),
			rec("INVOICES", "INVOICE_NO", "PO_LINE_ID", "VENDOR_ID", "COMPANY_CODE"),
		},
		Relationships: []km.Relationship{
			rel("ORDERS", "PLANT_ID", "PLANTS", "PLANT_ID"), rel("LINES", "ORDER_ID", "ORDERS", "ORDER_ID"), rel("LINES", "DELIVERY_PLANT_ID", "PLANTS", "PLANT_ID"),
			rel("PURCHASE_ORDERS", "VENDOR_ID", "VENDORS", "VENDOR_ID"), rel("PURCHASE_ORDERS", "COMPANY_CODE", "COMPANIES", "COMPANY_CODE"),
			rel("PO_LINES", "PO_ID", "PURCHASE_ORDERS", "PO_ID"), rel("INVOICES", "PO_LINE_ID", "PO_LINES", "PO_LINE_ID"),
			rel("INVOICES", "VENDOR_ID", "VENDORS", "VENDOR_ID"), rel("INVOICES", "COMPANY_CODE", "COMPANIES", "COMPANY_CODE"),
		},
		KPIs: []*km.KPI{{ID: "LINE_COUNT", Expr: "count(LINES.LINE_ID)"}, {ID: "VENDOR_COUNT", Expr: "count(VENDORS.VENDOR_ID)"}, {ID: "INVOICE_COUNT", Expr: "count(INVOICES.INVOICE_NO)"}},
	}
	if err := m.Compile(); err != nil {
		t.Fatal(err)
	}
	return m
}

// TestPathRule checks the one rule for join paths (SPEC-NOTES, "KPIs: every aggregate at
// its own grain"): shortest first, then the only lookup chain, else a 400 naming the tie,
// the same in rows, KPIs and filters, and read the same way from either end.
func TestPathRule(t *testing.T) {
	m := joinsKM(t)
	for _, c := range []struct{ a, b, want string }{
		{"INVOICES", "PURCHASE_ORDERS", "INVOICES-PO_LINES-PURCHASE_ORDERS"},
		{"PURCHASE_ORDERS", "INVOICES", "PURCHASE_ORDERS-PO_LINES-INVOICES"},
		{"PO_LINES", "VENDORS", "PO_LINES-PURCHASE_ORDERS-VENDORS"},
		{"LINES", "PLANTS", "LINES-PLANTS"}, // shorter than LINES-ORDERS-PLANTS
		{"PLANTS", "LINES", "PLANTS-LINES"},
	} {
		if p, err := m.PathBetween(c.a, c.b); err != nil || p.String() != c.want {
			t.Errorf("%s to %s: %v %v, want %s", c.a, c.b, p, err, c.want)
		}
	}
	for _, ab := range [][2]string{{"VENDORS", "COMPANIES"}, {"COMPANIES", "VENDORS"}} {
		_, err := m.PathBetween(ab[0], ab[1])
		if err == nil || !strings.Contains(err.Error(), ab[0]+"-PURCHASE_ORDERS-"+ab[1]) || !strings.Contains(err.Error(), ab[0]+"-INVOICES-"+ab[1]) {
			t.Errorf("%s to %s: %v, want both paths named", ab[0], ab[1], err)
		}
	}
	// Rows, filters and KPIs take the chain between INVOICES and PURCHASE_ORDERS.
	fields := []string{"INVOICES.INVOICE_NO", "PURCHASE_ORDERS.STATUS"}
	p := mustPlan(t, m, "", fields, nil, "PURCHASE_ORDERS.STATUS eq 'OPEN'")
	if p.Grain != "INVOICES" || steps(p.RowJoin) != "INVOICES.PO_LINE_ID>PO_LINES.PO_LINE_ID PO_LINES.PO_ID>PURCHASE_ORDERS.PO_ID" {
		t.Errorf("rows: grain %s join %s", p.Grain, steps(p.RowJoin))
	}
	if got := p.Filter[0].Reach["INVOICES"].String(); got != "PURCHASE_ORDERS-PO_LINES-INVOICES" {
		t.Errorf("filter reaches INVOICES along %s", got)
	}
	if p.RowChecks != nil {
		t.Errorf("a filter carried along the join itself needs no check of parents: %v", p.RowChecks)
	}
	p = mustPlan(t, m, "", []string{"PURCHASE_ORDERS.STATUS"}, []string{"INVOICE_COUNT"}, "PURCHASE_ORDERS.STATUS eq 'OPEN'")
	if got := p.Aggregates[0].Expand; steps(got) != "INVOICES.PO_LINE_ID>PO_LINES.PO_LINE_ID PO_LINES.PO_ID>PURCHASE_ORDERS.PO_ID" {
		t.Errorf("KPI expands along %s", steps(got))
	}
	mustPlan(t, m, "INVOICES", []string{"INVOICE_NO"}, nil, "PURCHASE_ORDERS.STATUS eq 'OPEN'")
	// Rows of VENDORS and COMPANIES are those of PURCHASE_ORDERS (each reaches both by one
	// lookup); a KPI over VENDORS grouped by COMPANIES, or a filter on COMPANIES carried to
	// VENDORS, needs the tied join: 400 naming both paths.
	if p := mustPlan(t, m, "", []string{"VENDORS.NAME", "COMPANIES.NAME"}, nil); p.Grain != "PURCHASE_ORDERS" {
		t.Errorf("VENDORS and COMPANIES listed at %s", p.Grain)
	}
	for _, c := range []struct {
		record       string
		fields, kpis []string
		filters      []string
		name         string
	}{
		{"", []string{"COMPANIES.NAME"}, []string{"VENDOR_COUNT"}, nil, "KPI"},
		{"VENDORS", []string{"NAME"}, nil, []string{"COMPANIES.NAME eq 'x'"}, "record filter"},
		{"", []string{"PO_LINES.PO_LINE_ID", "VENDORS.NAME"}, nil, []string{"COMPANIES.NAME eq 'x'"}, "rows filter"},
		{"", []string{"VENDORS.NAME"}, []string{"INVOICE_COUNT"}, []string{"COMPANIES.NAME eq 'x'"}, "KPI filter"},
	} {
		_, err := planOf(t, m, c.record, c.fields, c.kpis, c.filters...)
		st, code, detail := problemOf(t, err)
		named := func(a, b string) bool { return strings.Contains(detail, a) || strings.Contains(detail, b) }
		if st != 400 || code != km.CodeJoinAmbiguous || !named("VENDORS-PURCHASE_ORDERS-COMPANIES", "COMPANIES-PURCHASE_ORDERS-VENDORS") ||
			!named("VENDORS-INVOICES-COMPANIES", "COMPANIES-INVOICES-VENDORS") {
			t.Errorf("%s: %d %s %s", c.name, st, code, detail)
		}
	}
}

// TestRowChecks checks which parents of listed rows a plan asks the stores to test
// against the filter: only where the filter reaches the parent by another way than
// through the listed row (issue 29's PLANTS, ORDERS, LINES), never in the demo's shapes.
func TestRowChecks(t *testing.T) {
	m := joinsKM(t)
	p := mustPlan(t, m, "", []string{"LINES.LINE_ID", "ORDERS.ORDER_ID", "ORDERS.PLANT_ID"}, nil, "PLANTS.REGION eq 'EMEA'")
	if p.Grain != "LINES" || len(p.RowChecks) != 1 || len(p.RowChecks[0]) != 1 || p.RowChecks[0][0] != p.Filter[0] {
		t.Errorf("LINES with ORDERS under a filter on PLANTS: grain %s checks %v", p.Grain, p.RowChecks)
	}
	c, unchecked := p.Cost(km.Sizes{}), mustPlan(t, m, "", []string{"LINES.LINE_ID", "ORDERS.ORDER_ID", "ORDERS.PLANT_ID"}, nil).Cost(km.Sizes{})
	if c.Predicates != 2 || c.Memory != unchecked.Memory+km.AssumedRows*4 {
		t.Errorf("the filter and the test of the order: %d predicates, want 2; memory %d, want %d and the index of the orders", c.Predicates, c.Memory, unchecked.Memory)
	}
	// The filter on ORDERS reaches the delivery plant of a line by ORDERS-PLANTS, not
	// through the line: the plant is tested; the order is the line's own parent.
	p = mustPlan(t, m, "", []string{"LINES.LINE_ID", "ORDERS.ORDER_ID", "PLANTS.REGION"}, nil, "ORDERS.ORDER_ID ne 'O2'")
	if steps(p.RowJoin) != "LINES.ORDER_ID>ORDERS.ORDER_ID LINES.DELIVERY_PLANT_ID>PLANTS.PLANT_ID" || len(p.RowChecks) != 2 || len(p.RowChecks[0]) != 0 || len(p.RowChecks[1]) != 1 {
		t.Errorf("join %s checks %v", steps(p.RowJoin), p.RowChecks)
	}
	d := demoKM(t)
	for _, f := range []string{"CUSTOMERS.COUNTRY eq 'DE'", "ORDERS.STATUS eq 'OPEN'", "ORDER_ITEMS.QUANTITY gt 5", "ACTIVITIES.ACTIVITY eq 'Ship'", "MATERIALS.MATERIAL_GROUP eq 'Hardware'"} {
		p := mustPlan(t, d, "", []string{"ORDER_ITEMS.ITEM_ID", "ORDERS.STATUS", "CUSTOMERS.COUNTRY", "MATERIALS.MATERIAL_GROUP"}, nil, f)
		if p.RowChecks != nil {
			t.Errorf("demo rows under %s: checks %v", f, p.RowChecks)
		}
	}
}

// TestPlanConstantKPI: KPIs that aggregate nothing group by the rows the selected fields
// list (a count() of the row grain that no KPI reads); without fields they are the one
// group; fields of sibling records have no such rows, and the 400 says why.
func TestPlanConstantKPI(t *testing.T) {
	m := demoKM(t)
	three, err := m.AdHocKPI("THREE", "3", "")
	if err != nil {
		t.Fatal(err)
	}
	plan := func(fields ...string) (*km.Plan, error) {
		return km.NewPlan(m, &km.PlanRequest{Fields: fields, KPIs: []string{"THREE"}, AdHocKPIs: []*km.KPI{three}, PageSize: 10})
	}
	p, err := plan("ORDERS.STATUS", "CUSTOMERS.COUNTRY")
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Aggregates) != 1 || p.Aggregates[0].Func != query.AggCount || p.Aggregates[0].Field != nil || p.Aggregates[0].Grain != "ORDERS" ||
		steps(p.Aggregates[0].Expand) != "ORDERS.CUSTOMER_ID>CUSTOMERS.CUSTOMER_ID" {
		t.Errorf("aggregates %+v, want one count() of ORDERS expanded to CUSTOMERS", p.Aggregates)
	}
	if p, err := plan(); err != nil || len(p.Aggregates) != 0 {
		t.Errorf("without fields: %v, aggregates %+v; want none", err, p)
	}
	_, err = plan("ACTIVITIES.ACTIVITY", "ORDER_ITEMS.QUANTITY")
	st, code, detail := problemOf(t, err)
	if st != 400 || code != km.CodeJoinNotPossible || !strings.Contains(detail, "aggregate nothing") || !strings.Contains(detail, "ACTIVITIES, ORDER_ITEMS") {
		t.Errorf("sibling fields: %d %s %q", st, code, detail)
	}
}
