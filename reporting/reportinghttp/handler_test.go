package reportinghttp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/kmkit/kmkit/principal"
	"github.com/kmkit/kmkit/problem"
	"github.com/kmkit/kmkit/reporting"
)

// sliceStore is a Store over fixed, already ordered element lists, with an optional error.
type sliceStore struct {
	tenants map[string][]reporting.Element
	err     error
}

func (s *sliceStore) Elements(_ context.Context, tenant string, q reporting.ElementQuery) ([]reporting.Element, int, error) {
	if s.err != nil {
		return nil, 0, s.err
	}
	var matches []reporting.Element
	for _, e := range s.tenants[tenant] {
		if q.FacetName == "" || e.FacetName == q.FacetName {
			matches = append(matches, e)
		}
	}
	return window(matches, q.Skip, q.Take), len(matches), nil
}

func (s *sliceStore) Facets(_ context.Context, tenant string, skip, take int) ([]reporting.Facet, int, error) {
	if s.err != nil {
		return nil, 0, s.err
	}
	var facets []reporting.Facet
	for _, e := range s.tenants[tenant] {
		if !slices.Contains(facets, reporting.Facet{Name: e.FacetName}) {
			facets = append(facets, reporting.Facet{Name: e.FacetName})
		}
	}
	return window(facets, skip, take), len(facets), nil
}

func window[T any](s []T, skip, take int) []T {
	start := min(skip, len(s))
	return s[start:min(start+take, len(s))]
}

func element(facet string, ordering int, n int) reporting.Element {
	return reporting.Element{
		Identity:   reporting.Identity{FacetName: facet, Ordering: ordering, ID: fmt.Sprintf("00000000-0000-4000-8000-%012d", n)},
		Attributes: reporting.Attributes{"name": {"en": fmt.Sprintf("%s %d", facet, ordering), "de": fmt.Sprintf("%s %d (de)", facet, ordering)}},
	}
}

var (
	itSystem  = element("IT Systems", 0, 1)
	planBuild = element("Plan;Build", 0, 2)
	proc0     = element("Processes", 0, 3)
	proc1     = element("Processes", 1, 4)
	proc2     = element("Processes", 2, 5)
	role0     = element("Roles", 0, 6)
	role1     = element("Roles", 1, 7)
	docB      = element("Documents", 0, 8)

	elementsA = []reporting.Element{itSystem, planBuild, proc0, proc1, proc2, role0, role1}
	facetsA   = []reporting.Facet{{Name: "IT Systems"}, {Name: "Plan;Build"}, {Name: "Processes"}, {Name: "Roles"}}

	principalA = &principal.Principal{Name: "key-a", Tenant: tenantA, Permissions: []principal.Permission{principal.PermReporting}}
	principalB = &principal.Principal{Name: "key-b", Tenant: tenantB, Permissions: []principal.Permission{principal.PermReporting, principal.PermKM}}
)

func testStore() *sliceStore {
	return &sliceStore{tenants: map[string][]reporting.Element{tenantA: elementsA, tenantB: {docB}}}
}

type request struct {
	method    string
	target    string
	tenant    []string // x-tenant-id header values
	principal *principal.Principal
}

