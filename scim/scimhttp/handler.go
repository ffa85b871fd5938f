package scimhttp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"mime"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/kmkit/kmkit/internal/inputcheck"
	"github.com/kmkit/kmkit/outage"
	"github.com/kmkit/kmkit/principal"
	"github.com/kmkit/kmkit/problem"
	"github.com/kmkit/kmkit/scim"
	"github.com/kmkit/kmkit/web/publicurl"
	"github.com/kmkit/kmkit/web/routing"
)

// BasePath is the path under which the handler serves the API. Mount the handler at
// BasePath + "/", or elsewhere with WithPrefix.
const BasePath = "/user-provisioning/scim/v2"

// Defaults of the limits, as advertised in the ServiceProviderConfig.
const (
	DefaultMaxBodyBytes  = 1 << 20 // request bodies, Bulk included (its maxPayloadSize)
	DefaultMaxOperations = 1000    // operations in one Bulk request
	DefaultPageSize      = 200     // default and largest count of list responses
)

// Notifier is told about users created with sendEmailOnInvitation set, after they are
// stored. It is called in the request, so a notifier that sends mail should hand the work
// to a queue and return. Its error is logged; the user stays created.
type Notifier interface {
	Invite(ctx context.Context, team string, u scim.User) error
}

// NotifierFunc adapts a function to Notifier.
type NotifierFunc func(ctx context.Context, team string, u scim.User) error

// Invite calls f.
func (f NotifierFunc) Invite(ctx context.Context, team string, u scim.User) error {
	return f(ctx, team, u)
}

// AuthenticationScheme is one entry of the ServiceProviderConfig's authenticationSchemes.
type AuthenticationScheme struct {
	Type             string `json:"type"`
	Name             string `json:"name"`
	Description      string `json:"description"`
	SpecURI          string `json:"specUri,omitempty"`
	DocumentationURI string `json:"documentationUri,omitempty"`
	Primary          bool   `json:"primary"`
}

// DefaultAuthenticationSchemes returns the two schemes the auth package accepts.
func DefaultAuthenticationSchemes() []AuthenticationScheme {
	return []AuthenticationScheme{
		{
			Type:        "oauthbearertoken",
			Name:        "OAuth Bearer Token",
			Description: "A JSON Web Token in the header: Authorization: Bearer <token>.",
			SpecURI:     "https://www.rfc-editor.org/info/rfc6750",
			Primary:     true,
		},
		{
			Type:        "appkey",
			Name:        "Application key",
			Description: "An application key in the header: Authorization: AppKey <key>.",
		},
	}
}

// Handler serves SCIM 2.0 (RFC 7643, RFC 7644) for the team of each request's caller. It
// is built on github.com/elimity-com/scim and adds what that library lacks (see the
// package documentation). Create it with NewHandler.
type Handler struct {
	store       scim.Store
	svc         *scim.Service
	prefix      string
	baseURL     string
	team        func(*http.Request) (string, bool)
	notifier    Notifier
	log         *slog.Logger
	maxBody     int64
	maxOps      int
	pageSize    int
	authSchemes []AuthenticationScheme
	docURI      string

	users, groups *resourceType
	api           *routing.API
	entry         http.Handler // serve behind the API's HEAD and panic handling
}

// Option configures a Handler.
type Option func(*Handler)

// WithPrefix sets the URL path the handler is mounted at (default BasePath). Use ""
// when the handler sits behind http.StripPrefix.
func WithPrefix(prefix string) Option {
	return func(h *Handler) { h.prefix = strings.TrimRight(prefix, "/") }
}

// WithBaseURL sets the absolute URL of the SCIM root used in meta.location and Location,
// for example "https://idm.example.com/user-provisioning/scim/v2". By default it is built
// from the request: http or https, its Host, and the prefix.
func WithBaseURL(u string) Option {
	return func(h *Handler) { h.baseURL = strings.TrimRight(u, "/") }
}

// WithTeam sets how a request's team is found. The default takes it from the
// principal.Principal in the request context; a request without one is answered 401.
func WithTeam(f func(*http.Request) (team string, ok bool)) Option {
	return func(h *Handler) {
		if f != nil {
			h.team = f
		}
	}
}

