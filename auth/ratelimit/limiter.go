package ratelimit

import (
	"context"
	"sync"
	"time"
)

// Decision is a Limiter's answer for one request.
type Decision struct {
	// Allowed reports whether the request fits in the budget.
	Allowed bool
	// Limit is the budget of the window.
	Limit int
	// Remaining is the number of requests left in the window after this one.
	Remaining int
	// Reset is the end of the current window.
	Reset time.Time
}

// Limiter counts requests against a budget per key and fixed window.
//
// Allow records one request for key at time now and reports whether it fits in limit
// requests per window. Implementations must agree on the window containing now: it starts
// at now.Truncate(window) (see WindowStart), so that replicas sharing a store share budgets.
// A refused request is not counted. Implementations are safe for concurrent use.
type Limiter interface {
	Allow(ctx context.Context, key string, limit int, window time.Duration, now time.Time) (Decision, error)
}

// Peeker is a Limiter that can also report a key's budget without counting a request. The
// middleware uses it for the rate limit headers of requests that it refuses before they
// reach the budget (too many per second, or at once), which must not spend it.
type Peeker interface {
	Limiter
	// Peek returns the Decision Allow would have returned before counting: Remaining is
	// what is left of the window, Allowed whether one more request fits.
	Peek(ctx context.Context, key string, limit int, window time.Duration, now time.Time) (Decision, error)
}

// WindowStart returns the start of the fixed window of length window that contains now.
func WindowStart(now time.Time, window time.Duration) time.Time {
	return now.Truncate(window)
}

// Memory is a Limiter that keeps its counters in memory. The zero value is ready to use.
type Memory struct {
	mu        sync.Mutex
	counters  map[string]*counter
	lastSweep time.Time
}

type counter struct {
	start  time.Time
	window time.Duration
	count  int
}

// NewMemory returns an empty in-memory Limiter.
func NewMemory() *Memory { return &Memory{} }

// Allow implements Limiter. It never returns an error. A limit below 1 refuses every request;
// a window below one nanosecond is treated as one nanosecond.
func (m *Memory) Allow(_ context.Context, key string, limit int, window time.Duration, now time.Time) (Decision, error) {
	if window <= 0 {
		window = 1
	}
	start := WindowStart(now, window)
	d := Decision{Limit: limit, Reset: start.Add(window)}

	m.mu.Lock()
	defer m.mu.Unlock()
	if m.counters == nil {
		m.counters = make(map[string]*counter)
	}
	m.sweep(now)
	c := m.counters[key]
	if c == nil {
		c = &counter{}
		m.counters[key] = c
	}
	if !c.start.Equal(start) || c.window != window {
		c.start, c.window, c.count = start, window, 0
	}
	if c.count >= limit {
		return d, nil
	}
	c.count++
	d.Allowed = true
	d.Remaining = limit - c.count
	return d, nil
}

// Peek implements Peeker. It never returns an error.
func (m *Memory) Peek(_ context.Context, key string, limit int, window time.Duration, now time.Time) (Decision, error) {
	if window <= 0 {
		window = 1
	}
	start := WindowStart(now, window)
	d := Decision{Limit: limit, Reset: start.Add(window)}
	m.mu.Lock()
	defer m.mu.Unlock()
	used := 0
	if c := m.counters[key]; c != nil && c.start.Equal(start) && c.window == window {
		used = c.count
	}
	d.Remaining = max(limit-used, 0)
	d.Allowed = d.Remaining > 0
	return d, nil
}

// sweepEvery bounds how often Allow scans for counters of past windows.
const sweepEvery = time.Minute

// sweep drops the counters whose window has ended, at most once per sweepEvery.
func (m *Memory) sweep(now time.Time) {
	if now.Sub(m.lastSweep) < sweepEvery {
		return
	}
	m.lastSweep = now
	for k, c := range m.counters {
		if !now.Before(c.start.Add(c.window)) {
			delete(m.counters, k)
		}
	}
}

// Len returns the number of keys with a counter, for tests and metrics.
func (m *Memory) Len() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.counters)
}
