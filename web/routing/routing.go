// Package routing is what the kmkit API handlers (km, odata, scim, reporting, mcp) share
// about routing and failing, so that they answer alike: a path no route matches is 404
// GENERAL_NOTFOUND_PATH, a method a route does not serve 405 GENERAL_METHOD_NOT_ALLOWED
// with an Allow header, HEAD is served wherever GET is (package head), and an unexpected
// error or a panic is 500 ADMIN_FATAL_ERROR with a support id that is logged with the
// cause. Failures that are nobody's fault have one answer and one log line in every API
// (API.Fail): the query time limit, a client that went away, a store that is
// unavailable. Each API answers in its own error shape: the API's ErrorWriter writes the
// problem, so a SCIM client gets an RFC 7644 Error body where a KM client gets a problem
// body.
//
// A host that writes a handler of its own beside the kmkit APIs may build an API for it
// (its ErrorWriter calling problemhttp.Send, say) to answer the same way.
package routing

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"runtime/debug"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/kmkit/kmkit/internal/deadline"
	"github.com/kmkit/kmkit/outage"
	"github.com/kmkit/kmkit/problem"
	"github.com/kmkit/kmkit/web/head"
)

// ErrorWriter writes p, the error answer to r, in the shape of one API's error bodies.
type ErrorWriter func(w http.ResponseWriter, r *http.Request, p *problem.Problem)

// API is what the helpers need of one API: its name in logs, the writer of its error
// bodies and its logger. The zero Logger is slog.Default().
type API struct {
	Name   string
	Write  ErrorWriter
	Logger *slog.Logger
	// TimeLimit is the API's query time limit and TimeLimitCause the cause of the
	// context deadline that enforces it (as context.WithTimeoutCause takes it; km.Service
	// ends a query at its limit with km.ErrTimeLimit); nil: the API has none.
	TimeLimit      time.Duration
	TimeLimitCause error
	// Narrow ends the answer to a query stopped at the time limit: how to make the query
	// cheaper, in the API's words.
	Narrow string
}

// Fail answers err, an error that is not the client's: in every API the same status,
// code and log line for each cause.
//   - The request's time limit (TimeLimitCause: the cause of the request's context, or an
//     error wrapping it, as km.Service returns): 503 GENERAL_SERVICE_UNAVAILABLE "the query
//     ran longer than the time limit of D and was stopped; " + Narrow; logged at info.
//   - The client went away: 503 GENERAL_SERVICE_UNAVAILABLE "the request was canceled: the
//     client went away" (nobody reads it; the access log shows it); logged at debug.
//   - The store's database is unavailable (package outage): 503 GENERAL_SERVICE_UNAVAILABLE
//     with Retry-After; logged at warn.
//   - Anything else: 500 ADMIN_FATAL_ERROR with a logged support id (Internal).
func (a *API) Fail(w http.ResponseWriter, r *http.Request, err error) {
	p, retry := a.Failure(r.Context(), r, err)
	if retry {
		w.Header().Set("Retry-After", outage.RetryAfterSeconds)
	}
	a.Write(w, r, p)
}

// Failure is the problem Fail answers for err in ctx, with its line logged (naming r's
// method and path when r is not nil), and whether the answer carries Retry-After: for an
// API that writes its answers itself.
func (a *API) Failure(ctx context.Context, r *http.Request, err error) (p *problem.Problem, retryAfter bool) {
	var where []any
	if r != nil {
		where = []any{"method", r.Method, "path", r.URL.Path}
	}
	switch {
	case a.TimeLimitCause != nil && (deadline.Reached(ctx, a.TimeLimitCause) || errors.Is(err, a.TimeLimitCause)):
		a.logger().InfoContext(ctx, a.Name+": query time limit", append(where, "limit", a.TimeLimit)...)
		return problem.New(http.StatusServiceUnavailable, problem.CodeUnavailable, fmt.Sprintf(
			"the query ran longer than the time limit of %v and was stopped; %s", a.TimeLimit, a.Narrow)), false
	case ctx.Err() != nil && (errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)):
		a.logger().DebugContext(ctx, a.Name+": client went away", where...)
		return problem.New(http.StatusServiceUnavailable, problem.CodeUnavailable, "the request was canceled: the client went away"), false
	case outage.Is(err):
		a.logger().WarnContext(ctx, a.Name+": database unavailable", append(where, "err", err)...)
		return problem.New(http.StatusServiceUnavailable, problem.CodeUnavailable, outage.Detail), true
	}
	return a.Internal(ctx, r, err), false
}