func serve(h http.Handler, r request) *httptest.ResponseRecorder {
	method := r.method
	if method == "" {
		method = http.MethodGet
	}
	req := httptest.NewRequest(method, r.target, nil)
	for _, v := range r.tenant {
		req.Header.Add(TenantHeader, v)
	}
	if r.principal != nil {
		req = req.WithContext(principal.NewContext(req.Context(), r.principal))
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec
}

func bad(code, detail string) *problem.Problem {
	return problem.New(http.StatusBadRequest, code, detail)
}

func TestHandler(t *testing.T) {
	a := func(target string) request {
		return request{target: target, tenant: []string{tenantA}, principal: principalA}
	}
	elements := func(skip, take, total int, page ...reporting.Element) reporting.List[reporting.Element] {
		return reporting.List[reporting.Element]{Items: [][]reporting.Element{append([]reporting.Element{}, page...)}, Skip: skip, Take: take, TotalCount: total}
	}
	facets := func(skip, take, total int, page ...reporting.Facet) reporting.List[reporting.Facet] {
		return reporting.List[reporting.Facet]{Items: [][]reporting.Facet{append([]reporting.Facet{}, page...)}, Skip: skip, Take: take, TotalCount: total}
	}
	tests := []struct {
		name    string
		req     request
		want    any // List[Element], List[Facet] or *problem.Problem
		opts    []Option
		wantHdr map[string]string
	}{
		// Elements: defaults, facets, paging.
		{name: "all elements", req: a("/api/v1/elements"), want: elements(0, 100, 7, elementsA...)},
		{name: "one facet", req: a("/api/v1/elements?FacetName=Processes"), want: elements(0, 100, 3, proc0, proc1, proc2)},
		{name: "names in any case", req: a("/api/v1/elements?FACETNAME=Roles&skip=1&tAkE=1"), want: elements(1, 1, 2, role1)},
		{name: "facet value is case-sensitive", req: a("/api/v1/elements?FacetName=processes"), want: elements(0, 100, 0)},
		{name: "unknown facet", req: a("/api/v1/elements?FacetName=Nope"), want: elements(0, 100, 0)},
		{name: "plus is a space", req: a("/api/v1/elements?FacetName=IT+Systems"), want: elements(0, 100, 1, itSystem)},
		{name: "escaped space", req: a("/api/v1/elements?FacetName=IT%20Systems"), want: elements(0, 100, 1, itSystem)},
		{name: "semicolon kept", req: a("/api/v1/elements?FacetName=Plan;Build"), want: elements(0, 100, 1, planBuild)},
		{name: "page in the middle", req: a("/api/v1/elements?Skip=2&Take=3"), want: elements(2, 3, 7, proc0, proc1, proc2)},
		{name: "last partial page", req: a("/api/v1/elements?Skip=5&Take=3"), want: elements(5, 3, 7, role0, role1)},
		{name: "skip past the end", req: a("/api/v1/elements?Skip=10"), want: elements(10, 100, 7)},
		{name: "huge skip", req: a("/api/v1/elements?Skip=9223372036854775807"), want: elements(9223372036854775807, 100, 7)},
		{name: "take zero counts", req: a("/api/v1/elements?Take=0&FacetName=Roles"), want: elements(0, 0, 2)},
		{name: "take at the maximum", req: a("/api/v1/elements?Take=100"), want: elements(0, 100, 7, elementsA...)},
		{name: "empty values are absent", req: a("/api/v1/elements?Skip=&Take=&FacetName="), want: elements(0, 100, 7, elementsA...)},
		{name: "unknown parameters ignored", req: a("/api/v1/elements?foo=bar&FacetName=Roles&&x"), want: elements(0, 100, 2, role0, role1)},
		{name: "plus sign", req: a("/api/v1/elements?Skip=%2B6"), want: elements(6, 100, 7, role1)},

		// Elements: bad parameters.
		{name: "take above the maximum", req: a("/api/v1/elements?Take=101"),
			want: bad(problem.CodeConstraint, "query parameter Take must be between 0 and 100, got 101")},
		{name: "negative take", req: a("/api/v1/elements?Take=-1"),
			want: bad(problem.CodeConstraint, "query parameter Take must be between 0 and 100, got -1")},
		{name: "overflowing take", req: a("/api/v1/elements?Take=99999999999999999999"),
			want: bad(problem.CodeConstraint, "query parameter Take must be between 0 and 100, got 99999999999999999999")},
		{name: "negative skip", req: a("/api/v1/elements?Skip=-1"),
			want: bad(problem.CodeConstraint, "query parameter Skip must not be negative, got -1")},
		{name: "overflowing negative skip", req: a("/api/v1/elements?Skip=-99999999999999999999"),
			want: bad(problem.CodeConstraint, "query parameter Skip must not be negative, got -99999999999999999999")},
		{name: "overflowing skip", req: a("/api/v1/elements?Skip=99999999999999999999"),
			want: bad(problem.CodeConstraint, "query parameter Skip must be at most 9223372036854775807, got 99999999999999999999")},
		{name: "skip not a number", req: a("/api/v1/elements?Skip=abc"),
			want: bad(problem.CodeParameterMismatch, `query parameter Skip must be an integer, got "abc"`)},
		{name: "take a decimal", req: a("/api/v1/elements?take=1.5"),
			want: bad(problem.CodeParameterMismatch, `query parameter Take must be an integer, got "1.5"`)},
		{name: "take with a space", req: a("/api/v1/elements?Take=+5"),
			want: bad(problem.CodeParameterMismatch, `query parameter Take must be an integer, got " 5"`)},
		{name: "skip twice", req: a("/api/v1/elements?Skip=1&skip=1"),
			want: bad(problem.CodeParameterIllegal, "query parameter Skip is given more than once")},
		{name: "facet twice", req: a("/api/v1/elements?FacetName=Roles&FacetName=Processes"),
			want: bad(problem.CodeParameterIllegal, "query parameter FacetName is given more than once")},
		{name: "bad escape in value", req: a("/api/v1/elements?Take=%zz"),
			want: bad(problem.CodeParameterIllegal, `query parameter Take: value "%zz" is not properly percent-encoded`)},
		{name: "bad escape in name", req: a("/api/v1/elements?%zz=1"),
			want: bad(problem.CodeParameterIllegal, `query parameter name "%zz" is not properly percent-encoded`)},

		// Facets.
		{name: "facets", req: a("/api/v1/facets"), want: facets(0, 100, 4, facetsA...)},
		{name: "facets paged", req: a("/api/v1/facets?skip=1&take=2"), want: facets(1, 2, 4, facetsA[1:3]...)},
		{name: "facets ignore FacetName", req: a("/api/v1/facets?FacetName=Roles&FacetName=x"), want: facets(0, 100, 4, facetsA...)},
		{name: "facets past the end", req: a("/api/v1/facets?Skip=4"), want: facets(4, 100, 4)},
		{name: "facets take too large", req: a("/api/v1/facets?Take=1000"),
			want: bad(problem.CodeConstraint, "query parameter Take must be between 0 and 100, got 1000")},
		{name: "facets negative skip", req: a("/api/v1/facets?Skip=-5"),
			want: bad(problem.CodeConstraint, "query parameter Skip must not be negative, got -5")},

		// Tenants.
		{name: "tenant B sees only its own", req: request{target: "/api/v1/elements", tenant: []string{tenantB}, principal: principalB},
			want: elements(0, 100, 1, docB)},
		{name: "tenant B facets", req: request{target: "/api/v1/facets", tenant: []string{tenantB}, principal: principalB},
			want: facets(0, 100, 1, reporting.Facet{Name: "Documents"})},
		{name: "tenant id in upper case", req: request{target: "/api/v1/facets?Take=1", tenant: []string{strings.ToUpper(tenantA)}, principal: principalA},
			want: facets(0, 1, 4, facetsA[0])},
		{name: "tenant id with spaces around", req: request{target: "/api/v1/facets?Take=1", tenant: []string{" " + tenantA + "\t"}, principal: principalA},
			want: facets(0, 1, 4, facetsA[0])},
		{name: "tenant header repeated alike", req: request{target: "/api/v1/facets?Take=1", tenant: []string{tenantA, tenantA}, principal: principalA},
			want: bad(problem.CodeParameterIllegal, "send one x-tenant-id header")},
		{name: "another tenant's id", req: request{target: "/api/v1/elements", tenant: []string{tenantB}, principal: principalA},
			want: problem.New(http.StatusForbidden, problem.CodeAccess, "the credentials do not belong to tenant "+tenantB)},
		{name: "malformed tenant id", req: request{target: "/api/v1/elements", tenant: []string{"acme"}, principal: principalA},
			want: bad(problem.CodeParameterIllegal, `x-tenant-id "acme" is not a UUID (xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx)`)},
		{name: "tenant id in braces", req: request{target: "/api/v1/elements", tenant: []string{"{" + tenantA + "}"}, principal: principalA},
			want: bad(problem.CodeParameterIllegal, `x-tenant-id "{`+tenantA+`}" is not a UUID (xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx)`)},
		{name: "missing tenant id", req: request{target: "/api/v1/elements", principal: principalA},
			want: bad(problem.CodeParameterMissing, "missing x-tenant-id header")},
		{name: "empty tenant id", req: request{target: "/api/v1/elements", tenant: []string{""}, principal: principalA},
			want: bad(problem.CodeParameterMissing, "empty x-tenant-id header")},
		{name: "two tenant ids", req: request{target: "/api/v1/elements", tenant: []string{tenantA, tenantB}, principal: principalA},
			want: bad(problem.CodeParameterIllegal, "send one x-tenant-id header")},
		{name: "no reporting permission", req: request{target: "/api/v1/elements", tenant: []string{tenantA},
			principal: &principal.Principal{Name: "km-only", Tenant: tenantA, Permissions: []principal.Permission{principal.PermKM}}},
			want: problem.New(http.StatusForbidden, problem.CodeAccess, "the credentials lack the reporting permission")},
		{name: "principal without tenant", req: request{target: "/api/v1/elements", tenant: []string{tenantA},
			principal: &principal.Principal{Name: "no-tenant", Permissions: []principal.Permission{principal.PermReporting}}},
			want: problem.New(http.StatusForbidden, problem.CodeAccess, "the credentials are not bound to a reporting tenant")},
		{name: "tenant is checked before parameters", req: request{target: "/api/v1/elements?Take=-1", tenant: []string{tenantB}, principal: principalA},
			want: problem.New(http.StatusForbidden, problem.CodeAccess, "the credentials do not belong to tenant "+tenantB)},

		// Paths and methods.
		{name: "unknown path", req: a("/api/v1/element"),
			want: problem.New(http.StatusNotFound, problem.CodeNotFoundPath, "no endpoint at /api/v1/element")},
		{name: "trailing slash", req: a("/api/v1/facets/"),
			want: problem.New(http.StatusNotFound, problem.CodeNotFoundPath, "no endpoint at /api/v1/facets/")},
		{name: "POST", req: request{method: http.MethodPost, target: "/api/v1/elements", tenant: []string{tenantA}, principal: principalA},
			want:    problem.New(http.StatusMethodNotAllowed, problem.CodeMethodNotAllowed, "method POST is not allowed on /api/v1/elements; allowed: GET, HEAD"),
			wantHdr: map[string]string{"Allow": "GET, HEAD"}},
		{name: "DELETE facets", req: request{method: http.MethodDelete, target: "/api/v1/facets"},
			want:    problem.New(http.StatusMethodNotAllowed, problem.CodeMethodNotAllowed, "method DELETE is not allowed on /api/v1/facets; allowed: GET, HEAD"),
			wantHdr: map[string]string{"Allow": "GET, HEAD"}},

		// Options.
		{name: "paging option default", opts: []Option{WithPaging(2, 5)}, req: a("/api/v1/elements"), want: elements(0, 2, 7, itSystem, planBuild)},
		{name: "paging option maximum", opts: []Option{WithPaging(2, 5)}, req: a("/api/v1/facets?Take=6"),
			want: bad(problem.CodeConstraint, "query parameter Take must be between 0 and 5, got 6")},
		{name: "custom tenant", opts: []Option{WithTenant(func(*http.Request) (string, error) { return tenantB, nil })},
			req: request{target: "/api/v1/facets"}, want: facets(0, 100, 1, reporting.Facet{Name: "Documents"})},
		{name: "custom tenant problem", opts: []Option{WithTenant(func(*http.Request) (string, error) {
			return "", fmt.Errorf("lookup: %w", problem.New(http.StatusTooManyRequests, problem.CodeRateExceeded, "slow down"))
		})}, req: request{target: "/api/v1/facets"}, want: problem.New(http.StatusTooManyRequests, problem.CodeRateExceeded, "slow down")},
		{name: "custom tenant empty", opts: []Option{WithTenant(func(*http.Request) (string, error) { return "", nil })},
			req: request{target: "/api/v1/facets"}, want: problem.New(http.StatusForbidden, problem.CodeAccess, "the request has no reporting tenant")},
		{name: "custom tenant plain error", opts: []Option{WithTenant(func(*http.Request) (string, error) { return "", errors.New("tenant suspended") })},
			req: request{target: "/api/v1/facets"}, want: problem.New(http.StatusForbidden, problem.CodeAccess, "tenant suspended")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := serve(NewHandler(testStore(), tt.opts...), tt.req)
			var got any
			wantStatus, wantType := http.StatusOK, "application/json; charset=utf-8"
			switch want := tt.want.(type) {
			case reporting.List[reporting.Element]:
				got = decode[reporting.List[reporting.Element]](t, rec)
			case reporting.List[reporting.Facet]:
				got = decode[reporting.List[reporting.Facet]](t, rec)
			case *problem.Problem:
				got = decode[*problem.Problem](t, rec)
				wantStatus, wantType = want.Status, problem.ContentType
			}
			if rec.Code != wantStatus {
				t.Errorf("status = %d, want %d; body %s", rec.Code, wantStatus, rec.Body)
			}
			if ct := rec.Header().Get("Content-Type"); ct != wantType {
				t.Errorf("Content-Type = %q, want %q", ct, wantType)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("body (-want +got):\n%s", diff)
			}
			for k, v := range tt.wantHdr {
				if got := rec.Header().Get(k); got != v {
					t.Errorf("header %s = %q, want %q", k, got, v)
				}
			}
		})
	}
}

