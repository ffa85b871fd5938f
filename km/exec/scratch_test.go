package exec

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"

	gocmp "github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/kmkit/kmkit/km"
	"github.com/kmkit/kmkit/query"
	"github.com/kmkit/kmkit/query/column"
)

// TestScratchReuse runs requests of every shape (rows, distinct, search, KPIs, joined and
// not, sizes from 0 to 60 rows) one after the other and two at a time on one Source whose
// scratch keeps every buffer (the size floor lowered to 1 row), so that each run takes
// buffers an earlier run of another shape wrote: every answer must still be the reference
// evaluator's (run with -race). Every other table set takes the parallel paths (dense
// grouping in chunks, aggregates on goroutines) at any size.
func TestScratchReuse(t *testing.T) {
	old, rows, pairs := minScratch, parallelRows, parallelPairs
	minScratch = 1
	t.Cleanup(func() { minScratch, parallelRows, parallelPairs = old, rows, pairs })
	g := &gen{r: rand.New(rand.NewPCG(9, 10)), plan: true}
	reused := 0
	for set := range 40 {
		if set%2 == 1 {
			parallelRows, parallelPairs = 0, 0
		} else {
			parallelRows, parallelPairs = rows, pairs
		}
		_, rf := g.tables(t)
		if rf.o.src.scratch == nil {
			continue // a table set of no rows
		}
		rf.o.src.Warm()
		var reqs [2][]*queryCase
		for w := range reqs {
			for range 30 {
				req := g.request(t, rf)
				reqs[w] = append(reqs[w], &queryCase{req: req, want: rf.run(req)})
			}
		}
		var wg sync.WaitGroup
		for w := range reqs {
			wg.Go(func() {
				for i, c := range reqs[w] {
					got, err := rf.plan(c.req)
					if err != nil {
						t.Errorf("set %d, worker %d, case %d: %v\nrequest %s", set, w, i, err, describe(c.req))
						return
					}
					if d := gocmp.Diff(c.want, got, cmpopts.EquateApprox(1e-9, 1e-9), cmpopts.EquateEmpty()); d != "" {
						t.Errorf("set %d, worker %d, case %d: result differs from the reference (-want +got):\n%s\nrequest %s", set, w, i, d, describe(c.req))
						return
					}
				}
			})
		}
		wg.Wait()
		if t.Failed() {
			return
		}
		rf.o.src.scratch.mu.Lock()
		reused += rf.o.src.scratch.bytes
		rf.o.src.scratch.mu.Unlock()
	}
	if reused == 0 {
		t.Fatal("no run returned a buffer to the scratch: the test exercised no reuse")
	}
}

type queryCase struct {
	req  *km.PlanRequest
	want *query.Result
}

// TestScratchBounds: take gives the length asked for from the buffer of its class, give
// keeps buffers up to the bound only, and an arena returns what it took.
func TestScratchBounds(t *testing.T) {
	s := &scratch{maxBytes: 4 * 2 * 8192}
	a := &arena{s: s}
	b1 := a.int32s(5000)
	b2 := a.zeroed(8192)
	if len(b1) != 5000 || cap(b1) != 8192 || len(b2) != 8192 {
		t.Fatalf("lengths %d, %d (cap %d)", len(b1), len(b2), cap(b1))
	}
	for _, v := range b2 {
		if v != 0 {
			t.Fatal("zeroed returned a non-zero element")
		}
	}
	a.int32s(7000) // a third buffer of the class: beyond the bound when given back
	small := a.int32s(10)
	a.release()
	if s.bytes != s.maxBytes || len(s.free[class(8192)]) != 2 {
		t.Fatalf("scratch keeps %d bytes in %d buffers, bound %d", s.bytes, len(s.free[class(8192)]), s.maxBytes)
	}
	if len(a.held) != 0 || len(small) != 10 {
		t.Fatal("the arena still holds buffers after release")
	}
	b := a.int32s(6000)
	if &b[:1][0] != &b2[:1][0] && &b[:1][0] != &b1[:1][0] {
		t.Error("a buffer of the class was not reused")
	}
	var nilArena *arena
	if len(nilArena.zeroed(3)) != 3 {
		t.Error("a nil arena does not allocate")
	}
}

// TestNewSourceSharing: a Source built sharing another's keeps the other's relationship
// indexes, scratch and score cache; without one it has its own.
func TestNewSourceSharing(t *testing.T) {
	g := &gen{r: rand.New(rand.NewPCG(13, 14)), plan: true}
	_, rf := g.tables(t)
	a := rf.o.src
	b := NewSourceSharing(rf.o.m, a.tables, a)
	if b.scratch != a.scratch || b.scores != a.scores || b.rel != a.rel || b.sorts != a.sorts {
		t.Error("the new Source does not share the other's indexes, scratch and scores")
	}
	if c := NewSourceSharing(rf.o.m, a.tables, nil); c.scores == a.scores || c.scores == nil || c.rel == a.rel || c.sorts == a.sorts {
		t.Error("a Source built sharing nothing has no indexes and score cache of its own")
	}
}

