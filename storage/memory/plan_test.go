package memory

import (
	"context"
	"testing"
	"testing/fstest"

	"github.com/google/go-cmp/cmp"

	"github.com/kmkit/kmkit/km"
	"github.com/kmkit/kmkit/query"
)

// planKM is a parent P with children C: p1 has c1, c2, c3; p2 has c4; p3 none; c5 has no
// parent (null key) and c6 a dangling one.
var planKM = fstest.MapFS{
	"models/m.yaml": {Data: []byte(`id: m
records:
  - id: P
    key: ID
    fields: [{id: ID, type: string}, {id: V, type: float}]
  - id: C
    key: ID
    fields: [{id: ID, type: string}, {id: P_ID, type: string}, {id: G, type: string}, {id: Q, type: integer}]
relationships:
  - {from: C.P_ID, to: P.ID}
kpis:
  - {id: SUM_V, expr: sum(P.V)}
  - {id: SUM_Q, expr: sum(C.Q)}
  - {id: N_P, expr: count(), record: P}
  - {id: SHARE_A, expr: ratio(C.G eq 'a')}
  - {id: V_WITH_A, expr: "sum(P.V, C.G eq 'a')"}
`)},
	"data/P.csv": {Data: []byte("ID,V\np1,10\np2,20\np3,40\n")},
	"data/C.csv": {Data: []byte("ID,P_ID,G,Q\nc1,p1,a,1\nc2,p1,b,2\nc3,p1,a,3\nc4,p2,b,4\nc5,,a,5\nc6,px,b,6\n")},
}

// TestPlanSemantics checks the plan's semantics on a KM small enough to work the answers
// out by hand (written next to each case), on a store as loaded and on one warmed
// (KMStore.Warm: relationship indexes and scratch memory built before the first query).
func TestPlanSemantics(t *testing.T) {
	t.Run("loaded", func(t *testing.T) { testPlanSemantics(t, false) })
	t.Run("warmed", func(t *testing.T) { testPlanSemantics(t, true) })
}

func testPlanSemantics(t *testing.T, warm bool) {
	s := New().KM()
	err := s.Import(context.Background(), planKM)
	if err != nil {
		t.Fatal(err)
	}
	if warm {
		if err := s.Warm(); err != nil {
			t.Fatal(err)
		}
	}
	m, err := s.Model(context.Background(), "m")
	if err != nil {
		t.Fatal(err)
	}
	str, f, i := query.String, query.Float, query.Int
	nullS, nullF, nullI := query.Null(query.TypeString), query.Null(query.TypeFloat), query.Null(query.TypeInteger)
	cases := []struct {
		name    string
		record  string
		fields  []string
		kpis    []string
		filters []string
		want    [][]query.Value
	}{
		// p1 counts once in a and once in b; p3 has no child: the null group.
		{"grain down", "", []string{"C.G"}, []string{"SUM_V"}, nil,
			[][]query.Value{{str("a"), f(10)}, {str("b"), f(30)}, {nullS, f(40)}}},
		{"grain down with a KPI of the child", "", []string{"C.G"}, []string{"SUM_V", "SUM_Q"}, nil,
			[][]query.Value{{str("a"), f(10), i(9)}, {str("b"), f(30), i(12)}, {nullS, f(40), nullI}}},
		{"child KPI alone", "", []string{"C.G"}, []string{"SUM_Q"}, nil,
			[][]query.Value{{str("a"), i(9)}, {str("b"), i(12)}}},
		// Children without a parent (c5, c6) fall in the null group of P.V.
		{"grain up", "", []string{"P.V"}, []string{"SUM_Q", "N_P"}, nil,
			[][]query.Value{{f(10), i(6), i(1)}, {f(20), i(4), i(1)}, {nullF, i(11), i(0)}, {f(40), nullI, i(1)}}},
		// P.V gt 15 passes p2 and p3; of the children only c4 (child of p2).
		{"filter on the parent", "", []string{"C.G"}, []string{"SUM_V", "SUM_Q"}, []string{"P.V gt 15"},
			[][]query.Value{{str("b"), f(20), i(4)}, {nullS, f(40), nullI}}},
		// C.Q ge 3 passes c3..c6; parents with a passing child: p1 (c3), p2 (c4).
		{"filter on the child", "", []string{"C.G"}, []string{"SUM_V", "N_P"}, []string{"C.Q ge 3"},
			[][]query.Value{{str("a"), f(10), i(1)}, {str("b"), f(20), i(1)}}},
		{"no row passes", "", nil, []string{"SUM_V", "N_P"}, []string{"P.V gt 100"},
			[][]query.Value{{nullF, i(0)}}},
		// ratio over C: a in c1, c3, c5 of six; sum over P of the parents with an a child: p1.
		{"conditions", "", nil, []string{"SHARE_A", "V_WITH_A"}, nil,
			[][]query.Value{{f(0.5), f(10)}}},
		{"record level, parent filter", "C", []string{"ID"}, nil, []string{"P.V gt 15"},
			[][]query.Value{{str("c4")}}},
		{"record level, child filter", "P", []string{"ID"}, nil, []string{"C.G eq 'a'"},
			[][]query.Value{{str("p1")}}},
		{"rows at the child grain", "", []string{"C.ID", "P.V"}, nil, nil,
			[][]query.Value{{str("c1"), f(10)}, {str("c2"), f(10)}, {str("c3"), f(10)}, {str("c4"), f(20)}, {str("c5"), nullF}, {str("c6"), nullF}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := &km.PlanRequest{Record: c.record, Fields: c.fields, KPIs: c.kpis, PageSize: 100}
			for _, text := range c.filters {
				e, err := query.ParseAndBind(text, m.FilterSchema(c.record))
				if err != nil {
					t.Fatal(err)
				}
				r.Filters = append(r.Filters, e)
			}
			p, err := km.NewPlan(m, r)
			if err != nil {
				t.Fatal(err)
			}
			res, err := s.Query(context.Background(), p)
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(c.want, res.Rows); d != "" {
				t.Errorf("rows (-want +got):\n%s", d)
			}
		})
	}
}

