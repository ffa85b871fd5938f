package reportinghttp

import (
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"

	"github.com/kmkit/kmkit/internal/inputcheck"
	"github.com/kmkit/kmkit/principal"
	"github.com/kmkit/kmkit/problem/problemhttp"
	"github.com/kmkit/kmkit/reporting"
	"github.com/kmkit/kmkit/web/routing"

	"github.com/google/uuid"

	"github.com/kmkit/kmkit/problem"
)

// BasePath is the path under which the handler serves the API. Mount the handler at
// BasePath + "/".
const BasePath = "/api/v1"

// The paths the handler serves.
const (
	ElementsPath = BasePath + "/elements"
	FacetsPath   = BasePath + "/facets"
)

// TenantHeader names the request header that carries the tenant id.
const TenantHeader = "x-tenant-id"

// Paging limits used unless WithPaging sets others.
const (
	DefaultTake = 100
	MaxTake     = 100
)

// ErrUnauthenticated is returned by HeaderTenant when the request carries no principal;
// a TenantFunc returns it (or wraps it) to have the handler answer 401.
var ErrUnauthenticated = errors.New("no authenticated principal")

// TenantFunc returns the tenant whose data a request may see; "" with a nil error is a 403.
// An error that is (or wraps) a *problem.Problem is written as that problem;
// ErrUnauthenticated becomes the 401 the auth middleware sends for this API; any
// other error becomes a 403 ADMIN_ACCESS_ERROR naming it.
type TenantFunc func(*http.Request) (tenant string, err error)

// HeaderTenant is the default TenantFunc. It repeats the checks of the auth middleware, so
// that the handler is safe mounted without it: the request must carry an principal.Principal
// (else 401) holding the reporting permission and a tenant (else 403), and one TenantHeader
// with a UUID (else 400, as ParseTenant decides) equal to the principal's tenant (else
// 403). It returns the tenant in canonical lower-case form.
func HeaderTenant(r *http.Request) (string, error) {
	p, ok := principal.FromContext(r.Context())
	if !ok {
		return "", ErrUnauthenticated
	}
	if !p.Can(principal.PermReporting) {
		return "", problem.New(http.StatusForbidden, problem.CodeAccess, "the credentials lack the reporting permission")
	}
	if p.Tenant == "" {
		return "", problem.New(http.StatusForbidden, problem.CodeAccess, "the credentials are not bound to a reporting tenant")
	}
	tenant, err := RequestTenant(r)
	if err != nil {
		return "", err
	}
	if tenant != strings.ToLower(p.Tenant) {
		return "", problem.New(http.StatusForbidden, problem.CodeAccess, "the credentials do not belong to tenant "+tenant)
	}
	return tenant, nil
}

// RequestTenant returns the tenant that r names in its TenantHeader, as ParseTenant reads
// it. It is the tenant reader to give the auth middleware (auth.Policy.Tenant) in front of
// the handler.
func RequestTenant(r *http.Request) (string, error) {
	return ParseTenant(r.Header.Values(TenantHeader))
}

// ParseTenant checks the values of a TenantHeader: exactly one UUID in the hyphenated
// 36-character form, any case, with optional blanks around it. It returns the UUID in
// lower case; its error is a 400 *problem.Problem, GENERAL_PARAMETER_MISSING when the
// header is absent or empty, else GENERAL_PARAMETER_ILLEGAL.
func ParseTenant(values []string) (string, error) {
	switch len(values) {
	case 0:
		return "", problem.New(http.StatusBadRequest, problem.CodeParameterMissing, "missing x-tenant-id header")
	case 1:
	default:
		return "", problem.New(http.StatusBadRequest, problem.CodeParameterIllegal, "send one x-tenant-id header")
	}
	v := strings.Trim(values[0], " \t")
	if v == "" {
		return "", problem.New(http.StatusBadRequest, problem.CodeParameterMissing, "empty x-tenant-id header")
	}
	id, err := uuid.Parse(v)
	if err != nil || len(v) != 36 {
		if len(v) > 64 {
			v = v[:64] + "…"
		}
		return "", problem.New(http.StatusBadRequest, problem.CodeParameterIllegal,
			fmt.Sprintf("x-tenant-id %q is not a UUID (xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx)", v))
	}
	return id.String(), nil
}

// challenge is the WWW-Authenticate header of the API's 401 answers.
const challenge = `x-api-key realm="kmkit"`

