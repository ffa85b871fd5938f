package ratelimit

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

var t0 = time.Date(2026, 11, 21, 5, 30, 0, 0, time.UTC)

func TestMemoryWindow(t *testing.T) {
	type step struct {
		key  string
		at   time.Duration // after t0
		want Decision
	}
	hour := t0.Truncate(time.Hour).Add(time.Hour)
	steps := []step{
		{"a", 0, Decision{Allowed: true, Limit: 3, Remaining: 2, Reset: hour}},
		{"a", time.Minute, Decision{Allowed: true, Limit: 3, Remaining: 1, Reset: hour}},
		{"b", time.Minute, Decision{Allowed: true, Limit: 3, Remaining: 2, Reset: hour}},
		{"a", 2 * time.Minute, Decision{Allowed: true, Limit: 3, Remaining: 0, Reset: hour}},
		{"a", 3 * time.Minute, Decision{Allowed: false, Limit: 3, Remaining: 0, Reset: hour}},
		{"a", 29*time.Minute + 59*time.Second, Decision{Allowed: false, Limit: 3, Remaining: 0, Reset: hour}},
		// 06:00:00 starts the next window.
		{"a", 30 * time.Minute, Decision{Allowed: true, Limit: 3, Remaining: 2, Reset: hour.Add(time.Hour)}},
	}
	m := NewMemory()
	for i, s := range steps {
		got, err := m.Allow(context.Background(), s.key, 3, time.Hour, t0.Add(s.at))
		if err != nil {
			t.Fatalf("step %d: %v", i, err)
		}
		if diff := cmp.Diff(s.want, got); diff != "" {
			t.Errorf("step %d (%s at +%v): decision mismatch (-want +got):\n%s", i, s.key, s.at, diff)
		}
	}
}

func TestMemoryZeroValueAndZeroLimit(t *testing.T) {
	var m Memory
	d, err := m.Allow(context.Background(), "k", 0, time.Hour, t0)
	if err != nil || d.Allowed || d.Remaining != 0 {
		t.Errorf("limit 0: got %+v, %v; want refused", d, err)
	}
	d, _ = m.Allow(context.Background(), "k", 1, 0, t0)
	if !d.Allowed || !d.Reset.Equal(t0.Add(1)) {
		t.Errorf("window 0: got %+v; want allowed, reset one nanosecond later", d)
	}
}

func TestMemorySweepsEndedWindows(t *testing.T) {
	m := NewMemory()
	for _, k := range []string{"a", "b", "c"} {
		_, _ = m.Allow(context.Background(), k, 10, time.Second, t0)
	}
	if got := m.Len(); got != 3 {
		t.Fatalf("Len = %d, want 3", got)
	}
	_, _ = m.Allow(context.Background(), "d", 10, time.Second, t0.Add(2*sweepEvery))
	if got := m.Len(); got != 1 {
		t.Errorf("Len after sweep = %d, want 1 (only d)", got)
	}
}

// TestMemoryParallel: exactly the budget succeeds when many goroutines race for it.
func TestMemoryParallel(t *testing.T) {
	const budget, workers, each = 100, 16, 25 // 400 attempts for 100 places
	m := NewMemory()
	var allowed atomic.Int64
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for range each {
				d, err := m.Allow(context.Background(), "k", budget, time.Hour, t0)
				if err != nil {
					t.Error(err)
				}
				if d.Allowed {
					allowed.Add(1)
				}
			}
		})
	}
	wg.Wait()
	if got := allowed.Load(); got != budget {
		t.Errorf("allowed %d requests, want exactly %d", got, budget)
	}
}

func TestWindowStart(t *testing.T) {
	tests := []struct {
		now    time.Time
		window time.Duration
		want   time.Time
	}{
		{t0, time.Hour, time.Date(2026, 11, 21, 5, 0, 0, 0, time.UTC)},
		{t0.Add(59*time.Second + 999*time.Millisecond), time.Minute, t0},
		{t0, 24 * time.Hour, time.Date(2026, 11, 21, 0, 0, 0, 0, time.UTC)},
	}
	for _, tt := range tests {
		if got := WindowStart(tt.now, tt.window); !got.Equal(tt.want) {
			t.Errorf("WindowStart(%v, %v) = %v, want %v", tt.now, tt.window, got, tt.want)
		}
	}
}
