package exec

import (
	"errors"
	"math"
	"testing"
	"testing/fstest"

	"github.com/google/go-cmp/cmp"
	"github.com/kmkit/kmkit/km"
	"github.com/kmkit/kmkit/problem"
	"github.com/kmkit/kmkit/query"
	"github.com/kmkit/kmkit/query/column"
)

// table builds a table from columns of values; a nil entry in vals is null.
func table(t testing.TB, names []string, types []query.Type, rows [][]any) *column.Table {
	t.Helper()
	cols := make([]column.Column, len(names))
	for i, typ := range types {
		b := column.NewBuilder(typ)
		for _, row := range rows {
			switch v := row[i].(type) {
			case nil:
				b.AppendNull()
			case string:
				b.AppendString(v)
			case int:
				b.AppendInt(int64(v))
			case float64:
				b.AppendFloat(v)
			case bool:
				b.AppendBool(v)
			default:
				t.Fatalf("bad cell %T", v)
			}
		}
		cols[i] = b.Build()
	}
	tab, err := column.NewTable(names, cols)
	if err != nil {
		t.Fatal(err)
	}
	return tab
}

func field(name string, typ query.Type) query.FieldRef { return query.FieldRef{Name: name, Type: typ} }
func lit(v query.Value) query.Literal                  { return query.Literal{Value: v} }
func cmpx(name string, typ query.Type, op query.CompareOp, v query.Value) *query.Compare {
	return &query.Compare{Field: field(name, typ), Op: op, Value: lit(v)}
}
func and(l, r query.Expr) query.Expr { return &query.Logical{Op: query.And, L: l, R: r} }
func or(l, r query.Expr) query.Expr  { return &query.Logical{Op: query.Or, L: l, R: r} }
func not(x query.Expr) query.Expr    { return &query.Not{X: x} }

// orders: C string (null in row 2), N float, Q integer, D date, AT datetime; record O.
func orders(t testing.TB, kpis ...string) *one {
	return kmOf(t, "O", table(t,
		[]string{"ID", "C", "N", "Q", "D", "AT"},
		[]query.Type{query.TypeString, query.TypeString, query.TypeFloat, query.TypeInteger, query.TypeDate, query.TypeDateTime},
		[][]any{
			{"o1", "DE", 10.0, 1, 100, 100*query.MicrosPerDay + 5},
			{"o2", "FR", 20.5, 2, 101, 101 * query.MicrosPerDay},
			{"o3", nil, nil, nil, nil, nil},
			{"o4", "DE", 5.0, 3, 100, 99*query.MicrosPerDay + query.MicrosPerDay - 1},
			{"o5", "IT", 20.5, 2, 102, -1},
		}), kpis...)
}

func floats(vs ...float64) []query.Literal {
	var out []query.Literal
	for _, v := range vs {
		out = append(out, lit(query.Float(v)))
	}
	return out
}

func ids(t *testing.T, o *one, filter query.Expr) []string {
	t.Helper()
	res, err := o.run(km.PlanRequest{Fields: []string{"ID"}, PageSize: 100, Filters: []query.Expr{filter}})
	if err != nil {
		t.Fatal(err)
	}
	out := []string{}
	for _, r := range res.Rows {
		out = append(out, r[0].Str)
	}
	return out
}

