package memory_test

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/kmkit/kmkit/auth"
	"github.com/kmkit/kmkit/principal"
	"github.com/kmkit/kmkit/problem"
	"github.com/kmkit/kmkit/reporting"
	"github.com/kmkit/kmkit/reporting/reportinghttp"
)

// TestReportingBehindGuard serves the demo landscape behind the auth middleware with keys of
// two tenants and checks the status and body of every credential case, and that each key
// sees only its tenant.
func TestReportingBehindGuard(t *testing.T) {
	data, err := reporting.LoadDir("../../internal/demodata")
	if err != nil {
		t.Fatal(err)
	}
	store := reportingStoreOf(t, data)
	keys, err := auth.NewKeySet([]auth.Key{
		{Digest: auth.DigestOf("key-of-a"), Name: "a", Tenant: reportingTenantA, Permissions: []principal.Permission{principal.PermReporting}},
		{Digest: auth.DigestOf("key-of-b"), Name: "b", Tenant: reportingTenantB, Permissions: []principal.Permission{principal.PermReporting}},
		{Digest: auth.DigestOf("km-key"), Name: "km", Tenant: reportingTenantA, Permissions: []principal.Permission{principal.PermKM}},
	})
	if err != nil {
		t.Fatal(err)
	}
	guard, err := auth.NewGuard(auth.Config{Authenticator: keys, Limits: auth.Limits{PerWindow: -1, Burst: -1, Concurrent: -1}})
	if err != nil {
		t.Fatal(err)
	}
	h := guard.Wrap(auth.Policy{Permission: principal.PermReporting, Credentials: auth.APIKeyHeader,
		Tenant: reportinghttp.RequestTenant, WriteError: reportinghttp.WriteProblem}, reportinghttp.NewHandler(store))

	problemOf := func(status int, code, detail string) *problem.Problem { return problem.New(status, code, detail) }
	tests := []struct {
		name   string
		key    string // "" = no x-api-key header
		tenant string // "" = no x-tenant-id header
		target string
		want   *problem.Problem // nil = 200
		total  int
	}{
		{"tenant A", "key-of-a", reportingTenantA, "/api/v1/elements?Take=1", nil, len(data[reportingTenantA])},
		{"tenant B", "key-of-b", reportingTenantB, "/api/v1/elements?Take=1", nil, len(data[reportingTenantB])},
		{"tenant B facets", "key-of-b", reportingTenantB, "/api/v1/facets", nil, 4},
		{"missing key", "", reportingTenantA, "/api/v1/elements", problemOf(http.StatusUnauthorized, problem.CodeUnauthenticated, "missing x-api-key header"), 0},
		{"wrong key", "key-of-c", reportingTenantA, "/api/v1/elements", problemOf(http.StatusUnauthorized, problem.CodeUnauthenticated, "invalid application key"), 0},
		{"another tenant", "key-of-a", reportingTenantB, "/api/v1/elements", problemOf(http.StatusForbidden, problem.CodeAccess, "the API key does not belong to tenant "+reportingTenantB), 0},
		{"another tenant's facets", "key-of-b", reportingTenantA, "/api/v1/facets", problemOf(http.StatusForbidden, problem.CodeAccess, "the API key does not belong to tenant "+reportingTenantA), 0},
		{"malformed tenant", "key-of-a", "7d6c8f5e2a4b4c1d9e3f0a1b2c3d4e5f", "/api/v1/elements",
			problemOf(http.StatusBadRequest, problem.CodeParameterIllegal, `x-tenant-id "7d6c8f5e2a4b4c1d9e3f0a1b2c3d4e5f" is not a UUID (xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx)`), 0},
		{"missing tenant", "key-of-a", "", "/api/v1/elements", problemOf(http.StatusBadRequest, problem.CodeParameterMissing, "missing x-tenant-id header"), 0},
		{"no reporting permission", "km-key", reportingTenantA, "/api/v1/elements", problemOf(http.StatusForbidden, problem.CodeAccess, "the credentials lack the reporting permission"), 0},
		{"bad parameter after auth", "key-of-a", reportingTenantA, "/api/v1/elements?Take=101",
			problemOf(http.StatusBadRequest, problem.CodeConstraint, "query parameter Take must be between 0 and 100, got 101"), 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req := httptest.NewRequest(http.MethodGet, tt.target, nil)
			if tt.key != "" {
				req.Header.Set("x-api-key", tt.key)
			}
			if tt.tenant != "" {
				req.Header.Set("x-tenant-id", tt.tenant)
			}
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, req)
			if tt.want != nil {
				var got *problem.Problem
				if err := decodeJSON(rec, &got); err != nil {
					t.Fatal(err)
				}
				if rec.Code != tt.want.Status {
					t.Errorf("status = %d, want %d", rec.Code, tt.want.Status)
				}
				if diff := cmp.Diff(tt.want, got); diff != "" {
					t.Errorf("body (-want +got):\n%s", diff)
				}
				return
			}
			if rec.Code != http.StatusOK {
				t.Fatalf("status = %d: %s", rec.Code, rec.Body)
			}
			var page reporting.List[reporting.Element]
			if tt.target == "/api/v1/facets" {
				var facets reporting.List[reporting.Facet]
				if err := decodeJSON(rec, &facets); err != nil || facets.TotalCount != tt.total {
					t.Fatalf("facets: %+v, %v; want %d", facets, err, tt.total)
				}
				return
			}
			if err := decodeJSON(rec, &page); err != nil {
				t.Fatal(err)
			}
			if page.TotalCount != tt.total {
				t.Errorf("totalCount = %d, want %d", page.TotalCount, tt.total)
			}
			for _, e := range page.Items[0] {
				if e.ID == "" || !containsID(data[tt.tenant], e.ID) {
					t.Errorf("element %q is not one of tenant %s", e.ID, tt.tenant)
				}
			}
		})
	}
}

func containsID(elements []reporting.Element, id string) bool {
	for _, e := range elements {
		if e.ID == id {
			return true
		}
	}
	return false
}
