// Package plancache keeps the checked plans of recent requests, so that a surface that
// receives the same request again (a dashboard's tile, a poll, an agent repeating a
// call) skips reading, checking and planning it; the store still runs every request.
// The KM API keys its plans by the query string and MCP by a call's arguments, each
// with what else decides the plan (the KM value the store returned: a store returns a
// changed KM as a new value, see km.Store).
//
// A request whose plan depends on the moment it is made (now() is bound when the plan
// is made) must not be kept: MentionsNow tells the surfaces which.
package plancache

import (
	"strings"
	"sync"
)

// Size bounds the plans a Cache keeps; past it the cache starts over empty, which costs
// a burst of planning and no bookkeeping on the hot path.
const Size = 512

// Cache keeps plans V by key K. The zero Cache is empty and ready; it is safe for
// concurrent use.
type Cache[K comparable, V any] struct {
	mu    sync.RWMutex
	plans map[K]V
}

// Get returns the plan kept for k.
func (c *Cache[K, V]) Get(k K) (V, bool) {
	c.mu.RLock()
	v, ok := c.plans[k]
	c.mu.RUnlock()
	return v, ok
}

// Put keeps v for k.
func (c *Cache[K, V]) Put(k K, v V) {
	c.mu.Lock()
	if c.plans == nil || len(c.plans) >= Size {
		c.plans = make(map[K]V, 64)
	}
	c.plans[k] = v
	c.mu.Unlock()
}

// Len returns the number of plans kept.
func (c *Cache[K, V]) Len() int {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return len(c.plans)
}

// MentionsNow reports whether s holds "now" in any case: a request that does may call
// now() and must not be kept. It may refuse a request that does not ("Known" in a
// literal), which costs only a plan made again.
func MentionsNow(s string) bool {
	for {
		i := strings.IndexAny(s, "nN")
		if i < 0 || len(s)-i < 3 {
			return false
		}
		if strings.EqualFold(s[i:i+3], "now") {
			return true
		}
		s = s[i+1:]
	}
}
