package ratelimit

import "sync"

// Concurrency caps the requests in flight per key. Create it with NewConcurrency; it is safe
// for concurrent use.
type Concurrency struct {
	max      int
	mu       sync.Mutex
	inflight map[string]int
}

// NewConcurrency returns a Concurrency allowing limit requests in flight per key (at least 1).
func NewConcurrency(limit int) *Concurrency {
	return &Concurrency{max: max(limit, 1), inflight: make(map[string]int)}
}

// Acquire counts one more request in flight for key and reports whether it is within the cap.
// After a true answer the caller must call Release(key) once the request is done.
func (c *Concurrency) Acquire(key string) bool { return c.AcquireUpTo(key, 0) }

// AcquireUpTo is Acquire with a cap of limit requests in flight for this key (the cap given
// to NewConcurrency when limit < 1).
func (c *Concurrency) AcquireUpTo(key string, limit int) bool {
	if limit < 1 {
		limit = c.max
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	n := c.inflight[key]
	if n >= limit {
		return false
	}
	c.inflight[key] = n + 1
	return true
}

// Release ends one request in flight for key.
func (c *Concurrency) Release(key string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	switch n := c.inflight[key]; {
	case n > 1:
		c.inflight[key] = n - 1
	default:
		delete(c.inflight, key)
	}
}

// InFlight returns the number of requests in flight for key.
func (c *Concurrency) InFlight(key string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.inflight[key]
}
