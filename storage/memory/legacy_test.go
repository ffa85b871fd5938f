package memory

import (
	"context"

	"github.com/kmkit/kmkit/km"
	"github.com/kmkit/kmkit/query"
)

// planOf compiles a query of the pre-plan form with km.NewPlan (as storetest.PlanOf does;
// this package's tests cannot import storetest, which imports it).
func planOf(m *km.KnowledgeModel, q *km.Query) (*km.Plan, error) {
	r := &km.PlanRequest{Record: q.Record, Request: q.Request}
	if r.PageSize == 0 {
		r.PageSize = 1 // summary queries leave paging unset; a plan needs a valid page
	}
	if q.Filter != nil {
		r.Filters = []query.Expr{q.Filter}
	}
	return km.NewPlan(m, r)
}

func legacyQuery(ctx context.Context, s km.Store, m *km.KnowledgeModel, q *km.Query) (*query.Result, error) {
	p, err := planOf(m, q)
	if err != nil {
		return nil, err
	}
	return s.Query(ctx, p)
}

func legacySummarize(ctx context.Context, s km.Summarizer, m *km.KnowledgeModel, q *km.Query) (*km.Summary, error) {
	p, err := planOf(m, q)
	if err != nil {
		return nil, err
	}
	return s.Summarize(ctx, p)
}
