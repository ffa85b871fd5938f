package scim

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/kmkit/kmkit/internal/inputcheck"
	"github.com/kmkit/kmkit/outage"
	"github.com/kmkit/kmkit/publicurl"
	"io"
	"log/slog"
	"mime"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	elimity "github.com/elimity-com/scim"
	"github.com/elimity-com/scim/optional"

	"github.com/kmkit/kmkit/auth"
)

// DefaultPrefix is the path the handler serves under unless WithPrefix says otherwise.
const DefaultPrefix = "/user-provisioning/scim/v2"

// Defaults of the limits, as advertised in the ServiceProviderConfig.
const (
	DefaultMaxBodyBytes  = 1 << 20 // request bodies other than Bulk
	DefaultMaxOperations = 1000    // operations in one Bulk request
	DefaultMaxPayload    = 1 << 20 // bytes of one Bulk request
	DefaultPageSize      = 200     // default and largest count of list responses
)

// Notifier is told about users created with sendEmailOnInvitation set, after they are
// stored. It is called in the request, so a notifier that sends mail should hand the work
// to a queue and return. Its error is logged; the user stays created.
type Notifier interface {
	Invite(ctx context.Context, team string, u User) error
}

// NotifierFunc adapts a function to Notifier.
type NotifierFunc func(ctx context.Context, team string, u User) error

// Invite calls f.
func (f NotifierFunc) Invite(ctx context.Context, team string, u User) error { return f(ctx, team, u) }

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
	store       Store
	prefix      string
	baseURL     string
	team        func(*http.Request) (string, bool)
	notifier    Notifier
	log         *slog.Logger
	maxBody     int64
	maxOps      int
	maxPayload  int64
	pageSize    int
	authSchemes []AuthenticationScheme
	docURI      string

	resourceTypes []elimity.ResourceType
	users, groups *elimity.ResourceType
}

// Option configures a Handler.
type Option func(*Handler)

// WithPrefix sets the URL path the handler is mounted at (default DefaultPrefix). Use ""
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
// auth.Principal in the request context; a request without one is answered 401.
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

// WithMaxBodyBytes limits request bodies other than Bulk (default DefaultMaxBodyBytes);
// values below 1 keep the default.
func WithMaxBodyBytes(n int64) Option {
	return func(h *Handler) {
		if n > 0 {
			h.maxBody = n
		}
	}
}

