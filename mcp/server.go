package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"slices"

	"github.com/google/uuid"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/kmkit/kmkit/km"
	"github.com/kmkit/kmkit/km/kmhttp"
	"github.com/kmkit/kmkit/principal"
	"github.com/kmkit/kmkit/problem"
)

// Path is where the reference server mounts the handler.
const Path = kmhttp.BasePath + "/mcp"

// Defaults of Options.
const (
	// DefaultMaxRows is the default of Options.MaxRows.
	DefaultMaxRows = 500
	// DefaultMaxBytes is the default of Options.MaxBytes.
	DefaultMaxBytes = 256 << 10
	// DefaultPageSize is the page size of a query tool call that names none.
	DefaultPageSize = 50
	// DefaultFindLimit is how many values find_field_values returns when the call names no
	// limit.
	DefaultFindLimit = 10
)

// Options configure the MCP server. The zero value gives the defaults.
type Options struct {
	// MaxRows bounds the pageSize of a query tool call (and the limit of
	// find_field_values); above it the call fails with the KM API's
	// GENERAL_CONSTRAINT_VIOLATION. Default DefaultMaxRows.
	MaxRows int
	// MaxBytes bounds the JSON size of the rows one tool answer carries: rows beyond it are
	// dropped from the end of the page and the answer says so (truncated). Default
	// DefaultMaxBytes.
	MaxBytes int
	// KM configures the checks of the KM API the tools share (filter limits, sample
	// size); MaxRows and Logger replace its kmhttp.WithMaxPageSize and kmhttp.WithLogger.
	KM []kmhttp.Option
	// SpecServer is the URL the OpenAPI resources name as their server, the origin the
	// KM API is served at (e.g. https://kmkit.example); none when empty.
	SpecServer string
	// Logger receives internal errors with their support id. Default slog.Default().
	Logger *slog.Logger
}

// Server holds the MCP tools, resources and prompts over the KMs of a km.Store.
type Server struct {
	kmh  *kmhttp.Handler
	opts Options
}

// New returns the MCP server over store. Every call goes through the KM API's checks and
// compiled plans (kmhttp.Handler.QueryJSON and SummaryJSON), so answers and errors are the KM
// API's.
func New(store km.Store, opts Options) *Server {
	if opts.MaxRows <= 0 {
		opts.MaxRows = DefaultMaxRows
	}
	if opts.MaxBytes <= 0 {
		opts.MaxBytes = DefaultMaxBytes
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	kopts := append(slices.Clip(opts.KM), kmhttp.WithMaxPageSize(opts.MaxRows), kmhttp.WithLogger(opts.Logger))
	return &Server{kmh: kmhttp.NewHandler(store, kopts...), opts: opts}
}

// MCPServer returns an SDK server with the tools, resources and prompts. Calls run as
// principal p (nil: whatever the call's context carries), which scopes the KMs to p's team
// as for the KM API. Connect it to any transport, e.g. sdk.StdioTransport.
func (s *Server) MCPServer(p *principal.Principal) *sdk.Server {
	srv := sdk.NewServer(&sdk.Implementation{Name: "kmkit", Title: "kmkit Knowledge Models", Version: "1"}, &sdk.ServerOptions{
		Instructions: instructions,
	})
	s.addTools(srv, p)
	s.addResources(srv, p)
	s.addPrompts(srv, p)
	return srv
}

// Handler returns the http.Handler speaking MCP over Streamable HTTP (stateless, JSON
// answers: every POST is answered on its own). Each call runs in the context of its HTTP
// request, so with the principal the auth guard put there: mount the handler behind the
// guard (auth.Guard.Wrap with the mcp permission). One SDK server serves every request.
func (s *Server) Handler() http.Handler {
	srv := s.MCPServer(nil)
	return sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return srv },
		&sdk.StreamableHTTPOptions{Stateless: true, JSONResponse: true, Logger: s.opts.Logger,
			// The SDK refuses requests that reach a loopback address with another Host, a
			// guard against DNS rebinding for servers without credentials. Calls here need
			// an AppKey or a bearer token, which a rebinding page does not have, and the
			// check would refuse every request a reverse proxy on the same host forwards.
			DisableLocalhostProtection: true})
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

// ToolError is the error of a tool call the KM API answers with a problem: its text (the
// tool result's content) is the problem body, {"status", "errorCode", "detail", ...}.
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

// toolError turns err into the error a tool call reports: the KM API's problem for a
// client error, a generic error with a logged support id otherwise.
func (s *Server) toolError(ctx context.Context, tool string, err error) error {
	if pr, ok := kmhttp.ProblemOf(err); ok {
		return &ToolError{Status: pr.Status, ErrorCode: pr.ErrorCode, Detail: pr.Detail, Title: pr.Title, Type: pr.Type}
	}
	if errors.Is(err, context.Canceled) {
		return err
	}
	id := uuid.NewString()
	s.opts.Logger.ErrorContext(ctx, "mcp: internal error", "supportId", id, "tool", tool, "err", err)
	return &ToolError{Status: http.StatusInternalServerError, ErrorCode: problem.CodeFatal, Detail: "internal error; support id " + id}
}
