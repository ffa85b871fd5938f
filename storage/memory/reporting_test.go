package memory_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/kmkit/kmkit/principal"
	"github.com/kmkit/kmkit/reporting"
	"github.com/kmkit/kmkit/reporting/reportinghttp"
	"github.com/kmkit/kmkit/reporting/reportingtest"
	"github.com/kmkit/kmkit/storage/memory"
)

const (
	reportingTenantA = "7d6c8f5e-2a4b-4c1d-9e3f-0a1b2c3d4e5f"
	reportingTenantB = "c0ffee00-1234-4abc-8def-0123456789ab"
)

func reportingElement(facet string, ordering, n int) reporting.Element {
	return reporting.Element{Identity: reporting.Identity{
		FacetName: facet, Ordering: ordering, ID: fmt.Sprintf("00000000-0000-4000-8000-%012d", n),
	}}
}

// TestReportingConformance runs the suite every reporting.Store passes.
func TestReportingConformance(t *testing.T) {
	reportingtest.Run(t, func(*testing.T) reportingtest.Store { return memory.New().Reporting() })
}

// cmpEmptyIsNil treats an empty page and a nil one alike: the handler writes both as [].
var cmpEmptyIsNil = cmpopts.EquateEmpty()

// TestReportingStoreTenants checks what the memory store adds to the suite: tenant ids
// match case-insensitively, DeleteTenant, that the caller's list is not the store's, and
// that appending to a returned page does not write into the store.
func TestReportingStoreTenants(t *testing.T) {
	s := memory.New().Reporting()
	a, b := reportingElement("Roles", 0, 1), reportingElement("Documents", 0, 2)
	if err := s.PutTenant(strings.ToUpper(reportingTenantA), []reporting.Element{a}); err != nil {
		t.Fatal(err)
	}
	if err := s.PutTenant(reportingTenantB, []reporting.Element{b}); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	check := func(tenant string, want []reporting.Element) {
		t.Helper()
		got, total, err := s.Elements(ctx, tenant, reporting.ElementQuery{Take: 100})
		if err != nil || total != len(want) {
			t.Fatalf("Elements(%s): total %d, err %v; want %d", tenant, total, err, len(want))
		}
		if diff := cmp.Diff(want, got, cmpEmptyIsNil); diff != "" {
			t.Fatalf("Elements(%s) (-want +got):\n%s", tenant, diff)
		}
	}
	check(reportingTenantA, []reporting.Element{a})
	check(strings.ToUpper(reportingTenantA), []reporting.Element{a})
	check(reportingTenantB, []reporting.Element{b})
	check("00000000-0000-0000-0000-000000000000", nil)

	// A rejected list leaves the tenant's data as it was.
	err := s.PutTenant(reportingTenantB, []reporting.Element{{Identity: reporting.Identity{ID: "x", FacetName: "R"}}})
	if want := `element 0 (id x): id: "x" is not a UUID (want the form xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx)`; err == nil || err.Error() != want {
		t.Fatalf("PutTenant of an invalid list: %v, want %q", err, want)
	}
	check(reportingTenantB, []reporting.Element{b})

	// The store keeps its own list, and a returned page has no room to append into it.
	r1, r2 := reportingElement("Roles", 1, 3), reportingElement("Roles", 2, 4)
	in := []reporting.Element{r1, r2}
	if err := s.PutTenant(reportingTenantB, in); err != nil {
		t.Fatal(err)
	}
	in[0].FacetName = "Changed"
	for _, facet := range []string{"", "Roles"} {
		page, _, _ := s.Elements(ctx, reportingTenantB, reporting.ElementQuery{FacetName: facet, Take: 1})
		_ = append(page, reportingElement("Roles", 9, 9))
	}
	facets, _, _ := s.Facets(ctx, reportingTenantB, 0, 0)
	_ = append(facets, reporting.Facet{Name: "Changed"})
	check(reportingTenantB, []reporting.Element{r1, r2})
	if facets, _, _ := s.Facets(ctx, reportingTenantB, 0, 1); len(facets) != 1 || facets[0].Name != "Roles" {
		t.Fatalf("facets after an append to a page: %v", facets)
	}

	s.DeleteTenant(strings.ToUpper(reportingTenantB))
	check(reportingTenantB, nil)
	check(reportingTenantA, []reporting.Element{a})
	if facets, total, _ := s.Facets(ctx, reportingTenantB, 0, 100); len(facets) != 0 || total != 0 {
		t.Fatalf("Facets of a deleted tenant = %v, %d", facets, total)
	}
}

