package server

import (
	"bytes"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"encoding/json"

	"github.com/kmkit/kmkit/problem"
	"github.com/kmkit/kmkit/problem/problemhttp"
)

// TestAccessLog checks the access log line: one per request, route template instead of
// the path, the principal, and the support id of a 500.
func TestAccessLog(t *testing.T) {
	var out bytes.Buffer
	logger := slog.New(slog.NewJSONHandler(&out, nil))
	const id = "0b8f5a52-3c7e-4f43-9d2a-1e5b6c7d8e9f"
	failing := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasSuffix(r.URL.Path, "/data") {
			problemhttp.Write(w, 500, problem.CodeFatal, "internal error; support id "+id)
			return
		}
		w.Write([]byte("fine"))
	})
	a := newTestApp(t, config{burst: -1, concurrency: -1})
	route := a.routes.of
	h := logRequests(logger, route, failing)
	h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(http.MethodGet, "/intelligence/api/knowledge-models/o2c/records/ORDERS/data?searchTerm=secret", nil))
	h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(http.MethodHead, "/user-provisioning/scim/v2/Users/abc", nil))

	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != 2 {
		t.Fatalf("%d lines, want 2:\n%s", len(lines), out.String())
	}
	var first, second map[string]any
	if err := json.Unmarshal([]byte(lines[0]), &first); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal([]byte(lines[1]), &second); err != nil {
		t.Fatal(err)
	}
	if first["level"] != "ERROR" || first["method"] != "GET" || first["api"] != "km" ||
		first["route"] != "/intelligence/api/knowledge-models/{km_id}/records/{record_id}/data" ||
		first["status"] != 500.0 || first["supportId"] != id || first["bytes"] == 0.0 {
		t.Errorf("500 line: %s", lines[0])
	}
	if second["level"] != "INFO" || second["method"] != "HEAD" || second["route"] != "/user-provisioning/scim/v2/Users/{id}" ||
		second["status"] != 200.0 || second["bytes"] != 4.0 || second["supportId"] != nil {
		t.Errorf("200 line: %s", lines[1])
	}
	if strings.Contains(out.String(), "secret") || strings.Contains(out.String(), "ORDERS") || strings.Contains(out.String(), "abc") {
		t.Errorf("the log carries a raw path or query:\n%s", out.String())
	}

	// Through the whole server: the principal is named.
	out.Reset()
	full, err := newApp(&config{maxPageSize: 10, maxBody: 1 << 20}, logger)
	if err != nil {
		t.Fatal(err)
	}
	out.Reset()
	full.handler.ServeHTTP(httptest.NewRecorder(), func() *http.Request {
		r := httptest.NewRequest(http.MethodGet, "/intelligence/api/knowledge-models", nil)
		r.Header.Set("Authorization", "AppKey "+full.devKey)
		return r
	}())
	if !strings.Contains(out.String(), `"principal":"development"`) {
		t.Errorf("no principal: %s", out.String())
	}

	// At level warn, requests that went well are not logged.
	out.Reset()
	quiet := slog.New(slog.NewJSONHandler(&out, &slog.HandlerOptions{Level: slog.LevelWarn}))
	logRequests(quiet, route, failing).ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(http.MethodGet, "/healthz", nil))
	if out.Len() != 0 {
		t.Errorf("logged at warn: %s", out.String())
	}
}