// TestPlanSortedPages: sorted, filtered record pages, which the executor finds by walking
// the sort index with the filter tested row by row (a parent's filter through the
// relationship), or, for a filter on children, by bitmaps; each page also with a count,
// which takes the bitmap path, for the same rows. Answers worked out by hand.
func TestPlanSortedPages(t *testing.T) {
	s := New().KM()
	err := s.Import(context.Background(), planKM)
	if err != nil {
		t.Fatal(err)
	}
	m, err := s.Model(context.Background(), "m")
	if err != nil {
		t.Fatal(err)
	}
	str := query.String
	cases := []struct {
		name   string
		record string
		fields []string
		filter string
		sort   []query.SortTerm
		page   int
		want   []query.Value // the first field of each row
		count  int
	}{
		// P.V lt 15 passes p1: its children c1, c2, c3, by Q descending.
		{"parent filter", "C", []string{"ID", "Q"}, "P.V lt 15", []query.SortTerm{{Field: "Q", Desc: true}}, 0, []query.Value{str("c3"), str("c2")}, 3},
		{"parent filter, page 1", "C", []string{"ID", "Q"}, "P.V lt 15", []query.SortTerm{{Field: "Q", Desc: true}}, 1, []query.Value{str("c1")}, 3},
		{"parent filter, beyond", "C", []string{"ID", "Q"}, "P.V lt 15", []query.SortTerm{{Field: "Q", Desc: true}}, 5, nil, 3},
		// not(P.V gt 15) is true for p1 only; c5 (no parent) and c6 (dangling) reach none.
		{"negated parent filter", "C", []string{"ID", "Q"}, "not (P.V gt 15)", []query.SortTerm{{Field: "Q"}}, 0, []query.Value{str("c1"), str("c2")}, 3},
		{"own filter", "C", []string{"ID", "Q"}, "G eq 'a' and Q gt 1", []query.SortTerm{{Field: "Q", Desc: true}}, 0, []query.Value{str("c5"), str("c3")}, 2},
		// C.G eq 'a' passes the parents of c1, c3 (p1); c5 has none.
		{"child filter", "P", []string{"ID", "V"}, "C.G eq 'a'", []query.SortTerm{{Field: "V", Desc: true}}, 0, []query.Value{str("p1")}, 1},
		// KM level at the child grain: c1..c4 have a parent with V gt 5; ties in row order.
		{"KM level", "", []string{"C.ID", "P.V"}, "P.V gt 5", []query.SortTerm{{Field: "P.V", Desc: true}}, 0, []query.Value{str("c4"), str("c1")}, 4},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e, err := query.ParseAndBind(c.filter, m.FilterSchema(c.record))
			if err != nil {
				t.Fatal(err)
			}
			for _, count := range []bool{false, true} {
				r := &km.PlanRequest{Record: c.record, Fields: c.fields, Sort: c.sort, Page: c.page, PageSize: 2, Count: count}
				r.Filters = []query.Expr{e}
				p, err := km.NewPlan(m, r)
				if err != nil {
					t.Fatal(err)
				}
				res, err := s.Query(context.Background(), p)
				if err != nil {
					t.Fatal(err)
				}
				var got []query.Value
				for _, row := range res.Rows {
					got = append(got, row[0])
				}
				if d := cmp.Diff(c.want, got); d != "" {
					t.Errorf("count %v: rows (-want +got):\n%s", count, d)
				}
				if want := map[bool]int{true: c.count}[count]; res.Count != want {
					t.Errorf("count %v: Count %d, want %d", count, res.Count, want)
				}
			}
		})
	}
}

// TestWarmSharesScratch: the executors of two KMs over the same tables (the second built
// sharing the first's scratch memory and fuzzy scores, exec.NewSourceSharing) both answer,
// warmed, as the hand-worked rows of TestPlanSemantics ("grain up") say.
func TestWarmSharesScratch(t *testing.T) {
	ctx := context.Background()
	fsys := fstest.MapFS{}
	for k, v := range planKM {
		fsys[k] = v
	}
	fsys["models/m2.yaml"] = &fstest.MapFile{Data: []byte("id: m2\nextends: m\n")}
	s := New().KM()
	if err := s.Import(ctx, fsys); err != nil {
		t.Fatal(err)
	}
	if err := s.Warm(); err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"m", "m2"} {
		m, err := s.Model(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		p, err := km.NewPlan(m, &km.PlanRequest{
			Fields: []string{"P.V"}, KPIs: []string{"SUM_Q", "N_P"}, PageSize: 100})
		if err != nil {
			t.Fatal(err)
		}
		res, err := s.Query(ctx, p)
		if err != nil {
			t.Fatal(err)
		}
		// Children without a parent (c5, c6) fall in the null group of P.V.
		f, i := query.Float, query.Int
		want := [][]query.Value{{f(10), i(6), i(1)}, {f(20), i(4), i(1)}, {query.Null(query.TypeFloat), i(11), i(0)}, {f(40), query.Null(query.TypeInteger), i(1)}}
		if d := cmp.Diff(want, res.Rows); d != "" {
			t.Errorf("KM %s (-want +got):\n%s", id, d)
		}
	}
}
