package kmhttp

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/kmkit/kmkit/internal/jsonenc"
	"github.com/kmkit/kmkit/internal/kmjson"
	"github.com/kmkit/kmkit/internal/kmparams"
	"github.com/kmkit/kmkit/internal/rawquery"
	"github.com/kmkit/kmkit/km"
	"github.com/kmkit/kmkit/problem"
	"github.com/kmkit/kmkit/query"
)

// dataParams are the parameters of a data or query request, from the query string (GET)
// or the projection (POST), before they are checked against the KM.
type dataParams struct {
	fields      []string // split, trimmed, empty entries removed
	fieldsGiven bool
	filters     []string
	filterExprs []string // one entry per expression
	kpis        []string
	kpisGiven   bool
	options     []string
	sort        string // raw: "+A,-B,C"
	sortGiven   bool
	searchTerm  string
	searchField []string
	precision   int // -1: default
	page, size  int
	kpiParams   map[string]map[string]string // KPI id -> parameter id -> value
}

// column is one output column of a data request: a field or a KPI.
type column struct {
	name  string    // as the request names it
	field *km.Field // nil for a KPI
	kpi   *km.KPI   // nil for a field
}

// plan is a checked data request ready for the store, with what shaping the answer needs.
type plan struct {
	prep    *km.Prepared
	columns []column
	// keys are the columns' names, quoted; head is, for a plan without KPI columns (whose
	// header types come from the result), what encodePage writes from "sort" to the start
	// of the rows. Both are made once with the plan, which the plan cache may reuse.
	keys [][]byte
	head []byte
}

func (h *Handler) serveData(w http.ResponseWriter, r *http.Request, m *km.KnowledgeModel, rec *km.Record, asQuery bool) {
	pl, err := h.dataPlan(w, r, m, rec, asQuery)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	// The store may lend the page's memory (query.Recycling): it is handed back once the
	// page is encoded (on the error paths below it is left to the garbage collector).
	var rc query.Recycling
	res, err := h.svc.Run(query.WithRecycling(r.Context(), &rc), pl.prep)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	bp := pagePool.Get().(*[]byte)
	body := encodePage((*bp)[:0], pl, res, asQuery)
	rc.Release() // res is not read after this
	writeBody(w, body)
	if cap(body) <= maxPooledPage {
		*bp = body[:0]
		pagePool.Put(bp)
	}
}

// dataPlan reads and checks the request's parameters and plans it; a GET's plan comes
// from the handler's plan cache when the same request was planned before.
func (h *Handler) dataPlan(w http.ResponseWriter, r *http.Request, m *km.KnowledgeModel, rec *km.Record, asQuery bool) (*plan, error) {
	if r.Method == http.MethodPost {
		p, err := h.readProjection(w, r, rec != nil)
		if err != nil {
			return nil, err
		}
		return h.plan(m, rec, p, asQuery)
	}
	key := planKey{m: m, rec: rec, asQuery: asQuery, raw: r.URL.RawQuery}
	if pl, ok := h.plans.Get(key); ok {
		return pl, nil
	}
	p, err := h.readQueryString(r.URL.RawQuery)
	if err != nil {
		return nil, err
	}
	pl, err := h.plan(m, rec, p, asQuery)
	if err != nil {
		return nil, err
	}
	if timeless(p) {
		h.plans.Put(key, pl)
	}
	return pl, nil
}

// pagePool recycles the buffers pages are encoded into; buffers above maxPooledPage are
// left to the garbage collector, so one huge page does not pin its memory.
var pagePool = sync.Pool{New: func() any {
	b := make([]byte, 0, 16<<10)
	return &b
}}

const maxPooledPage = 1 << 20