// TestReportingTwoTenantsOverHTTP serves the demo landscape through the handler: each key's
// tenant sees only its own elements and facets, and asking for the other tenant is a 403.
func TestReportingTwoTenantsOverHTTP(t *testing.T) {
	data, err := reporting.LoadDir("../../internal/demodata")
	if err != nil {
		t.Fatal(err)
	}
	s := reportingStoreOf(t, data)
	h := reportinghttp.NewHandler(s)
	principals := map[string]*principal.Principal{
		reportingTenantA: {Name: "a", Tenant: reportingTenantA, Permissions: []principal.Permission{principal.PermReporting}},
		reportingTenantB: {Name: "b", Tenant: reportingTenantB, Permissions: []principal.Permission{principal.PermReporting}},
	}
	get := func(p *principal.Principal, tenant, target string) *httptest.ResponseRecorder {
		req := httptest.NewRequest(http.MethodGet, target, nil)
		req.Header.Set(reportinghttp.TenantHeader, tenant)
		req = req.WithContext(principal.NewContext(req.Context(), p))
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		return rec
	}
	for tenant, p := range principals {
		ids := map[string]bool{}
		for _, e := range data[tenant] {
			ids[e.ID] = true
		}
		// Page through everything the tenant sees, 7 at a time.
		seen := 0
		for skip := 0; ; skip += 7 {
			rec := get(p, tenant, fmt.Sprintf("/api/v1/elements?Skip=%d&Take=7", skip))
			var list reporting.List[reporting.Element]
			if err := decodeJSON(rec, &list); err != nil || rec.Code != http.StatusOK {
				t.Fatalf("%s: %d %v", tenant, rec.Code, err)
			}
			if list.TotalCount != len(data[tenant]) {
				t.Fatalf("%s: totalCount %d, want %d", tenant, list.TotalCount, len(data[tenant]))
			}
			for _, e := range list.Items[0] {
				if !ids[e.ID] {
					t.Fatalf("tenant %s sees element %s of another tenant", tenant, e.ID)
				}
				seen++
			}
			if len(list.Items[0]) < 7 {
				break
			}
		}
		if seen != len(data[tenant]) {
			t.Fatalf("%s: paged through %d elements, want %d", tenant, seen, len(data[tenant]))
		}
		other := reportingTenantB
		if tenant == reportingTenantB {
			other = reportingTenantA
		}
		for _, path := range []string{"/api/v1/elements", "/api/v1/facets"} {
			if rec := get(p, other, path); rec.Code != http.StatusForbidden {
				t.Fatalf("%s asking %s for %s: %d, want 403", tenant, other, path, rec.Code)
			}
		}
	}
	var facets reporting.List[reporting.Facet]
	if err := decodeJSON(get(principals[reportingTenantB], reportingTenantB, "/api/v1/facets"), &facets); err != nil {
		t.Fatal(err)
	}
	want := reporting.List[reporting.Facet]{Items: [][]reporting.Facet{{{Name: "Activities"}, {Name: "Documents"}, {Name: "Processes"}, {Name: "Roles"}}}, Take: 100, TotalCount: 4}
	if diff := cmp.Diff(want, facets); diff != "" {
		t.Fatalf("tenant B facets (-want +got):\n%s", diff)
	}
}

// decodeJSON decodes a response body into v, refusing members v has no field for.
func decodeJSON(rec *httptest.ResponseRecorder, v any) error {
	dec := json.NewDecoder(rec.Body)
	dec.DisallowUnknownFields()
	return dec.Decode(v)
}

// reportingStoreOf returns the reporting store of a new memory DB holding data.
func reportingStoreOf(t testing.TB, data map[string][]reporting.Element) *memory.ReportingStore {
	t.Helper()
	s := memory.New().Reporting()
	for tenant, elements := range data {
		if err := s.PutTenant(tenant, elements); err != nil {
			t.Fatalf("tenant %s: %v", tenant, err)
		}
	}
	return s
}
