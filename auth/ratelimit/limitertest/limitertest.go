// Package limitertest is the conformance suite of ratelimit.Limiter implementations: every
// implementation (the in-memory one, a database-backed one) runs Run and so counts budgets
// the same way.
package limitertest

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/kmkit/kmkit/auth/ratelimit"
)

// start is a moment in the middle of an hour window, as the suite's clock.
var start = time.Date(2026, 11, 21, 5, 30, 10, 0, time.UTC)

// Run runs the suite. newLimiter returns an empty limiter; each subtest gets its own. A
// database-backed limiter runs the suite against a database, so that the parallel test
// shows that concurrent replicas share one budget exactly.
func Run(t *testing.T, newLimiter func(t *testing.T) ratelimit.Limiter) {
	t.Run("Window", func(t *testing.T) { testWindow(t, newLimiter(t)) })
	t.Run("KeysAndWindows", func(t *testing.T) { testKeysAndWindows(t, newLimiter(t)) })
	t.Run("Parallel", func(t *testing.T) { testParallel(t, newLimiter(t)) })
	t.Run("Peek", func(t *testing.T) {
		p, ok := newLimiter(t).(ratelimit.Peeker)
		if !ok {
			t.Skip("not a ratelimit.Peeker")
		}
		testPeek(t, p)
	})
}

// testPeek: Peek reports what is left without counting.
func testPeek(t *testing.T, l ratelimit.Peeker) {
	ctx := context.Background()
	peek := func(key string) ratelimit.Decision {
		t.Helper()
		d, err := l.Peek(ctx, key, 3, time.Hour, start)
		if err != nil {
			t.Fatalf("Peek: %v", err)
		}
		return d
	}
	reset := time.Date(2026, 11, 21, 6, 0, 0, 0, time.UTC)
	for range 5 {
		if diff := cmp.Diff(ratelimit.Decision{Allowed: true, Limit: 3, Remaining: 3, Reset: reset}, peek("a")); diff != "" {
			t.Fatalf("Peek of a fresh key (-want +got):\n%s", diff)
		}
	}
	allow(t, l, "a", 3, time.Hour, start)
	if diff := cmp.Diff(ratelimit.Decision{Allowed: true, Limit: 3, Remaining: 2, Reset: reset}, peek("a")); diff != "" {
		t.Errorf("Peek after one request (-want +got):\n%s", diff)
	}
	allow(t, l, "a", 3, time.Hour, start)
	allow(t, l, "a", 3, time.Hour, start)
	if diff := cmp.Diff(ratelimit.Decision{Limit: 3, Remaining: 0, Reset: reset}, peek("a")); diff != "" {
		t.Errorf("Peek of a spent budget (-want +got):\n%s", diff)
	}
	if d, err := l.Peek(ctx, "a", 3, time.Hour, reset); err != nil || d.Remaining != 3 {
		t.Errorf("Peek in the next window: %+v, %v; want 3 remaining", d, err)
	}
}

func allow(t *testing.T, l ratelimit.Limiter, key string, limit int, window time.Duration, now time.Time) ratelimit.Decision {
	t.Helper()
	d, err := l.Allow(context.Background(), key, limit, window, now)
	if err != nil {
		t.Fatalf("Allow(%q, %d, %v, %v): %v", key, limit, window, now, err)
	}
	return d
}

// testWindow: the budget of one key through a window, a refusal that is not counted, and
// the next window.
func testWindow(t *testing.T, l ratelimit.Limiter) {
	end := time.Date(2026, 11, 21, 6, 0, 0, 0, time.UTC)
	steps := []struct {
		at   time.Time
		want ratelimit.Decision
	}{
		{start, ratelimit.Decision{Allowed: true, Limit: 3, Remaining: 2, Reset: end}},
		{start.Add(time.Minute), ratelimit.Decision{Allowed: true, Limit: 3, Remaining: 1, Reset: end}},
		{start.Add(2 * time.Minute), ratelimit.Decision{Allowed: true, Limit: 3, Remaining: 0, Reset: end}},
		{start.Add(3 * time.Minute), ratelimit.Decision{Allowed: false, Limit: 3, Remaining: 0, Reset: end}},
		{end.Add(-time.Nanosecond), ratelimit.Decision{Allowed: false, Limit: 3, Remaining: 0, Reset: end}},
		{end, ratelimit.Decision{Allowed: true, Limit: 3, Remaining: 2, Reset: end.Add(time.Hour)}},
		{end.Add(59 * time.Minute), ratelimit.Decision{Allowed: true, Limit: 3, Remaining: 1, Reset: end.Add(time.Hour)}},
	}
	for i, s := range steps {
		got := allow(t, l, "principal", 3, time.Hour, s.at)
		if diff := cmp.Diff(s.want, got, cmp.Comparer(time.Time.Equal)); diff != "" {
			t.Errorf("step %d at %v (-want +got):\n%s", i, s.at, diff)
		}
	}
}

// testKeysAndWindows: keys count separately, and a window shorter than an hour is aligned
// to its own length.
func testKeysAndWindows(t *testing.T, l ratelimit.Limiter) {
	for i := range 2 {
		if d := allow(t, l, "a", 2, time.Hour, start); !d.Allowed || d.Remaining != 1-i {
			t.Errorf("a, request %d: %+v", i+1, d)
		}
	}
	if d := allow(t, l, "b", 2, time.Hour, start); !d.Allowed || d.Remaining != 1 {
		t.Errorf("b after a spent its budget: %+v, want allowed with 1 remaining", d)
	}
	minute := time.Date(2026, 11, 21, 5, 31, 0, 0, time.UTC)
	if d := allow(t, l, "c", 1, time.Minute, start); !d.Allowed || !d.Reset.Equal(minute) {
		t.Errorf("one-minute window: %+v, want allowed, reset %v", d, minute)
	}
	if d := allow(t, l, "c", 1, time.Minute, minute.Add(-time.Second)); d.Allowed {
		t.Errorf("one-minute window, second request: %+v, want refused", d)
	}
	if d := allow(t, l, "c", 1, time.Minute, minute); !d.Allowed {
		t.Errorf("next minute: %+v, want allowed", d)
	}
}

// testParallel: with many callers racing for one budget, exactly the budget is allowed and
// every answer's Remaining is distinct.
func testParallel(t *testing.T, l ratelimit.Limiter) {
	const budget, workers, each = 50, 10, 10
	var allowed atomic.Int64
	var mu sync.Mutex
	remaining := map[int]bool{}
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for range each {
				d, err := l.Allow(context.Background(), "shared", budget, time.Hour, start)
				if err != nil {
					t.Error(err)
					return
				}
				if !d.Allowed {
					continue
				}
				allowed.Add(1)
				mu.Lock()
				if remaining[d.Remaining] {
					t.Errorf("Remaining %d answered twice", d.Remaining)
				}
				remaining[d.Remaining] = true
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if got := allowed.Load(); got != budget {
		t.Errorf("allowed %d of %d requests, want exactly %d", got, workers*each, budget)
	}
}