// TestScratchKeepsWhatWarmTouches: a scratch over tables of two size classes keeps every
// buffer warm touches for each (warmRuns of each class), even where those exceed maxRuns
// buffers of the largest class, so that Warm's pages are not touched only to be dropped.
func TestScratchKeepsWhatWarmTouches(t *testing.T) {
	table := func(rows int) *column.Table { return intTable(t, rows) }
	small, large := 1<<13, 1<<15 // four times smaller: warmRuns of both exceed maxRuns of the large
	s := newScratch(map[string]*column.Table{"s": table(small), "l": table(large)})
	s.warm(small, warmRuns)
	s.warm(large, warmRuns)
	if got, want := len(s.free[class(small)]), warmRuns; got != want {
		t.Errorf("%d buffers of the small class kept, want %d", got, want)
	}
	if got, want := len(s.free[class(large)]), warmRuns; got != want {
		t.Errorf("%d buffers of the large class kept, want %d", got, want)
	}
	if want := warmRuns * 4 * (small + large); s.bytes != want {
		t.Errorf("scratch keeps %d bytes, want %d", s.bytes, want)
	}
}

// TestScratchSpareRoom: a scratch Warm filled still keeps buffers of sizes no table has
// (a filtered selection, a distinct's key tables), up to spareRuns buffers of the largest
// table's class, so that runs reuse them instead of taking fresh memory every time.
func TestScratchSpareRoom(t *testing.T) {
	table := func(rows int) *column.Table { return intTable(t, rows) }
	large := 1 << 15
	s := newScratch(map[string]*column.Table{"l": table(large)})
	s.warm(large, maxRuns) // the scratch's bound before the spare room
	a := &arena{s: s}
	other := a.int32s(large / 2) // a size class no table has
	for range maxRuns + 1 {
		a.int32s(large) // the buffers Warm touched, and one more of the table's class
	}
	a.release()
	if len(s.free[class(large/2)]) != 1 || len(s.free[class(large)]) != maxRuns+1 {
		t.Fatalf("after Warm the scratch keeps %d buffers of another size and %d of the table's, want 1 and %d",
			len(s.free[class(large/2)]), len(s.free[class(large)]), maxRuns+1)
	}
	if b := a.int32s(large / 2); &b[:1][0] != &other[:1][0] {
		t.Error("the buffer of another size was not reused")
	}
	a.release()
	if want := (maxRuns + spareRuns) * 4 * large; s.maxBytes != want || s.bytes > want {
		t.Errorf("scratch bound %d bytes, keeps %d, want a bound of %d", s.maxBytes, s.bytes, want)
	}
}

// TestGroupRowsFirstFromArena: on every path (dense, dense in chunks, hash map of up to
// three parts, of more) groupRows takes the first rows of its groups from the arena, as
// it does the group ids, and numbers the groups as it does allocating them.
func TestGroupRowsFirstFromArena(t *testing.T) {
	old, rows := minScratch, parallelRows
	minScratch = 1
	t.Cleanup(func() { minScratch, parallelRows = old, rows })
	r := rand.New(rand.NewPCG(21, 22))
	n := 3000
	col := func(typ query.Type, card int) column.Column {
		b := column.NewBuilder(typ)
		for range n {
			switch {
			case r.IntN(20) == 0:
				b.AppendNull()
			case typ == query.TypeString:
				b.AppendString(fmt.Sprint("v", r.IntN(card)))
			default:
				b.AppendFloat(float64(r.IntN(card)))
			}
		}
		return b.Build()
	}
	sel := make([]int32, 0, n)
	for i := range n {
		if r.IntN(3) != 0 {
			sel = append(sel, int32(i))
		}
	}
	few, many := col(query.TypeString, 7), col(query.TypeFloat, 500) // floats: no dense digits
	for _, c := range []struct {
		name     string
		cols     []column.Column
		parallel bool
	}{
		{"dense", []column.Column{few, few}, false},
		{"dense in chunks", []column.Column{few, few}, true},
		{"map", []column.Column{few, many}, false},
		{"map of more parts", []column.Column{few, many, many, few}, false},
	} {
		parallelRows = rows
		if c.parallel {
			parallelRows = 0
		}
		parts := make([]keyPart, len(c.cols))
		for i, k := range c.cols {
			parts[i] = newKeyPart(ref{col: k})
		}
		wantGid, wantFirst := groupRows(parts, sel, 0, nil, nil)
		a := &arena{s: &scratch{maxBytes: 1 << 30}}
		gid, first := groupRows(parts, sel, 0, nil, a)
		if !slices.Equal(gid, wantGid) || !slices.Equal(first, wantFirst) || len(first) < 2 {
			t.Fatalf("%s: %d groups from the arena, %d allocating, or their ids differ", c.name, len(first), len(wantFirst))
		}
		if !slices.ContainsFunc(a.held, func(b []int32) bool { return &b[:1][0] == &first[:1][0] }) {
			t.Errorf("%s: the first rows are not the arena's", c.name)
		}
		a.release()
	}
}

// intTable is a table of one integer column I holding 0, 1, ... rows-1.
func intTable(t *testing.T, rows int) *column.Table {
	t.Helper()
	b := column.NewBuilder(query.TypeInteger)
	for i := range rows {
		b.AppendInt(int64(i))
	}
	tab, err := column.NewTable([]string{"I"}, []column.Column{b.Build()})
	if err != nil {
		t.Fatal(err)
	}
	return tab
}