// WriteProblem writes p as the reporting API's error body, a problem body. It is the error
// writer to give the auth middleware (auth.Policy.WriteError) in front of the handler.
func WriteProblem(w http.ResponseWriter, p *problem.Problem) { problemhttp.Send(w, p) }

// Option configures NewHandler.
type Option func(*config)

type config struct {
	tenant      TenantFunc
	defaultTake int
	maxTake     int
	log         *slog.Logger
}

// WithTenant replaces HeaderTenant as the way the handler finds a request's tenant.
func WithTenant(f TenantFunc) Option {
	return func(c *config) { c.tenant = f }
}

// WithPaging sets the Take used when a request gives none and the largest Take accepted.
// It panics unless 0 <= defaultTake <= maxTake.
func WithPaging(defaultTake, maxTake int) Option {
	if defaultTake < 0 || defaultTake > maxTake {
		panic(fmt.Sprintf("reportinghttp.WithPaging(%d, %d): want 0 <= defaultTake <= maxTake", defaultTake, maxTake))
	}
	return func(c *config) { c.defaultTake, c.maxTake = defaultTake, maxTake }
}

// WithLogger sets where the handler logs store failures (default slog.Default()).
func WithLogger(l *slog.Logger) Option {
	return func(c *config) { c.log = l }
}

// NewHandler returns the handler of GET (and HEAD) ElementsPath and FacetsPath, serving
// each request's tenant's data from store. It expects the auth middleware in front of it
// for authentication and rate limits (auth.Guard.Wrap, with RequestTenant as the policy's
// tenant reader and WriteProblem as its error writer), and repeats its checks of the
// tenant (HeaderTenant) so that it is safe mounted without it.
func NewHandler(store reporting.Store, opts ...Option) *Handler {
	c := config{tenant: HeaderTenant, defaultTake: DefaultTake, maxTake: MaxTake, log: slog.Default()}
	for _, o := range opts {
		o(&c)
	}
	h := &Handler{store: store, config: c}
	h.api = &routing.API{Name: "reporting", Logger: c.log, Write: func(w http.ResponseWriter, _ *http.Request, p *problem.Problem) {
		WriteProblem(w, p)
	}}
	h.entry = h.api.Handler(h.serve)
	return h
}

// Handler serves the reporting API from a Store. Create it with NewHandler.
type Handler struct {
	store reporting.Store
	config
	api   *routing.API
	entry http.Handler // serve behind the API's HEAD and panic handling
}

// ServeHTTP implements http.Handler. HEAD is answered as GET without a body; a panic below
// it is answered 500 ADMIN_FATAL_ERROR with a logged support id.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h.entry.ServeHTTP(w, r)
}

func (h *Handler) serve(w http.ResponseWriter, r *http.Request) {
	if err := inputcheck.Request(r, inputcheck.DefaultMaxBody); err != nil {
		problemhttp.Write(w, http.StatusBadRequest, problem.CodeParameterIllegal, err.Error())
		return
	}
	elements := r.URL.Path == ElementsPath
	if !elements && r.URL.Path != FacetsPath {
		h.api.NotFound(w, r, "")
		return
	}
	if !h.api.Allow(w, r, http.MethodGet) {
		return
	}
	tenant, err := h.tenant(r)
	if err == nil && tenant == "" {
		err = errors.New("the request has no reporting tenant")
	}
	if err != nil {
		writeError(w, err)
		return
	}
	q, err := parseQuery(r.URL.RawQuery, elements, h.defaultTake, h.maxTake)
	if err != nil {
		writeError(w, err)
		return
	}
	bp := bufferPool.Get().(*[]byte)
	body := (*bp)[:0]
	if elements {
		page, total, err := h.store.Elements(r.Context(), tenant, q)
		if err != nil {
			h.fail(w, r, err)
			return
		}
		if body, err = appendElementList(body, page, q.Skip, q.Take, total); err != nil {
			h.fail(w, r, err)
			return
		}
	} else {
		page, total, err := h.store.Facets(r.Context(), tenant, q.Skip, q.Take)
		if err != nil {
			h.fail(w, r, err)
			return
		}
		body = appendFacetList(body, page, q.Skip, q.Take, total)
	}
	hdr := w.Header()
	hdr.Set("Content-Type", "application/json; charset=utf-8")
	hdr.Set("Content-Length", strconv.Itoa(len(body)))
	// The answer depends on headers (the key and tenant), not only on the URL: keep it
	// out of shared caches.
	hdr.Set("Cache-Control", "no-store")
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(body)
	if cap(body) <= maxPooledBuffer {
		*bp = body
		bufferPool.Put(bp)
	}
}