func TestFilterSemantics(t *testing.T) {
	f := orders(t)
	de := cmpx("C", query.TypeString, query.Eq, query.String("DE"))
	tests := []struct {
		name   string
		filter query.Expr
		want   []string
	}{
		{"eq", de, []string{"o1", "o4"}},
		{"ne leaves out null", cmpx("C", query.TypeString, query.Ne, query.String("DE")), []string{"o2", "o5"}},
		{"not eq leaves out null", not(de), []string{"o2", "o5"}},
		{"not not", not(not(de)), []string{"o1", "o4"}},
		{"is null", &query.IsNull{Field: field("C", query.TypeString)}, []string{"o3"}},
		{"is not null", &query.IsNull{Field: field("C", query.TypeString), Negated: true}, []string{"o1", "o2", "o4", "o5"}},
		{"not is null", not(&query.IsNull{Field: field("C", query.TypeString)}), []string{"o1", "o2", "o4", "o5"}},
		{"unknown or true", or(de, &query.IsNull{Field: field("N", query.TypeFloat)}), []string{"o1", "o3", "o4"}},
		{"not (unknown and false)", not(and(cmpx("N", query.TypeFloat, query.Gt, query.Float(0)), cmpx("Q", query.TypeInteger, query.Eq, query.Int(2)))), []string{"o1", "o4"}},
		{"float gt int literal", cmpx("N", query.TypeFloat, query.Gt, query.Int(10)), []string{"o2", "o5"}},
		{"integer gt float literal", cmpx("Q", query.TypeInteger, query.Gt, query.Float(1.5)), []string{"o2", "o4", "o5"}},
		{"integer le float literal", cmpx("Q", query.TypeInteger, query.Le, query.Float(1.5)), []string{"o1"}},
		{"integer eq fractional literal", cmpx("Q", query.TypeInteger, query.Eq, query.Float(2.5)), []string{}},
		{"integer ne fractional literal", cmpx("Q", query.TypeInteger, query.Ne, query.Float(2.5)), []string{"o1", "o2", "o4", "o5"}},
		{"integer eq integral float", cmpx("Q", query.TypeInteger, query.Eq, query.Float(2)), []string{"o2", "o5"}},
		{"integer gt huge negative float", cmpx("Q", query.TypeInteger, query.Gt, query.Float(-1e300)), []string{"o1", "o2", "o4", "o5"}},
		{"integer eq NaN", cmpx("Q", query.TypeInteger, query.Eq, query.Float(math.NaN())), []string{}},
		{"integer ne NaN", cmpx("Q", query.TypeInteger, query.Ne, query.Float(math.NaN())), []string{"o1", "o2", "o4", "o5"}},
		{"in a long list", &query.In{Field: field("N", query.TypeFloat), Values: floats(1, 2, 3, 4, 5, 6, 7, 8, 9, 11, 20.5)}, []string{"o2", "o4", "o5"}},
		{"integer in a long list", &query.In{Field: field("Q", query.TypeInteger), Values: append(floats(1.5, 2.5), lit(query.Int(3)), lit(query.Int(4)), lit(query.Int(5)), lit(query.Int(6)), lit(query.Int(7)), lit(query.Int(8)), lit(query.Int(9)), lit(query.Int(1)))}, []string{"o1", "o4"}},
		{"integer lt huge float", cmpx("Q", query.TypeInteger, query.Lt, query.Float(1e300)), []string{"o1", "o2", "o4", "o5"}},
		{"datetime eq date compares the day", cmpx("AT", query.TypeDateTime, query.Eq, query.Value{Type: query.TypeDate, Int: 100}), []string{"o1"}},
		{"datetime lt date", cmpx("AT", query.TypeDateTime, query.Lt, query.Value{Type: query.TypeDate, Int: 100}), []string{"o4", "o5"}},
		{"datetime ge date", cmpx("AT", query.TypeDateTime, query.Ge, query.Value{Type: query.TypeDate, Int: 100}), []string{"o1", "o2"}},
		{"datetime before 1970 by day", cmpx("AT", query.TypeDateTime, query.Eq, query.Value{Type: query.TypeDate, Int: -1}), []string{"o5"}},
		{"date gt datetime", cmpx("D", query.TypeDate, query.Gt, query.Value{Type: query.TypeDateTime, Int: 100*query.MicrosPerDay + 1}), []string{"o2", "o5"}},
		{"date ge datetime at midnight", cmpx("D", query.TypeDate, query.Ge, query.Value{Type: query.TypeDateTime, Int: 101 * query.MicrosPerDay}), []string{"o2", "o5"}},
		{"in strings", &query.In{Field: field("C", query.TypeString), Values: []query.Literal{lit(query.String("FR")), lit(query.String("IT")), lit(query.String("XX"))}}, []string{"o2", "o5"}},
		{"not in with null is never true", not(&query.In{Field: field("C", query.TypeString), Values: []query.Literal{lit(query.String("FR")), lit(query.Null(query.TypeNull))}}), []string{}},
		{"in with null matches", &query.In{Field: field("C", query.TypeString), Values: []query.Literal{lit(query.String("FR")), lit(query.Null(query.TypeNull))}}, []string{"o2"}},
		{"in empty", &query.In{Field: field("Q", query.TypeInteger)}, []string{}},
		{"not in empty", not(&query.In{Field: field("Q", query.TypeInteger)}), []string{"o1", "o2", "o4", "o5"}},
		{"in integers", &query.In{Field: field("Q", query.TypeInteger), Values: []query.Literal{lit(query.Int(1)), lit(query.Int(3)), lit(query.Float(2.5))}}, []string{"o1", "o4"}},
		{"in datetime by days", &query.In{Field: field("AT", query.TypeDateTime), Values: []query.Literal{lit(query.Value{Type: query.TypeDate, Int: 101}), lit(query.Value{Type: query.TypeDate, Int: -1})}}, []string{"o2", "o5"}},
		{"compare with null literal is unknown", not(cmpx("C", query.TypeString, query.Eq, query.Null(query.TypeNull))), []string{}},
		{"contains", &query.Call{Func: query.Contains, Field: field("ID", query.TypeString), Arg: lit(query.String("4"))}, []string{"o4"}},
		{"startswith is case-sensitive", &query.Call{Func: query.StartsWith, Field: field("ID", query.TypeString), Arg: lit(query.String("O"))}, []string{}},
		{"not endswith skips null", not(&query.Call{Func: query.EndsWith, Field: field("C", query.TypeString), Arg: lit(query.String("E"))}), []string{"o2", "o5"}},
		{"string gt", cmpx("C", query.TypeString, query.Gt, query.String("E")), []string{"o2", "o5"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if d := cmp.Diff(tt.want, ids(t, f, tt.filter)); d != "" {
				t.Errorf("rows (-want +got):\n%s", d)
			}
		})
	}
}

