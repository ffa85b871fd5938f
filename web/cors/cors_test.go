package cors

import (
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
)

func TestParseOrigins(t *testing.T) {
	tests := []struct {
		in   string
		want []string
		err  string
	}{
		{in: "", want: nil},
		{in: " , ", want: nil},
		{in: "*", want: []string{"*"}},
		{in: "https://a.example, http://localhost:3000", want: []string{"https://a.example", "http://localhost:3000"}},
		{in: "https://*.example.com", want: []string{"https://*.example.com"}},
		{in: "https://a.example/", err: "cors: origin https://a.example/ is not scheme://host[:port] (no path, not even a trailing /)"},
		{in: "a.example", err: "cors: origin a.example is not scheme://host[:port] (no path, not even a trailing /)"},
		{in: "https://a.example?x", err: "cors: origin https://a.example?x is not scheme://host[:port] (no path, not even a trailing /)"},
		{in: "https://*.*.example", err: "cors: origin https://*.*.example has more than one *"},
	}
	for _, tt := range tests {
		got, err := ParseOrigins(tt.in)
		if tt.err != "" {
			if err == nil || err.Error() != tt.err {
				t.Errorf("ParseOrigins(%q): error %v, want %q", tt.in, err, tt.err)
			}
			continue
		}
		if err != nil || !slices.Equal(got, tt.want) {
			t.Errorf("ParseOrigins(%q) = %q, %v; want %q", tt.in, got, err, tt.want)
		}
	}
}

func FuzzParseOrigins(f *testing.F) {
	for _, s := range []string{"", "*", "https://a.example,http://b:1", "https://*.x.y", "https://a/", "x", "https://a?#"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		origins, err := ParseOrigins(s)
		if err != nil {
			return
		}
		for _, o := range origins {
			if o == "" || strings.Contains(o, ",") || strings.TrimSpace(o) != o {
				t.Fatalf("ParseOrigins(%q) gave origin %q", s, o)
			}
		}
		// An accepted list builds a working handler.
		h := Handler(origins, http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {}))
		r := httptest.NewRequest(http.MethodOptions, "/", nil)
		r.Header.Set("Origin", "https://a.example")
		r.Header.Set("Access-Control-Request-Method", "GET")
		h.ServeHTTP(httptest.NewRecorder(), r)
	})
}

func TestHandlerWithoutOriginsIsNext(t *testing.T) {
	next := http.NotFoundHandler()
	if h := Handler(nil, next); h == nil {
		t.Fatal("nil handler")
	}
	w := httptest.NewRecorder()
	r := httptest.NewRequest(http.MethodGet, "/", nil)
	r.Header.Set("Origin", "https://a.example")
	Handler(nil, next).ServeHTTP(w, r)
	if w.Code != 404 || w.Header().Get("Vary") != "" || w.Header().Get("Access-Control-Allow-Origin") != "" {
		t.Errorf("%d %v", w.Code, w.Header())
	}
}

func TestAnyOrigin(t *testing.T) {
	h := Handler([]string{"*"}, http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {}))
	w := httptest.NewRecorder()
	r := httptest.NewRequest(http.MethodGet, "/", nil)
	r.Header.Set("Origin", "https://anything.example")
	h.ServeHTTP(w, r)
	if w.Header().Get("Access-Control-Allow-Origin") != "*" || !slices.Contains(w.Header().Values("Vary"), "Origin") {
		t.Errorf("%v", w.Header())
	}
}
