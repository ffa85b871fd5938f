package kmhttp

import (
	"errors"
	"net/http"
	"strconv"

	"github.com/kmkit/kmkit/internal/kmjson"
	"github.com/kmkit/kmkit/internal/kmparams"
	"github.com/kmkit/kmkit/internal/rawquery"
	"github.com/kmkit/kmkit/km"
	"github.com/kmkit/kmkit/problem"
)

// DefaultSampleSize is the number of sample rows of a summary request that names none.
const DefaultSampleSize = km.DefaultSampleSize

// serveSummary answers GET .../records/{record_id}/summary.
func (h *Handler) serveSummary(w http.ResponseWriter, r *http.Request, m *km.KnowledgeModel, rec *km.Record) {
	q, err := h.readSummaryParams(r.URL.RawQuery)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	q.Record = rec.ID
	res, err := h.svc.Summarize(r.Context(), m, q)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	body, err := kmjson.Summary(res)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	writeBody(w, body)
}

// readSummaryParams reads fields, excludeFields, filters, filterExpr and sampleSize into
// the portable summary request (its Record left unset).
func (h *Handler) readSummaryParams(raw string) (*km.SummaryRequest, error) {
	params, err := rawquery.Parse(raw)
	if err != nil {
		return nil, err
	}
	q := &km.SummaryRequest{}
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
			return nil, badRequest(problem.CodeConstraint, "sampleSize: %s is out of range: want 1 to %d", v, h.svc.MaxSampleSize())
		case err != nil:
			return nil, badRequest(problem.CodeParameterMismatch, "sampleSize: %q is not an integer", v)
		case n < 1:
			return nil, badRequest(problem.CodeConstraint, "sampleSize: %d is below the minimum sample size 1", n)
		}
		q.SampleSize = int(n)
	}
	q.Fields = kmparams.ParseList(params.Values("fields"))
	q.ExcludeFields = kmparams.ParseList(params.Values("excludeFields"))
	for _, v := range params.Values("filterExpr") {
		q.FilterExprs = append(q.FilterExprs, kmparams.SplitTopLevel(v)...)
	}
	q.Filters = kmparams.ParseList(params.Values("filters"))
	return q, nil
}
