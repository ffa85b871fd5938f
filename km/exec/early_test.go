package exec

import (
	"context"
	"fmt"
	"math/rand/v2"
	"runtime"
	"testing"

	gocmp "github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/kmkit/kmkit/km"
	"github.com/kmkit/kmkit/query"
)

// TestRowFilterAgainstReference holds the row-by-row filter (compileRow) to the reference
// evaluator on every row of random tables and filters, joined columns included.
func TestRowFilterAgainstReference(t *testing.T) {
	g := &gen{r: rand.New(rand.NewPCG(5, 6))}
	n := 2000
	if testing.Short() {
		n = 300
	}
	for i := range n {
		f, rf := g.tables(t)
		e := g.filter(rf, 3)
		rp, ok := f.compileRow(e)
		if _, err := f.compileFilter(context.Background(), e); err != nil {
			if ok {
				t.Fatalf("case %d: compileRow accepts a filter compileFilter rejects (%v): %s", i, err, exprString(e))
			}
			continue
		}
		if !ok {
			t.Fatalf("case %d: compileRow has no row form of %s", i, exprString(e))
		}
		for r, row := range rf.rows {
			want := tri(rf.eval(e, row)) // the reference's vFalse, vTrue, vUnknown
			if got := rp(int32(r)); got != want {
				t.Fatalf("case %d row %d: %v, reference %v\nfilter %s", i, r, got, want, exprString(e))
			}
		}
	}
}

// TestTrueOnlyFilterAgainstReference holds compileTrue (no false bitmaps below its ANDs and
// ORs) to the reference evaluator's true rows.
func TestTrueOnlyFilterAgainstReference(t *testing.T) {
	g := &gen{r: rand.New(rand.NewPCG(7, 8))}
	for i := range 500 {
		f, rf := g.tables(t)
		e := g.filter(rf, 3)
		p, err := f.compileTrue(context.Background(), e)
		if err != nil {
			continue // ill-typed random literal: compileFilter's error
		}
		got := p().t
		for r, row := range rf.rows {
			if want := rf.eval(e, row) == vTrue; got.Get(r) != want {
				t.Fatalf("case %d row %d: true %v, reference %v\nfilter %s", i, r, got.Get(r), want, exprString(e))
			}
		}
	}
}

// TestEarlyPageAgainstReference runs random sorted, filtered pages without a count, which
// the Source serves by walking the sort index with the row filter, against the reference.
func TestEarlyPageAgainstReference(t *testing.T) {
	g := &gen{r: rand.New(rand.NewPCG(9, 10)), plan: true}
	n := 3000
	if testing.Short() {
		n = 400
	}
	early, gaveUp := 0, 0
	for i := range n {
		_, rf := g.tables(t)
		req := g.request(t, rf)
		if len(req.KPIs) > 0 {
			continue // KPIs are not pages of rows
		}
		req.Count, req.Distinct, req.Search = false, false, nil
		if len(req.Filters) == 0 {
			req.Filters = []query.Expr{g.filter(rf, 2)}
		}
		sortable := req.Fields
		if len(sortable) == 0 {
			sortable = rf.names
		}
		req.Sort = nil
		for range 1 + g.r.IntN(2) {
			req.Sort = append(req.Sort, query.SortTerm{Field: sortable[g.r.IntN(len(sortable))], Desc: g.r.IntN(2) == 0})
		}
		want := rf.run(req)
		got, err := rf.plan(req)
		if err != nil {
			t.Fatalf("case %d: %v\nrequest %s", i, err, describe(req))
		}
		if d := gocmp.Diff(want, got, cmpopts.EquateApprox(1e-9, 1e-9), cmpopts.EquateEmpty()); d != "" {
			t.Fatalf("case %d: result differs from the reference (-want +got):\n%s\nrequest %s", i, d, describe(req))
		}
		p, keep := rf.o.early(t, *req)
		if keep == nil || !p.earlyPageFits() {
			t.Fatalf("case %d: no early page for %s", i, describe(req))
		}
		top, ok := p.earlyTop(keep)
		if !ok {
			gaveUp++
			continue
		}
		early++
		if d := gocmp.Diff(want.Rows, p.pageOf(top), cmpopts.EquateApprox(1e-9, 1e-9), cmpopts.EquateEmpty()); d != "" {
			t.Fatalf("case %d: early page differs from the reference (-want +got):\n%s\nrequest %s", i, d, describe(req))
		}
	}
	// The tables are smaller than earlyFixed: every walk may read the whole index
	// (TestEarlyPageSelectivity has walks that give up).
	if gaveUp > 0 || early == 0 {
		t.Errorf("%d early pages, %d walks given up: want every page early", early, gaveUp)
	}
}

// selectivityTable has 20,000 rows: ID, X (float, 500 values, one row in 20 null), C (4
// strings, one row in 50 null) and M (integer 0..999).
func selectivityTable(t *testing.T) (*Frame, *refFrame) {
	r := rand.New(rand.NewPCG(11, 12))
	names := []string{"ID", "X", "C", "M"}
	types := []query.Type{query.TypeInteger, query.TypeFloat, query.TypeString, query.TypeInteger}
	rows := make([][]query.Value, 20000)
	for i := range rows {
		x, c := query.Float(float64(r.IntN(500))/4), query.String(string(rune('a'+r.IntN(4))))
		if r.IntN(20) == 0 {
			x = query.Null(query.TypeFloat)
		}
		if r.IntN(50) == 0 {
			c = query.Null(query.TypeString)
		}
		rows[i] = []query.Value{query.Int(int64(i)), x, c, query.Int(int64(r.IntN(1000)))}
	}
	rf := &refFrame{names: names, types: map[string]query.Type{}}
	for i, name := range names {
		rf.types[name] = types[i]
	}
	for _, row := range rows {
		m := map[string]query.Value{}
		for i, name := range names {
			m[name] = row[i]
		}
		rf.rows = append(rf.rows, m)
	}
	tab := build(t, names, types, rows)
	rf.o = kmOf(t, "T", tab)
	return FromTable(tab), rf
}