// WithNotifier sets who is told about invitations (default: nobody).
func WithNotifier(n Notifier) Option {
	return func(h *Handler) { h.notifier = n }
}

// WithLogger sets the logger of store failures and notifier errors (default slog.Default()).
func WithLogger(l *slog.Logger) Option {
	return func(h *Handler) {
		if l != nil {
			h.log = l
		}
	}
}

// WithMaxBodyBytes limits request bodies (default DefaultMaxBodyBytes), Bulk requests
// included: it is the maxPayloadSize the ServiceProviderConfig advertises, so a host that
// limits bodies in front of the handler gives the same number here. Values below 1 keep
// the default.
func WithMaxBodyBytes(n int64) Option {
	return func(h *Handler) {
		if n > 0 {
			h.maxBody = n
		}
	}
}

// WithBulkMaxOperations sets maxOperations of Bulk requests (default
// DefaultMaxOperations); values below 1 keep the default.
func WithBulkMaxOperations(n int) Option {
	return func(h *Handler) {
		if n > 0 {
			h.maxOps = n
		}
	}
}

// WithPageSize sets the default and largest count of list responses (default 200);
// values below 1 keep the default.
func WithPageSize(n int) Option {
	return func(h *Handler) {
		if n > 0 {
			h.pageSize = n
		}
	}
}

// WithAuthenticationSchemes replaces the authenticationSchemes advertised in the
// ServiceProviderConfig, for hosts that authenticate requests their own way.
func WithAuthenticationSchemes(s ...AuthenticationScheme) Option {
	return func(h *Handler) { h.authSchemes = s }
}

// WithDocumentationURI sets the ServiceProviderConfig's documentationUri.
func WithDocumentationURI(u string) Option {
	return func(h *Handler) { h.docURI = u }
}

// principalTeam is the default team lookup.
func principalTeam(r *http.Request) (string, bool) {
	p, ok := principal.FromContext(r.Context())
	if !ok || p.Team == "" {
		return "", false
	}
	return p.Team, true
}

// NewHandler returns the SCIM handler over store. Mount it at its prefix:
//
//	mux.Handle(scimhttp.BasePath+"/", scimhttp.NewHandler(store))
func NewHandler(store scim.Store, opts ...Option) *Handler {
	h := &Handler{
		store:       store,
		svc:         scim.NewService(store),
		prefix:      BasePath,
		team:        principalTeam,
		log:         slog.Default(),
		maxBody:     DefaultMaxBodyBytes,
		maxOps:      DefaultMaxOperations,
		pageSize:    DefaultPageSize,
		authSchemes: DefaultAuthenticationSchemes(),
	}
	for _, o := range opts {
		o(h)
	}
	h.users = newResourceType("User", "/Users", "User of the team", scim.UserResource(), userSchema(), userExtensions()...)
	h.groups = newResourceType("Group", "/Groups", "Group of users of the team", scim.GroupResource(), groupSchema())
	h.api = &routing.API{Name: "scim", Logger: h.log, Write: func(w http.ResponseWriter, _ *http.Request, p *problem.Problem) {
		WriteProblem(w, p)
	}}
	h.entry = h.api.Handler(h.serve)
	return h
}

// root returns the absolute URL of the SCIM root for r.
func (h *Handler) root(r *http.Request) string {
	if h.baseURL != "" {
		return h.baseURL
	}
	if o, ok := publicurl.From(r); ok {
		return o + h.prefix
	}
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	return scheme + "://" + r.Host + h.prefix
}

// ServeHTTP implements http.Handler. HEAD is answered as GET without a body; a panic
// below it is answered 500 with a support id that is logged with the panic.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h.entry.ServeHTTP(w, r)
}