func (a *API) logger() *slog.Logger {
	if a.Logger != nil {
		return a.Logger
	}
	return slog.Default()
}

// Handler returns serve with HEAD answered as GET without a body and the Allow header of
// 405 answers completed with HEAD where it lists GET (head.Handler). A panic in serve is
// answered 500 with a support id (Internal), unless it is http.ErrAbortHandler, which
// goes on up to net/http. Build it once, when the API's handler is made.
func (a *API) Handler(serve http.HandlerFunc) http.Handler {
	return head.Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer func() {
			if v := recover(); v != nil {
				if v == http.ErrAbortHandler {
					panic(v)
				}
				a.Write(w, r, a.Internal(r.Context(), r, fmt.Errorf("panic: %v\n%s", v, debug.Stack())))
			}
		}()
		serve(w, r)
	}))
}

// NotFound answers 404 GENERAL_NOTFOUND_PATH (NotFoundProblem).
func (a *API) NotFound(w http.ResponseWriter, r *http.Request, why string) {
	a.Write(w, r, NotFoundProblem(r.URL.Path, why))
}

// NotFoundProblem is the 404 GENERAL_NOTFOUND_PATH of a path no route matches: "no
// endpoint at PATH", followed by why (what the API serves instead) when it is not empty.
func NotFoundProblem(path, why string) *problem.Problem {
	detail := "no endpoint at " + clip(path)
	if why != "" {
		detail += ": " + why
	}
	return problem.New(http.StatusNotFound, problem.CodeNotFoundPath, detail)
}

// Allow reports whether r's method is one of methods, HEAD counting as GET. Otherwise it
// answers 405 GENERAL_METHOD_NOT_ALLOWED with the Allow header, which lists HEAD last
// when GET is allowed (as head.Handler completes it), and reports false.
func (a *API) Allow(w http.ResponseWriter, r *http.Request, methods ...string) bool {
	if slices.Contains(methods, r.Method) || (r.Method == http.MethodHead && slices.Contains(methods, http.MethodGet)) {
		return true
	}
	allowed := slices.Clone(methods)
	if slices.Contains(methods, http.MethodGet) && !slices.Contains(methods, http.MethodHead) {
		allowed = append(allowed, http.MethodHead)
	}
	list := strings.Join(allowed, ", ")
	w.Header().Set("Allow", list)
	a.Write(w, r, problem.New(http.StatusMethodNotAllowed, problem.CodeMethodNotAllowed,
		"method "+clip(r.Method)+" is not allowed on "+clip(r.URL.Path)+"; allowed: "+list))
	return false
}

// Internal logs err at level error with a new support id and returns the 500
// ADMIN_FATAL_ERROR problem that names the id, so that a client's report of the answer
// finds the cause in the log. The error's text never reaches the client.
func (a *API) Internal(ctx context.Context, r *http.Request, err error) *problem.Problem {
	id := uuid.NewString()
	args := []any{"supportId", id}
	if r != nil {
		args = append(args, "method", r.Method, "path", r.URL.Path)
	}
	a.logger().ErrorContext(ctx, a.Name+": internal error", append(args, "err", err)...)
	return problem.New(http.StatusInternalServerError, problem.CodeFatal, "internal error; support id "+id)
}

// clip shortens client input quoted back in an error message to 1 KiB, without splitting
// a UTF-8 sequence.
func clip(s string) string {
	const max = 1 << 10
	if len(s) <= max {
		return s
	}
	cut := max
	for cut > 0 && s[cut]&0xC0 == 0x80 {
		cut--
	}
	return s[:cut] + "…"
}
