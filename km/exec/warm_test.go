package exec

import (
	"math/rand/v2"
	"sync"
	"testing"

	gocmp "github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/kmkit/kmkit/km"
)

// TestWarmSortIndexes: Warm builds the sort indexes of each record's key and declared
// index columns (at most warmSortColumns a record), or of every column of a record of at
// most warmSortAllRows rows, in the table indexes every frame over the table reads, and
// requests of every shape, run two at a time while Warm runs and again after it, answer
// as the reference evaluator does, as they do on a Source never warmed (run with -race).
// Every other table set is warmed as a large one (warmSortAllRows 0).
func TestWarmSortIndexes(t *testing.T) {
	g := &gen{r: rand.New(rand.NewPCG(15, 16)), plan: true}
	warmed := 0
	allRows := warmSortAllRows
	t.Cleanup(func() { warmSortAllRows = allRows })
	for set := range 30 {
		warmSortAllRows = allRows
		if set%2 == 1 {
			warmSortAllRows = 0
		}
		_, rf := g.tables(t)
		a, b := rf.o.m.Record("A"), rf.o.m.Record("B")
		declared := len(a.Fields) // A declares an index of each field, or of its first only
		if set%4 >= 2 {
			declared = 1
		}
		for _, f := range a.Fields[:declared] {
			a.Indexes = append(a.Indexes, km.Index{{Field: f.ID, Descending: set%2 == 0}})
		}
		b.Indexes = []km.Index{{{Field: "S"}}}
		cold := NewSource(rf.o.m, rf.o.src.tables)
		var reqs [2][]*queryCase
		for w := range reqs {
			for range 20 {
				req := g.request(t, rf)
				reqs[w] = append(reqs[w], &queryCase{req: req, want: rf.run(req)})
			}
		}
		check := func(what string, src func() *Source, c *queryCase, i int) {
			r := *c.req
			r.Record = rf.record()
			o := *rf.o
			o.src = src()
			got, err := o.run(r)
			if err != nil {
				t.Errorf("set %d, %s, case %d: %v\nrequest %s", set, what, i, err, describe(c.req))
				return
			}
			if d := gocmp.Diff(c.want, got, cmpopts.EquateApprox(1e-9, 1e-9), cmpopts.EquateEmpty()); d != "" {
				t.Errorf("set %d, %s, case %d: result differs from the reference (-want +got):\n%s\nrequest %s", set, what, i, d, describe(c.req))
			}
		}
		var wg sync.WaitGroup
		wg.Go(rf.o.src.Warm)
		for w := range reqs {
			wg.Go(func() {
				for i, c := range reqs[w] {
					check("during Warm", func() *Source { return rf.o.src }, c, i)
				}
			})
		}
		wg.Wait()
		for i, c := range reqs[0] {
			check("after Warm", func() *Source { return rf.o.src }, c, i)
			check("never warmed", func() *Source { return cold }, c, i)
		}
		if t.Failed() {
			return
		}
		// Warm built the key's and the declared columns' indexes (the first
		// warmSortColumns of A's), or every column's of a small record, and a frame's
		// sort reads them.
		tab := rf.o.src.tables["A"]
		for i, f := range a.Fields {
			c, _ := tab.Column(f.ID)
			v, ok := rf.o.src.sorts.Load(c)
			built := ok && v.(*sortIndex).perm != nil
			if tab.Rows() > 0 && (i < min(declared, warmSortColumns) || tab.Rows() <= warmSortAllRows) && !built {
				t.Errorf("set %d: Warm built no sort index of A.%s (%d rows)", set, f.ID, tab.Rows())
			}
		}
		bt := rf.o.src.tables["B"]
		for _, name := range bt.Names() {
			c, _ := bt.Column(name)
			v, ok := rf.o.src.sorts.Load(c)
			built := ok && v.(*sortIndex).perm != nil
			if (name == "K" || name == "S" || bt.Rows() <= warmSortAllRows) && !built {
				t.Errorf("set %d: Warm built no sort index of B.%s (%d rows)", set, name, bt.Rows())
			}
		}
		fr, err := rf.o.src.frame("A", nil, false)
		if err != nil {
			t.Fatal(err)
		}
		c, _ := tab.Column(a.Fields[0].ID)
		if fr.sortIndex("A."+a.Fields[0].ID, fr.refs["A."+a.Fields[0].ID]) != tableSortIndex(rf.o.src.sorts, c, nil) {
			t.Errorf("set %d: a frame's sort builds its own index instead of reading the one Warm built", set)
		}
		warmed++
	}
	if warmed == 0 {
		t.Fatal("no table set was warmed")
	}
}
