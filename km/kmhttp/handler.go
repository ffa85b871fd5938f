package kmhttp

import (
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/kmkit/kmkit/internal/inputcheck"
	"github.com/kmkit/kmkit/internal/kmspec"
	"github.com/kmkit/kmkit/km"
	"github.com/kmkit/kmkit/problem"
	"github.com/kmkit/kmkit/problem/problemhttp"
	"github.com/kmkit/kmkit/query"
	"github.com/kmkit/kmkit/web/routing"
)

// BasePath is the path under which the handler serves the API. Mount the handler at it, or
// under another prefix with http.StripPrefix.
const BasePath = kmspec.BasePath

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
	Service        *km.Service
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
const DefaultQueryTimeout = km.DefaultQueryTimeout

// WithService has the handler answer through svc, the request layer the host shares
// between its surfaces (the KM API, OData, MCP), so that every surface applies the same
// limits: svc's page size, filter, time, cost and memory limits then replace
// WithMaxPageSize, WithMaxSampleSize, WithLimits, WithQueryTimeout, WithMaxQueryCost and
// WithMaxQueryMemory, and svc's store the store given to NewHandler.
func WithService(svc *km.Service) Option { return func(o *options) { o.Service = svc } }

// Handler serves the Knowledge Model API (schema, data and query endpoints) from a Store.
// Create it with NewHandler.
type Handler struct {
	store km.Store
	svc   *km.Service
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
	if opts.MaxBodyBytes <= 0 {
		opts.MaxBodyBytes = DefaultMaxBodyBytes
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	svc := opts.Service
	if svc == nil {
		svc = km.NewService(store, km.WithMaxPageSize(opts.MaxPageSize), km.WithMaxSampleSize(opts.MaxSampleSize),
			km.WithFilterLimits(opts.Limits), km.WithQueryTimeout(opts.QueryTimeout),
			km.WithMaxQueryCost(opts.MaxQueryCost), km.WithMaxQueryMemory(opts.MaxQueryMemory))
	}
	// The query string's pages are read against the Service's cap, so that a request
	// without pageSize gets the Service's default page (50, or the cap when lower).
	opts.MaxPageSize = svc.MaxPageSize()
	h := &Handler{store: svc.Store(), svc: svc, opts: opts, api: &routing.API{Name: "km", Write: writeProblem, Logger: opts.Logger,
		TimeLimit: svc.QueryTimeout(), TimeLimitCause: km.ErrTimeLimit, Narrow: "narrow it (fewer filters, fields, KPIs or rows)"}}
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
	m, err := h.svc.Model(ctx, kmID)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	rec, err := km.LookupRecord(m, recID)
	if err != nil {
		h.fail(w, r, err)
		return
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
		h.serveData(w, r, m, rec, ep == epModelQuery || ep == epRecordQuery)
	case epRecordSummary:
		h.serveSummary(w, r, m, rec)
	case epSpec:
		h.serveSpec(w, r, m)
	}
}

// fail answers err: client errors with their 4xx problem, anything else as every API
// answers failures (routing.API.Fail: 503 for the time limit, a client gone or a database
// unavailable, else 500 with a logged support id).
func (h *Handler) fail(w http.ResponseWriter, r *http.Request, err error) {
	if p, isClientError := km.AsProblem(err); isClientError {
		problemhttp.Send(w, p)
		return
	}
	h.api.Fail(w, r, err)
}

// badRequest returns a 400 problem as an error.
func badRequest(code, format string, args ...any) error {
	return problem.New(http.StatusBadRequest, code, fmt.Sprintf(format, args...))
}