// encodePage renders the result page: {page, pageSize, total, sort, content} with content
// {headers, data} for the data endpoints and an array of rows for the query endpoints.
// It appends to b and returns the extended buffer.
func encodePage(b []byte, pl *plan, res *query.Result, asQuery bool) []byte {
	b = slices.Grow(b, 256+len(pl.head)+len(res.Rows)*len(pl.columns)*32)
	b = append(b, `{"page":`...)
	b = strconv.AppendInt(b, int64(pl.prep.Plan.Page), 10)
	b = append(b, `,"pageSize":`...)
	b = strconv.AppendInt(b, int64(pl.prep.Plan.PageSize), 10)
	b = append(b, `,"total":`...)
	b = strconv.AppendInt(b, int64(len(res.Rows)), 10)
	if pl.head != nil {
		b = append(b, pl.head...)
	} else {
		b = appendHead(b, pl, res.Columns, asQuery)
	}
	b = append(b, '[')
	for i, row := range res.Rows {
		if i > 0 {
			b = append(b, ',')
		}
		b = kmjson.AppendRow(b, pl.keys, row)
	}
	b = append(b, ']')
	if !asQuery {
		b = append(b, '}')
	}
	return append(b, '}')
}

// appendHead appends the page's sort keys and, for the data endpoints, the headers, up
// to the rows; a KPI column's header type is that of the result's column (cols).
func appendHead(b []byte, pl *plan, cols []query.ColumnHeader, asQuery bool) []byte {
	b = append(b, `,"sort":[`...)
	for i, s := range pl.prep.Sort {
		if i > 0 {
			b = append(b, ',')
		}
		b = jsonenc.AppendStringNoHTMLEscape(b, s)
	}
	b = append(b, `],"content":`...)
	if !asQuery {
		b = append(b, `{"headers":[`...)
		for i, c := range pl.columns {
			if i > 0 {
				b = append(b, ',')
			}
			t := query.TypeInvalid
			if cols != nil {
				t = cols[i].Type
			}
			b = kmjson.AppendHeader(b, c.name, c.field, c.kpi, t)
		}
		b = append(b, `],"data":`...)
	}
	return b
}

// quoteKeys returns the columns' names quoted, in one allocation.
func quoteKeys(cols []column) [][]byte {
	names := make([]string, len(cols))
	for i, c := range cols {
		names[i] = c.name
	}
	return kmjson.QuoteKeys(names)
}

// readQueryString reads the parameters of a data GET. fields, filters, kpis and options
// may be comma lists and repeated; filterExpr may be repeated and each value may hold
// several expressions joined by top-level commas.
func (h *Handler) readQueryString(raw string) (*dataParams, error) {
	params, err := rawquery.Parse(raw)
	if err != nil {
		return nil, err
	}
	p := &dataParams{precision: -1}
	p.page, p.size, err = h.paging(params)
	if err != nil {
		return nil, err
	}
	p.fieldsGiven = params.Has("fields")
	p.fields = kmparams.ParseList(params.Values("fields"))
	p.filters = kmparams.ParseList(params.Values("filters"))
	p.kpisGiven = params.Has("kpis")
	p.kpis = kmparams.ParseList(params.Values("kpis"))
	p.options = kmparams.ParseList(params.Values("options"))
	if params.Has("sort") {
		p.sortGiven = true
		p.sort = strings.Join(params.Values("sort"), ",")
	}
	for _, v := range params.Values("filterExpr") {
		p.filterExprs = append(p.filterExprs, kmparams.SplitTopLevel(v)...)
	}
	if vs := params.Values("searchTerm"); len(vs) > 0 {
		p.searchTerm = vs[len(vs)-1]
	}
	p.searchField = kmparams.ParseList(params.Values("searchField"))
	sp, err := lastValue(params, "searchPrecision", "an integer from 1 to 100")
	if err != nil {
		return nil, err
	}
	if p.precision, err = kmparams.ParseSearchPrecision(sp, -1); err != nil {
		return nil, err
	}
	for _, v := range params.Values("kpiParam") {
		if err := p.addKPIParam(v); err != nil {
			return nil, err
		}
	}
	return p, nil
}

// addKPIParam reads one kpiParam value, "KPI_ID.param:value".
func (p *dataParams) addKPIParam(v string) error {
	name, value, ok := strings.Cut(v, ":")
	kpi, param, ok2 := strings.Cut(name, ".")
	if !ok || !ok2 || kpi == "" || param == "" {
		return badRequest(problem.CodeParameterIllegal, "kpiParam %q: want KPI_ID.parameter:value", v)
	}
	p.setKPIParam(kpi, param, value)
	return nil
}

func (p *dataParams) setKPIParam(kpi, param, value string) {
	if p.kpiParams == nil {
		p.kpiParams = map[string]map[string]string{}
	}
	if p.kpiParams[kpi] == nil {
		p.kpiParams[kpi] = map[string]string{}
	}
	p.kpiParams[kpi][param] = value
}

