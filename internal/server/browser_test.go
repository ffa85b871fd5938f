package server

import (
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
)

// devTenant is the reporting tenant of the development key: the smallest tenant id of the
// embedded demo.
const devTenant = "7d6c8f5e-2a4b-4c1d-9e3f-0a1b2c3d4e5f"

// request sends method target through h with the development key in the header each API
// reads, plus extra headers.
func request(h http.Handler, method, target, key string, extra map[string]string) *httptest.ResponseRecorder {
	r := httptest.NewRequest(method, target, nil)
	if key != "" {
		if strings.HasPrefix(target, "/api/v1/") {
			r.Header.Set("x-api-key", key)
			r.Header.Set("x-tenant-id", devTenant)
		} else {
			r.Header.Set("Authorization", "AppKey "+key)
		}
	}
	for k, v := range extra {
		r.Header.Set(k, v)
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	return w
}

// getRoutes are GET routes of every API (and the server's own), with the status of their GET.
var getRoutes = []struct {
	api, target string
	status      int
}{
	{"km", "/intelligence/api/knowledge-models", 200},
	{"km", "/intelligence/api/knowledge-models/o2c/records/ORDERS/data?fields=ORDER_ID&pageSize=2", 200},
	{"km", "/intelligence/api/knowledge-models/o2c/records/ORDERS/summary", 200},
	{"km", "/intelligence/api/knowledge-models/o2c/spec", 200},
	{"km", "/intelligence/api/knowledge-models/nope", 404},
	{"km", "/intelligence/api/knowledge-models/o2c/records/ORDERS/data?fields=NOPE", 400},
	{"odata", "/intelligence/api/odata/o2c.svc/", 200},
	{"odata", "/intelligence/api/odata/o2c.svc/$metadata", 200},
	{"odata", "/intelligence/api/odata/o2c.svc/ORDERS_entries?$top=2", 200},
	{"odata", "/intelligence/api/odata/o2c.svc/ORDERS_entries/$count", 200},
	{"scim", "/user-provisioning/scim/v2/Users", 200},
	{"scim", "/user-provisioning/scim/v2/Groups", 200},
	{"scim", "/user-provisioning/scim/v2/ServiceProviderConfig", 200},
	{"scim", "/user-provisioning/scim/v2/Schemas", 200},
	{"scim", "/user-provisioning/scim/v2/Users/missing", 404},
	{"reporting", "/api/v1/elements", 200},
	{"reporting", "/api/v1/facets", 200},
	{"server", "/healthz", 200},
	{"server", "/metrics", 200},
}

// TestHEADOnEveryGETRoute checks RFC 9110's rule: HEAD answers as GET would, the same
// status and headers, without a body.
func TestHEADOnEveryGETRoute(t *testing.T) {
	a := newTestApp(t, config{burst: -1, concurrency: -1})
	for _, rt := range getRoutes {
		get := request(a.handler, http.MethodGet, rt.target, a.devKey, nil)
		head := request(a.handler, http.MethodHead, rt.target, a.devKey, nil)
		if get.Code != rt.status {
			t.Errorf("GET %s: %d %s, want %d", rt.target, get.Code, get.Body, rt.status)
		}
		if head.Code != get.Code {
			t.Errorf("HEAD %s: %d, GET %d", rt.target, head.Code, get.Code)
		}
		if head.Body.Len() != 0 {
			t.Errorf("HEAD %s: a body of %d bytes", rt.target, head.Body.Len())
		}
		for _, h := range []string{"Content-Type", "Content-Length", "OData-Version", "X-Ratelimit-Limit", "Cache-Control"} {
			if h == "X-Ratelimit-Limit" && rt.api == "server" && rt.target != "/metrics" {
				continue
			}
			if g, hd := get.Header().Get(h), head.Header().Get(h); g != hd {
				t.Errorf("HEAD %s: %s %q, GET %q", rt.target, h, hd, g)
			}
		}
		if get.Header().Get("Content-Type") == "" {
			t.Errorf("GET %s: no Content-Type", rt.target)
		}
	}
	// Without credentials HEAD is refused as GET is.
	if w := request(a.handler, http.MethodHead, "/intelligence/api/knowledge-models", "", nil); w.Code != 401 || w.Body.Len() != 0 {
		t.Errorf("HEAD without a key: %d, body %q", w.Code, w.Body)
	}
}

// TestAllowListsHEAD checks that 405 answers of GET routes list HEAD, and that a route
// without GET refuses HEAD too.
func TestAllowListsHEAD(t *testing.T) {
	a := newTestApp(t, config{burst: -1, concurrency: -1})
	tests := []struct {
		method, target string
		allow          string
	}{
		{http.MethodPut, "/intelligence/api/knowledge-models", "GET, HEAD"},
		{http.MethodDelete, "/intelligence/api/knowledge-models/o2c/records/ORDERS/data", "GET, POST, HEAD"},
		{http.MethodPost, "/intelligence/api/odata/o2c.svc/ORDERS_entries", "GET, HEAD"},
		{http.MethodPost, "/user-provisioning/scim/v2/ServiceProviderConfig", "GET, HEAD"},
		{http.MethodPost, "/api/v1/elements", "GET, HEAD"},
		{http.MethodHead, "/user-provisioning/scim/v2/Bulk", "POST"},
		{http.MethodHead, "/user-provisioning/scim/v2/Users/.search", "POST"},
	}
	for _, tt := range tests {
		w := request(a.handler, tt.method, tt.target, a.devKey, nil)
		if w.Code != http.StatusMethodNotAllowed || w.Header().Get("Allow") != tt.allow {
			t.Errorf("%s %s: %d, Allow %q; want 405, Allow %q", tt.method, tt.target, w.Code, w.Header().Get("Allow"), tt.allow)
		}
	}
}

// preflight sends a CORS preflight for method with the given Origin and requested headers.
func preflight(h http.Handler, target, origin, method, headers string) *httptest.ResponseRecorder {
	extra := map[string]string{"Origin": origin, "Access-Control-Request-Method": method}
	if headers != "" {
		extra["Access-Control-Request-Headers"] = headers
	}
	return request(h, http.MethodOptions, target, "", extra)
}

// varies reports whether the Vary headers of h name field.
func varies(h http.Header, field string) bool {
	for _, v := range h.Values("Vary") {
		for f := range strings.SplitSeq(v, ",") {
			if strings.EqualFold(strings.TrimSpace(f), field) {
				return true
			}
		}
	}
	return false
}

// TestCORSPreflightOnEveryAPI checks that preflights are answered before authentication
// (no credentials, no 401), for an allowed origin only, with Vary: Origin on every answer.
func TestCORSPreflightOnEveryAPI(t *testing.T) {
	const app = "https://app.example.com"
	a := newTestApp(t, config{burst: -1, concurrency: -1, corsOrigins: []string{app, "https://*.partner.example"}})
	targets := []struct{ target, method, headers string }{
		{"/intelligence/api/knowledge-models/o2c/data", http.MethodPost, "authorization, content-type"},
		{"/intelligence/api/odata/o2c.svc/ORDERS_entries", http.MethodGet, "authorization, odata-maxversion"},
		{"/user-provisioning/scim/v2/Users/123", http.MethodPatch, "authorization, content-type, if-match"},
		{"/api/v1/elements", http.MethodGet, "x-api-key, x-tenant-id"},
		{"/metrics", http.MethodGet, "authorization"},
	}
	for _, tt := range targets {
		for _, origin := range []string{app, "https://eu.partner.example"} {
			w := preflight(a.handler, tt.target, origin, tt.method, tt.headers)
			h := w.Header()
			if w.Code != http.StatusNoContent || h.Get("Access-Control-Allow-Origin") != origin ||
				h.Get("Access-Control-Allow-Methods") != tt.method || !strings.EqualFold(h.Get("Access-Control-Allow-Headers"), tt.headers) ||
				h.Get("Access-Control-Max-Age") != "600" || !varies(h, "Origin") || w.Body.Len() != 0 {
				t.Errorf("preflight %s from %s: %d %v %q", tt.target, origin, w.Code, h, w.Body)
			}
			if h.Get("Access-Control-Allow-Credentials") != "" {
				t.Errorf("preflight %s: credentials allowed: keys travel in headers, not cookies", tt.target)
			}
		}
		// Another origin, a method or a header not allowed: no permission, still Vary.
		for _, bad := range []struct{ origin, method, headers string }{
			{"https://evil.example", tt.method, tt.headers},
			{app, "TRACE", ""},
			{app, tt.method, "x-evil"},
		} {
			w := preflight(a.handler, tt.target, bad.origin, bad.method, bad.headers)
			if w.Code != http.StatusNoContent || w.Header().Get("Access-Control-Allow-Origin") != "" || !varies(w.Header(), "Origin") {
				t.Errorf("preflight %s %+v: %d %v", tt.target, bad, w.Code, w.Header())
			}
		}
	}
}

// TestCORSActualRequests checks the headers of cross-origin requests: the origin echoed
// and the rate limit headers exposed for an allowed origin, nothing for another, and
// Vary: Origin on both; refusals (401) carry them too, so the browser app can read them.
func TestCORSActualRequests(t *testing.T) {
	const app = "https://app.example.com"
	a := newTestApp(t, config{burst: -1, concurrency: -1, corsOrigins: []string{app}})
	for _, rt := range getRoutes {
		if rt.api == "server" {
			continue
		}
		w := request(a.handler, http.MethodGet, rt.target, a.devKey, map[string]string{"Origin": app})
		h := w.Header()
		exposed := strings.Split(h.Get("Access-Control-Expose-Headers"), ", ")
		if w.Code != rt.status || h.Get("Access-Control-Allow-Origin") != app || !varies(h, "Origin") ||
			!slices.Contains(exposed, "X-Ratelimit-Remaining") || !slices.Contains(exposed, "Retry-After") {
			t.Errorf("GET %s from %s: %d %v", rt.target, app, w.Code, h)
		}
		w = request(a.handler, http.MethodGet, rt.target, a.devKey, map[string]string{"Origin": "https://evil.example"})
		if w.Code != rt.status || w.Header().Get("Access-Control-Allow-Origin") != "" || !varies(w.Header(), "Origin") {
			t.Errorf("GET %s from another origin: %d %v", rt.target, w.Code, w.Header())
		}
	}
	w := request(a.handler, http.MethodGet, "/intelligence/api/knowledge-models", "", map[string]string{"Origin": app})
	if w.Code != 401 || w.Header().Get("Access-Control-Allow-Origin") != app {
		t.Errorf("401 from %s: %v", app, w.Header())
	}
	// The spec endpoint varies on Accept as well: both stay.
	w = request(a.handler, http.MethodGet, "/intelligence/api/knowledge-models/o2c/spec", a.devKey, map[string]string{"Origin": app})
	if !varies(w.Header(), "Origin") || !varies(w.Header(), "Accept") {
		t.Errorf("spec: Vary %q, want Origin and Accept", w.Header().Values("Vary"))
	}
}

// TestNoCORSByDefault checks that without -cors-origins no CORS header is sent and a
// preflight is not answered for the API (it reaches the guard, which wants credentials).
func TestNoCORSByDefault(t *testing.T) {
	a := newTestApp(t, config{burst: -1, concurrency: -1})
	w := preflight(a.handler, "/intelligence/api/knowledge-models", "https://app.example.com", http.MethodGet, "authorization")
	if w.Code != http.StatusUnauthorized || w.Header().Get("Access-Control-Allow-Origin") != "" {
		t.Errorf("preflight without CORS: %d %v", w.Code, w.Header())
	}
	w = request(a.handler, http.MethodGet, "/intelligence/api/knowledge-models", a.devKey, map[string]string{"Origin": "https://app.example.com"})
	if w.Header().Get("Access-Control-Allow-Origin") != "" {
		t.Errorf("GET without CORS: %v", w.Header())
	}
}
