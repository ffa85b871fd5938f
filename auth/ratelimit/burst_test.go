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

// TestBurstRatePerKey: keys with their own rate share one Burst, each with its own bucket
// size and refill.
func TestBurstRatePerKey(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	b := NewBurst(2)
	served := map[string]int{}
	for range 20 {
		for key, rate := range map[string]int{"default": 0, "ten": 10} {
			if ok, _ := b.AllowRate(key, rate, now); ok {
				served[key]++
			}
		}
	}
	if served["default"] != 2 || served["ten"] != 10 {
		t.Fatalf("served in one instant: %v, want default 2, ten 10", served)
	}
	ok, wait := b.AllowRate("ten", 10, now)
	if ok || wait != 100*time.Millisecond {
		t.Errorf("empty bucket at 10/s: %v, wait %v; want a refusal for 100ms", ok, wait)
	}
	if ok, _ := b.AllowRate("ten", 10, now.Add(100*time.Millisecond)); !ok {
		t.Errorf("100ms later at 10/s: refused, want one token")
	}
}
