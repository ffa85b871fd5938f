package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/kmkit/kmkit/internal/kmspec"
	"github.com/kmkit/kmkit/internal/plancache"
	"github.com/kmkit/kmkit/km"
	"github.com/kmkit/kmkit/principal"
	"github.com/kmkit/kmkit/problem"
	"github.com/kmkit/kmkit/web/routing"
)

// BasePath is the path of the MCP endpoint (Streamable HTTP has one): mount the handler
// at BasePath itself, as the reference server does.
const BasePath = kmspec.BasePath + "/mcp"

// Defaults of the options.
const (
	// DefaultMaxRows is the default of WithMaxRows.
	DefaultMaxRows = 500
	// DefaultMaxBytes is the default of WithMaxBytes.
	DefaultMaxBytes = 256 << 10
	// DefaultPageSize is the page size of a query tool call that names none.
	DefaultPageSize = 50
	// DefaultFindLimit is how many values find_field_values returns when the call names no
	// limit.
	DefaultFindLimit = 10
)

// config is what the options set.
type config struct {
	maxRows    int
	maxBytes   int
	svc        *km.Service
	specServer string
	logger     *slog.Logger
	origins    []string // WithAllowedOrigins
}

// Option configures a Handler.
type Option func(*config)

// WithMaxRows bounds the pageSize of a query tool call (and the limit of
// find_field_values): the tools' input schemas state it as the maximum, so an agent knows
// it before calling, and a call above it is refused (query: as the KM API refuses a page
// above its maximum; find_field_values: by the SDK, as its schema says). Default
// DefaultMaxRows; values below 1 keep it. The Service's MaxPageSize (WithService) bounds it
// in turn: the schemas state, and the tools keep, the smaller of the two.
func WithMaxRows(n int) Option {
	return func(c *config) {
		if n > 0 {
			c.maxRows = n
		}
	}
}

// WithMaxBytes bounds the JSON size of the rows one tool answer carries: rows beyond it
// are dropped from the end of the page and the answer says so (truncated). Default
// DefaultMaxBytes; values below 1 keep it.
func WithMaxBytes(n int) Option {
	return func(c *config) {
		if n > 0 {
			c.maxBytes = n
		}
	}
}

// WithService has the tools answer through svc, the request layer the host shares
// between its surfaces (the KM API, OData, MCP), so that a question meets the same
// checks and the same page, time, cost and memory limits on every surface; svc's store
// then replaces the store given to NewHandler. Without it the handler makes its own
// Service over the store with the km package's default limits.
func WithService(svc *km.Service) Option {
	return func(c *config) { c.svc = svc }
}

// WithSpecServer sets the URL the OpenAPI resources name as their server, the origin the
// KM API is served at (e.g. https://kmkit.example); none by default.
func WithSpecServer(url string) Option {
	return func(c *config) { c.specServer = url }
}

// WithLogger sets the logger of internal errors with their support id (default
// slog.Default()).
func WithLogger(l *slog.Logger) Option {
	return func(c *config) {
		if l != nil {
			c.logger = l
		}
	}
}

// Handler serves the MCP tools, resources and prompts over the KMs of a km.Store: over
// Streamable HTTP as an http.Handler, or over any other transport through MCPServer.
// Create it with NewHandler.
type Handler struct {
	svc  *km.Service
	opts config
	// queryInput and queryOutput are the query tool's schemas, as JSON.
	queryInput, queryOutput json.RawMessage
	api                     *routing.API // the failure path every API shares
	http                    http.Handler
	// plans keeps the plans of recent query calls by their arguments.
	plans plancache.Cache[string, *queryPlan]
}

// NewHandler returns the MCP handler over store. Every call goes through the request
// layer of the domain (km.Service: WithService), as the KM API's do, so answers, refusals
// and limits are the KM API's. Mount it at BasePath behind the auth guard:
//
//	mux.Handle(mcp.BasePath, guard.Wrap(mcpPolicy, mcp.NewHandler(store)))
func NewHandler(store km.Store, opts ...Option) *Handler {
	c := config{maxRows: DefaultMaxRows, maxBytes: DefaultMaxBytes, logger: slog.Default()}
	for _, o := range opts {
		o(&c)
	}
	svc := c.svc
	if svc == nil {
		svc = km.NewService(store)
	}
	// A page beyond the Service's cap is refused whatever WithMaxRows says: the schemas
	// state, and the tools keep, the smaller of the two.
	c.maxRows = min(c.maxRows, svc.MaxPageSize())
	s := &Handler{svc: svc, opts: c, queryInput: mustJSON(queryInputSchema(c.maxRows)), queryOutput: mustJSON(schemaFor[QueryResult](nil)), api: &routing.API{Name: "mcp", Logger: c.logger,
		TimeLimit: svc.QueryTimeout(), TimeLimitCause: km.ErrTimeLimit, Narrow: "narrow it (fewer filters, fields, KPIs or rows)"}}
	srv := s.MCPServer(nil)
	s.http = sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return srv },
		&sdk.StreamableHTTPOptions{Stateless: true, JSONResponse: true, Logger: c.logger,
			// The SDK refuses requests that reach a loopback address with another Host, a
			// guard against DNS rebinding that would refuse every request a reverse proxy
			// on the same host forwards. ServeHTTP checks the Origin header against the
			// public URL instead (CheckOrigin), which defeats rebinding without the Host.
			DisableLocalhostProtection: true})
	return s
}