// WithBulkLimits sets maxOperations and maxPayloadSize of Bulk requests; values below 1
// keep the defaults.
func WithBulkLimits(maxOperations int, maxPayloadBytes int64) Option {
	return func(h *Handler) {
		if maxOperations > 0 {
			h.maxOps = maxOperations
		}
		if maxPayloadBytes > 0 {
			h.maxPayload = maxPayloadBytes
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
	p, ok := auth.PrincipalFrom(r.Context())
	if !ok || p.Team == "" {
		return "", false
	}
	return p.Team, true
}

// NewHandler returns the SCIM handler over store. Mount it at its prefix:
//
//	mux.Handle(scim.DefaultPrefix+"/", scim.NewHandler(store))
func NewHandler(store Store, opts ...Option) *Handler {
	h := &Handler{
		store:       store,
		prefix:      DefaultPrefix,
		team:        principalTeam,
		log:         slog.Default(),
		maxBody:     DefaultMaxBodyBytes,
		maxOps:      DefaultMaxOperations,
		maxPayload:  DefaultMaxPayload,
		pageSize:    DefaultPageSize,
		authSchemes: DefaultAuthenticationSchemes(),
	}
	for _, o := range opts {
		o(h)
	}
	h.resourceTypes = []elimity.ResourceType{
		{
			ID:               optional.NewString("User"),
			Name:             "User",
			Description:      optional.NewString("User of the team"),
			Endpoint:         "/Users",
			Schema:           userSchema(),
			SchemaExtensions: []elimity.SchemaExtension{{Schema: extensionSchema()}, {Schema: enterpriseSchema()}},
			Handler:          userHandler{h},
		},
		{
			ID:          optional.NewString("Group"),
			Name:        "Group",
			Description: optional.NewString("Group of users of the team"),
			Endpoint:    "/Groups",
			Schema:      groupSchema(),
			Handler:     groupHandler{h},
		},
	}
	h.users, h.groups = &h.resourceTypes[0], &h.resourceTypes[1]
	return h
}

type teamKey struct{}

func teamFrom(ctx context.Context) string {
	t, _ := ctx.Value(teamKey{}).(string)
	return t
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

// ServeHTTP implements http.Handler.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if err := inputcheck.Request(r, h.maxBody); err != nil {
		WriteError(w, http.StatusBadRequest, TypeInvalidValue, err.Error())
		return
	}
	path, ok := strings.CutPrefix(r.URL.Path, h.prefix)
	if !ok || (path != "" && path[0] != '/') {
		WriteError(w, http.StatusNotFound, "", fmt.Sprintf("Specified endpoint %s does not exist.", r.URL.Path))
		return
	}
	team, ok := h.team(r)
	if !ok {
		WriteError(w, http.StatusUnauthorized, "", "The request carries no valid credentials of a team.")
		return
	}
	ctx := context.WithValue(r.Context(), teamKey{}, team)
	r = r.WithContext(ctx)
	root := h.root(r)
	path = strings.TrimSuffix(path, "/")

	seg := strings.SplitN(strings.TrimPrefix(path, "/"), "/", 2)
	var rt *elimity.ResourceType
	switch seg[0] {
	case "Users":
		rt = h.users
	case "Groups":
		rt = h.groups
	case "ServiceProviderConfig":
		if allow(w, r, len(seg) == 1, http.MethodGet) {
			h.serveSPC(w, root)
		}
		return
	case "Schemas", "ResourceTypes":
		if allow(w, r, true, http.MethodGet) {
			h.serveDiscovery(w, r, root, path)
		}
		return
	case "Bulk":
		if allow(w, r, len(seg) == 1, http.MethodPost) {
			h.serveBulk(w, r, root)
		}
		return
	default:
		WriteError(w, http.StatusNotFound, "", fmt.Sprintf("Specified endpoint %s does not exist.", r.URL.Path))
		return
	}

	c := call{method: r.Method, rt: rt, query: r.URL.Query(),
		ifMatch: r.Header.Get("If-Match"), ifNoneMatch: r.Header.Get("If-None-Match")}
	switch {
	case len(seg) == 1:
		if !allow(w, r, true, http.MethodGet, http.MethodPost) {
			return
		}
	case seg[1] == ".search":
		if !allow(w, r, true, http.MethodPost) {
			return
		}
		c.method = http.MethodGet
	default:
		if !allow(w, r, true, http.MethodGet, http.MethodPut, http.MethodPatch, http.MethodDelete) {
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
	res := h.do(ctx, root, c)
	res.writeTo(w)
}

// allow answers 404 when the path is not ok and 405 when the method is not one of methods.
func allow(w http.ResponseWriter, r *http.Request, ok bool, methods ...string) bool {
	if !ok {
		WriteError(w, http.StatusNotFound, "", fmt.Sprintf("Specified endpoint %s does not exist.", r.URL.Path))
		return false
	}
	for _, m := range methods {
		if r.Method == m {
			return true
		}
	}
	w.Header().Set("Allow", strings.Join(methods, ", "))
	WriteError(w, http.StatusMethodNotAllowed, "",
		fmt.Sprintf("Method %s is not allowed on %s; use %s.", r.Method, r.URL.Path, strings.Join(methods, " or ")))
	return false
}

// readBody reads a JSON request body of at most limit bytes.
func (h *Handler) readBody(w http.ResponseWriter, r *http.Request, limit int64) ([]byte, *scimError) {
	if ct := r.Header.Get("Content-Type"); ct != "" {
		mt, _, err := mime.ParseMediaType(ct)
		if err != nil || (mt != ContentType && mt != "application/json") {
			e := apiError(http.StatusUnsupportedMediaType, "",
				"Content-Type %q is not supported: send application/scim+json or application/json.", ct)
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
		e := apiError(http.StatusBadRequest, TypeInvalidSyntax, "The request body could not be read: %v.", err)
		return nil, &e
	}
	return body, nil
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
		e := apiError(http.StatusBadRequest, TypeInvalidSyntax, "The search request is not valid: %s.", jsonProblem(err))
		return nil, &e
	}
	if !hasSchema(sr.Schemas, SearchRequestSchema) {
		e := apiError(http.StatusBadRequest, TypeInvalidSyntax, "schemas must contain %s.", SearchRequestSchema)
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
			e := badValue("The attribute name %q is not valid.", a)
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
	rt          *elimity.ResourceType
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

// do runs c through the library's server, with our checks before and our shaping after.
func (h *Handler) do(ctx context.Context, root string, c call) *result {
	isList := c.method == http.MethodGet && c.id == ""
	if isList {
		if _, e := parseSort(c.query.Get("sortBy"), c.query.Get("sortOrder"), c.rt.Name); e != nil {
			return errorResult(*e)
		}
		if f := c.query.Get("filter"); strings.TrimSpace(f) != "" {
			if _, err := parseFilter(f, c.rt.Name); err != nil {
				return errorResult(filterError(err))
			}
		}
	}
	if c.body != nil {
		body, e := h.normalizeBody(c)
		if e != nil {
			return errorResult(*e)
		}
		c.body = body
	}

	ctx = context.WithValue(ctx, rootKey{}, root)
	pageLen := -1
	if isList {
		ctx = context.WithValue(ctx, pageLenKey{}, &pageLen)
	}
	target := c.rt.Endpoint
	if c.id != "" {
		target += "/" + url.PathEscape(c.id)
	}
	req, err := http.NewRequestWithContext(ctx, c.method, "http://scim"+target, bytes.NewReader(c.body))
	if err != nil {
		return errorResult(badValue("The resource path %q is not valid.", target))
	}
	req.URL.RawQuery = c.query.Encode()
	if c.ifMatch != "" {
		req.Header.Set("If-Match", c.ifMatch)
	}
	server, err := elimity.NewServer(&elimity.ServerArgs{
		ServiceProviderConfig: &elimity.ServiceProviderConfig{MaxResults: h.pageSize, SupportFiltering: true, SupportPatch: true},
		ResourceTypes:         h.resourceTypes,
	}, elimity.WithBaseURL(root))
	if err != nil {
		return errorResult(apiError(http.StatusInternalServerError, "", "The SCIM server could not be built: %v.", err))
	}
	rec := &recorder{header: http.Header{}}
	server.ServeHTTP(rec, req)
	res := &result{status: rec.status, header: rec.header, body: rec.body.Bytes()}
	if res.status == 0 {
		res.status = http.StatusOK
	}
	if unavailable(res) {
		return errorResult(apiError(http.StatusServiceUnavailable, "", "%s", outage.Detail))
	}
	if res.status/100 != 2 || len(res.body) == 0 {
		return res
	}
	if c.method == http.MethodGet && c.id != "" && c.ifNoneMatch != "" {
		if etagMatches(c.ifNoneMatch, res.header.Get("Etag")) {
			res.header.Del("Content-Type")
			return &result{status: http.StatusNotModified, header: res.header}
		}
	}
	p := newProjection(splitList(c.query.Get("attributes")), splitList(c.query.Get("excludedAttributes")))
	if p.empty() {
		if isList && !setItemsPerPage(res, pageLen) {
			return errorResult(apiError(http.StatusInternalServerError, "", "The list response could not be shaped."))
		}
		return res
	}
	if err := reshape(res, isList, p); err != nil {
		return errorResult(apiError(http.StatusInternalServerError, "", "The response could not be shaped: %v.", err))
	}
	return res
}

type pageLenKey struct{}

// setPageLen records the number of resources of a list page for setItemsPerPage.
func setPageLen(ctx context.Context, n int) {
	if p, ok := ctx.Value(pageLenKey{}).(*int); ok {
		*p = n
	}
}

// setItemsPerPage sets itemsPerPage of the library's list response to n, the number of
// resources returned (the library puts the requested count there), without decoding the
// page. The library encodes the response as a map, so its keys are sorted and the
// top-level itemsPerPage is the last one, after the Resources.
func setItemsPerPage(res *result, n int) bool {
	const key = `"itemsPerPage":`
	i := bytes.LastIndex(res.body, []byte(key))
	if n < 0 || i < 0 {
		return false
	}
	j := i + len(key)
	k := j
	for k < len(res.body) && res.body[k] >= '0' && res.body[k] <= '9' {
		k++
	}
	if k == j {
		return false
	}
	body := make([]byte, 0, len(res.body)+8)
	body = append(body, res.body[:j]...)
	body = strconv.AppendInt(body, int64(n), 10)
	res.body = append(body, res.body[k:]...)
	return true
}

// reshape applies p to the resource or list in res and, for lists, sets itemsPerPage to
// the number of resources returned, as RFC 7644 section 3.4.2 defines it.
func reshape(res *result, isList bool, p projection) error {
	d := json.NewDecoder(bytes.NewReader(res.body))
	d.UseNumber()
	var m map[string]any
	if err := d.Decode(&m); err != nil {
		return err
	}
	if isList {
		list, _ := m["Resources"].([]any)
		if list == nil {
			list = []any{}
		}
		for _, r := range list {
			if rm, ok := r.(map[string]any); ok {
				p.apply(rm)
			}
		}
		m["Resources"] = list
		m["itemsPerPage"] = len(list)
	} else {
		p.apply(m)
	}
	body, err := json.Marshal(m)
	if err != nil {
		return err
	}
	res.body = body
	return nil
}

// recorder keeps what the library's server writes.
type recorder struct {
	header http.Header
	status int
	body   bytes.Buffer
}

func (r *recorder) Header() http.Header { return r.header }

func (r *recorder) Write(b []byte) (int, error) {
	if r.status == 0 {
		r.status = http.StatusOK
	}
	return r.body.Write(b)
}

func (r *recorder) WriteHeader(status int) {
	if r.status == 0 {
		r.status = status
	}
}