func TestSortPageDistinct(t *testing.T) {
	f := orders(t)
	tests := []struct {
		name string
		req  km.PlanRequest
		want [][]query.Value
		cnt  int
	}{
		{"desc nulls last, ties in row order", km.PlanRequest{Fields: []string{"ID", "N"}, Sort: []query.SortTerm{{Field: "N", Desc: true}}, PageSize: 10, Count: true},
			[][]query.Value{{query.String("o2"), query.Float(20.5)}, {query.String("o5"), query.Float(20.5)}, {query.String("o1"), query.Float(10)}, {query.String("o4"), query.Float(5)}, {query.String("o3"), query.Null(query.TypeFloat)}}, 5},
		{"asc nulls last", km.PlanRequest{Fields: []string{"C"}, Sort: []query.SortTerm{{Field: "C"}}, PageSize: 10},
			[][]query.Value{{query.String("DE")}, {query.String("DE")}, {query.String("FR")}, {query.String("IT")}, {query.Null(query.TypeString)}}, 0},
		{"second page", km.PlanRequest{Fields: []string{"ID"}, Page: 1, PageSize: 2, Count: true},
			[][]query.Value{{query.String("o3")}, {query.String("o4")}}, 5},
		{"page beyond the end", km.PlanRequest{Fields: []string{"ID"}, Page: 7, PageSize: 2, Count: true},
			[][]query.Value{}, 5},
		{"distinct", km.PlanRequest{Fields: []string{"C", "Q"}, Distinct: true, PageSize: 10, Count: true},
			[][]query.Value{{query.String("DE"), query.Int(1)}, {query.String("FR"), query.Int(2)}, {query.Null(query.TypeString), query.Null(query.TypeInteger)}, {query.String("DE"), query.Int(3)}, {query.String("IT"), query.Int(2)}}, 5},
		{"distinct sorted", km.PlanRequest{Fields: []string{"N"}, Distinct: true, Sort: []query.SortTerm{{Field: "N", Desc: true}}, PageSize: 10, Count: true},
			[][]query.Value{{query.Float(20.5)}, {query.Float(10)}, {query.Float(5)}, {query.Null(query.TypeFloat)}}, 4},
		{"two keys", km.PlanRequest{Fields: []string{"Q", "ID"}, Sort: []query.SortTerm{{Field: "Q", Desc: true}, {Field: "ID", Desc: true}}, PageSize: 3},
			[][]query.Value{{query.Int(3), query.String("o4")}, {query.Int(2), query.String("o5")}, {query.Int(2), query.String("o2")}}, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := f.run(tt.req)
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(tt.want, res.Rows); d != "" {
				t.Errorf("rows (-want +got):\n%s", d)
			}
			if res.Count != tt.cnt {
				t.Errorf("count %d, want %d", res.Count, tt.cnt)
			}
		})
	}
}

