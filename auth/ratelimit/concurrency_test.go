package ratelimit

import (
	"sync"
	"sync/atomic"
	"testing"
)

func TestConcurrency(t *testing.T) {
	c := NewConcurrency(2)
	for i := range 2 {
		if !c.Acquire("a") {
			t.Fatalf("Acquire %d refused", i+1)
		}
	}
	if c.Acquire("a") {
		t.Error("third Acquire allowed beyond the cap of 2")
	}
	if !c.Acquire("b") {
		t.Error("another key refused")
	}
	c.Release("a")
	if got := c.InFlight("a"); got != 1 {
		t.Errorf("InFlight = %d after release, want 1", got)
	}
	if !c.Acquire("a") {
		t.Error("Acquire refused after a release")
	}
	c.Release("a")
	c.Release("a")
	c.Release("b")
	if n := len(c.inflight); n != 0 {
		t.Errorf("%d keys left after every release, want 0", n)
	}
}

func TestConcurrencyParallel(t *testing.T) {
	const limit = 4
	c := NewConcurrency(limit)
	var cur, peak atomic.Int64
	var wg sync.WaitGroup
	for range 32 {
		wg.Go(func() {
			for range 50 {
				if !c.Acquire("k") {
					continue
				}
				n := cur.Add(1)
				for {
					p := peak.Load()
					if n <= p || peak.CompareAndSwap(p, n) {
						break
					}
				}
				cur.Add(-1)
				c.Release("k")
			}
		})
	}
	wg.Wait()
	if p := peak.Load(); p > limit {
		t.Errorf("peak in flight %d, cap %d", p, limit)
	}
	if n := c.InFlight("k"); n != 0 {
		t.Errorf("InFlight = %d after all released", n)
	}
}

func TestConcurrencyCapPerKey(t *testing.T) {
	c := NewConcurrency(1)
	for i := range 3 {
		if !c.AcquireUpTo("wide", 3) {
			t.Fatalf("request %d of a key with cap 3 refused", i+1)
		}
	}
	if c.AcquireUpTo("wide", 3) {
		t.Error("fourth request of a key with cap 3 allowed")
	}
	if !c.AcquireUpTo("narrow", 0) || c.AcquireUpTo("narrow", 0) {
		t.Error("a key without its own cap does not get the default of 1")
	}
}
