package exec

import (
	"context"
	"math/rand/v2"
	"sync"
	"testing"

	gocmp "github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/kmkit/kmkit/km"
	"github.com/kmkit/kmkit/query"
	"github.com/kmkit/kmkit/query/column"
)

// TestCondCacheRequests: KPI requests of every shape (ad-hoc KPIs with conditions among
// them), two at a time while Warm runs and again after it, answer as the reference
// evaluator does on a Source that caches their conditions, on one whose cache holds
// almost nothing (a condition evaluated for its request alone), and on one without a
// cache (run with -race).
func TestCondCacheRequests(t *testing.T) {
	g := &gen{r: rand.New(rand.NewPCG(23, 24)), plan: true}
	cached := 0
	for set := range 20 {
		_, rf := g.tables(t)
		small := NewSource(rf.o.m, rf.o.src.tables)
		small.conds.maxBytes = 8 // one word: a condition over at most 64 rows
		none := NewSource(rf.o.m, rf.o.src.tables)
		none.conds = nil
		var reqs [2][]*queryCase
		for w := range reqs {
			for len(reqs[w]) < 15 {
				req := g.request(t, rf)
				if len(req.KPIs) == 0 {
					continue
				}
				reqs[w] = append(reqs[w], &queryCase{req: req, want: rf.run(req)})
			}
		}
		check := func(what string, src *Source, c *queryCase, i int) {
			r := *c.req
			r.Record = rf.record()
			o := *rf.o
			o.src = src
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
					check("during Warm", rf.o.src, c, i)
					check("small cache", small, c, i)
				}
			})
		}
		wg.Wait()
		for w := range reqs {
			for i, c := range reqs[w] {
				check("after Warm", rf.o.src, c, i)
				check("no cache", none, c, i)
			}
		}
		if t.Failed() {
			return
		}
		if small.conds.bytes.Load() > small.conds.maxBytes {
			t.Errorf("set %d: the small cache holds %d bytes, beyond its bound %d", set, small.conds.bytes.Load(), small.conds.maxBytes)
		}
		rf.o.src.conds.entries.Range(func(_, _ any) bool { cached++; return true })
	}
	if cached == 0 {
		t.Fatal("no condition was cached: the test exercised no cache hit")
	}
}

// TestCondCacheWarm: Warm evaluates the conditions of the KM's KPIs at their parameters'
// default values, the bitmap is the rows where the condition holds (worked out row by
// row), and a request stopped while evaluating a condition leaves nothing in the cache.
func TestCondCacheWarm(t *testing.T) {
	b := column.NewBuilder(query.TypeInteger)
	n := 1000
	for i := range n {
		if i%17 == 0 {
			b.AppendNull()
		} else {
			b.AppendInt(int64(i % 7))
		}
	}
	id := column.NewBuilder(query.TypeInteger)
	for i := range n {
		id.AppendInt(int64(i))
	}
	tab, err := column.NewTable([]string{"ID", "L"}, []column.Column{id.Build(), b.Build()})
	if err != nil {
		t.Fatal(err)
	}
	o := kmOf(t, "T", tab, "LATE", "ratio(T.L gt 4)", "N", "count()")
	p := o.compile(t, km.PlanRequest{Record: "-", KPIs: []string{"LATE"}, PageSize: 1})
	a := p.Aggregates[0]
	key, ok := condKey(a)
	if !ok {
		t.Fatal("a plain condition has no key")
	}

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := o.src.condRows(ctx, a); err == nil {
		t.Fatal("a stopped evaluation answered")
	}
	if _, ok := o.src.conds.entries.Load(key); ok || o.src.conds.bytes.Load() != 0 {
		t.Fatal("a stopped evaluation was kept")
	}

	o.src.Warm()
	v, ok := o.src.conds.entries.Load(key)
	if !ok {
		t.Fatal("Warm did not evaluate the KPI's condition")
	}
	got := v.(*lazy).v.(column.Bitmap)
	for r := range n {
		if want := r%17 != 0 && r%7 > 4; got.Get(r) != want {
			t.Fatalf("row %d: condition %v, want %v", r, got.Get(r), want)
		}
	}
	if again, err := o.src.condRows(context.Background(), a); err != nil || &again[0] != &got[0] {
		t.Error("a request evaluated the condition Warm had cached again")
	}
}

// TestCondKey: conditions that differ only in a literal's value (written by a program:
// no text) have different keys, equal ones the same, and a condition reading now() has
// none.
func TestCondKey(t *testing.T) {
	cmpOf := func(op query.CompareOp, v query.Value, raw string) *km.Aggregate {
		e := &query.Compare{Field: query.FieldRef{Name: "T.L", Type: query.TypeInteger}, Op: op,
			Value: query.Literal{Kind: query.LitInteger, Raw: raw, Value: v}}
		return &km.Aggregate{Grain: "T", Cond: &km.Conjunct{Expr: e, Home: "T", Reach: map[string]km.Path{"T": nil}}}
	}
	k1, ok1 := condKey(cmpOf(query.Gt, query.Int(1), ""))
	k2, ok2 := condKey(cmpOf(query.Gt, query.Int(2), ""))
	k3, ok3 := condKey(cmpOf(query.Gt, query.Int(1), ""))
	k4, _ := condKey(cmpOf(query.Ge, query.Int(1), ""))
	if !ok1 || !ok2 || !ok3 || k1 == k2 || k1 != k3 || k1 == k4 {
		t.Errorf("keys %q, %q, %q, %q", k1, k2, k3, k4)
	}
	if _, ok := condKey(cmpOf(query.Gt, query.Int(1), "now()")); ok {
		t.Error("a condition reading now() has a key")
	}
}
