package storetest

import (
	"context"

	"github.com/kmkit/kmkit/km"
	"github.com/kmkit/kmkit/query"
)

// PlanOf compiles a query written in the pre-plan form (km.Query: a record-level or
// KM-level query.Request with a bound Filter) into a km.Plan with km.NewPlan. Its Join is
// ignored: the plan finds its own paths.
func PlanOf(m *km.KnowledgeModel, q *km.Query) (*km.Plan, error) {
	r := &km.PlanRequest{Record: q.Record, Request: q.Request}
	if q.Filter != nil {
		r.Filters = []query.Expr{q.Filter}
	}
	return km.NewPlan(m, r)
}

// Query compiles q (see PlanOf) and runs the plan on s.
func Query(ctx context.Context, s km.Store, m *km.KnowledgeModel, q *km.Query) (*query.Result, error) {
	p, err := PlanOf(m, q)
	if err != nil {
		return nil, err
	}
	return s.Query(ctx, p)
}

// Summarize compiles q (see PlanOf) and summarizes the plan's rows with s.
func Summarize(ctx context.Context, s km.Summarizer, m *km.KnowledgeModel, q *km.Query) (*km.Summary, error) {
	p, err := PlanOf(m, q)
	if err != nil {
		return nil, err
	}
	return s.Summarize(ctx, p)
}
