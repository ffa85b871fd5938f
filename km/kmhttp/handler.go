package kmhttp

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/kmkit/kmkit/internal/deadline"
	"github.com/kmkit/kmkit/internal/inputcheck"
	"github.com/kmkit/kmkit/internal/routing"
	"github.com/kmkit/kmkit/km"
	"github.com/kmkit/kmkit/problem"
	"github.com/kmkit/kmkit/problem/problemhttp"
	"github.com/kmkit/kmkit/query"
)

// BasePath is the path under which the handler serves the API. Mount the handler at it, or
// under another prefix with http.StripPrefix.
const BasePath = "/intelligence/api"

// Defaults of the options.
const (
	DefaultMaxPageSize  = 5000
	DefaultMaxBodyBytes = 1 << 20
	DefaultPageSize     = 50
	// DefaultMaxSampleSize is the default of WithMaxSampleSize.
	DefaultMaxSampleSize = 5000
)

// options configure a Handler; the zero value gives the defaults.
type options struct {
	MaxPageSize    int
	MaxSampleSize  int
	MaxBodyBytes   int64
	Limits         query.Limits
	Logger         *slog.Logger
	QueryTimeout   time.Duration
	MaxQueryCost   int64
	MaxQueryMemory int64
}

// Option configures NewHandler.
type Option func(*options)

// WithMaxPageSize bounds pageSize; above it requests fail with 400. Default
// DefaultMaxPageSize (5000); values below 1 keep the default.
func WithMaxPageSize(n int) Option { return func(o *options) { o.MaxPageSize = n } }

// WithMaxSampleSize bounds the sampleSize of the summary endpoint (the seed sets no
// maximum; the bound keeps one request from copying a whole record); above it requests
// fail with 400 naming the bound. Default DefaultMaxSampleSize (5000); values below 1 keep
// the default.
func WithMaxSampleSize(n int) Option { return func(o *options) { o.MaxSampleSize = n } }

// WithMaxBodyBytes bounds POST bodies; beyond it requests fail with 413. Default
// DefaultMaxBodyBytes (1 MiB); values below 1 keep the default.
func WithMaxBodyBytes(n int64) Option { return func(o *options) { o.MaxBodyBytes = n } }

// WithLimits bounds filter expressions (length, nesting, in-list size); zero members take
// the query package's defaults.
func WithLimits(l query.Limits) Option { return func(o *options) { o.Limits = l } }

// WithLogger sets where internal errors are logged with their support id. Default
// slog.Default().
func WithLogger(l *slog.Logger) Option { return func(o *options) { o.Logger = l } }

// WithQueryTimeout bounds the time one data, query or summary request may run; longer
// work is stopped (the store's context is canceled) and answered with 503
// GENERAL_SERVICE_UNAVAILABLE saying so. Default DefaultQueryTimeout; negative: none.
func WithQueryTimeout(d time.Duration) Option { return func(o *options) { o.QueryTimeout = d } }

// WithMaxQueryCost sets the budget of the cost estimate (Plan.Cost): a data, query or
// summary request (and a direct call of QueryJSON or SummaryJSON) estimated beyond it is refused with 400 GENERAL_CONSTRAINT_VIOLATION naming the
// part that is too large. Default DefaultMaxQueryCost; negative: no budget.
func WithMaxQueryCost(n int64) Option { return func(o *options) { o.MaxQueryCost = n } }

// WithMaxQueryMemory bounds the memory a query over a store that runs plans in memory is
// estimated to hold (km.Cost.Memory, in bytes): beyond it the request is refused with 400
// GENERAL_CONSTRAINT_VIOLATION saying what to change, before the store allocates for it.
// Default km.DefaultMaxQueryMemory; negative: no bound.
func WithMaxQueryMemory(n int64) Option { return func(o *options) { o.MaxQueryMemory = n } }

// DefaultQueryTimeout is the default of WithQueryTimeout.
const DefaultQueryTimeout = 30 * time.Second