func decode[T any](t *testing.T, rec *httptest.ResponseRecorder) T {
	t.Helper()
	var v T
	dec := json.NewDecoder(rec.Body)
	dec.DisallowUnknownFields()
	if err := dec.Decode(&v); err != nil {
		t.Fatalf("decoding %T: %v", v, err)
	}
	return v
}

// TestHandlerBodyShape pins the exact bytes of a list, including the inner array that
// holds the page even when it is empty.
func TestHandlerBodyShape(t *testing.T) {
	tests := []struct{ target, want string }{
		{"/api/v1/facets?Take=2", `{"items":[[{"name":"IT Systems"},{"name":"Plan;Build"}]],"skip":0,"take":2,"totalCount":4}`},
		{"/api/v1/facets?Skip=9", `{"items":[[]],"skip":9,"take":100,"totalCount":4}`},
		{"/api/v1/elements?FacetName=none", `{"items":[[]],"skip":0,"take":100,"totalCount":0}`},
	}
	for _, tt := range tests {
		rec := serve(NewHandler(testStore()), request{target: tt.target, tenant: []string{tenantA}, principal: principalA})
		if diff := cmp.Diff(tt.want, rec.Body.String()); diff != "" {
			t.Errorf("%s (-want +got):\n%s", tt.target, diff)
		}
		if got, want := rec.Header().Get("Content-Length"), fmt.Sprint(len(tt.want)); got != want {
			t.Errorf("%s: Content-Length = %s, want %s", tt.target, got, want)
		}
		if got := rec.Header().Get("Cache-Control"); got != "no-store" {
			t.Errorf("%s: Cache-Control = %q, want no-store", tt.target, got)
		}
	}
}

