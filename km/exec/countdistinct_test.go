package exec

import (
	"math/rand/v2"
	"testing"

	gocmp "github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
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
