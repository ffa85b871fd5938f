package memory_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"

	"github.com/kmkit/kmkit/principal"
	"github.com/kmkit/kmkit/reporting"
	"github.com/kmkit/kmkit/reporting/reportinghttp"
	"github.com/kmkit/kmkit/storage/memory"
)

// ExampleReportingStore loads the demo landscape, serves it, and lists the first two facets
// of one tenant as the holder of that tenant's key would.
func ExampleReportingStore() {
	data, err := reporting.LoadDir("../../internal/demodata")
	if err != nil {
		panic(err)
	}
	store := memory.New().Reporting()
	for tenant, elements := range data {
		if err := store.PutTenant(tenant, elements); err != nil {
			panic(err)
		}
	}
	mux := http.NewServeMux()
	mux.Handle("/api/v1/", reportinghttp.NewHandler(store))

	// The auth middleware puts the key's principal into the context; here we do it by hand.
	const tenant = "7d6c8f5e-2a4b-4c1d-9e3f-0a1b2c3d4e5f"
	req := httptest.NewRequest(http.MethodGet, "/api/v1/facets?take=2", nil)
	req.Header.Set("x-tenant-id", tenant)
	req = req.WithContext(principal.NewContext(req.Context(), &principal.Principal{
		Name: "demo", Tenant: tenant, Permissions: []principal.Permission{principal.PermReporting},
	}))
	rec := httptest.NewRecorder()
	mux.ServeHTTP(rec, req)
	fmt.Println(rec.Code, rec.Body)
	// Output:
	// 200 {"items":[[{"name":"Activities"},{"name":"Documents"}]],"skip":0,"take":2,"totalCount":5}
}
