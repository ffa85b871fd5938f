package reportinghttp

import (
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/kmkit/kmkit/principal"
	"github.com/kmkit/kmkit/problem"
	"github.com/kmkit/kmkit/reporting"
)

// FuzzParseQuery checks that any query string yields either a query within the limits or a
// 400 problem, never a panic.
func FuzzParseQuery(f *testing.F) {
	for _, s := range []string{
		"", "FacetName=Processes", "facetname=a&skip=1&take=2", "Skip=-1", "Take=101", "Take=%zz",
		"%zz=1", "Skip=1&SKIP=2", "Take=1.5", "Skip=99999999999999999999", "FacetName=a;b&x=%20",
		"Take=+5", "Take=%2B5", "&&=&=x", "Skip=-0", "Take=0x10", "Take=1_0", "FacetName=%00",
	} {
		f.Add(s, true)
		f.Add(s, false)
	}
	f.Fuzz(func(t *testing.T, raw string, elements bool) {
		q, err := parseQuery(raw, elements, DefaultTake, MaxTake)
		if err != nil {
			p, ok := errors.AsType[*problem.Problem](err)
			if !ok || p.Status != http.StatusBadRequest || p.Detail == "" {
				t.Fatalf("parseQuery(%q) error %v, want a 400 problem", raw, err)
			}
			return
		}
		if q.Skip < 0 || q.Take < 0 || q.Take > MaxTake {
			t.Fatalf("parseQuery(%q) = %+v, outside the limits", raw, q)
		}
		if !elements && q.FacetName != "" {
			t.Fatalf("parseQuery(%q) for facets = %+v, has a facet", raw, q)
		}
	})
}

// FuzzHandler sends arbitrary query strings and tenant headers through the handler: every
// answer must be a 200 list within the limits or a 400/403 problem.
func FuzzHandler(f *testing.F) {
	f.Add("/api/v1/elements", "FacetName=Roles&Skip=1", tenantA)
	f.Add("/api/v1/facets", "take=3", tenantA)
	f.Add("/api/v1/elements", "Take=1000", tenantB)
	f.Add("/api/v1/elements", "", "not-a-uuid")
	f.Add("/api/v1/facets", "Skip=abc", "7D6C8F5E-2A4B-4C1D-9E3F-0A1B2C3D4E5F")
	h := NewHandler(testStore())
	f.Fuzz(func(t *testing.T, path, rawQuery, tenant string) {
		if path != ElementsPath {
			path = FacetsPath
		}
		req := httptest.NewRequest(http.MethodGet, path, nil)
		req.URL.RawQuery = rawQuery
		req.Header[TenantHeader] = []string{tenant}
		req = req.WithContext(principal.NewContext(req.Context(), principalA))
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		switch rec.Code {
		case http.StatusOK:
			var list struct {
				Items      [][]json.RawMessage
				Skip       int
				Take       int
				TotalCount int
			}
			if err := json.Unmarshal(rec.Body.Bytes(), &list); err != nil {
				t.Fatalf("200 body %s: %v", rec.Body, err)
			}
			if len(list.Items) != 1 || len(list.Items[0]) > list.Take || list.Take > MaxTake || list.Skip < 0 {
				t.Fatalf("200 body %s breaks the paging limits", rec.Body)
			}
		case http.StatusBadRequest, http.StatusForbidden:
			var p problem.Problem
			if err := json.Unmarshal(rec.Body.Bytes(), &p); err != nil || p.Status != rec.Code || p.Detail == "" {
				t.Fatalf("%d body %s is not a problem: %v", rec.Code, rec.Body, err)
			}
		default:
			t.Fatalf("status %d for %s?%s with tenant %q: %s", rec.Code, path, rawQuery, tenant, rec.Body)
		}
	})
}

// FuzzDecodeElements checks that DecodeElements never panics, that what it accepts
// survives encoding and decoding unchanged, and that the handler's encoder writes it
// exactly as encoding/json does.
func FuzzDecodeElements(f *testing.F) {
	f.Add([]byte(`[]`))
	f.Add([]byte(`[{"id":"` + uuid1 + `","facetName":"P","content":["a",{"id":"` + uuid2 + `"}],"variants":[{"id":"` + uuid1 + `","versions":[{"id":"` + uuid1 + `"}]}]}]`))
	f.Add([]byte(`[{"id":"` + uuid1 + `","facetName":"P","related":{"r":[{"id":"` + uuid2 + `","isReference":true}]},"attributes":{"name":{"en":"x","de":"y"}}}]`))
	f.Add([]byte(`[{"id":"` + uuid1 + `","facetName":"<R&D>\u2028\u0000","state":"\ud800","attributes":{"\u003c":{"b":"\t","a":null}},"related":{"z":null,"a":[]}}]`))
	f.Add([]byte("[{\"id\":\"" + uuid1 + "\",\"facetName\":\"\xff\xfe\"}]"))
	f.Add([]byte(`[{"id": 1}]`))
	f.Add([]byte(`[{"id":"x"},]`))
	f.Add([]byte("[\n{\"facetName\":\"P\"}\n"))
	f.Add([]byte(`{}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		elements, err := reporting.DecodeElements(data)
		if err != nil {
			if err.Error() == "" {
				t.Fatal("empty error message")
			}
			return
		}
		encoded, err := json.Marshal(elements)
		if err != nil {
			t.Fatalf("encoding accepted elements: %v", err)
		}
		list, err := json.Marshal(reporting.List[reporting.Element]{Items: [][]reporting.Element{elements}, Skip: 1, Take: 2, TotalCount: 3})
		if err != nil {
			t.Fatal(err)
		}
		if got, err := appendElementList(nil, elements, 1, 2, 3); err != nil || string(got) != string(list) {
			t.Fatalf("appendElementList differs from encoding/json:\n%s\n%s", got, list)
		}
		again, err := reporting.DecodeElements(encoded)
		if err != nil {
			t.Fatalf("decoding %s: %v", encoded, err)
		}
		if diff := cmp.Diff(elements, again); diff != "" {
			t.Fatalf("round trip (-first +second):\n%s", diff)
		}
	})
}
