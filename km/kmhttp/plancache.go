package kmhttp

import (
	"github.com/kmkit/kmkit/internal/plancache"
	"github.com/kmkit/kmkit/km"
)

// planKey identifies a data GET for the handler's plan cache: the same key gives the
// same plan. The KM is the value the store returned, so a changed KM misses.
type planKey struct {
	m       *km.KnowledgeModel
	rec     *km.Record
	asQuery bool
	raw     string
}

// planCache keeps the checked plans of recent data GETs (package plancache).
type planCache = plancache.Cache[planKey, *plan]

// timeless reports whether the plan of p is the same whenever it is made: no now() in a
// filter expression or sort key (bound to the instant of planning), no KPI parameters
// (which re-read the KPI's expression).
func timeless(p *dataParams) bool {
	if len(p.kpiParams) > 0 || plancache.MentionsNow(p.sort) {
		return false
	}
	for _, e := range p.filterExprs {
		if plancache.MentionsNow(e) {
			return false
		}
	}
	return true
}
