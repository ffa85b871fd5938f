package kmhttp

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net/http"
	"strconv"

	"github.com/kmkit/kmkit/internal/jsonenc"
	"github.com/kmkit/kmkit/internal/namelist"
	"github.com/kmkit/kmkit/internal/rawquery"
	"github.com/kmkit/kmkit/km"
	"github.com/kmkit/kmkit/problem"
	"github.com/kmkit/kmkit/query"
)

// DefaultSampleSize is the number of sample rows of a summary request that names none.
const DefaultSampleSize = 10

// summaryParams are the checked parameters of a summary request.
type summaryParams struct {
	fields     []*km.Field // the described fields, in order
	filters    []query.Expr
	sampleSize int
}

// serveSummary answers GET .../records/{record_id}/summary.
func (h *Handler) serveSummary(w http.ResponseWriter, r *http.Request, m *km.KnowledgeModel, rec *km.Record) {
	p, err := h.readSummaryParams(r.URL.RawQuery, m, rec)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	q := &km.PlanRequest{Record: rec.ID, Filters: p.filters}
	q.Fields = make([]string, len(p.fields))
	for i, f := range p.fields {
		q.Fields[i] = f.ID
	}
	sum, sample, err := h.summarize(r.Context(), m, q, p.sampleSize)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	if len(sum.Fields) != len(p.fields) || len(sample.Columns) != len(p.fields) {
		h.fail(w, r, fmt.Errorf("km: store summarized %d fields and sampled %d for a request of %d", len(sum.Fields), len(sample.Columns), len(p.fields)))
		return
	}
	body, err := encodeSummary(p.fields, sum, sample.Rows)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	writeBody(w, body)
}

// summarize returns the statistics of q's rows and a result holding the first sampleSize
// of them: from the store's Summarizer when it has one, else by describing every row.
func (h *Handler) summarize(ctx context.Context, m *km.KnowledgeModel, q *km.PlanRequest, sampleSize int) (*km.Summary, *query.Result, error) {
	plan := func(page, size int, count bool) (*km.Plan, error) {
		r := *q
		r.Page, r.PageSize, r.Count = page, size, count
		return km.NewPlan(m, &r)
	}
	// The budget applies to the rows described, whichever way they are.
	cp, err := plan(0, 1, false)
	if err != nil {
		return nil, nil, err
	}
	if err := h.checkCost(ctx, cp); err != nil {
		return nil, nil, err
	}
	if s, ok := h.store.(km.Summarizer); ok {
		p := cp
		sum, err := s.Summarize(ctx, p)
		switch {
		case err == nil && sum == nil:
			return nil, nil, errors.New("km: the store's Summarize returned no summary and no error")
		case err == nil:
			sp, err := plan(0, sampleSize, false)
			if err != nil {
				return nil, nil, err
			}
			sample, err := h.store.Query(ctx, sp)
			if err == nil && sample == nil {
				err = errors.New("km: the store's Query returned no result and no error")
			}
			return sum, sample, err
		case !errors.Is(err, km.ErrUnsupported):
			return nil, nil, err
		}
	}
	all, err := plan(0, math.MaxInt32, true)
	if err != nil {
		return nil, nil, err
	}
	res, err := h.store.Query(ctx, all)
	if err != nil {
		return nil, nil, err
	}
	switch {
	case res == nil:
		return nil, nil, errors.New("km: the store's Query returned no result and no error")
	case len(res.Columns) != len(q.Fields):
		return nil, nil, fmt.Errorf("km: store returned %d columns for a request of %d", len(res.Columns), len(q.Fields))
	case res.Count > len(res.Rows):
		// Statistics of part of the rows would be wrong, not approximate.
		return nil, nil, fmt.Errorf("km: store returned %d of %d rows for a whole-result query", len(res.Rows), res.Count)
	}
	sum := &km.Summary{Rows: len(res.Rows), Fields: km.DescribeResult(res)}
	res.Rows = res.Rows[:min(len(res.Rows), sampleSize)]
	return sum, res, nil
}