func (h *Handler) serve(w http.ResponseWriter, r *http.Request) {
	if err := inputcheck.Request(r, h.maxBody); err != nil {
		WriteError(w, http.StatusBadRequest, scim.TypeInvalidValue, err.Error())
		return
	}
	path, ok := strings.CutPrefix(r.URL.Path, h.prefix)
	if !ok || (path != "" && path[0] != '/') {
		h.api.NotFound(w, r, "")
		return
	}
	team, ok := h.team(r)
	if !ok {
		WriteError(w, http.StatusUnauthorized, "", "The request carries no valid credentials of a team.")
		return
	}
	root := h.root(r)
	path = strings.TrimSuffix(path, "/")

	seg := strings.SplitN(strings.TrimPrefix(path, "/"), "/", 2)
	var rt *resourceType
	// Resource endpoints are matched ignoring case: Microsoft's test collection sends /users.
	switch strings.ToLower(seg[0]) {
	case "users":
		rt = h.users
	case "groups":
		rt = h.groups
	case "serviceproviderconfig":
		if h.allow(w, r, len(seg) == 1, http.MethodGet) {
			h.serveSPC(w, root)
		}
		return
	case "schemas", "resourcetypes":
		if h.allow(w, r, true, http.MethodGet) {
			h.serveDiscovery(w, r, root, seg)
		}
		return
	case "bulk":
		if h.allow(w, r, len(seg) == 1, http.MethodPost) {
			h.serveBulk(w, r, root, team)
		}
		return
	default:
		h.api.NotFound(w, r, "")
		return
	}

	c := call{method: r.Method, rt: rt, query: r.URL.Query(),
		ifMatch: r.Header.Get("If-Match"), ifNoneMatch: r.Header.Get("If-None-Match")}
	switch {
	case len(seg) == 1:
		if !h.allow(w, r, true, http.MethodGet, http.MethodPost) {
			return
		}
	case strings.EqualFold(seg[1], ".search"):
		if !h.allow(w, r, true, http.MethodPost) {
			return
		}
		c.method = http.MethodGet
	default:
		if !h.allow(w, r, true, http.MethodGet, http.MethodPut, http.MethodPatch, http.MethodDelete) {
			return
		}
		c.id = seg[1]
	}
	if r.Method == http.MethodPost || r.Method == http.MethodPut || r.Method == http.MethodPatch {
		body, e := h.readBody(w, r, h.maxBody)
		if e != nil {
			writeAPIError(w, *e)
			return
		}
		c.body = body
	}
	if c.method == http.MethodGet && c.id == "" && r.Method == http.MethodPost {
		q, e := searchQuery(c.body)
		if e != nil {
			writeAPIError(w, *e)
			return
		}
		c.query, c.body = q, nil
	}
	h.do(r.Context(), root, team, c).writeTo(w)
}

// allow answers 404 when the path is not ok and 405 when the method is not one of methods.
func (h *Handler) allow(w http.ResponseWriter, r *http.Request, ok bool, methods ...string) bool {
	if !ok {
		h.api.NotFound(w, r, "")
		return false
	}
	return h.api.Allow(w, r, methods...)
}

// readBody reads a JSON request body of at most limit bytes.
func (h *Handler) readBody(w http.ResponseWriter, r *http.Request, limit int64) ([]byte, *scimError) {
	if ct := r.Header.Get("Content-Type"); ct != "" {
		mt, _, err := mime.ParseMediaType(ct)
		if err != nil || (mt != ContentType && mt != "application/json") {
			e := apiError(http.StatusUnsupportedMediaType, "",
				"Content-Type %q is not supported: send application/scim+json or application/json.", scim.Echo(ct))
			return nil, &e
		}
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, limit))
	if err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			e := apiError(http.StatusRequestEntityTooLarge, "", "The request body exceeds %d bytes.", limit)
			return nil, &e
		}
		e := apiError(http.StatusBadRequest, scim.TypeInvalidSyntax, "The request body could not be read: %v.", err)
		return nil, &e
	}
	return body, nil
}

// decodeObject decodes a JSON object, keeping numbers as json.Number.
func decodeObject(body []byte, what string) (map[string]any, *scimError) {
	d := json.NewDecoder(bytes.NewReader(body))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		e := apiError(http.StatusBadRequest, scim.TypeInvalidSyntax, "The %s is not valid JSON: %s.", what, jsonProblem(err))
		return nil, &e
	}
	if d.More() {
		e := apiError(http.StatusBadRequest, scim.TypeInvalidSyntax, "The %s has data after its JSON object.", what)
		return nil, &e
	}
	m, ok := v.(map[string]any)
	if !ok {
		e := apiError(http.StatusBadRequest, scim.TypeInvalidSyntax, "The %s must be a JSON object.", what)
		return nil, &e
	}
	return m, nil
}

