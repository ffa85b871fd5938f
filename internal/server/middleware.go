package server

import (
	"bytes"
	"context"
	"log/slog"
	"net/http"
	"regexp"
	"strings"
	"time"

	"github.com/kmkit/kmkit/km/kmhttp"
	"github.com/kmkit/kmkit/mcp"
	"github.com/kmkit/kmkit/metrics"
	"github.com/kmkit/kmkit/odata"
	"github.com/kmkit/kmkit/principal"
	"github.com/kmkit/kmkit/reporting/reportinghttp"
	"github.com/kmkit/kmkit/scim/scimhttp"
)

// requestInfo is what the access log learns of a request: its API and route template
// (from the outermost middleware) and its principal (from inside the guard).
type requestInfo struct {
	api, route string
	principal  string
}

type infoKey struct{}

func infoFrom(ctx context.Context) *requestInfo {
	info, _ := ctx.Value(infoKey{}).(*requestInfo)
	return info
}

// notePrincipal records the name of the request's principal for the access log.
func notePrincipal(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if p, ok := principal.FromContext(r.Context()); ok {
			if info := infoFrom(r.Context()); info != nil {
				info.principal = p.Name
			}
		}
		next.ServeHTTP(w, r)
	})
}

// routes tells the API and route template of a request path.
type routes struct {
	scim *scimhttp.Handler
}

// of returns the API and route template of r: a fixed set of values, never a raw path.
func (rt routes) of(r *http.Request) (api, route string) {
	p := r.URL.Path
	switch {
	case strings.HasPrefix(p, odata.BasePath+"/"):
		return metrics.APIOData, odata.RouteTemplate(p)
	case p == mcp.BasePath:
		return "mcp", mcp.BasePath
	case strings.HasPrefix(p, kmhttp.BasePath+"/"):
		return metrics.APIKM, kmhttp.RouteTemplate(p)
	case strings.HasPrefix(p, scimhttp.BasePath+"/"):
		return metrics.APISCIM, rt.scim.RouteTemplate(p)
	case strings.HasPrefix(p, reportinghttp.BasePath+"/"):
		return metrics.APIReporting, reportinghttp.RouteTemplate(p)
	case p == MetricsPath:
		return "metrics", MetricsPath
	case p == "/healthz":
		return "health", p
	}
	return "other", ""
}

// routeOf is the metrics' Route: the API and route template logRequests found.
func routeOf(r *http.Request) (api, route string) {
	if info := infoFrom(r.Context()); info != nil {
		return info.api, info.route
	}
	return "", ""
}

// statusWriter records the status and size of a response, and the beginning of a 5xx
// body, where the handlers write the support id.
type statusWriter struct {
	http.ResponseWriter
	status int
	bytes  int64
	head   []byte // up to maxErrorHead bytes of a 5xx body
}

const maxErrorHead = 1 << 10

func (w *statusWriter) WriteHeader(status int) {
	if w.status == 0 {
		w.status = status
	}
	w.ResponseWriter.WriteHeader(status)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	if w.status >= 500 && len(w.head) < maxErrorHead {
		w.head = append(w.head, b[:min(len(b), maxErrorHead-len(w.head))]...)
	}
	n, err := w.ResponseWriter.Write(b)
	w.bytes += int64(n)
	return n, err
}

// Unwrap lets http.ResponseController reach the underlying writer.
func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// supportID finds the support id the handlers put in their 500 bodies ("support id <uuid>").
var supportID = regexp.MustCompile(`(?i)support id:? ([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})`)

// logRequests logs one line per request: method, route template, status, bytes, duration
// and principal, and on a 5xx answer the support id it carries. The raw path and the
// query string are left out: they may carry ids, search terms and filter values. 5xx
// answers log at level error, the others at info.
func logRequests(logger *slog.Logger, route func(*http.Request) (api, route string), next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		info := &requestInfo{}
		info.api, info.route = route(r)
		r = r.WithContext(context.WithValue(r.Context(), infoKey{}, info))
		sw := &statusWriter{ResponseWriter: w}
		next.ServeHTTP(sw, r)
		if sw.status == 0 {
			sw.status = http.StatusOK
		}
		level := slog.LevelInfo
		if sw.status >= 500 {
			level = slog.LevelError
		}
		if !logger.Enabled(r.Context(), level) {
			return
		}
		tmpl := info.route
		if tmpl == "" {
			tmpl = metrics.Unmatched
		}
		attrs := []slog.Attr{
			slog.String("method", r.Method), slog.String("api", info.api), slog.String("route", tmpl),
			slog.Int("status", sw.status), slog.Int64("bytes", sw.bytes), slog.Duration("took", time.Since(start)),
			slog.String("principal", info.principal), slog.String("remote", r.RemoteAddr),
		}
		if sw.status >= 500 {
			if m := supportID.FindSubmatch(sw.head); m != nil {
				attrs = append(attrs, slog.String("supportId", string(bytes.ToLower(m[1]))))
			}
		}
		logger.LogAttrs(r.Context(), level, "request", attrs...)
	})
}

// limitBody caps every request body at n bytes; handlers reading beyond get an error and
// answer 413 in their API's error format.
func limitBody(n int64, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.ContentLength > n {
			w.Header().Set("Connection", "close")
		}
		r.Body = http.MaxBytesReader(w, r.Body, n)
		next.ServeHTTP(w, r)
	})
}
