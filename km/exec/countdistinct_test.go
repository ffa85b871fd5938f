package exec

import (
	"fmt"
	"math/rand/v2"
	"testing"

	gocmp "github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/kmkit/kmkit/km"
	"github.com/kmkit/kmkit/query"
	"github.com/kmkit/kmkit/query/column"
)

// TestCountDistinctSortedPath holds countdistinct's sorted-bucket path (taken when the
// per-group bitmaps would be too large) to the reference evaluator, by forcing it for
// every column.
func TestCountDistinctSortedPath(t *testing.T) {
	saved := distinctBitsLimit
	distinctBitsLimit = 0
	t.Cleanup(func() { distinctBitsLimit = saved })
	g := &gen{r: rand.New(rand.NewPCG(7, 14)), plan: true}
	for i := range 600 {
		_, rf := g.tables(t)
		req := g.request(t, rf)
		want := rf.run(req)
		got, err := rf.plan(req)
		if err != nil {
			t.Fatalf("case %d: %v\nrequest %s", i, err, describe(req))
		}
		if d := gocmp.Diff(want, got, cmpopts.EquateApprox(1e-9, 1e-9), cmpopts.EquateEmpty()); d != "" {
			t.Fatalf("case %d: result differs from the reference (-want +got):\n%s\nrequest %s", i, d, describe(req))
		}
	}
}

// TestCountDistinctOfDistinctValues: countdistinct of a column whose every row holds a
// value of its own (the key, whose sort index Warm builds) counts the group's rows that
// hold one; of a column with repeated values it counts them once: both as worked out
// row by row, on a Source warmed and on one not.
func TestCountDistinctOfDistinctValues(t *testing.T) {
	r := rand.New(rand.NewPCG(41, 42))
	n := 5000
	key, dup, grp := column.NewBuilder(query.TypeString), column.NewBuilder(query.TypeString), column.NewBuilder(query.TypeString)
	type acc struct {
		keys int
		dups map[string]bool
	}
	want := map[string]*acc{}
	for i := range n {
		key.AppendString(fmt.Sprint("k", n-i)) // distinct, not in row order
		g := fmt.Sprint("g", r.IntN(9))
		grp.AppendString(g)
		if want[g] == nil {
			want[g] = &acc{dups: map[string]bool{}}
		}
		want[g].keys++
		d := fmt.Sprint("d", r.IntN(50))
		dup.AppendString(d)
		want[g].dups[d] = true
	}
	tab, err := column.NewTable([]string{"K", "G", "D"}, []column.Column{key.Build(), grp.Build(), dup.Build()})
	if err != nil {
		t.Fatal(err)
	}
	o := kmOf(t, "T", tab, "KEYS", "countdistinct(T.K)", "DUPS", "countdistinct(T.D)")
	o.m.Record("T").Indexes = []km.Index{{{Field: "D"}}}
	req := km.PlanRequest{Record: "-", Fields: []string{"T.G"}, KPIs: []string{"KEYS", "DUPS"}, PageSize: 100}
	check := func(what string) {
		res, err := o.run(req)
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Rows) != len(want) {
			t.Fatalf("%s: %d groups, want %d", what, len(res.Rows), len(want))
		}
		for _, row := range res.Rows {
			w := want[row[0].Str]
			if row[1].Int != int64(w.keys) || row[2].Int != int64(len(w.dups)) {
				t.Errorf("%s: group %s: %d keys, %d values of D; want %d, %d", what, row[0].Str, row[1].Int, row[2].Int, w.keys, len(w.dups))
			}
		}
	}
	if o.src.distinctValues(tab, "K") {
		t.Error("distinct values reported without a sort index")
	}
	check("not warmed")
	o.src.Warm()
	if !o.src.distinctValues(tab, "K") || o.src.distinctValues(tab, "D") {
		t.Errorf("distinct values after Warm: K %v, D %v; want true, false",
			o.src.distinctValues(tab, "K"), o.src.distinctValues(tab, "D"))
	}
	check("warmed")
}
