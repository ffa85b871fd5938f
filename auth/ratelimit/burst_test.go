package ratelimit

import (
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

func TestBurst(t *testing.T) {
	type step struct {
		key     string
		at      time.Duration
		ok      bool
		wait    time.Duration
		comment string
	}
	steps := []step{
		{"a", 0, true, 0, "full bucket: 2 tokens"},
		{"a", 0, true, 0, ""},
		{"a", 0, false, 500 * time.Millisecond, "empty: next token in 1/2 s"},
		{"b", 0, true, 0, "keys are independent"},
		{"a", 250 * time.Millisecond, false, 250 * time.Millisecond, "half a token"},
		{"a", 500 * time.Millisecond, true, 0, "one token refilled"},
		{"a", 10 * time.Second, true, 0, "refill stops at 2"},
		{"a", 10 * time.Second, true, 0, ""},
		{"a", 10 * time.Second, false, 500 * time.Millisecond, ""},
	}
	b := NewBurst(2)
	for i, s := range steps {
		ok, wait := b.Allow(s.key, t0.Add(s.at))
		if ok != s.ok || wait != s.wait {
			t.Errorf("step %d (%s): Allow = %v, %v; want %v, %v", i, s.comment, ok, wait, s.ok, s.wait)
		}
	}
}

func TestBurstSweepsFullBuckets(t *testing.T) {
	b := NewBurst(5)
	b.Allow("a", t0)
	b.Allow("b", t0)
	if got := b.Len(); got != 2 {
		t.Fatalf("Len = %d, want 2", got)
	}
	b.Allow("c", t0.Add(2*time.Second))
	if got := b.Len(); got != 1 {
		t.Errorf("Len after sweep = %d, want 1", got)
	}
}

func TestBurstParallel(t *testing.T) {
	const rate = 20
	b := NewBurst(rate)
	var allowed atomic.Int64
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 10 {
				if ok, _ := b.Allow("k", t0); ok {
					allowed.Add(1)
				}
			}
		})
	}
	wg.Wait()
	if got := allowed.Load(); got != rate {
		t.Errorf("allowed %d at one instant, want %d", got, rate)
	}
}

func TestConcurrency(t *testing.T) {
	c := NewConcurrency(2)
	if !c.Acquire("a") || !c.Acquire("a") {
		t.Fatal("first two Acquire calls refused")
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