func TestHandlerUnauthenticated(t *testing.T) {
	unauthenticated := func(detail string) *problem.Problem {
		return problem.New(http.StatusUnauthorized, problem.CodeUnauthenticated, detail)
	}
	tests := []struct {
		name string
		h    http.Handler
		req  request
		want *problem.Problem
	}{
		{"elements", NewHandler(testStore()), request{target: "/api/v1/elements", tenant: []string{tenantA}},
			unauthenticated("no authenticated principal")},
		{"before parameters", NewHandler(testStore()), request{target: "/api/v1/facets?Take=-1", tenant: []string{tenantA}},
			unauthenticated("no authenticated principal")},
		{"before the tenant header", NewHandler(testStore()), request{target: "/api/v1/facets"},
			unauthenticated("no authenticated principal")},
		{"wrapped by a TenantFunc", NewHandler(testStore(), WithTenant(func(*http.Request) (string, error) {
			return "", fmt.Errorf("token expired: %w", ErrUnauthenticated)
		})), request{target: "/api/v1/facets"}, unauthenticated("token expired: no authenticated principal")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := serve(tt.h, tt.req)
			if rec.Code != http.StatusUnauthorized {
				t.Errorf("status = %d, want 401", rec.Code)
			}
			if diff := cmp.Diff(tt.want, decode[*problem.Problem](t, rec)); diff != "" {
				t.Errorf("body (-want +got):\n%s", diff)
			}
			if got := rec.Header().Get("WWW-Authenticate"); got == "" {
				t.Error("no WWW-Authenticate header")
			}
		})
	}
}

