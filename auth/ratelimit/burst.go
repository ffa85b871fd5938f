package ratelimit

import (
	"sync"
	"time"
)

// Burst limits each key to Rate requests per second with bursts of up to Rate requests:
// a token bucket per key. Create it with NewBurst; it is safe for concurrent use.
type Burst struct {
	rate      float64
	mu        sync.Mutex
	buckets   map[string]*bucket
	lastSweep time.Time
}

type bucket struct {
	tokens float64
	last   time.Time
}

// NewBurst returns a Burst allowing rate requests per second per key. rate must be positive.
func NewBurst(rate int) *Burst {
	if rate < 1 {
		rate = 1
	}
	return &Burst{rate: float64(rate), buckets: make(map[string]*bucket)}
}

// Allow takes one token from key's bucket at time now. When the bucket is empty it returns
// false and how long until a token is available.
func (b *Burst) Allow(key string, now time.Time) (ok bool, wait time.Duration) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.sweep(now)
	k := b.buckets[key]
	if k == nil {
		k = &bucket{tokens: b.rate, last: now}
		b.buckets[key] = k
	}
	if elapsed := now.Sub(k.last); elapsed > 0 {
		k.tokens = min(b.rate, k.tokens+elapsed.Seconds()*b.rate)
		k.last = now
	}
	if k.tokens >= 1 {
		k.tokens--
		return true, 0
	}
	return false, time.Duration((1 - k.tokens) / b.rate * float64(time.Second))
}

// sweep drops the buckets that have refilled completely (they equal a fresh bucket), at most
// once per second.
func (b *Burst) sweep(now time.Time) {
	if now.Sub(b.lastSweep) < time.Second {
		return
	}
	b.lastSweep = now
	for key, k := range b.buckets {
		if now.Sub(k.last).Seconds()*b.rate+k.tokens >= b.rate {
			delete(b.buckets, key)
		}
	}
}

// Len returns the number of keys with a bucket, for tests and metrics.
func (b *Burst) Len() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.buckets)
}
