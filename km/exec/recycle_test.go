package exec

import (
	"context"
	"math/rand/v2"
	"testing"

	gocmp "github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/kmkit/kmkit/query"
)

// TestRecycledPagesAgainstReference: pages projected into recycled cells (a caller with
// a query.Recycling) equal the reference evaluator's, over random tables and requests of
// changing shapes, so no cell of an earlier, larger page shows through; a page still
// lent (not released) is not overwritten by the next query's.
func TestRecycledPagesAgainstReference(t *testing.T) {
	g := &gen{r: rand.New(rand.NewPCG(21, 22)), plan: true}
	n := 2000
	if testing.Short() {
		n = 300
	}
	var held *query.Result // the previous case's page, released one case late
	var heldWant *query.Result
	var heldRC *query.Recycling
	lent := 0
	for i := range n {
		_, rf := g.tables(t)
		req := g.request(t, rf)
		want := rf.run(req)
		rc := new(query.Recycling)
		p, err := rf.o.plan(*req)
		if err != nil {
			t.Fatalf("case %d: %v\nrequest %s", i, err, describe(req))
		}
		got, err := rf.o.src.RunContext(query.WithRecycling(context.Background(), rc), p)
		if err != nil {
			t.Fatalf("case %d: %v\nrequest %s", i, err, describe(req))
		}
		lent += rc.Lent()
		if d := gocmp.Diff(want, got, cmpopts.EquateApprox(1e-9, 1e-9), cmpopts.EquateEmpty()); d != "" {
			t.Fatalf("case %d: result differs from the reference (-want +got):\n%s\nrequest %s", i, d, describe(req))
		}
		if held != nil {
			if d := gocmp.Diff(heldWant, held, cmpopts.EquateApprox(1e-9, 1e-9), cmpopts.EquateEmpty()); d != "" {
				t.Fatalf("case %d: the previous page, still lent, changed (-want +got):\n%s", i, d)
			}
			heldRC.Release()
			if heldRC.Lent() != 0 {
				t.Fatalf("case %d: %d blocks still lent after Release", i, heldRC.Lent())
			}
		}
		held, heldWant, heldRC = got, want, rc
	}
	if lent < n/4 {
		t.Errorf("%d of %d pages lent from the pool: want most row pages", lent, n)
	}
}
