package query_test

import (
	"context"
	"testing"

	"github.com/kmkit/kmkit/query"
)

type countRecycle struct{ n int }

func (c *countRecycle) Recycle() { c.n++ }

// TestRecycling: the Recycling on a context is found by the store, and Release hands
// back each lent piece once.
func TestRecycling(t *testing.T) {
	if query.RecyclingFrom(context.Background()) != nil {
		t.Fatal("a Recycling on a context without one")
	}
	var rc query.Recycling
	ctx := query.WithRecycling(context.Background(), &rc)
	got := query.RecyclingFrom(ctx)
	if got != &rc {
		t.Fatalf("RecyclingFrom = %p, want %p", got, &rc)
	}
	a, b := &countRecycle{}, &countRecycle{}
	got.Lend(a)
	got.Lend(b)
	if rc.Lent() != 2 {
		t.Fatalf("Lent() = %d, want 2", rc.Lent())
	}
	rc.Release()
	rc.Release()
	if a.n != 1 || b.n != 1 || rc.Lent() != 0 {
		t.Fatalf("after Release twice: recycled %d and %d times, %d lent; want 1, 1, 0", a.n, b.n, rc.Lent())
	}
}