func TestKPIs(t *testing.T) {
	f := orders(t,
		"ROWS", "count()",
		"NS", "count(O.N)",
		"QD", "countdistinct(O.Q)",
		"SUM", "sum(O.N)",
		"AVG", "avg(O.Q)",
		"MIN", "min(O.Q)", // the KPI language takes min and max of numbers only
		"MAX", "max(O.N)",
		"MED", "median(O.N)",
		"RATIO", "ratio(O.Q ge 2)",
		"SUMQ_N_GT_6", "sum(O.Q, O.N gt 6)",
		"PER_ROW", "sum(O.N) / count(O.ID, O.C eq 'DE')", // ID is never null: count() of the rows in DE
		"PLUS", "count() + 0.5",
		"N", "count()",
		"S", "sum(O.N)")
	res, err := f.run(km.PlanRequest{Record: "-",
		Fields:   []string{"O.C"},
		KPIs:     []string{"ROWS", "NS", "QD", "SUM", "AVG", "MIN", "MAX", "MED", "RATIO", "SUMQ_N_GT_6", "PER_ROW", "PLUS"},
		Sort:     []query.SortTerm{{Field: "SUM", Desc: true}},
		PageSize: 10,
		Count:    true,
	})
	if err != nil {
		t.Fatal(err)
	}
	nf := query.Null(query.TypeFloat)
	want := [][]query.Value{
		{query.String("FR"), query.Int(1), query.Int(1), query.Int(1), query.Float(20.5), query.Float(2), query.Int(2), query.Float(20.5), query.Float(20.5), query.Float(1), query.Int(2), nf, query.Float(1.5)},
		{query.String("IT"), query.Int(1), query.Int(1), query.Int(1), query.Float(20.5), query.Float(2), query.Int(2), query.Float(20.5), query.Float(20.5), query.Float(1), query.Int(2), nf, query.Float(1.5)},
		{query.String("DE"), query.Int(2), query.Int(2), query.Int(2), query.Float(15), query.Float(2), query.Int(1), query.Float(10), query.Float(7.5), query.Float(0.5), query.Int(1), query.Float(7.5), query.Float(2.5)},
		{query.Null(query.TypeString), query.Int(1), query.Int(0), query.Int(0), nf, nf, query.Null(query.TypeInteger), nf, nf, query.Float(0), query.Null(query.TypeInteger), nf, query.Float(1.5)},
	}
	if d := cmp.Diff(want, res.Rows); d != "" {
		t.Errorf("rows (-want +got):\n%s", d)
	}
	if res.Count != 4 {
		t.Errorf("count %d, want 4", res.Count)
	}
	wantCols := []query.ColumnHeader{{Name: "O.C", Type: query.TypeString}, {Name: "ROWS", Type: query.TypeInteger, KPI: true}, {Name: "NS", Type: query.TypeInteger, KPI: true},
		{Name: "QD", Type: query.TypeInteger, KPI: true}, {Name: "SUM", Type: query.TypeFloat, KPI: true}, {Name: "AVG", Type: query.TypeFloat, KPI: true},
		{Name: "MIN", Type: query.TypeInteger, KPI: true}, {Name: "MAX", Type: query.TypeFloat, KPI: true}, {Name: "MED", Type: query.TypeFloat, KPI: true},
		{Name: "RATIO", Type: query.TypeFloat, KPI: true}, {Name: "SUMQ_N_GT_6", Type: query.TypeInteger, KPI: true}, {Name: "PER_ROW", Type: query.TypeFloat, KPI: true},
		{Name: "PLUS", Type: query.TypeFloat, KPI: true}}
	if d := cmp.Diff(wantCols, res.Columns); d != "" {
		t.Errorf("columns (-want +got):\n%s", d)
	}

	// No fields: one group, also when no row passes the filter.
	res, err = f.run(km.PlanRequest{Record: "-",
		KPIs:     []string{"N", "S"},
		PageSize: 5, Count: true,
		Filters: []query.Expr{cmpx("O.Q", query.TypeInteger, query.Gt, query.Int(100))}})
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff([][]query.Value{{query.Int(0), nf}}, res.Rows); d != "" || res.Count != 1 {
		t.Errorf("empty aggregate (-want +got):\n%s count %d", d, res.Count)
	}
}