// projection is the POST body's projection. Pointers tell absent members from empty ones.
type projection struct {
	Fields  *string `json:"fields"`
	Filters *struct {
		KMFilterNames []string `json:"kmFilterNames"`
		FilterExpr    []string `json:"filterExpr"`
	} `json:"filters"`
	Pagination *struct {
		PageNumber *int64 `json:"pageNumber"`
		PageSize   *int64 `json:"pageSize"`
	} `json:"pagination"`
	Sort    *string  `json:"sort"`
	Options []string `json:"options"`
	KPIs    []string `json:"kpis"`
	Search  *struct {
		Term      *string `json:"term"`
		Field     *string `json:"field"`
		Precision *int64  `json:"precision"`
	} `json:"search"`
	// KPIParameters overrides KPI parameter values: KPI id -> parameter id -> value.
	KPIParameters map[string]map[string]string `json:"kpiParameters"`
}

// Projection member limits of the seed.
const (
	maxFieldsLen = 2048
	minSortLen   = 2
	maxSortLen   = 2048
	maxOptions   = 1
)

// clampInt converts a JSON integer to int, mapping values beyond int32 to the int32 bounds
// so that the range checks report them.
func clampInt(v int64) int {
	return int(max(min(v, math.MaxInt32+1), math.MinInt32-1))
}

// readProjection reads and checks a POST body {"projection": {...}}.
func (h *Handler) readProjection(w http.ResponseWriter, r *http.Request, recordLevel bool) (*dataParams, error) {
	if err := checkJSONBody(r.Header.Values("Content-Type")); err != nil {
		return nil, err
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, h.opts.MaxBodyBytes))
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return nil, problem.New(http.StatusRequestEntityTooLarge, km.CodePayloadTooLarge,
				fmt.Sprintf("the request body exceeds %d bytes", mbe.Limit))
		}
		return nil, badRequest(problem.CodeParameterIllegal, "reading the request body: %v", err)
	}
	var env struct {
		Projection *projection `json:"projection"`
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&env); err != nil {
		return nil, jsonError(err)
	}
	if dec.More() {
		return nil, badRequest(problem.CodeParameterIllegal, "the request body holds more than one JSON value")
	}
	pr := env.Projection
	if pr == nil {
		return nil, badRequest(problem.CodeParameterMissing, "the body needs a projection member: {\"projection\": {...}}")
	}
	p := &dataParams{precision: -1, page: 0, size: min(DefaultPageSize, h.svc.MaxPageSize())}
	if pr.Fields != nil {
		if n := len(*pr.Fields); n < 1 || n > maxFieldsLen {
			return nil, badRequest(problem.CodeConstraint, "projection.fields is %d characters long: want 1 to %d", n, maxFieldsLen)
		}
		p.fieldsGiven = true
		p.fields = kmparams.ParseList([]string{*pr.Fields})
	} else if recordLevel {
		return nil, badRequest(problem.CodeParameterMissing, "projection.fields is required")
	}
	if pr.Filters != nil {
		p.filters = kmparams.ParseList(pr.Filters.KMFilterNames)
		for _, e := range pr.Filters.FilterExpr {
			p.filterExprs = append(p.filterExprs, kmparams.SplitTopLevel(e)...)
		}
	}
	if pg := pr.Pagination; pg != nil {
		if pg.PageNumber != nil {
			p.page = clampInt(*pg.PageNumber)
		}
		if pg.PageSize != nil {
			p.size = clampInt(*pg.PageSize)
		}
		if err := query.CheckPaging(p.page, p.size, h.svc.MaxPageSize()); err != nil {
			return nil, err
		}
	}
	if pr.Sort != nil {
		if n := len(*pr.Sort); n < minSortLen || n > maxSortLen {
			return nil, badRequest(problem.CodeConstraint, "projection.sort is %d characters long: want %d to %d", n, minSortLen, maxSortLen)
		}
		p.sortGiven = true
		p.sort = *pr.Sort
	}
	if len(pr.Options) > maxOptions {
		return nil, badRequest(problem.CodeConstraint, "projection.options has %d items: at most %d is allowed", len(pr.Options), maxOptions)
	}
	p.options = pr.Options
	if pr.KPIs != nil {
		if recordLevel {
			return nil, badRequest(problem.CodeParameterIllegal, "projection.kpis is only accepted by the knowledge model data endpoint")
		}
		p.kpisGiven = true
		p.kpis = kmparams.ParseList(pr.KPIs)
	}
	if s := pr.Search; s != nil {
		if s.Term != nil {
			p.searchTerm = *s.Term
		}
		if s.Field != nil {
			p.searchField = kmparams.ParseList([]string{*s.Field})
		}
		if s.Precision != nil {
			if err := query.CheckSearchPrecision(clampInt(*s.Precision)); err != nil {
				return nil, err
			}
			p.precision = int(*s.Precision)
		}
	}
	for kpi, vals := range pr.KPIParameters {
		for param, v := range vals {
			p.setKPIParam(kpi, param, v)
		}
	}
	return p, nil
}

