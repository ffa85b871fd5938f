package odata

import (
	"fmt"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/kmkit/kmkit/internal/inputcheck"
	"github.com/kmkit/kmkit/internal/rawquery"
	"github.com/kmkit/kmkit/km"
	"github.com/kmkit/kmkit/problem"
	"github.com/kmkit/kmkit/query"
	"github.com/kmkit/kmkit/web/publicurl"
	"github.com/kmkit/kmkit/web/routing"
)

// BasePath is the path under which the handler serves one OData service per KM:
// BasePath/{km_id}.svc. Mount the handler at BasePath + "/".
const BasePath = "/intelligence/api/odata"

// Version is the OData version of every answer, sent in the OData-Version header.
const Version = "4.0"

// DefaultMaxPageSize is the default of WithMaxPageSize.
const DefaultMaxPageSize = 5000

// DefaultMaxExpandedEntities is the default of WithMaxExpandedEntities.
const DefaultMaxExpandedEntities = 10000

// Error codes of unknown resources, shared with the Knowledge Model API.
const (
	CodeModelNotFound  = km.CodeModelNotFound
	CodeRecordNotFound = km.CodeRecordNotFound
	CodeFilterNotFound = km.CodeFilterNotFound
)

// options configure a Handler; the zero value gives the defaults.
type options struct {
	MaxPageSize    int
	MaxExpanded    int
	BaseURL        string
	MaxBatchBytes  int64
	Limits         query.Limits
	Logger         *slog.Logger
	QueryTimeout   time.Duration
	MaxQueryCost   int64
	MaxQueryMemory int64
	Service        *km.Service
}

// WithService has the handler answer through svc, the request layer the host shares
// between its surfaces (the KM API, OData, MCP), so that every surface applies the same
// limits: svc's time, cost and memory limits and filter bounds then replace
// WithQueryTimeout, WithMaxQueryCost, WithMaxQueryMemory and WithLimits, svc's
// MaxPageSize bounds WithMaxPageSize, and svc's store replaces the store given to
// NewHandler.
func WithService(svc *km.Service) Option { return func(o *options) { o.Service = svc } }

// Option configures NewHandler.
type Option func(*options)

// WithMaxPageSize bounds the entities of one response (server-driven paging): a longer
// answer ends with @odata.nextLink. Default DefaultMaxPageSize (5000); values below 1 keep
// the default. A client may ask for smaller pages with the header
// "Prefer: odata.maxpagesize=N".
func WithMaxPageSize(n int) Option { return func(o *options) { o.MaxPageSize = n } }

// WithMaxExpandedEntities bounds the related entities $expand brings into one answer,
// all expanded properties and levels together (a page of 5000 entities each with 50
// related ones would be 250000): beyond it the answer is 400 GENERAL_CONSTRAINT_VIOLATION
// saying what to ask instead. Default DefaultMaxExpandedEntities; values below 1 keep
// the default.
func WithMaxExpandedEntities(n int) Option { return func(o *options) { o.MaxExpanded = n } }

// WithBaseURL sets the scheme and host of the absolute URLs the answers carry (context
// URLs, next links, Atom ids), for example "https://api.example.com" behind a proxy.
// Default: taken from the request (https when it came over TLS, its Host header).
func WithBaseURL(u string) Option { return func(o *options) { o.BaseURL = u } }

// WithMaxBatchBytes bounds the body of a $batch request; beyond it the answer is 413.
// Default DefaultMaxBatchBytes (1 MiB); values below 1 keep the default.
func WithMaxBatchBytes(n int64) Option { return func(o *options) { o.MaxBatchBytes = n } }

// WithLimits bounds $filter expressions (length, nesting, in-list size); zero members
// take the query package's defaults.
func WithLimits(l query.Limits) Option { return func(o *options) { o.Limits = l } }

// WithLogger sets where internal errors are logged with their support id. Default
// slog.Default().
func WithLogger(l *slog.Logger) Option { return func(o *options) { o.Logger = l } }

// WithQueryTimeout bounds the time one request may run (as kmhttp.WithQueryTimeout): longer
// work is stopped and answered with 503 GENERAL_SERVICE_UNAVAILABLE saying so. Default
// km.DefaultQueryTimeout; negative: none.
func WithQueryTimeout(d time.Duration) Option { return func(o *options) { o.QueryTimeout = d } }

