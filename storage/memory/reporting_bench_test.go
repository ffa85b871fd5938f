package memory_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/kmkit/kmkit/principal"
	"github.com/kmkit/kmkit/reporting"
	"github.com/kmkit/kmkit/reporting/reportinghttp"
	"github.com/kmkit/kmkit/storage/memory"
)

// reportingBenchLandscape returns n elements spread over facets facets, each with
// attributes in two languages, two relations, two children and a root path, like the demo.
func reportingBenchLandscape(n, facets int) []reporting.Element {
	ref := func(facet string, i int) reporting.Reference {
		return reporting.Reference{Identity: reporting.Identity{
			FacetName: facet, Ordering: i, ID: fmt.Sprintf("10000000-0000-4000-8000-%012d", i),
			PermaLink: fmt.Sprintf("https://landscape.example.com/e/%d", i), State: "Released", Stereotype: "Process", Type: "process",
			VersionID: fmt.Sprintf("20000000-0000-4000-8000-%012d", i),
		}, IsReference: true}
	}
	description := map[string]string{"en": "Handles one step of the order-to-cash process.", "de": "Erledigt einen Schritt des Prozesses Auftrag bis Zahlung."}
	elements := make([]reporting.Element, n)
	for i := range elements {
		facet := fmt.Sprintf("Facet %02d", i%facets)
		elements[i] = reporting.Element{
			Identity: reporting.Identity{
				ContainerPermaLink: "https://landscape.example.com/c/" + facet,
				CreationID:         fmt.Sprintf("30000000-0000-4000-8000-%012d", i),
				FacetName:          facet,
				ID:                 fmt.Sprintf("40000000-0000-4000-8000-%012d", i),
				Ordering:           i / facets,
				PermaLink:          fmt.Sprintf("https://landscape.example.com/e/%d", i),
				State:              "Released",
				Stereotype:         "Activity",
				Type:               "activity",
				VersionID:          fmt.Sprintf("50000000-0000-4000-8000-%012d", i),
			},
			Attributes: reporting.Attributes{
				"name":        {"en": fmt.Sprintf("Activity %d", i), "de": fmt.Sprintf("Aktivität %d", i)},
				"description": description,
			},
			Content: []reporting.Content{{Text: "Step description."}},
			Related: map[string][]reporting.Reference{
				"performedBy": {ref("Roles", i%50)},
				"supportedBy": {ref("IT Systems", i%20)},
			},
			Children:         []reporting.Reference{ref(facet, i+1), ref(facet, i+2)},
			RootPath:         []reporting.Reference{ref("Processes", i%10)},
			SupportsVersions: true,
		}
	}
	return elements
}

// discardResponse is a ResponseWriter that keeps headers and counts the body, so the
// benchmark measures the handler, not a recorder's buffer.
type discardResponse struct {
	header http.Header
	status int
	n      int
}

func (w *discardResponse) Header() http.Header         { return w.header }
func (w *discardResponse) WriteHeader(status int)      { w.status = status }
func (w *discardResponse) Write(p []byte) (int, error) { w.n += len(p); return len(p), nil }

// BenchmarkReporting measures, over 100,000 elements in 20 facets on the memory backend,
// the time per request of a page of 100 elements of one facet through the handler, next to
// its peers in the same run: other pages and the facet list through the handler, the store
// call with encoding/json in place of the handler's encoder, and the store call alone.
func BenchmarkReporting(b *testing.B) {
	const tenant = "7d6c8f5e-2a4b-4c1d-9e3f-0a1b2c3d4e5f"
	store := memory.New().Reporting()
	if err := store.PutTenant(tenant, reportingBenchLandscape(100_000, 20)); err != nil {
		b.Fatal(err)
	}
	h := reportinghttp.NewHandler(store)
	caller := &principal.Principal{Name: "bench", Tenant: tenant, Permissions: []principal.Permission{principal.PermReporting}}
	for _, bc := range []struct{ name, target string }{
		{"request/facet page of 100", "/api/v1/elements?FacetName=Facet+07&Skip=2500&Take=100"},
		{"request/first facet page of 100", "/api/v1/elements?FacetName=Facet+07&Take=100"},
		{"request/unfiltered page of 100", "/api/v1/elements?Skip=50000&Take=100"},
		{"request/facets", "/api/v1/facets"},
	} {
		b.Run(bc.name, func(b *testing.B) {
			req := httptest.NewRequest(http.MethodGet, bc.target, nil)
			req.Header.Set(reportinghttp.TenantHeader, tenant)
			req = req.WithContext(principal.NewContext(req.Context(), caller))
			var size int
			for b.Loop() {
				w := &discardResponse{header: http.Header{}}
				h.ServeHTTP(w, req)
				if w.status != http.StatusOK {
					b.Fatalf("status %d", w.status)
				}
				size = w.n
			}
			b.SetBytes(int64(size))
			b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N), "µs/request")
			b.ReportMetric(float64(size), "bytes/response")
		})
	}
	b.Run("peer/store call and encoding-json of the facet page", func(b *testing.B) {
		ctx := context.Background()
		q := reporting.ElementQuery{FacetName: "Facet 07", Skip: 2500, Take: 100}
		var size int
		for b.Loop() {
			page, total, err := store.Elements(ctx, tenant, q)
			if err != nil {
				b.Fatal(err)
			}
			body, err := json.Marshal(reporting.List[reporting.Element]{Items: [][]reporting.Element{page}, Skip: q.Skip, Take: q.Take, TotalCount: total})
			if err != nil {
				b.Fatal(err)
			}
			size = len(body)
		}
		b.SetBytes(int64(size))
		b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N), "µs/request")
	})
	b.Run("peer/store call alone for the facet page", func(b *testing.B) {
		ctx := context.Background()
		q := reporting.ElementQuery{FacetName: "Facet 07", Skip: 2500, Take: 100}
		for b.Loop() {
			page, total, err := store.Elements(ctx, tenant, q)
			if err != nil || len(page) != 100 || total != 5000 {
				b.Fatalf("%d of %d, %v", len(page), total, err)
			}
		}
		b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N), "µs/request")
	})
}
