package odata

import (
	"context"
	"errors"
	"fmt"
	"github.com/kmkit/kmkit/internal/inputcheck"
	"github.com/kmkit/kmkit/outage"
	"github.com/kmkit/kmkit/publicurl"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/kmkit/kmkit/km"
	"github.com/kmkit/kmkit/problem"
	"github.com/kmkit/kmkit/query"
)

// BasePath is the path under which the handler serves one OData service per KM:
// BasePath/{km_id}.svc. Mount the handler at BasePath + "/".
const BasePath = "/intelligence/api/odata"

// Version is the OData version of every answer, sent in the OData-Version header.
const Version = "4.0"

// DefaultMaxPageSize is the default of Options.MaxPageSize.
const DefaultMaxPageSize = 5000

// Error codes of unknown resources, shared with the Knowledge Model API.
const (
	CodeModelNotFound  = km.CodeModelNotFound
	CodeRecordNotFound = km.CodeRecordNotFound
	CodeFilterNotFound = km.CodeFilterNotFound
)

// Options configure a Handler. The zero value gives the defaults.
type Options struct {
	// MaxPageSize bounds the entities of one response (server-driven paging): a longer
	// answer ends with @odata.nextLink. Default 5000. A client may ask for smaller pages
	// with the header "Prefer: odata.maxpagesize=N".
	MaxPageSize int
	// BaseURL is the scheme and host of the absolute URLs the answers carry (context URLs,
	// next links, Atom ids), for example "https://api.example.com" behind a proxy. Empty:
	// taken from the request (https when it came over TLS, its Host header).
	BaseURL string
	// Limits bound $filter expressions (length, nesting, in-list size); zero members take
	// the query package's defaults.
	Limits query.Limits
	// Logger receives internal errors with their support id. Default slog.Default().
	Logger *slog.Logger
}

// Handler serves the OData services of the KMs of a km.Store. Create it with NewHandler.
type Handler struct {
	store km.Store
	opts  Options
	now   func() time.Time
}

// NewHandler returns the handler of the OData services under BasePath, backed by store.
// It expects the auth middleware (auth.Guard.OData) in front of it for authentication,
// permissions and rate limits.
func NewHandler(store km.Store, opts Options) *Handler {
	if opts.MaxPageSize <= 0 {
		opts.MaxPageSize = DefaultMaxPageSize
	}
	opts.BaseURL = strings.TrimSuffix(opts.BaseURL, "/")
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	return &Handler{store: store, opts: opts, now: time.Now}
}

// resource is what a path addresses.
type resource uint8

const (
	resService resource = iota + 1
	resMetadata
	resEntitySet
	resCount
)

// route splits a path below BasePath into the resource, the KM id and the entity set.
// A path it does not know gives a 404 problem saying why.
func route(path string) (res resource, kmID, set string, err error) {
	rest, ok := strings.CutPrefix(path, BasePath+"/")
	if !ok {
		return 0, "", "", notFoundPath(path, "OData services live at "+BasePath+"/{km_id}.svc")
	}
	svc, sub, _ := strings.Cut(rest, "/")
	kmID, ok = strings.CutSuffix(svc, ".svc")
	if !ok || kmID == "" {
		return 0, "", "", notFoundPath(path, "OData services live at "+BasePath+"/{km_id}.svc")
	}
	switch {
	case sub == "":
		return resService, kmID, "", nil
	case sub == "$metadata":
		return resMetadata, kmID, "", nil
	case strings.HasSuffix(sub, EntitySetSuffix) && isIdentifier(sub):
		return resEntitySet, kmID, sub, nil
	}
	if set, ok := strings.CutSuffix(sub, "/$count"); ok && strings.HasSuffix(set, EntitySetSuffix) && isIdentifier(set) {
		return resCount, kmID, set, nil
	}
	if i := strings.IndexByte(sub, '('); i > 0 && strings.HasSuffix(sub[:i], EntitySetSuffix) {
		return 0, "", "", notFoundPath(path, "entities cannot be addressed by key; query the entity set "+sub[:i]+" with $filter")
	}
	return 0, "", "", notFoundPath(path, "a service has $metadata and entity sets named {record_id}"+EntitySetSuffix)
}

func notFoundPath(path, why string) error {
	return problem.New(http.StatusNotFound, problem.CodeNotFoundPath, "no resource at "+short(path)+": "+why)
}