// WithMaxQueryCost sets the budget of the cost estimate of a query (km.CheckCost, as
// kmhttp.WithMaxQueryCost): a request estimated beyond it is refused with 400
// GENERAL_CONSTRAINT_VIOLATION naming the part that is too large. Default
// km.DefaultMaxQueryCost; negative: no budget.
func WithMaxQueryCost(n int64) Option { return func(o *options) { o.MaxQueryCost = n } }

// WithMaxQueryMemory bounds the memory a query is estimated to hold (km.CheckCost, as
// kmhttp.WithMaxQueryMemory). Default km.DefaultMaxQueryMemory; negative: no bound.
func WithMaxQueryMemory(n int64) Option { return func(o *options) { o.MaxQueryMemory = n } }

// Handler serves the OData services of the KMs of a km.Store. Create it with NewHandler.
type Handler struct {
	store km.Store
	svc   *km.Service
	opts  options
	now   func() time.Time
	api   *routing.API
	entry http.Handler // serve behind the API's HEAD and panic handling
}

// NewHandler returns the handler of the OData services under BasePath, backed by store.
// It expects the auth middleware in front of it for authentication, permissions and rate
// limits (auth.Guard.Wrap, with WriteProblem as the policy's error writer).
func NewHandler(store km.Store, opt ...Option) *Handler {
	var opts options
	for _, o := range opt {
		o(&opts)
	}
	if opts.MaxPageSize <= 0 {
		opts.MaxPageSize = DefaultMaxPageSize
	}
	if opts.MaxExpanded <= 0 {
		opts.MaxExpanded = DefaultMaxExpandedEntities
	}
	if opts.MaxBatchBytes <= 0 {
		opts.MaxBatchBytes = DefaultMaxBatchBytes
	}
	opts.BaseURL = strings.TrimSuffix(opts.BaseURL, "/")
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	svc := opts.Service
	if svc == nil {
		svc = km.NewService(store, km.WithMaxPageSize(opts.MaxPageSize), km.WithFilterLimits(opts.Limits),
			km.WithQueryTimeout(opts.QueryTimeout), km.WithMaxQueryCost(opts.MaxQueryCost), km.WithMaxQueryMemory(opts.MaxQueryMemory))
	}
	// $filter is parsed within the Service's filter bounds, as filterExpr is.
	opts.Limits = svc.FilterLimits()
	h := &Handler{store: svc.Store(), svc: svc, opts: opts, now: time.Now}
	h.api = &routing.API{Name: "odata", Logger: opts.Logger, TimeLimit: svc.QueryTimeout(), TimeLimitCause: km.ErrTimeLimit,
		Narrow: "narrow it (a simpler $filter, fewer rows)", Write: func(w http.ResponseWriter, r *http.Request, p *problem.Problem) {
			writeError(w, r, p, "")
		}}
	h.entry = h.api.Handler(h.serve)
	return h
}

// resource is what a path addresses.
type resource uint8

const (
	resService resource = iota + 1
	resMetadata
	resEntitySet
	resCount
	resEntity
	resBatch
	resNavigation
)

// address is what a path addresses: the resource, the KM id, the entity set and, for an
// entity addressed by key, the key predicate (the text inside the parentheses) and the
// navigation property that follows it, if any.
type address struct {
	res                 resource
	kmID, set, key, nav string
}