// MCPServer returns an SDK server with the tools, resources and prompts. Calls run as
// principal p (nil: whatever the call's context carries), which scopes the KMs to p's team
// as for the KM API. Connect it to any transport, e.g. sdk.StdioTransport.
func (s *Handler) MCPServer(p *principal.Principal) *sdk.Server {
	srv := sdk.NewServer(&sdk.Implementation{Name: "kmkit", Title: "kmkit Knowledge Models", Version: "1"}, &sdk.ServerOptions{
		Instructions:      instructions,
		CompletionHandler: s.completer(p),
		// The tools, prompts and resource templates are added once and the resources
		// listed are the KMs of the moment, so the server never sends a list_changed
		// notification (and over stateless HTTP has no stream to send one on): the
		// capabilities say so, where the SDK's default, listChanged true, promises them.
		//lint:ignore SA1019 logging is deprecated from the draft 2026-07-28 on, live in the versions served before it
		Capabilities: &sdk.ServerCapabilities{Logging: &sdk.LoggingCapabilities{}, Tools: &sdk.ToolCapabilities{},
			Prompts: &sdk.PromptCapabilities{}, Resources: &sdk.ResourceCapabilities{}},
	})
	s.addTools(srv, p)
	s.addResources(srv, p)
	s.addPrompts(srv, p)
	srv.AddReceivingMiddleware(checkLogLevel)
	return srv
}

// logLevels are the levels of logging/setLevel, the syslog severities the MCP
// specification enumerates (LoggingLevel), least severe first.
var logLevels = []string{"debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"}

// checkLogLevel refuses a logging/setLevel of a level that is none of logLevels with
// Invalid params, as the logging utility's error handling asks; the SDK takes any string.
func checkLogLevel(next sdk.MethodHandler) sdk.MethodHandler {
	return func(ctx context.Context, method string, req sdk.Request) (sdk.Result, error) {
		//lint:ignore SA1019 logging is deprecated from the draft 2026-07-28 on, live in the versions served before it
		if lp, ok := req.GetParams().(*sdk.SetLoggingLevelParams); ok && lp != nil && !slices.Contains(logLevels, string(lp.Level)) {
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams,
				Message: "invalid log level " + strconv.Quote(string(lp.Level)) + ": one of " + strings.Join(logLevels, ", ")}
		}
		return next(ctx, method, req)
	}
}

// ServeHTTP speaks MCP over Streamable HTTP (stateless, JSON answers: every POST is
// answered on its own). Each call runs in the context of its HTTP request, so with the
// principal the auth guard put there: mount the handler behind the guard (auth.Guard.Wrap
// with the mcp permission). One SDK server serves every request.
//
// A request whose Origin header names a foreign origin is refused 403 (CheckOrigin).
func (s *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if !s.originAllowed(r) {
		refuseOrigin(w)
		return
	}
	if s.serveDirect(w, r) {
		return
	}
	s.http.ServeHTTP(w, r)
}

const instructions = `kmkit serves Knowledge Models (KMs): records (tables) with typed fields, relationships between them, KPIs (aggregations, some with parameters) and predefined filters. ` +
	`Start with list_knowledge_models, then describe_knowledge_model. Query a record (bare field ids) or the whole KM (RECORD.FIELD names, KPIs grouped by the selected fields) with query. ` +
	`Before filtering on a text value a user typed, turn it into the stored value with find_field_values. The filter_language prompt explains filterExpr.`

// scope returns ctx carrying p, when p is set.
func scope(ctx context.Context, p *principal.Principal) context.Context {
	if p == nil {
		return ctx
	}
	return principal.NewContext(ctx, p)
}

// ToolError is the error of a tool call, shaped as the KM API's problem body: its text
// (the tool result's content) is {"status", "errorCode", "detail", ...}.
type ToolError struct {
	Status    int    `json:"status"`
	ErrorCode string `json:"errorCode"`
	Detail    string `json:"detail"`
	Title     string `json:"title,omitempty"`
	Type      string `json:"type,omitempty"`
}

// Error returns the problem body as JSON.
func (e *ToolError) Error() string {
	b, _ := json.Marshal(e)
	return string(b)
}

// toolError turns err into the error a tool call reports: the problem of a client error
// (km.AsProblem), else the answer and log line every API gives the same failure
// (routing.API.Failure: the time limit, a client gone and a database outage are 503,
// anything else 500 with a logged support id).
func (s *Handler) toolError(ctx context.Context, tool string, err error) *ToolError {
	pr, ok := km.AsProblem(err)
	if !ok {
		pr, _ = s.api.Failure(ctx, nil, fmt.Errorf("%s: %w", tool, err))
	}
	return &ToolError{Status: pr.Status, ErrorCode: pr.ErrorCode, Detail: pr.Detail, Title: pr.Title, Type: pr.Type}
}

// requestError turns err into the JSON-RPC error of a request that is no tool call
// (prompts/get, resources/list and read, completion/complete): its message is the
// problem body of toolError, its code Invalid params (-32602) for the caller's mistakes
// (a 4xx problem: an unknown KM or record) and Internal error (-32603) for failures, as
// the specification's error handling of prompts asks. An error without a JSON-RPC code
// would reach the client with code 0, which no version of the specification defines.
func (s *Handler) requestError(ctx context.Context, method string, err error) error {
	te := s.toolError(ctx, method, err)
	code := int64(jsonrpc.CodeInvalidParams)
	if te.Status >= http.StatusInternalServerError {
		code = jsonrpc.CodeInternalError
	}
	return &jsonrpc.Error{Code: code, Message: te.Error()}
}

// invalid returns the 400 problem of a tool's arguments.
func invalid(code, detail string) error {
	return problem.New(http.StatusBadRequest, code, detail)
}
