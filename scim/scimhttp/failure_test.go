package scimhttp_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/kmkit/kmkit/scim"
	"github.com/kmkit/kmkit/scim/scimhttp"
	"github.com/kmkit/kmkit/storage/memory"
)

// brokenStore fails to list users: with an error, or with a panic.
type brokenStore struct {
	*memory.SCIMStore
	panics bool
}

func (s brokenStore) ListUsers(ctx context.Context, team string, q scim.ListQuery) ([]scim.User, int, error) {
	if s.panics {
		panic("index out of range")
	}
	return nil, 0, errors.New("disk on fire")
}

// TestInternalErrors checks that a store failure and a panic are 500 SCIM Error bodies
// naming a support id, logged at level error with the cause, as the other APIs' 500s.
func TestInternalErrors(t *testing.T) {
	for _, tt := range []struct {
		name   string
		panics bool
		cause  string
	}{
		{"store error", false, "disk on fire"},
		{"panic", true, "index out of range"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var logs bytes.Buffer
			h := withTeamHeader(scimhttp.NewHandler(brokenStore{memory.New().SCIM(), tt.panics},
				scimhttp.WithLogger(slog.New(slog.NewJSONHandler(&logs, nil)))))
			r := httptest.NewRequest(http.MethodGet, base+"/Users", nil)
			r.Header.Set("X-Test-Team", "acme")
			w := httptest.NewRecorder()
			h.ServeHTTP(w, r)
			var body struct {
				Schemas []string
				Status  string
				Detail  string
			}
			if err := json.Unmarshal(w.Body.Bytes(), &body); err != nil || w.Code != 500 || body.Status != "500" ||
				len(body.Schemas) != 1 || body.Schemas[0] != errURN || w.Header().Get("Content-Type") != scimhttp.ContentType {
				t.Fatalf("%d %q %s; want a 500 SCIM Error body", w.Code, w.Header().Get("Content-Type"), w.Body)
			}
			id, ok := strings.CutPrefix(body.Detail, "internal error; support id ")
			if !ok || len(id) != 36 {
				t.Fatalf("detail %q, want a support id", body.Detail)
			}
			var entry map[string]any
			if err := json.Unmarshal(logs.Bytes(), &entry); err != nil {
				t.Fatalf("log %q: %v", logs.String(), err)
			}
			if entry["level"] != "ERROR" || entry["supportId"] != id || !strings.Contains(entry["err"].(string), tt.cause) {
				t.Errorf("log entry %v, want the support id %s and the cause %q", entry, id, tt.cause)
			}
			if strings.Contains(w.Body.String(), tt.cause) {
				t.Errorf("the cause reached the client: %s", w.Body)
			}
		})
	}
}

// goneStore fails to list users because the request's context ended.
type goneStore struct{ *memory.SCIMStore }

func (s goneStore) ListUsers(ctx context.Context, team string, q scim.ListQuery) ([]scim.User, int, error) {
	return nil, 0, ctx.Err()
}

// TestClientGone checks that a store error caused by the client going away is answered
// as every API answers it (503, nobody reads it) and is not logged as an internal error.
func TestClientGone(t *testing.T) {
	var logs bytes.Buffer
	h := withTeamHeader(scimhttp.NewHandler(goneStore{memory.New().SCIM()},
		scimhttp.WithLogger(slog.New(slog.NewJSONHandler(&logs, nil)))))
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	r := httptest.NewRequestWithContext(ctx, http.MethodGet, base+"/Users", nil)
	r.Header.Set("X-Test-Team", "acme")
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	var body struct {
		Status string
		Detail string
	}
	if err := json.Unmarshal(w.Body.Bytes(), &body); err != nil || w.Code != 503 || body.Status != "503" ||
		body.Detail != "the request was canceled: the client went away" {
		t.Errorf("%d %s; want 503 \"the request was canceled: the client went away\"", w.Code, w.Body)
	}
	if logs.Len() != 0 {
		t.Errorf("logged %s; want nothing at the info level", logs.String())
	}
}
