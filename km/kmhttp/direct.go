package kmhttp

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"

	"github.com/kmkit/kmkit/km"
	"github.com/kmkit/kmkit/problem"
	"github.com/kmkit/kmkit/query"
)

// Direct calls: other front ends of the same Knowledge Models (the MCP server, say) answer
// questions through the handler's own checks, plan (NewPlan) and row shaping without an
// HTTP round trip, so that their answers and errors are the KM API's.

// Model returns the KM with the given id visible to the caller of ctx, or the 404 problem
// KM_MODEL_NOTFOUND the API answers for an unknown id.
func (h *Handler) Model(ctx context.Context, id string) (*km.KnowledgeModel, error) {
	m, err := km.LookupModel(ctx, h.store, id)
	if errors.Is(err, km.ErrModelNotFound) {
		return nil, problem.New(http.StatusNotFound, km.CodeModelNotFound, "no knowledge model "+strconv.Quote(id))
	}
	return m, err
}

// Models returns the KMs visible to the caller of ctx.
func (h *Handler) Models(ctx context.Context) ([]*km.KnowledgeModel, error) {
	return km.VisibleModels(ctx, h.store)
}

// QueryJSON answers GET .../knowledge-models/{m}/query (record "") or
// .../records/{record}/query with params as its query string (fields, filters, filterExpr,
// kpis, kpiParam, sort, options, searchTerm, searchField, searchPrecision, page,
// pageSize): the same checks and plan, and the same JSON body {page, pageSize, total,
// sort, content: [row objects]}. Its errors are the endpoint's (see ProblemOf).
func (h *Handler) QueryJSON(ctx context.Context, m *km.KnowledgeModel, record string, params url.Values) ([]byte, error) {
	rec, err := recordOf(m, record)
	if err != nil {
		return nil, err
	}
	p, err := h.readQueryString(params.Encode())
	if err != nil {
		return nil, err
	}
	pl, err := h.plan(m, rec, p, true)
	if err != nil {
		return nil, err
	}
	if err := h.checkCost(ctx, pl.p); err != nil {
		return nil, err
	}
	res, err := h.store.Query(ctx, pl.p)
	if err != nil {
		return nil, err
	}
	if len(res.Columns) != len(pl.columns) {
		return nil, fmt.Errorf("km: store returned %d columns for a request of %d", len(res.Columns), len(pl.columns))
	}
	for i, row := range res.Rows {
		if len(row) != len(pl.columns) {
			return nil, fmt.Errorf("km: store returned row %d with %d values for %d columns", i, len(row), len(pl.columns))
		}
	}
	return encodePage(nil, pl, res, true), nil
}

// SummaryJSON answers GET .../records/{record}/summary with params as its query string
// (fields, excludeFields, filters, filterExpr, sampleSize): the same checks and the same
// JSON body. Its errors are the endpoint's (see ProblemOf).
func (h *Handler) SummaryJSON(ctx context.Context, m *km.KnowledgeModel, record string, params url.Values) ([]byte, error) {
	rec, err := recordOf(m, record)
	if err != nil {
		return nil, err
	}
	if rec == nil {
		return nil, badRequest(problem.CodeParameterMissing, "a summary needs a record")
	}
	p, err := h.readSummaryParams(params.Encode(), m, rec)
	if err != nil {
		return nil, err
	}
	q := &km.PlanRequest{Record: rec.ID, Filters: p.filters}
	for _, f := range p.fields {
		q.Fields = append(q.Fields, f.ID)
	}
	sum, sample, err := h.summarize(ctx, m, q, p.sampleSize)
	if err != nil {
		return nil, err
	}
	if len(sum.Fields) != len(p.fields) || len(sample.Columns) != len(p.fields) {
		return nil, fmt.Errorf("km: store summarized %d fields and sampled %d for a request of %d", len(sum.Fields), len(sample.Columns), len(p.fields))
	}
	return encodeSummary(p.fields, sum, sample.Rows)
}

// recordOf resolves a record id of m ("" is the KM level) as the API's routes do.
func recordOf(m *km.KnowledgeModel, id string) (*km.Record, error) {
	if id == "" {
		return nil, nil
	}
	rec := m.Record(id)
	if rec == nil {
		return nil, problem.New(http.StatusNotFound, km.CodeRecordNotFound, "knowledge model "+m.ID+" has no record "+strconv.Quote(id)+km.DidYouMean([]string{id}, m.SuggestRecord))
	}
	return rec, nil
}

// ProblemOf returns the problem the KM API answers err with when err is a client error
// (a *problem.Problem or a *query.Error), and false for anything else (an
// internal error the API answers with 500).
func ProblemOf(err error) (*problem.Problem, bool) {
	var p *problem.Problem
	var qe *query.Error
	switch {
	case errors.As(err, &p):
		return p, true
	case errors.As(err, &qe):
		return problem.New(http.StatusBadRequest, qe.Code, qe.Error()), true
	}
	return nil, false
}