func TestSearch(t *testing.T) {
	f := kmOf(t, "T", table(t, []string{"NAME", "CITY", "N"}, []query.Type{query.TypeString, query.TypeString, query.TypeInteger}, [][]any{
		{"Screw", "Köln", 1},
		{"Raw Material", "München", 2},
		{"Material", nil, 3},
		{"Matter", "Berlin", 4},
		{nil, "Munich", 5},
	}))
	tests := []struct {
		name string
		req  km.PlanRequest
		want []int64
	}{
		{"typo, best first", km.PlanRequest{Fields: []string{"N", "NAME"}, Search: &km.SearchRequest{Term: "materail", Precision: 70}}, []int64{2, 3}},
		{"exact before typo", km.PlanRequest{Fields: []string{"N", "NAME"}, Search: &km.SearchRequest{Term: "mat", Precision: 60}}, []int64{2, 3, 4}},
		{"accent, no field selected searches all strings", km.PlanRequest{Search: &km.SearchRequest{Term: "munchen", Precision: 90}}, []int64{2}},
		{"no string field selected", km.PlanRequest{Fields: []string{"N"}, Search: &km.SearchRequest{Term: "mat", Precision: 60}}, []int64{}},
		{"string fields among the selected", km.PlanRequest{Fields: []string{"N", "CITY"}, Search: &km.SearchRequest{Term: "material", Precision: 90}}, []int64{}},
		{"named field", km.PlanRequest{Fields: []string{"N"}, Search: &km.SearchRequest{Term: "mun", Fields: []string{"CITY"}, Precision: 95}}, []int64{5, 2}},
		{"sort overrides score", km.PlanRequest{Fields: []string{"N", "NAME"}, Sort: []query.SortTerm{{Field: "N", Desc: true}}, Search: &km.SearchRequest{Term: "mat", Precision: 60}}, []int64{4, 3, 2}},
		{"no match", km.PlanRequest{Fields: []string{"N"}, Search: &km.SearchRequest{Term: "xyz", Precision: 70}}, []int64{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.req.PageSize = 10
			res, err := f.run(tt.req)
			if err != nil {
				t.Fatal(err)
			}
			got := []int64{}
			for _, r := range res.Rows {
				if r[0].Type == query.TypeInteger {
					got = append(got, r[0].Int)
				} else {
					got = append(got, r[len(r)-1].Int)
				}
			}
			if d := cmp.Diff(tt.want, got); d != "" {
				t.Errorf("rows (-want +got):\n%s", d)
			}
		})
	}
}

// TestErrors: a request the executor could not answer is refused when its plan is
// compiled, as a client error (400); the Source never sees it.
func TestErrors(t *testing.T) {
	f := orders(t)
	tests := []struct {
		name string
		req  km.PlanRequest
	}{
		{"unknown field", km.PlanRequest{Fields: []string{"X"}, PageSize: 1}},
		{"unknown filter field", km.PlanRequest{PageSize: 1, Filters: []query.Expr{cmpx("X", query.TypeString, query.Eq, query.String("a"))}}},
		{"unknown sort field", km.PlanRequest{Fields: []string{"ID"}, Sort: []query.SortTerm{{Field: "X"}}, PageSize: 1}},
		{"sort not selected", km.PlanRequest{Fields: []string{"ID"}, Sort: []query.SortTerm{{Field: "N"}}, PageSize: 1}},
		{"page size", km.PlanRequest{PageSize: 0}},
		{"negative page", km.PlanRequest{Page: -1, PageSize: 1}},
		{"unknown KPI", km.PlanRequest{Record: "-", KPIs: []string{"K"}, PageSize: 1}},
		{"search non-string", km.PlanRequest{Search: &km.SearchRequest{Term: "a", Fields: []string{"N"}}, PageSize: 1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := f.run(tt.req)
			var pe *problem.Problem
			var qe *query.Error
			if !errors.As(err, &pe) && !errors.As(err, &qe) || pe != nil && pe.Status != 400 {
				t.Errorf("err = %v, want a client error", err)
			}
		})
	}
}

// TestKPIErrors: a KPI the executor could not compute is refused when the KM loads.
func TestKPIErrors(t *testing.T) {
	for _, expr := range []string{"sum(O.C)", "min(O.Z)", "ratio()", "min(O.C) + 1"} {
		m := "id: m\nrecords:\n  - id: O\n    key: ID\n    fields: [{id: ID, type: string}, {id: C, type: string}]\nkpis:\n  - {id: K, expr: \"" + expr + "\", record: O}\n"
		if _, err := km.Load(fstest.MapFS{"models/m.yaml": {Data: []byte(m)}}); err == nil {
			t.Errorf("KPI %s loaded", expr)
		}
	}
}

// TestConstantKPI: a KPI that aggregates nothing ("3" loads) is one group of its value
// without fields; it once indexed the pairs of its first aggregate, which it has not.
func TestConstantKPI(t *testing.T) {
	f := orders(t, "THREE", "3")
	res, err := f.run(km.PlanRequest{Record: "-", KPIs: []string{"THREE"}, PageSize: 5, Count: true})
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff([][]query.Value{{query.Float(3)}}, res.Rows); d != "" || res.Count != 1 {
		t.Errorf("rows (-want +got):\n%s count %d", d, res.Count)
	}
}
