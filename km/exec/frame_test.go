package exec

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/kmkit/kmkit/km"
	"github.com/kmkit/kmkit/query"
)

func TestFrameChain(t *testing.T) {
	// ACTIVITIES -> ORDERS -> CUSTOMERS, with a dangling and a null key on the way.
	acts := table(t, []string{"ACT", "ORDER_ID"}, []query.Type{query.TypeString, query.TypeInteger}, [][]any{
		{"create", 1}, {"ship", 1}, {"create", 2}, {"lost", 9}, {"orphan", nil}, {"create", 3},
	})
	ords := table(t, []string{"ORDER_ID", "CUSTOMER", "NET"}, []query.Type{query.TypeInteger, query.TypeString, query.TypeFloat}, [][]any{
		{3, nil, 7.0}, {1, "c1", 10.0}, {2, "c2", 20.0},
	})
	custs := table(t, []string{"ID", "COUNTRY"}, []query.Type{query.TypeString, query.TypeString}, [][]any{
		{"c2", "FR"}, {"c1", "DE"},
	})
	f, err := NewFrame("ACTIVITIES", acts,
		Join{From: "ACTIVITIES.ORDER_ID", Record: "ORDERS", Table: ords, Key: "ORDER_ID"},
		Join{From: "ORDERS.CUSTOMER", Record: "CUSTOMERS", Table: custs, Key: "ID"},
	)
	if err != nil {
		t.Fatal(err)
	}
	wantNames := []string{"ACTIVITIES.ACT", "ACTIVITIES.ORDER_ID", "ORDERS.ORDER_ID", "ORDERS.CUSTOMER", "ORDERS.NET", "CUSTOMERS.ID", "CUSTOMERS.COUNTRY"}
	if d := cmp.Diff(wantNames, f.Names()); d != "" {
		t.Errorf("names (-want +got):\n%s", d)
	}
	// The same tables as a KM, asked through plans.
	o := kmOfRecords(t, []rt{{"ACTIVITIES", "ACT", acts}, {"ORDERS", "ORDER_ID", ords}, {"CUSTOMERS", "ID", custs}},
		[][2]string{{"ACTIVITIES.ORDER_ID", "ORDERS.ORDER_ID"}, {"ORDERS.CUSTOMER", "CUSTOMERS.ID"}},
		"N", "count()", "NET", "sum(ORDERS.NET)")
	res, err := o.run(km.PlanRequest{Record: "-", Fields: []string{"ACTIVITIES.ACT", "ORDERS.NET", "CUSTOMERS.COUNTRY"}, PageSize: 10})
	if err != nil {
		t.Fatal(err)
	}
	s, fl := query.String, query.Float
	ns, nf := query.Null(query.TypeString), query.Null(query.TypeFloat)
	want := [][]query.Value{
		{s("create"), fl(10), s("DE")},
		{s("ship"), fl(10), s("DE")},
		{s("create"), fl(20), s("FR")},
		{s("lost"), nf, ns},
		{s("orphan"), nf, ns},
		{s("create"), fl(7), ns},
	}
	if d := cmp.Diff(want, res.Rows); d != "" {
		t.Errorf("rows (-want +got):\n%s", d)
	}

	// Filters on parent records: a plan places each on its record and carries it to the
	// activities by semi-join, so a row without a parent matches no parent's predicate,
	// "is null" included (every customer has a country).
	filters := []struct {
		name   string
		filter query.Expr
		want   []string
	}{
		{"eq through two joins", cmpx("CUSTOMERS.COUNTRY", query.TypeString, query.Eq, query.String("DE")), []string{"create", "ship"}},
		{"ne skips unmatched", cmpx("CUSTOMERS.COUNTRY", query.TypeString, query.Ne, query.String("DE")), []string{"create"}},
		{"is null holds for no customer", &query.IsNull{Field: field("CUSTOMERS.COUNTRY", query.TypeString)}, []string{}},
		{"is not null", &query.IsNull{Field: field("ORDERS.NET", query.TypeFloat), Negated: true}, []string{"create", "ship", "create", "create"}},
		{"not gt", not(cmpx("ORDERS.NET", query.TypeFloat, query.Gt, query.Float(15))), []string{"create", "ship", "create"}},
	}
	for _, tt := range filters {
		t.Run(tt.name, func(t *testing.T) {
			res, err := o.run(km.PlanRequest{Record: "-", Fields: []string{"ACTIVITIES.ACT"}, PageSize: 10, Filters: []query.Expr{tt.filter}})
			if err != nil {
				t.Fatal(err)
			}
			got := []string{}
			for _, r := range res.Rows {
				got = append(got, r[0].Str)
			}
			if d := cmp.Diff(tt.want, got); d != "" {
				t.Errorf("rows (-want +got):\n%s", d)
			}
		})
	}

	// KPIs each at its own grain, grouped by a parent's field: count() counts activities,
	// sum(ORDERS.NET) adds each order once (order 1 has two activities in DE).
	res, err = o.run(km.PlanRequest{Record: "-",
		Fields:   []string{"CUSTOMERS.COUNTRY"},
		KPIs:     []string{"N", "NET"},
		Sort:     []query.SortTerm{{Field: "CUSTOMERS.COUNTRY"}},
		PageSize: 10,
	})
	if err != nil {
		t.Fatal(err)
	}
	want = [][]query.Value{{s("DE"), query.Int(2), fl(10)}, {s("FR"), query.Int(1), fl(20)}, {ns, query.Int(3), fl(7)}}
	if d := cmp.Diff(want, res.Rows); d != "" {
		t.Errorf("KPI rows (-want +got):\n%s", d)
	}
	v, ok := f.Value("CUSTOMERS.COUNTRY", 1)
	if !ok || v != s("DE") {
		t.Errorf("Value = %v, %v", v, ok)
	}
	if _, ok := f.Value("CUSTOMERS.COUNTRY", 6); ok {
		t.Error("Value beyond the last row is ok")
	}
	if f.Rows() != 6 {
		t.Errorf("Rows = %d, want 6", f.Rows())
	}
	if _, ok := f.Type("ORDERS.NOPE"); ok {
		t.Error("Type of an unknown column is ok")
	}
	if typ, ok := f.Type("ORDERS.NET"); !ok || typ != query.TypeFloat {
		t.Errorf("Type = %v, %v", typ, ok)
	}
}