// Handler serves the Knowledge Model API (schema, data and query endpoints) from a Store.
// Create it with NewHandler.
type Handler struct {
	store km.Store
	opts  options
	api   *routing.API
	entry http.Handler // serve behind the API's HEAD and panic handling
	plans planCache    // the plans of recent data GETs
}

// NewHandler returns the handler of the Knowledge Model API under BasePath, backed by
// store. It expects the auth middleware in front of it for authentication, permissions
// and rate limits (auth.Guard.Wrap, with WriteProblem as the policy's error writer).
func NewHandler(store km.Store, opt ...Option) *Handler {
	var opts options
	for _, o := range opt {
		o(&opts)
	}
	if opts.MaxPageSize <= 0 {
		opts.MaxPageSize = DefaultMaxPageSize
	}
	if opts.MaxSampleSize <= 0 {
		opts.MaxSampleSize = DefaultMaxSampleSize
	}
	if opts.MaxBodyBytes <= 0 {
		opts.MaxBodyBytes = DefaultMaxBodyBytes
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	if opts.QueryTimeout == 0 {
		opts.QueryTimeout = DefaultQueryTimeout
	}
	switch {
	case opts.MaxQueryCost == 0:
		opts.MaxQueryCost = km.DefaultMaxQueryCost
	case opts.MaxQueryCost < 0:
		opts.MaxQueryCost = 1<<63 - 1
	}
	if opts.MaxQueryMemory == 0 {
		opts.MaxQueryMemory = km.DefaultMaxQueryMemory
	}
	h := &Handler{store: store, opts: opts, api: &routing.API{Name: "km", Write: writeProblem, Logger: opts.Logger,
		TimeLimit: opts.QueryTimeout, TimeLimitCause: errQueryTimeout, Narrow: "narrow it (fewer filters, fields, KPIs or rows)"}}
	h.entry = h.api.Handler(h.serve)
	return h
}

// endpoint identifies a route of the API.
type endpoint uint8

const (
	epModels endpoint = iota + 1
	epModel
	epFilters
	epRecords
	epKPIs
	epModelData
	epModelQuery
	epRecord
	epRecordData
	epRecordQuery
	epRecordSummary
	epSpec
)

// route maps a path below BasePath to an endpoint and its path parameters.
func route(path string) (ep endpoint, kmID, recID string, ok bool) {
	rest, ok := strings.CutPrefix(path, BasePath+"/knowledge-models")
	if !ok {
		return 0, "", "", false
	}
	rest = strings.TrimSuffix(rest, "/")
	if rest == "" {
		return epModels, "", "", true
	}
	if rest[0] != '/' {
		return 0, "", "", false
	}
	segs := strings.Split(rest[1:], "/")
	for _, s := range segs {
		if s == "" {
			return 0, "", "", false
		}
	}
	kmID = segs[0]
	switch len(segs) {
	case 1:
		return epModel, kmID, "", true
	case 2:
		switch segs[1] {
		case "filters":
			return epFilters, kmID, "", true
		case "records":
			return epRecords, kmID, "", true
		case "kpis":
			return epKPIs, kmID, "", true
		case "data":
			return epModelData, kmID, "", true
		case "query":
			return epModelQuery, kmID, "", true
		case "spec":
			return epSpec, kmID, "", true
		}
	case 3:
		if segs[1] == "records" {
			return epRecord, kmID, segs[2], true
		}
	case 4:
		if segs[1] == "records" {
			switch segs[3] {
			case "data":
				return epRecordData, kmID, segs[2], true
			case "query":
				return epRecordQuery, kmID, segs[2], true
			case "summary":
				return epRecordSummary, kmID, segs[2], true
			}
		}
	}
	return 0, "", "", false
}

// ServeHTTP implements http.Handler. HEAD is answered as GET without a body. A panic
// below it (in a Store, say) is answered with 500 ADMIN_FATAL_ERROR and logged with its
// support id and stack.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h.entry.ServeHTTP(w, r)
}

