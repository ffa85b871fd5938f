package kmhttp

import (
	"strings"
	"sync"

	"github.com/kmkit/kmkit/km"
)

// planCacheSize bounds the plans a handler keeps (planCache); past it the cache starts
// over empty.
const planCacheSize = 512

// planCache keeps the checked plans of recent data GETs, so that a repeated request (a
// dashboard's tile, a poll) skips parsing its query string, checking it against the KM
// and planning it; the store still runs every request. A plan is keyed by the KM value
// the store returned (a store returns a changed KM as a new value, see km.Store), the
// record, the endpoint kind and the raw query string, and is only read once built.
// Requests whose plan depends on the moment it is made (now() in a filter or sort, KPI
// parameters, which re-read the KPI's expression) are not kept.
type planCache struct {
	mu    sync.RWMutex
	plans map[planKey]*plan
}

// planKey identifies a data GET: the same key gives the same plan.
type planKey struct {
	m       *km.KnowledgeModel
	rec     *km.Record
	asQuery bool
	raw     string
}

// get returns the plan kept for k, or nil.
func (c *planCache) get(k planKey) *plan {
	c.mu.RLock()
	pl := c.plans[k]
	c.mu.RUnlock()
	return pl
}

// put keeps pl for k when p's plan does not depend on when it was made.
func (c *planCache) put(k planKey, p *dataParams, pl *plan) {
	if !timeless(p) {
		return
	}
	c.mu.Lock()
	if c.plans == nil || len(c.plans) >= planCacheSize {
		c.plans = make(map[planKey]*plan, 64)
	}
	c.plans[k] = pl
	c.mu.Unlock()
}

// timeless reports whether the plan of p is the same whenever it is made: no now() in a
// filter expression or sort key (bound to the instant of planning), no KPI parameters.
// It looks for "now" in any case, so it may refuse a plan that was timeless.
func timeless(p *dataParams) bool {
	if len(p.kpiParams) > 0 || hasNow(p.sort) {
		return false
	}
	for _, e := range p.filterExprs {
		if hasNow(e) {
			return false
		}
	}
	return true
}

// hasNow reports whether s holds "now" in any case.
func hasNow(s string) bool {
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
