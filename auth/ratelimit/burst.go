package ratelimit

import (
	"sync"
	"time"
)

// Burst limits each key to a rate of requests per second with bursts of up to as many
// requests: a token bucket per key. Create it with NewBurst; it is safe for concurrent use.
type Burst struct {
	rate      float64
	mu        sync.Mutex
	buckets   map[string]*bucket
	lastSweep time.Time
}

type bucket struct {
	tokens float64
	rate   float64
	last   time.Time
}

// NewBurst returns a Burst allowing rate requests per second per key. rate must be positive.
func NewBurst(rate int) *Burst {
	if rate < 1 {
		rate = 1
	}
	return &Burst{rate: float64(rate), buckets: make(map[string]*bucket)}
}

// Allow takes one token from key's bucket at time now, at the rate given to NewBurst. When
// the bucket is empty it returns false and how long until a token is available.
func (b *Burst) Allow(key string, now time.Time) (ok bool, wait time.Duration) {
	return b.AllowRate(key, 0, now)
}

// AllowRate is Allow at rate requests per second for this key (the rate given to NewBurst
// when rate < 1), so that callers with their own allowance share one Burst. A key's bucket
// holds at most its latest rate in tokens.
func (b *Burst) AllowRate(key string, rate int, now time.Time) (ok bool, wait time.Duration) {
	r := b.rate
	if rate > 0 {
		r = float64(rate)
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.sweep(now)
	k := b.buckets[key]
	if k == nil {
		k = &bucket{tokens: r, last: now}
		b.buckets[key] = k
	}
	k.rate = r
	if elapsed := now.Sub(k.last); elapsed > 0 {
		k.tokens += elapsed.Seconds() * r
		k.last = now
	}
	k.tokens = min(r, k.tokens)
	if k.tokens >= 1 {
		k.tokens--
		return true, 0
	}
	return false, time.Duration((1 - k.tokens) / r * float64(time.Second))
}

// sweep drops the buckets that have refilled completely (they equal a fresh bucket), at most
// once per second.
func (b *Burst) sweep(now time.Time) {
	if now.Sub(b.lastSweep) < time.Second {
		return
	}
	b.lastSweep = now
	for key, k := range b.buckets {
		if now.Sub(k.last).Seconds()*k.rate+k.tokens >= k.rate {
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
