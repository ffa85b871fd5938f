package routing_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/kmkit/kmkit/internal/deadline"
	"github.com/kmkit/kmkit/outage"
	"github.com/kmkit/kmkit/problem"
	"github.com/kmkit/kmkit/web/routing"
)

// api writes problems as "status code detail" in plain text, so that the tests see what
// the helpers hand the API's writer.
func api(logs *bytes.Buffer) *routing.API {
	return &routing.API{Name: "test", Logger: slog.New(slog.NewJSONHandler(logs, nil)),
		Write: func(w http.ResponseWriter, r *http.Request, p *problem.Problem) {
			w.Header().Set("Content-Type", "text/plain")
			w.WriteHeader(p.Status)
			w.Write([]byte(p.ErrorCode + " " + p.Detail))
		}}
}

type answer struct {
	Status int
	Allow  string
	Body   string
}

func TestRoutes(t *testing.T) {
	var logs bytes.Buffer
	a := api(&logs)
	h := a.Handler(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/read":
			if a.Allow(w, r, http.MethodGet) {
				w.Write([]byte("read by " + r.Method))
			}
		case "/write":
			if a.Allow(w, r, http.MethodGet, http.MethodPost) {
				w.Write([]byte("written"))
			}
		case "/post":
			if a.Allow(w, r, http.MethodPost) {
				w.Write([]byte("posted"))
			}
		default:
			a.NotFound(w, r, map[bool]string{true: "try /read"}[r.URL.Path == "/hint"])
		}
	})
	for _, tt := range []struct {
		method, path string
		want         answer
	}{
		{"GET", "/read", answer{200, "", "read by GET"}},
		{"HEAD", "/read", answer{200, "", ""}},
		{"POST", "/read", answer{405, "GET, HEAD", "GENERAL_METHOD_NOT_ALLOWED method POST is not allowed on /read; allowed: GET, HEAD"}},
		{"DELETE", "/write", answer{405, "GET, POST, HEAD", "GENERAL_METHOD_NOT_ALLOWED method DELETE is not allowed on /write; allowed: GET, POST, HEAD"}},
		{"POST", "/write", answer{200, "", "written"}},
		{"GET", "/post", answer{405, "POST", "GENERAL_METHOD_NOT_ALLOWED method GET is not allowed on /post; allowed: POST"}},
		{"HEAD", "/post", answer{405, "POST", ""}},
		{"GET", "/nope", answer{404, "", "GENERAL_NOTFOUND_PATH no endpoint at /nope"}},
		{"GET", "/hint", answer{404, "", "GENERAL_NOTFOUND_PATH no endpoint at /hint: try /read"}},
		{"GET", "/" + strings.Repeat("é", 600), answer{404, "", "GENERAL_NOTFOUND_PATH no endpoint at /" + strings.Repeat("é", 511) + "…"}},
	} {
		w := httptest.NewRecorder()
		h.ServeHTTP(w, httptest.NewRequest(tt.method, "http://example.com"+tt.path, nil))
		got := answer{w.Code, w.Header().Get("Allow"), w.Body.String()}
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("%s %.20s (-want +got):\n%s", tt.method, tt.path, diff)
		}
	}
	if logs.Len() != 0 {
		t.Errorf("logged %s", logs.String())
	}
}