// TestEarlyPageSelectivity: filters from half the rows to none, sorted with ties and
// nulls, ascending and descending, pages within and beyond the matches. Every page equals
// the reference; the walk serves the pages whose end it reaches early and gives up on the
// others (a very selective filter, or one that keeps only the far end of the order).
func TestEarlyPageSelectivity(t *testing.T) {
	_, rf := selectivityTable(t)
	i, s, fl := query.Int, query.String, query.Float
	half := cmpx("M", query.TypeInteger, query.Lt, i(500))
	rare := cmpx("M", query.TypeInteger, query.Eq, i(7))
	none := cmpx("M", query.TypeInteger, query.Lt, i(0))
	farEnd := cmpx("X", query.TypeFloat, query.Lt, fl(2))
	nullX := &query.IsNull{Field: field("X", query.TypeFloat)}
	mixed := or(and(&query.In{Field: field("C", query.TypeString), Values: []query.Literal{lit(s("a")), lit(s("c"))}}, not(cmpx("M", query.TypeInteger, query.Ge, i(300)))), nullX)
	desc := []query.SortTerm{{Field: "X", Desc: true}}
	asc := []query.SortTerm{{Field: "X"}}
	twoKeys := []query.SortTerm{{Field: "X", Desc: true}, {Field: "C"}}
	byC := []query.SortTerm{{Field: "C"}, {Field: "X", Desc: true}}
	tests := []struct {
		name   string
		filter query.Expr
		sort   []query.SortTerm
		page   int
		early  bool
	}{
		{"half, desc", half, desc, 0, true},
		{"half, asc, page 7", half, asc, 7, true},
		{"half, two keys", half, twoKeys, 2, true},
		{"half, page beyond the matches", half, desc, 1000, false},
		{"mixed with nulls", mixed, desc, 1, true},
		{"nulls only, sorted on the null column", nullX, desc, 0, false},
		{"rare", rare, desc, 0, false},
		{"none", none, asc, 0, false},
		{"far end", farEnd, desc, 0, false},
		{"near end", farEnd, asc, 3, true},
		{"long runs of the first key", half, byC, 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req := &km.PlanRequest{Fields: []string{"ID", "X", "C"}, Filters: where(tt.filter), Sort: tt.sort, Page: tt.page, PageSize: 20}
			want := rf.run(req)
			got, err := rf.plan(req)
			if err != nil {
				t.Fatal(err)
			}
			if d := gocmp.Diff(want, got, cmpopts.EquateEmpty()); d != "" {
				t.Fatalf("page differs from the reference (-want +got):\n%s", d)
			}
			p, keep := rf.o.early(t, *req)
			if keep == nil {
				t.Fatal("no row filter")
			}
			top, ok := p.earlyTop(keep)
			if ok != tt.early {
				t.Errorf("early walk ok = %v, want %v", ok, tt.early)
			}
			if ok {
				if d := gocmp.Diff(want.Rows, p.pageOf(top), cmpopts.EquateEmpty()); d != "" {
					t.Errorf("early page differs from the reference (-want +got):\n%s", d)
				}
			}
			// With a count the bitmap path answers: the same rows.
			req.Count = true
			counted, err := rf.plan(req)
			if err != nil {
				t.Fatal(err)
			}
			if d := gocmp.Diff(want.Rows, counted.Rows, cmpopts.EquateEmpty()); d != "" {
				t.Errorf("counted page differs (-want +got):\n%s", d)
			}
		})
	}
}

// TestSmallPagesAllocateNoRowSets: an unfiltered page (sorted or not) and an early
// filtered sorted page allocate far less than one bit per row of the table: no bitmap or
// selection vector of all rows.
func TestSmallPagesAllocateNoRowSets(t *testing.T) {
	_, rf := selectivityTable(t)
	half := cmpx("M", query.TypeInteger, query.Lt, query.Int(500))
	reqs := map[string]*km.PlanRequest{
		"unfiltered, sorted":   {Fields: []string{"ID", "X"}, Sort: []query.SortTerm{{Field: "X", Desc: true}}, PageSize: 10},
		"unfiltered, unsorted": {Fields: []string{"ID", "X"}, Page: 3, PageSize: 10},
		"filtered, sorted":     {Fields: []string{"ID", "X"}, Filters: where(half), Sort: []query.SortTerm{{Field: "X", Desc: true}}, PageSize: 10},
	}
	for name, req := range reqs {
		t.Run(name, func(t *testing.T) {
			// The plan is compiled once, as km.Service does per request: what is
			// measured is the Source's run.
			p := rf.o.compile(t, *req)
			ctx := context.Background()
			if _, err := rf.o.src.RunContext(ctx, p); err != nil { // builds the sort index
				t.Fatal(err)
			}
			const runs = 20
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			for range runs {
				if _, err := rf.o.src.RunContext(ctx, p); err != nil {
					t.Fatal(err)
				}
			}
			runtime.ReadMemStats(&after)
			perRun := (after.TotalAlloc - before.TotalAlloc) / runs
			if limit := uint64(len(rf.rows) / 8); perRun >= limit {
				t.Errorf("%d bytes per page, want below %d (a bit per row)", perRun, limit)
			}
		})
	}
}

func (v tri) String() string { return fmt.Sprint([]string{"false", "true", "unknown"}[v]) }
