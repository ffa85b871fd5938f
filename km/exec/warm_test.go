package exec

import (
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"

	gocmp "github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/kmkit/kmkit/km"
	"github.com/kmkit/kmkit/query"
	"github.com/kmkit/kmkit/query/column"
	"github.com/kmkit/kmkit/query/fuzzy"
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

// TestFiltersSeekInBuiltIndexes: equalities and in-lists read the rows of the values they
// seek from the built sort indexes, or through the relationship a field refers by
// (declared for every column here but, on odd sets, the referring A.FK; the row
// threshold is lifted, so that the small generated tables take those paths; Warm builds
// them) and answer as the reference
// evaluator does, nulls, dangling keys and absent values included.
func TestFiltersSeekInBuiltIndexes(t *testing.T) {
	defer func(n int) { rowsPerSoughtValue = n }(rowsPerSoughtValue)
	rowsPerSoughtValue = 0
	g := &gen{r: rand.New(rand.NewPCG(17, 18)), plan: true}
	sought := 0
	for set := range 40 {
		_, rf := g.tables(t)
		for _, id := range []string{"A", "B"} {
			r := rf.o.m.Record(id)
			for _, f := range r.Fields {
				// On odd sets A.FK has no index of its own: its rows are sought through
				// the relationship (B.K's index and the children of its rows).
				if f.ID != "FK" || set%2 == 0 {
					r.Indexes = append(r.Indexes, km.Index{{Field: f.ID}})
				}
			}
		}
		rf.o.src.Warm() // the key's and the first warmSortColumns fields' indexes
		for i := range 40 {
			req := g.request(t, rf)
			if i%4 == 0 { // the referring field sought among B's keys (k0, k1 ...)
				fk := field("A.FK", query.TypeString)
				var vals []query.Literal
				for range 1 + g.r.IntN(3) {
					vals = append(vals, lit(query.String(fmt.Sprintf("k%d", g.r.IntN(3)))))
				}
				req.Filters = []query.Expr{&query.In{Field: fk, Values: vals}}
				if i%8 == 0 {
					req.Filters = []query.Expr{&query.Compare{Field: fk, Op: query.Eq, Value: vals[0]}}
				}
			}
			want := rf.run(req)
			r := *req
			r.Record = rf.record()
			got, err := rf.o.run(r)
			if err != nil {
				t.Fatalf("set %d, case %d: %v\nrequest %s", set, i, err, describe(req))
			}
			if d := gocmp.Diff(want, got, cmpopts.EquateApprox(1e-9, 1e-9), cmpopts.EquateEmpty()); d != "" {
				t.Fatalf("set %d, case %d: result differs from the reference (-want +got):\n%s\nrequest %s", set, i, d, describe(req))
			}
		}
		for _, c := range rf.o.src.tables["A"].Columns() {
			if f := (&Frame{tableIndexes: rf.o.src.sorts}); f.builtIndex(c) != nil {
				sought++
			}
		}
	}
	if sought == 0 {
		t.Fatal("no column had a built index to seek in")
	}
}

// TestWarmSearchIndexes: Warm builds the fuzzy index of each string dictionary of up to
// warmSearchValues values, once for columns sharing a dictionary, and leaves larger ones
// to their first search, which builds the index the later searches read.
func TestWarmSearchIndexes(t *testing.T) {
	rows := warmSearchValues + 1
	key, small, large := column.NewBuilder(query.TypeInteger), column.NewBuilder(query.TypeString), column.NewBuilder(query.TypeString)
	for i := range rows {
		key.AppendInt(int64(i))
		small.AppendString(fmt.Sprintf("Material %d", i%100))
		large.AppendString(fmt.Sprintf("Order %d", i))
	}
	s := small.Build().(*column.Strings)
	shared := &column.Strings{Codes: s.Codes, Dict: s.Dict} // another column, the same dictionary
	tab, err := column.NewTable([]string{"K", "S", "T", "L"}, []column.Column{key.Build(), s, shared, large.Build()})
	if err != nil {
		t.Fatal(err)
	}
	o := kmOf(t, "A", tab)
	o.src.Warm()
	indexes := func() int {
		n := 0
		o.src.scores.indexes.Range(func(any, any) bool { n++; return true })
		return n
	}
	if n := indexes(); n != 1 {
		t.Fatalf("Warm built %d fuzzy indexes, want 1 (S and T share a dictionary, L is over the bound)", n)
	}
	if o.src.scores.index(s) != o.src.scores.index(shared) || indexes() != 1 {
		t.Error("S and T, one dictionary, do not share its index")
	}
	search := func(term string) {
		res, err := o.run(km.PlanRequest{Fields: []string{"L"}, PageSize: 5, Count: true,
			Search: &km.SearchRequest{Term: term, Fields: []string{"L"}, Precision: fuzzy.ExactScore}})
		if err != nil || res.Count != 1 {
			t.Fatalf("search %q: %v, %d rows, want 1", term, err, res.Count)
		}
	}
	search("order 131072")
	l, _ := tab.Column("L")
	first := o.src.scores.index(l.(*column.Strings))
	search("order 131071")
	if indexes() != 2 || o.src.scores.index(l.(*column.Strings)) != first {
		t.Error("the first search of L did not build the one index later searches read")
	}
}