// jsonError turns a decoding error of the body into a 400 that says what was wrong.
func jsonError(err error) error {
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	switch {
	case errors.As(err, &se):
		return badRequest(problem.CodeParameterIllegal, "the request body is not valid JSON: %v (at byte %d)", se, se.Offset)
	case errors.As(err, &te):
		where := te.Field
		if where == "" {
			where = "the body"
		}
		return badRequest(problem.CodeParameterMismatch, "%s: a JSON %s where %s is expected", where, te.Value, jsonKind(te.Type.String()))
	case errors.Is(err, io.EOF):
		return badRequest(problem.CodeParameterMissing, "the request body is empty; want {\"projection\": {...}}")
	case errors.Is(err, io.ErrUnexpectedEOF):
		return badRequest(problem.CodeParameterIllegal, "the request body is truncated JSON")
	}
	if msg, ok := strings.CutPrefix(err.Error(), "json: unknown field "); ok {
		return badRequest(problem.CodeParameterIllegal, "unknown member %s in the request body", msg)
	}
	return badRequest(problem.CodeParameterIllegal, "the request body: %v", err)
}

func jsonKind(goType string) string {
	switch {
	case goType == "string" || goType == "*string":
		return "a string"
	case strings.Contains(goType, "int"):
		return "an integer"
	case strings.HasPrefix(goType, "[]"):
		return "an array"
	case strings.HasPrefix(goType, "map[") || strings.HasPrefix(goType, "struct") || strings.HasPrefix(goType, "*struct"):
		return "an object"
	}
	return goType
}

// plan reads p into the portable request and has the Service check and compile it;
// what shaping the answer needs is made once with the plan, which the plan cache may reuse.
func (h *Handler) plan(m *km.KnowledgeModel, rec *km.Record, p *dataParams, asQuery bool) (*plan, error) {
	if rec != nil && p.kpisGiven {
		return nil, badRequest(problem.CodeParameterIllegal, "kpis are only accepted by the knowledge model endpoints")
	}
	r := &km.Request{Fields: p.fields, AllFields: asQuery, KPIs: p.kpis, KPIParams: p.kpiParams,
		Filters: p.filters, FilterExprs: p.filterExprs, Page: p.page, PageSize: p.size}
	if rec != nil {
		r.Record = rec.ID
	}
	var err error
	if r.Distinct, err = kmparams.ParseOptions(p.options); err != nil {
		return nil, err
	}
	if p.searchTerm != "" || len(p.searchField) > 0 {
		r.Search = &km.SearchRequest{Term: p.searchTerm, Fields: p.searchField, Precision: p.precision}
	}
	if p.sortGiven {
		if r.Sort, err = kmparams.ParseSort(p.sort); err != nil {
			return nil, err
		}
	}
	prep, err := h.svc.Prepare(m, r)
	if err != nil {
		return nil, err
	}
	pl := &plan{prep: prep, columns: make([]column, 0, len(prep.Plan.Columns))}
	kpis := false
	for _, c := range prep.Plan.Columns {
		pl.columns = append(pl.columns, column{name: c.Name, field: c.Field, kpi: c.KPI})
		kpis = kpis || c.KPI != nil
	}
	pl.keys = quoteKeys(pl.columns)
	if !kpis {
		pl.head = appendHead(nil, pl, nil, asQuery)
	}
	return pl, nil
}