func TestHandlerStoreFailure(t *testing.T) {
	for _, target := range []string{"/api/v1/elements", "/api/v1/facets"} {
		var logs bytes.Buffer
		store := &sliceStore{err: errors.New("disk on fire")}
		h := NewHandler(store, WithLogger(slog.New(slog.NewJSONHandler(&logs, nil))))
		rec := serve(h, request{target: target, tenant: []string{tenantA}, principal: principalA})
		p := decode[*problem.Problem](t, rec)
		id, ok := strings.CutPrefix(p.Detail, "internal error; support id ")
		if rec.Code != http.StatusInternalServerError || p.ErrorCode != problem.CodeFatal || !ok || !isUUID(id) {
			t.Fatalf("%s: %d %+v, want a 500 ADMIN_FATAL_ERROR with a support id", target, rec.Code, p)
		}
		var entry map[string]any
		if err := json.Unmarshal(logs.Bytes(), &entry); err != nil {
			t.Fatalf("log %q: %v", logs.String(), err)
		}
		if entry["supportId"] != id || entry["err"] != "disk on fire" || entry["level"] != "ERROR" || entry["path"] != target {
			t.Errorf("log entry = %v, want the support id %s, path and cause", entry, id)
		}
	}
}

// TestHandlerClientGone checks that a store error caused by the client going away is
// answered as every API answers it (routing.API.Fail: 503, nobody reads it) and not
// logged at the info level.
func TestHandlerClientGone(t *testing.T) {
	var logs bytes.Buffer
	store := &sliceStore{err: fmt.Errorf("query: %w", context.Canceled)}
	h := NewHandler(store, WithLogger(slog.New(slog.NewTextHandler(&logs, nil))))
	ctx, cancel := context.WithCancel(principal.NewContext(context.Background(), principalA))
	cancel()
	req := httptest.NewRequestWithContext(ctx, http.MethodGet, "/api/v1/elements", nil)
	req.Header.Set(TenantHeader, tenantA)
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	p := decode[*problem.Problem](t, rec)
	if logs.Len() != 0 || rec.Code != http.StatusServiceUnavailable || p.ErrorCode != problem.CodeUnavailable ||
		p.Detail != "the request was canceled: the client went away" {
		t.Errorf("logged %q and answered %d %+v; want no log line and 503 GENERAL_SERVICE_UNAVAILABLE", logs.String(), rec.Code, p)
	}
}