// route reads a path below BasePath. A path it does not know gives a 404 problem saying
// why; a longer path after an entity (a property's value, a navigation followed further)
// is valid OData it does not serve: a 501 saying what to ask instead.
func route(path string) (address, error) {
	rest, ok := strings.CutPrefix(path, BasePath+"/")
	if !ok {
		return address{}, notFoundPath(path, "OData services live at "+BasePath+"/{km_id}.svc")
	}
	svc, sub, _ := strings.Cut(rest, "/")
	kmID, ok := strings.CutSuffix(svc, ".svc")
	if !ok || kmID == "" {
		return address{}, notFoundPath(path, "OData services live at "+BasePath+"/{km_id}.svc")
	}
	switch {
	case sub == "":
		return address{res: resService, kmID: kmID}, nil
	case sub == "$metadata":
		return address{res: resMetadata, kmID: kmID}, nil
	case sub == "$batch":
		return address{res: resBatch, kmID: kmID}, nil
	case strings.HasSuffix(sub, EntitySetSuffix) && isIdentifier(sub):
		return address{res: resEntitySet, kmID: kmID, set: sub}, nil
	}
	if set, ok := strings.CutSuffix(sub, "/$count"); ok && strings.HasSuffix(set, EntitySetSuffix) && isIdentifier(set) {
		return address{res: resCount, kmID: kmID, set: set}, nil
	}
	if i := strings.IndexByte(sub, '('); i > 0 && strings.HasSuffix(sub[:i], EntitySetSuffix) && isIdentifier(sub[:i]) {
		set := sub[:i]
		j, err := closing(sub, i) // its error speaks of $apply: the path's is below
		if err != nil {
			return address{}, notFoundPath(path, "an entity is addressed as "+set+"(key)")
		}
		key, after := sub[i+1:j], sub[j+1:]
		switch nav, ok := strings.CutPrefix(after, "/"); {
		case after == "":
			return address{res: resEntity, kmID: kmID, set: set, key: key}, nil
		case ok && isIdentifier(nav):
			return address{res: resNavigation, kmID: kmID, set: set, key: key, nav: nav}, nil
		case ok && isResourcePath(nav):
			return address{}, notSupported(nav, "%s(%s)/%s: an entity's navigation properties are addressable one step (%s(key)/NAVIGATION), its properties with $select; ask %s(key)/NAVIGATION with $filter, $select or $expand instead",
				set, short(key), short(nav), set, set)
		}
		return address{}, notFoundPath(path, "an entity is addressed as "+set+"(key), its navigation properties as "+set+"(key)/NAVIGATION")
	}
	return address{}, notFoundPath(path, "a service has $metadata, $batch and entity sets named {record_id}"+EntitySetSuffix)
}

// isResourcePath reports whether s is a resource path OData could address after an
// entity: segments separated by "/", each an identifier with an optional parenthesised
// key, or $value, $count or $ref. Text that is none of these ("ORDERS_entries('O1')/)")
// is no OData path at all, which the route answers 404, not 501.
func isResourcePath(s string) bool {
	for {
		n := strings.IndexAny(s, "/(")
		if n < 0 {
			n = len(s)
		}
		if seg := s[:n]; seg != "$value" && seg != "$count" && seg != "$ref" && !isIdentifier(seg) {
			return false
		}
		s = s[n:]
		if strings.HasPrefix(s, "(") {
			j, err := closing(s, 0)
			if err != nil {
				return false
			}
			s = s[j+1:]
		}
		if s == "" {
			return true
		}
		var slash bool
		if s, slash = strings.CutPrefix(s, "/"); !slash {
			return false
		}
	}
}

func notFoundPath(path, why string) error { return routing.NotFoundProblem(path, why) }

// ServeHTTP implements http.Handler. HEAD is answered as GET without a body. A panic
// below it (in a Store, say) is answered with 500 ADMIN_FATAL_ERROR and logged with its
// support id and stack.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h.entry.ServeHTTP(w, r)
}

func (h *Handler) serve(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("OData-Version", Version)
	if err := inputcheck.Request(r, inputcheck.DefaultMaxBody); err != nil {
		h.fail(w, r, problem.New(http.StatusBadRequest, problem.CodeParameterIllegal, err.Error()))
		return
	}
	a, err := route(r.URL.Path)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	res, set := a.res, a.set
	if err := checkMaxVersion(r.Header.Values("OData-MaxVersion")); err != nil {
		h.fail(w, r, err)
		return
	}
	if res == resBatch {
		if h.api.Allow(w, r, http.MethodPost) {
			h.serveBatch(w, r)
		}
		return
	}
	if !h.api.Allow(w, r, http.MethodGet) { // the OData services are read-only
		return
	}
	m, err := h.svc.Model(r.Context(), a.kmID)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	// The request runs in the Service's time budget; a part of a $batch in the batch's
	// one budget (serveBatch).
	ctx, cancel := h.svc.Budget(r.Context())
	defer cancel()
	r = r.WithContext(ctx)
	root := h.serviceRoot(r, m.ID)
	switch res {
	case resService, resMetadata:
		h.serveDocument(w, r, m, root, res == resMetadata)
	case resEntitySet, resCount, resEntity, resNavigation:
		recID := strings.TrimSuffix(set, EntitySetSuffix)
		rec := m.Record(recID)
		if rec == nil {
			writeProblem(w, r, http.StatusNotFound, CodeRecordNotFound,
				"knowledge model "+m.ID+" has no entity set "+strconv.Quote(set)+" (no record "+strconv.Quote(recID)+")"+
					km.DidYouMean([]string{set}, func(string) []string {
						var sets []string
						for _, id := range m.SuggestRecord(recID) {
							sets = append(sets, id+EntitySetSuffix)
						}
						return sets
					}))
			return
		}
		switch res {
		case resEntity:
			h.serveEntity(w, r, m, newEntityType(rec), root, a.key)
		case resNavigation:
			h.serveNavigation(w, r, m, newEntityType(rec), root, a.key, a.nav)
		default:
			h.serveEntities(w, r, m, newEntityType(rec), root, res == resCount, nil)
		}
	}
}