// TestPanic checks that a panic is a 500 ADMIN_FATAL_ERROR naming a support id that is
// logged with the panic's value and stack, and that http.ErrAbortHandler goes on up.
func TestPanic(t *testing.T) {
	var logs bytes.Buffer
	a := api(&logs)
	h := a.Handler(func(w http.ResponseWriter, r *http.Request) { panic("store exploded") })
	w := httptest.NewRecorder()
	h.ServeHTTP(w, httptest.NewRequest(http.MethodGet, "/x", nil))
	id, ok := strings.CutPrefix(w.Body.String(), "ADMIN_FATAL_ERROR internal error; support id ")
	if w.Code != 500 || !ok || len(id) != 36 {
		t.Fatalf("%d %q; want 500 with a support id", w.Code, w.Body)
	}
	var entry map[string]any
	if err := json.Unmarshal(logs.Bytes(), &entry); err != nil {
		t.Fatal(err)
	}
	msg, _ := entry["err"].(string)
	if entry["level"] != "ERROR" || entry["supportId"] != id || entry["path"] != "/x" || entry["method"] != "GET" ||
		!strings.Contains(msg, "panic: store exploded") || !strings.Contains(msg, "routing_test.go") {
		t.Errorf("log entry %v", entry)
	}

	abort := a.Handler(func(w http.ResponseWriter, r *http.Request) { panic(http.ErrAbortHandler) })
	defer func() {
		if v := recover(); v != http.ErrAbortHandler {
			t.Errorf("recovered %v, want http.ErrAbortHandler", v)
		}
	}()
	abort.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(http.MethodGet, "/x", nil))
	t.Error("ErrAbortHandler was swallowed")
}

// TestFail checks the one answer and log line of each failure that is not the client's.
func TestFail(t *testing.T) {
	limit := errors.New("test time limit")
	for _, c := range []struct {
		name       string
		ctx        func() (context.Context, context.CancelFunc)
		err        error
		status     int
		body       string
		retryAfter string
		level      string // of the one log line; "" for none at the debug level
		msg        string
	}{
		{"time limit", func() (context.Context, context.CancelFunc) {
			ctx, cancel := deadline.New(context.Background(), time.Now().Add(-time.Second), limit)
			<-ctx.Done()
			return ctx, cancel
		}, context.DeadlineExceeded, 503, "GENERAL_SERVICE_UNAVAILABLE the query ran longer than the time limit of 2s and was stopped; narrow it", "", "INFO", "test: query time limit"},
		{"client gone", func() (context.Context, context.CancelFunc) {
			ctx, cancel := context.WithCancel(context.Background())
			cancel()
			return ctx, cancel
		}, fmt.Errorf("query: %w", context.Canceled), 503, "GENERAL_SERVICE_UNAVAILABLE the request was canceled: the client went away", "", "DEBUG", "test: client went away"},
		{"database unavailable", func() (context.Context, context.CancelFunc) { return context.WithCancel(context.Background()) },
			&outage.Error{Err: errors.New("connection refused")}, 503, "GENERAL_SERVICE_UNAVAILABLE " + outage.Detail, "5", "WARN", "test: database unavailable"},
		{"internal", func() (context.Context, context.CancelFunc) { return context.WithCancel(context.Background()) },
			errors.New("disk on fire"), 500, "ADMIN_FATAL_ERROR internal error; support id ", "", "ERROR", "test: internal error"},
	} {
		t.Run(c.name, func(t *testing.T) {
			var logs bytes.Buffer
			a := &routing.API{Name: "test", Logger: slog.New(slog.NewJSONHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
				TimeLimit: 2 * time.Second, TimeLimitCause: limit, Narrow: "narrow it",
				Write: api(nil).Write}
			ctx, cancel := c.ctx()
			defer cancel()
			rec := httptest.NewRecorder()
			a.Fail(rec, httptest.NewRequestWithContext(ctx, "GET", "/q", nil), c.err)
			if rec.Code != c.status || !strings.HasPrefix(rec.Body.String(), c.body) || rec.Header().Get("Retry-After") != c.retryAfter {
				t.Errorf("answered %d %q Retry-After %q; want %d %q… Retry-After %q", rec.Code, rec.Body, rec.Header().Get("Retry-After"), c.status, c.body, c.retryAfter)
			}
			var entry map[string]any
			if err := json.Unmarshal(logs.Bytes(), &entry); err != nil || entry["level"] != c.level || entry["msg"] != c.msg || entry["path"] != "/q" {
				t.Errorf("logged %q; want one %s line %q with the path", logs.String(), c.level, c.msg)
			}
		})
	}
}