func TestNewFrameErrors(t *testing.T) {
	a := table(t, []string{"K", "N"}, []query.Type{query.TypeString, query.TypeInteger}, [][]any{{"x", 1}})
	dup := table(t, []string{"K"}, []query.Type{query.TypeString}, [][]any{{"x"}, {"y"}, {"x"}})
	dupInt := table(t, []string{"N"}, []query.Type{query.TypeInteger}, [][]any{{1}, {1}})
	fl := table(t, []string{"F"}, []query.Type{query.TypeFloat}, [][]any{{1.0}})
	tests := []struct {
		name string
		join Join
		is   error
		want string
	}{
		{"duplicate string key", Join{From: "A.K", Record: "B", Table: dup, Key: "K"}, km.ErrDuplicateTarget, `exec: join A.K to B.K: relationship A.K -> B.K: B.K holds "x" in more than one row; the target of a relationship must be unique`},
		{"duplicate integer key", Join{From: "A.N", Record: "B", Table: dupInt, Key: "N"}, km.ErrDuplicateTarget, `exec: join A.N to B.N: relationship A.N -> B.N: B.N holds 1 in more than one row; the target of a relationship must be unique`},
		{"types differ", Join{From: "A.N", Record: "B", Table: dup, Key: "K"}, nil, `exec: join A.N to B.K: key types differ: integer and string`},
		{"float key", Join{From: "A.F", Record: "B", Table: fl, Key: "F"}, ErrUnknownField, `exec: join of B: unknown field "A.F"`},
		{"unknown key", Join{From: "A.K", Record: "B", Table: dup, Key: "Z"}, ErrUnknownField, `exec: join of B: unknown field "B.Z"`},
		{"record twice", Join{From: "A.K", Record: "A", Table: dup, Key: "K"}, nil, `exec: record "A" joined twice`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := NewFrame("A", a, tt.join)
			if err == nil || err.Error() != tt.want || (tt.is != nil && !errors.Is(err, tt.is)) {
				t.Errorf("err = %v, want %q", err, tt.want)
			}
		})
	}
	b := table(t, []string{"F"}, []query.Type{query.TypeFloat}, [][]any{{1.0}})
	_, err := NewFrame("B", b, Join{From: "B.F", Record: "C", Table: fl, Key: "F"})
	if want := "exec: join B.F to C.F: cannot join on float columns"; err == nil || err.Error() != want {
		t.Errorf("err = %v, want %q", err, want)
	}
}

func TestConcurrentRuns(t *testing.T) {
	f := orders(t)
	req := km.PlanRequest{Fields: []string{"C", "ID"}, Sort: []query.SortTerm{{Field: "C"}, {Field: "ID", Desc: true}}, PageSize: 3, Search: &km.SearchRequest{Term: "o", Precision: 50}}
	want, err := f.run(req)
	if err != nil {
		t.Fatal(err)
	}
	errs := make(chan error, 8)
	for range 8 {
		go func() {
			got, err := f.run(req)
			if err == nil && !cmp.Equal(want, got) {
				err = errors.New(cmp.Diff(want, got))
			}
			errs <- err
		}()
	}
	for range 8 {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
}