// searchQuery turns a POST .search body into the equivalent query parameters of a GET.
func searchQuery(body []byte) (url.Values, *scimError) {
	var sr struct {
		Schemas            []string `json:"schemas"`
		Attributes         []string `json:"attributes"`
		ExcludedAttributes []string `json:"excludedAttributes"`
		Filter             string   `json:"filter"`
		SortBy             string   `json:"sortBy"`
		SortOrder          string   `json:"sortOrder"`
		StartIndex         *int     `json:"startIndex"`
		Count              *int     `json:"count"`
	}
	if err := json.Unmarshal(body, &sr); err != nil {
		e := apiError(http.StatusBadRequest, scim.TypeInvalidSyntax, "The search request is not valid: %s.", jsonProblem(err))
		return nil, &e
	}
	if !hasSchema(sr.Schemas, scim.SearchRequestSchema) {
		e := apiError(http.StatusBadRequest, scim.TypeInvalidSyntax, "schemas must contain %s.", scim.SearchRequestSchema)
		return nil, &e
	}
	q := url.Values{}
	set := func(k, v string) {
		if v != "" {
			q.Set(k, v)
		}
	}
	for _, a := range append(sr.Attributes, sr.ExcludedAttributes...) {
		if strings.Contains(a, ",") {
			e := badValue("The attribute name %q is not valid.", scim.Echo(a))
			return nil, &e
		}
	}
	set("attributes", strings.Join(sr.Attributes, ","))
	set("excludedAttributes", strings.Join(sr.ExcludedAttributes, ","))
	set("filter", sr.Filter)
	set("sortBy", sr.SortBy)
	set("sortOrder", sr.SortOrder)
	if sr.StartIndex != nil {
		q.Set("startIndex", strconv.Itoa(*sr.StartIndex))
	}
	if sr.Count != nil {
		q.Set("count", strconv.Itoa(*sr.Count))
	}
	return q, nil
}

func hasSchema(schemas []string, want string) bool {
	for _, s := range schemas {
		if strings.EqualFold(s, want) {
			return true
		}
	}
	return false
}

// jsonProblem describes a JSON decoding error without Go type names.
func jsonProblem(err error) string {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		if te.Field != "" {
			return fmt.Sprintf("%s must not be a JSON %s", te.Field, te.Value)
		}
		return fmt.Sprintf("a JSON %s is not expected here", te.Value)
	}
	var se *json.SyntaxError
	if errors.As(err, &se) && se.Error() == "unexpected end of JSON input" {
		return "the JSON body is incomplete or empty"
	}
	if errors.As(err, &se) {
		return fmt.Sprintf("malformed JSON at byte %d: %v", se.Offset, err)
	}
	if errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) {
		return "the JSON body is incomplete or empty"
	}
	return err.Error()
}

// call is one request on /Users or /Groups after routing, from HTTP or from Bulk.
type call struct {
	method      string
	rt          *resourceType
	id          string // "" for the collection
	query       url.Values
	body        []byte
	ifMatch     string
	ifNoneMatch string
}

// result is the response to a call.
type result struct {
	status int
	header http.Header
	body   []byte
}

func (res *result) writeTo(w http.ResponseWriter) {
	for k, v := range res.header {
		w.Header()[k] = v
	}
	if res.body != nil {
		w.Header().Set("Content-Length", strconv.Itoa(len(res.body)))
	}
	if res.status == http.StatusServiceUnavailable {
		w.Header().Set("Retry-After", outage.RetryAfterSeconds)
	}
	w.WriteHeader(res.status)
	_, _ = w.Write(res.body)
}

func errorResult(e scimError) *result {
	return &result{
		status: e.Status,
		header: http.Header{"Content-Type": {ContentType}},
		body:   errorBody(e.Status, string(e.ScimType), e.Detail),
	}
}