// ServeHTTP implements http.Handler.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("OData-Version", Version)
	if err := inputcheck.Request(r, inputcheck.DefaultMaxBody); err != nil {
		h.fail(w, r, problem.New(http.StatusBadRequest, problem.CodeParameterIllegal, err.Error()))
		return
	}
	res, kmID, set, err := route(r.URL.Path)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	if r.Method != http.MethodGet {
		w.Header().Set("Allow", "GET")
		problem.Write(w, http.StatusMethodNotAllowed, problem.CodeMethodNotAllowed,
			"method "+r.Method+" is not allowed: the OData services are read-only; allowed: GET")
		return
	}
	m, err := h.store.Model(r.Context(), kmID)
	if errors.Is(err, km.ErrNotFound) {
		problem.Write(w, http.StatusNotFound, CodeModelNotFound, "no knowledge model "+strconv.Quote(kmID))
		return
	}
	if err != nil {
		h.fail(w, r, err)
		return
	}
	root := h.serviceRoot(r, m.ID)
	switch res {
	case resService, resMetadata:
		h.serveDocument(w, r, m, root, res == resMetadata)
	case resEntitySet, resCount:
		recID := strings.TrimSuffix(set, EntitySetSuffix)
		rec := m.Record(recID)
		if rec == nil {
			problem.Write(w, http.StatusNotFound, CodeRecordNotFound,
				"knowledge model "+m.ID+" has no entity set "+strconv.Quote(set)+" (no record "+strconv.Quote(recID)+")")
			return
		}
		h.serveEntities(w, r, m, newEntityType(rec), root, res == resCount)
	}
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
	f, _, err := negotiate(o, r.Header.Get("Accept"), def)
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
		write(w, "application/xml", metadataXML(types))
	case metadata:
		write(w, "application/json", metadataJSON(types))
	case f == FormatXML:
		write(w, "application/xml", serviceXML(root, types))
	default:
		write(w, jsonContentType(false), serviceJSON(root, types))
	}
}

// onlyFormat rejects query options other than $format on the service document and
// $metadata (custom options are ignored).
func onlyFormat(raw string) error {
	params, _ := query.ParseRawQuery(raw) // ParseQueryOptions has checked the escapes
	for _, p := range params {
		if name, ok := optionName(p.Key); ok && name != optFormat {
			return badOption(problem.CodeParameterIllegal, "%s applies to entity sets only; the service document and $metadata take $format", short(p.Key))
		}
	}
	return nil
}

func jsonContentType(ieee754 bool) string {
	if ieee754 {
		return "application/json;odata.metadata=minimal;IEEE754Compatible=true"
	}
	return "application/json;odata.metadata=minimal"
}

// write sends a complete 200 answer.
func write(w http.ResponseWriter, contentType string, body []byte) {
	hd := w.Header()
	hd.Set("Content-Type", contentType)
	hd.Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(body)
}

// negotiate picks the representation: $format first, then the Accept header, then def.
// It also says whether Int64 values are to be written as strings (IEEE754Compatible=true
// in $format or the chosen Accept entry). An Accept header that admits neither JSON nor
// XML is 415, as the seed has it for unsupported media types.
func negotiate(o *QueryOptions, accept string, def Format) (Format, bool, error) {
	if o.Format != FormatDefault {
		return o.Format, o.IEEE754Compatible, nil
	}
	if strings.TrimSpace(accept) == "" {
		return def, false, nil
	}
	best, bestQ, ieee := FormatDefault, 0.0, false
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
		best, bestQ, ieee = f, q, f == FormatJSON && ieee754(params)
	}
	if best == FormatDefault {
		return 0, false, problem.New(http.StatusUnsupportedMediaType, problem.CodeUnsupportedMedia,
			fmt.Sprintf("no supported media type in Accept %q: the service answers application/json and application/xml (or use $format)", short(accept)))
	}
	return best, ieee, nil
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

// fail answers err: client errors with their 4xx problem, anything else with 500 and a
// support id that is logged with the error. Problem bodies are JSON whatever format the
// request asked for.
func (h *Handler) fail(w http.ResponseWriter, r *http.Request, err error) {
	var p *problem.Problem
	var qe *query.Error
	switch {
	case errors.As(err, &p):
		p.Write(w)
	case errors.As(err, &qe):
		problem.Write(w, http.StatusBadRequest, qe.Code, qe.Error())
	case errors.Is(err, context.Canceled) && r.Context().Err() != nil:
		problem.Write(w, http.StatusServiceUnavailable, problem.CodeFatal, "request canceled")
	case outage.Is(err):
		h.opts.Logger.WarnContext(r.Context(), "odata: database unavailable", "path", r.URL.Path, "err", err)
		w.Header().Set("Retry-After", outage.RetryAfterSeconds)
		problem.Write(w, http.StatusServiceUnavailable, problem.CodeUnavailable, outage.Detail)
	default:
		id := uuid.NewString()
		h.opts.Logger.ErrorContext(r.Context(), "odata: internal error", "supportId", id, "method", r.Method, "path", r.URL.Path, "err", err)
		problem.Write(w, http.StatusInternalServerError, problem.CodeFatal, "internal error; support id "+id)
	}
}

// bufPool recycles answer buffers; buffers above maxPooled are left to the collector.
var bufPool = sync.Pool{New: func() any { b := make([]byte, 0, 64<<10); return &b }}

const maxPooled = 8 << 20

// VersionHeader returns a handler that sets the OData-Version header and calls next. Wrap
// the middleware in front of the OData handler with it, so that its answers (401, 403,
// 429) carry the header too:
//
//	mux.Handle(odata.BasePath+"/", odata.VersionHeader(guard.OData(odata.NewHandler(store, odata.Options{}))))
func VersionHeader(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("OData-Version", Version)
		next.ServeHTTP(w, r)
	})
}