// bufferPool holds response buffers, so that a page (some hundred kilobytes) is not a fresh
// allocation, and garbage, on every request.
var bufferPool = sync.Pool{New: func() any { return new([]byte) }}

// maxPooledBuffer bounds the buffers kept for reuse, so that one very large page (possible
// with WithPaging) does not pin its memory.
const maxPooledBuffer = 4 << 20

// fail answers err as every API answers failures (routing.API.Fail).
func (h *Handler) fail(w http.ResponseWriter, r *http.Request, err error) { h.api.Fail(w, r, err) }

// writeError answers with err as TenantFunc describes.
func writeError(w http.ResponseWriter, err error) {
	if p, ok := errors.AsType[*problem.Problem](err); ok {
		problemhttp.Send(w, p)
		return
	}
	if errors.Is(err, ErrUnauthenticated) {
		w.Header().Set("WWW-Authenticate", challenge)
		problemhttp.Write(w, http.StatusUnauthorized, problem.CodeUnauthenticated, err.Error())
		return
	}
	problemhttp.Write(w, http.StatusForbidden, problem.CodeAccess, err.Error())
}

// parseQuery reads FacetName (when elements), Skip and Take from a raw query string. Names
// match case-insensitively; other parameters are ignored; an empty value counts as absent.
// The raw string is split on '&' only, so a ';' in a value is kept.
func parseQuery(raw string, elements bool, defaultTake, maxTake int) (reporting.ElementQuery, error) {
	q := reporting.ElementQuery{Take: defaultTake}
	var facetSeen, skipSeen, takeSeen bool
	for part := range strings.SplitSeq(raw, "&") {
		if part == "" {
			continue
		}
		rawName, rawValue, _ := strings.Cut(part, "=")
		name, err := url.QueryUnescape(rawName)
		if err != nil {
			return q, problem.New(http.StatusBadRequest, problem.CodeParameterIllegal,
				fmt.Sprintf("query parameter name %q is not properly percent-encoded", rawName))
		}
		var seen *bool
		switch {
		case elements && strings.EqualFold(name, "FacetName"):
			name, seen = "FacetName", &facetSeen
		case strings.EqualFold(name, "Skip"):
			name, seen = "Skip", &skipSeen
		case strings.EqualFold(name, "Take"):
			name, seen = "Take", &takeSeen
		default:
			continue
		}
		if *seen {
			return q, problem.New(http.StatusBadRequest, problem.CodeParameterIllegal,
				fmt.Sprintf("query parameter %s is given more than once", name))
		}
		*seen = true
		value, err := url.QueryUnescape(rawValue)
		if err != nil {
			return q, problem.New(http.StatusBadRequest, problem.CodeParameterIllegal,
				fmt.Sprintf("query parameter %s: value %q is not properly percent-encoded", name, rawValue))
		}
		if value == "" {
			continue
		}
		switch name {
		case "FacetName":
			q.FacetName = value
		case "Skip":
			q.Skip, err = parseCount(name, value, -1)
		case "Take":
			q.Take, err = parseCount(name, value, maxTake)
		}
		if err != nil {
			return q, err
		}
	}
	return q, nil
}

// parseCount parses a non-negative integer no larger than limit (no limit when limit < 0).
func parseCount(name, value string, limit int) (int, error) {
	n, err := strconv.ParseInt(value, 10, 0)
	if err != nil && !errors.Is(err, strconv.ErrRange) {
		return 0, problem.New(http.StatusBadRequest, problem.CodeParameterMismatch,
			fmt.Sprintf("query parameter %s must be an integer, got %q", name, value))
	}
	switch {
	case limit >= 0 && (err != nil || n < 0 || n > int64(limit)):
		return 0, problem.New(http.StatusBadRequest, problem.CodeConstraint,
			fmt.Sprintf("query parameter %s must be between 0 and %d, got %s", name, limit, value))
	case err != nil && value[0] != '-':
		return 0, problem.New(http.StatusBadRequest, problem.CodeConstraint,
			fmt.Sprintf("query parameter %s must be at most %d, got %s", name, int64(^uint(0)>>1), value))
	case err != nil || n < 0:
		return 0, problem.New(http.StatusBadRequest, problem.CodeConstraint,
			fmt.Sprintf("query parameter %s must not be negative, got %s", name, value))
	}
	return int(n), nil
}