func (h *Handler) serve(w http.ResponseWriter, r *http.Request) {
	if err := inputcheck.Request(r, h.opts.MaxBodyBytes); err != nil {
		problemhttp.Write(w, http.StatusBadRequest, problem.CodeParameterIllegal, err.Error())
		return
	}
	ep, kmID, recID, ok := route(r.URL.Path)
	if !ok {
		h.api.NotFound(w, r, "")
		return
	}
	methods := []string{http.MethodGet}
	if ep == epModelData || ep == epRecordData {
		methods = append(methods, http.MethodPost)
	}
	if !h.api.Allow(w, r, methods...) {
		return
	}
	ctx := r.Context()
	if ep == epModels {
		h.serveModels(w, r)
		return
	}
	m, err := km.LookupModel(ctx, h.store, kmID)
	if errors.Is(err, km.ErrModelNotFound) {
		problemhttp.Write(w, http.StatusNotFound, km.CodeModelNotFound, "no knowledge model "+strconv.Quote(kmID))
		return
	}
	if err != nil {
		h.fail(w, r, err)
		return
	}
	var rec *km.Record
	if recID != "" {
		if rec = m.Record(recID); rec == nil {
			problemhttp.Write(w, http.StatusNotFound, km.CodeRecordNotFound, "knowledge model "+m.ID+" has no record "+strconv.Quote(recID)+km.DidYouMean([]string{recID}, m.SuggestRecord))
			return
		}
	}
	switch ep {
	case epModel:
		h.serveModel(w, r, m)
	case epFilters:
		h.serveFilters(w, r, m)
	case epRecords:
		h.serveRecords(w, r, m)
	case epKPIs:
		h.serveKPIs(w, r, m)
	case epRecord:
		h.serveRecord(w, r, rec)
	case epModelData, epRecordData, epModelQuery, epRecordQuery:
		r, cancel := h.bounded(r)
		defer cancel()
		h.serveData(w, r, m, rec, ep == epModelQuery || ep == epRecordQuery)
	case epRecordSummary:
		r, cancel := h.bounded(r)
		defer cancel()
		h.serveSummary(w, r, m, rec)
	case epSpec:
		h.serveSpec(w, r, m)
	}
}

// bounded returns r with the query time limit (WithQueryTimeout) on its context.
func (h *Handler) bounded(r *http.Request) (*http.Request, context.CancelFunc) {
	if h.opts.QueryTimeout < 0 {
		return r, func() {}
	}
	// A timer starts only when the store waits on the context (deadline.Context): the
	// memory store's small queries poll it.
	ctx, cancel := deadline.New(r.Context(), time.Now().Add(h.opts.QueryTimeout), errQueryTimeout)
	return r.WithContext(ctx), cancel
}

// errQueryTimeout is the cause of a context ended by the query time limit.
var errQueryTimeout = errors.New("km: query time limit")

// fail answers err: client errors with their 4xx problem, anything else as every API
// answers failures (routing.API.Fail: 503 for the time limit, a client gone or a database
// unavailable, else 500 with a logged support id).
func (h *Handler) fail(w http.ResponseWriter, r *http.Request, err error) {
	if p, isClientError := ProblemOf(err); isClientError {
		problemhttp.Send(w, p)
		return
	}
	h.api.Fail(w, r, err)
}

// checkCost refuses p with 400 when its estimated cost or memory is beyond the limits,
// naming the part that is too large.
func (h *Handler) checkCost(ctx context.Context, p *km.Plan) error {
	return km.CheckCost(ctx, h.store, p, km.Limits{Cost: h.opts.MaxQueryCost, Memory: h.opts.MaxQueryMemory})
}

// compileFilters is km.CompileFilters within the handler's limits.
func (h *Handler) compileFilters(m *km.KnowledgeModel, rec *km.Record, ids, texts []string) ([]query.Expr, error) {
	return km.CompileFilters(m, rec, ids, texts, h.opts.Limits)
}

// badRequest returns a 400 problem as an error.
func badRequest(code, format string, args ...any) error {
	return problem.New(http.StatusBadRequest, code, fmt.Sprintf(format, args...))
}