// checkMaxVersion reads the OData-MaxVersion request header: the answers are OData 4.0,
// so a client whose maximum is below 4.0 (an OData 2 or 3 client) is refused with 400
// ODATA_VERSION_NOT_SUPPORTED, and a value that is not a version number is 400 too.
func checkMaxVersion(values []string) error {
	for _, v := range values {
		v = strings.TrimSpace(v)
		major, minor, _ := strings.Cut(v, ".")
		ma, err1 := strconv.Atoi(major)
		_, err2 := strconv.Atoi(minor)
		if err1 != nil || err2 != nil || ma < 0 {
			return withTarget(badOption(problem.CodeParameterMismatch, "OData-MaxVersion %q is not a version such as 4.0", short(v)), "OData-MaxVersion")
		}
		if ma < 4 {
			return withTarget(badOption(CodeVersionNotSupported, "OData-MaxVersion %s: this service speaks OData 4.0 only (and accepts 4.01 option names); send OData-MaxVersion 4.0 or higher", short(v)), "OData-MaxVersion")
		}
	}
	return nil
}

// serviceRoot returns the absolute URL of the KM's service, ending in "/".
func (h *Handler) serviceRoot(r *http.Request, kmID string) string {
	base := h.opts.BaseURL
	if o, ok := publicurl.From(r); ok && base == "" {
		base = o
	}
	if base == "" {
		scheme := "http"
		if r.TLS != nil {
			scheme = "https"
		}
		base = scheme + "://" + r.Host
	}
	return base + BasePath + "/" + kmID + ".svc/"
}

// serveDocument answers the service document or $metadata. Only $format is allowed.
func (h *Handler) serveDocument(w http.ResponseWriter, r *http.Request, m *km.KnowledgeModel, root string, metadata bool) {
	o, err := ParseQueryOptions(r.URL.RawQuery, query.WithLimits(h.opts.Limits))
	if err == nil {
		err = onlyFormat(r.URL.RawQuery)
	}
	if err != nil {
		h.fail(w, r, err)
		return
	}
	// The service document is JSON unless XML is asked for. $metadata is CSDL XML unless
	// JSON is asked for, as OData requires, and XML also wins whenever the Accept header
	// admits it at all: CSDL JSON is new in 4.01, and 4.0 clients (Power Query among
	// them) list JSON first in one Accept header for every request, $metadata included.
	def := FormatJSON
	if metadata {
		def = FormatXML
	}
	rep, err := negotiate(o, r.Header.Get("Accept"), def)
	f := rep.format
	if metadata && o.Format == FormatDefault && err == nil && f == FormatJSON && admitsXML(r.Header.Get("Accept")) {
		f = FormatXML
	}
	if err != nil {
		h.fail(w, r, err)
		return
	}
	types := entityTypes(m)
	switch {
	case metadata && f == FormatXML:
		write(w, "application/xml", metadataXML(types, m.KPIs))
	case metadata:
		write(w, "application/json", metadataJSON(types, m.KPIs))
	case f == FormatXML:
		write(w, "application/atomsvc+xml;charset=utf-8", serviceXML(root, types))
	default:
		write(w, rep.jsonContentType(), serviceJSON(root, types, rep.metadata != metaNone))
	}
}