func TestWithPagingPanics(t *testing.T) {
	for _, c := range [][2]int{{-1, 5}, {6, 5}} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("WithPaging(%d, %d) did not panic", c[0], c[1])
				}
			}()
			WithPaging(c[0], c[1])
		}()
	}
}

// TestHandlerOverHTTP serves a real connection: HEAD gets GET's headers without a body.
func TestHandlerOverHTTP(t *testing.T) {
	h := NewHandler(testStore())
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.ServeHTTP(w, r.WithContext(principal.NewContext(r.Context(), principalA)))
	}))
	defer srv.Close()
	lengths := map[string]string{}
	for _, method := range []string{http.MethodGet, http.MethodHead} {
		req, err := http.NewRequest(method, srv.URL+"/api/v1/facets?take=2", nil)
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("x-tenant-id", tenantA)
		resp, err := srv.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil {
			t.Fatal(err)
		}
		want := `{"items":[[{"name":"IT Systems"},{"name":"Plan;Build"}]],"skip":0,"take":2,"totalCount":4}`
		if method == http.MethodHead {
			want = ""
		}
		if resp.StatusCode != http.StatusOK || string(body) != want {
			t.Errorf("%s: %d %q, want 200 %q", method, resp.StatusCode, body, want)
		}
		lengths[method] = resp.Header.Get("Content-Length")
	}
	if lengths[http.MethodGet] != "90" || lengths[http.MethodHead] != "90" {
		t.Errorf("Content-Length of GET and HEAD = %v, want 90 for both", lengths)
	}
}

// TestHead checks that HEAD is answered as GET: the same status and headers, no body.
func TestHead(t *testing.T) {
	h := NewHandler(testStore())
	get := serve(h, request{target: "/api/v1/elements?Take=1", tenant: []string{tenantA}, principal: principalA})
	head := serve(h, request{method: http.MethodHead, target: "/api/v1/elements?Take=1", tenant: []string{tenantA}, principal: principalA})
	if get.Code != http.StatusOK || get.Body.Len() == 0 {
		t.Fatalf("GET: %d, %d bytes", get.Code, get.Body.Len())
	}
	if head.Code != get.Code || head.Body.Len() != 0 {
		t.Errorf("HEAD: %d with %d bytes, want %d and no body", head.Code, head.Body.Len(), get.Code)
	}
	for _, k := range []string{"Content-Type", "Content-Length", "Cache-Control"} {
		if head.Header().Get(k) != get.Header().Get(k) {
			t.Errorf("HEAD %s = %q, GET's %q", k, head.Header().Get(k), get.Header().Get(k))
		}
	}
}