// readSummaryParams reads and checks fields, excludeFields, filters, filterExpr and
// sampleSize against the record.
func (h *Handler) readSummaryParams(raw string, m *km.KnowledgeModel, rec *km.Record) (*summaryParams, error) {
	params, err := rawquery.Parse(raw)
	if err != nil {
		return nil, err
	}
	p := &summaryParams{sampleSize: DefaultSampleSize}
	v, err := lastValue(params, "sampleSize", "an integer")
	if err != nil {
		return nil, err
	}
	if v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if len(v) > 32 {
			v = v[:32] + "..."
		}
		switch {
		case errors.Is(err, strconv.ErrRange):
			return nil, badRequest(problem.CodeConstraint, "sampleSize: %s is out of range: want 1 to %d", v, h.opts.MaxSampleSize)
		case err != nil:
			return nil, badRequest(problem.CodeParameterMismatch, "sampleSize: %q is not an integer", v)
		case n < 1:
			return nil, badRequest(problem.CodeConstraint, "sampleSize: %d is below the minimum sample size 1", n)
		case n > int64(h.opts.MaxSampleSize):
			return nil, badRequest(problem.CodeConstraint, "sampleSize: %d is above the maximum sample size %d (the server's MaxSampleSize option)", n, h.opts.MaxSampleSize)
		}
		p.sampleSize = int(n)
	}
	// Fields: the named ones (all of the record's by default) less the excluded ones.
	names := namelist.Dedup(query.ParseList(params.Values("fields")))
	if len(names) > km.MaxFields {
		return nil, badRequest(problem.CodeConstraint, "%d fields requested: at most %d are allowed", len(names), km.MaxFields)
	}
	excluded := namelist.Dedup(query.ParseList(params.Values("excludeFields")))
	var unknown []string
	for _, name := range append(names, excluded...) {
		if rec.Field(name) == nil {
			unknown = append(unknown, name)
		}
	}
	if len(unknown) > 0 {
		return nil, badRequest(query.CodeFieldNotFound, "unknown field%s: %s%s%s", namelist.Plural(len(unknown)), namelist.Join(unknown), km.FieldHint(rec), m.FieldHints(rec, unknown))
	}
	skip := make(map[string]bool, len(excluded))
	for _, name := range excluded {
		skip[name] = true
	}
	if len(names) == 0 {
		for _, f := range rec.Fields {
			names = append(names, f.ID)
		}
	}
	for _, name := range names {
		if !skip[name] {
			p.fields = append(p.fields, rec.Field(name))
		}
	}
	if len(p.fields) == 0 {
		return nil, badRequest(problem.CodeParameterIllegal, "excludeFields leaves no field of record %s to summarize", rec.ID)
	}
	// Filters: predefined ones that apply to this record, and filterExpr entries, ANDed.
	var exprs []string
	for _, v := range params.Values("filterExpr") {
		exprs = append(exprs, query.SplitTopLevel(v)...)
	}
	if p.filters, err = h.compileFilters(m, rec, query.ParseList(params.Values("filters")), exprs); err != nil {
		return nil, err
	}
	return p, nil
}

// encodeSummary renders {content: {headers, data}, shape: [rows, columns], summary: {...}}.
func encodeSummary(fields []*km.Field, sum *km.Summary, sample [][]query.Value) ([]byte, error) {
	keys := make([][]byte, len(fields))
	for i, f := range fields {
		keys[i] = jsonenc.AppendStringNoHTMLEscape(nil, f.ID)
	}
	b := make([]byte, 0, 512+len(fields)*(64+len(sample)*24))
	b = append(b, `{"content":{"headers":[`...)
	for i, f := range fields {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendHeader(b, column{name: f.ID, field: f}, f.Type)
	}
	b = append(b, `],"data":[`...)
	for i, row := range sample {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendRow(b, keys, row)
	}
	b = append(b, `]},"shape":[`...)
	b = strconv.AppendInt(b, int64(sum.Rows), 10)
	b = append(b, ',')
	b = strconv.AppendInt(b, int64(len(fields)), 10)
	b = append(b, `],"summary":{`...)
	for i, fs := range sum.Fields {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, keys[i]...)
		b = append(b, ':')
		js, err := fs.MarshalJSON()
		if err != nil {
			return nil, fmt.Errorf("%w (field %s)", err, fields[i].ID)
		}
		b = append(b, js...)
	}
	return append(b, "}}"...), nil
}
