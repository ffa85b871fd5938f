package mcp_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/kmkit/kmkit/mcp"
	"github.com/kmkit/kmkit/web/publicurl"
)

// originServer returns the handler behind a publicurl.Resolver with base as its public URL.
func originServer(t testing.TB, base string, allowed ...string) http.Handler {
	res, err := publicurl.New(base, nil)
	if err != nil {
		t.Fatal(err)
	}
	return res.Wrap(mcp.NewHandler(loadStore(t), mcp.WithAllowedOrigins(allowed...)))
}

func TestCheckOrigin(t *testing.T) {
	h := originServer(t, "https://kmkit.example.com/prefix", "https://agent.example", "https://*.tools.example")
	for _, c := range []struct {
		origins []string
		status  int
	}{
		{nil, 200},
		{[]string{"https://kmkit.example.com"}, 200},
		{[]string{"https://KMKIT.example.com:443"}, 200},
		{[]string{"https://agent.example"}, 200},
		{[]string{"https://a.tools.example"}, 200},
		{[]string{"http://kmkit.example.com"}, 403},
		{[]string{"https://kmkit.example.com:8443"}, 403},
		{[]string{"https://kmkit.example.com/prefix"}, 403},
		{[]string{"https://tools.example"}, 403},
		{[]string{"https://agent.example.evil"}, 403},
		{[]string{"null"}, 403},
		{[]string{""}, 403},
		{[]string{"https://agent.example", "https://agent.example"}, 403},
	} {
		r := httptest.NewRequest(http.MethodPost, mcp.BasePath, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"ping"}`))
		r.Header.Set("Content-Type", "application/json")
		r.Header.Set("Accept", "application/json, text/event-stream")
		for _, o := range c.origins {
			r.Header.Add("Origin", o)
		}
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		if w.Code != c.status {
			t.Errorf("Origin %q: %d %s, want %d", c.origins, w.Code, w.Body, c.status)
		}
	}
}

// FuzzCheckOrigin: no Origin header is read into a panic, and with no allowed origins
// only the server's own passes.
func FuzzCheckOrigin(f *testing.F) {
	for _, s := range []string{"", "null", "https://kmkit.example.com", "https://kmkit.example.com:443", "http://[::1]:80", "https://%zz", "https://a@b", "*"} {
		f.Add(s)
	}
	h := originServer(f, "https://kmkit.example.com")
	f.Fuzz(func(t *testing.T, origin string) {
		r := httptest.NewRequest(http.MethodPost, mcp.BasePath, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"ping"}`))
		r.Header.Set("Content-Type", "application/json")
		r.Header.Set("Accept", "application/json, text/event-stream")
		r.Header.Set("Origin", origin)
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		lower := strings.ToLower(strings.TrimSpace(origin))
		if w.Code == 200 && lower != "https://kmkit.example.com" && lower != "https://kmkit.example.com:443" {
			t.Fatalf("Origin %q passed", origin)
		}
	})
}