// onlyFormat rejects query options other than $format on the service document and
// $metadata (custom options are ignored).
func onlyFormat(raw string) error {
	params, _ := rawquery.Parse(raw) // ParseQueryOptions has checked the escapes
	for _, p := range params {
		if name, ok := optionName(p.Key); ok && name != optFormat {
			return badOption(problem.CodeParameterIllegal, "%s applies to entity sets only; the service document and $metadata take $format", short(p.Key))
		}
	}
	return nil
}

// write sends a complete 200 answer.
func write(w http.ResponseWriter, contentType string, body []byte) {
	hd := w.Header()
	hd.Set("Content-Type", contentType)
	hd.Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(body)
}

// representation is the chosen form of an answer.
type representation struct {
	format Format
	// ieee754 is IEEE754Compatible=true: Int64 values and @odata.count as JSON strings.
	ieee754 bool
	// metadata is the odata.metadata level of JSON answers: "minimal" (the default),
	// "none" or "full".
	metadata string
}

// jsonContentType is the Content-Type of a JSON answer in this representation.
func (rep representation) jsonContentType() string {
	meta := rep.metadata
	if meta == "" {
		meta = metaMinimal
	}
	if rep.ieee754 {
		return "application/json;odata.metadata=" + meta + ";IEEE754Compatible=true"
	}
	return "application/json;odata.metadata=" + meta
}

// The odata.metadata levels of JSON answers.
const (
	metaMinimal = "minimal"
	metaNone    = "none"
	metaFull    = "full"
)

// negotiate picks the representation: $format first, then the Accept header, then def.
// It also reads the JSON parameters of the chosen media type: IEEE754Compatible=true
// (Int64 values as strings) and odata.metadata (none, minimal or full). An Accept header
// that admits neither JSON nor XML is 415, as the seed has it for unsupported media
// types; so is one whose only JSON entries name an odata.metadata level that does not
// exist.
func negotiate(o *QueryOptions, accept string, def Format) (representation, error) {
	if o.Format != FormatDefault {
		return representation{o.Format, o.IEEE754Compatible, o.Metadata}, nil
	}
	if strings.TrimSpace(accept) == "" {
		return representation{format: def}, nil
	}
	best, bestQ := representation{}, 0.0
	var bad error
	for item := range strings.SplitSeq(accept, ",") {
		mt, params, _ := strings.Cut(item, ";")
		mt = strings.ToLower(strings.TrimSpace(mt))
		q := acceptQ(params)
		if q <= bestQ {
			continue
		}
		f := formatOfMediaType(mt)
		if mt == "*/*" || mt == "application/*" {
			f = def
		}
		if f == FormatDefault {
			continue
		}
		rep := representation{format: f}
		if f == FormatJSON {
			var err error
			if rep.ieee754, rep.metadata, err = jsonParams(params); err != nil {
				bad = err
				continue
			}
		}
		best, bestQ = rep, q
	}
	if best.format == FormatDefault {
		if bad != nil {
			return representation{}, bad
		}
		return representation{}, problem.New(http.StatusUnsupportedMediaType, problem.CodeUnsupportedMedia,
			fmt.Sprintf("no supported media type in Accept %q: the service answers application/json and application/xml (or use $format)", short(accept)))
	}
	return best, nil
}

// admitsXML reports whether an Accept header admits an XML media type (or any type).
func admitsXML(accept string) bool {
	for item := range strings.SplitSeq(accept, ",") {
		mt, params, _ := strings.Cut(item, ";")
		mt = strings.ToLower(strings.TrimSpace(mt))
		if (formatOfMediaType(mt) == FormatXML || mt == "*/*" || mt == "application/*") && acceptQ(params) > 0 {
			return true
		}
	}
	return false
}

// acceptQ returns the q parameter of an Accept entry (1 when absent or malformed).
func acceptQ(params string) float64 {
	for p := range strings.SplitSeq(params, ";") {
		k, v, _ := strings.Cut(p, "=")
		if strings.TrimSpace(k) != "q" {
			continue
		}
		q, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
		if err != nil || q < 0 || q > 1 {
			return 1
		}
		return q
	}
	return 1
}

// bufPool recycles answer buffers; buffers above maxPooled are left to the collector.
var bufPool = sync.Pool{New: func() any { b := make([]byte, 0, 64<<10); return &b }}

const maxPooled = 8 << 20
