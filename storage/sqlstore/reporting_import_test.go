package sqlstore_test

import (
	"context"
	"fmt"
	"path/filepath"
	"sync"
	"testing"

	"github.com/kmkit/kmkit/reporting"
	"github.com/kmkit/kmkit/storage/sqlstore"
)

func reportingElements(n int, facet string) []reporting.Element {
	out := make([]reporting.Element, n)
	for i := range out {
		out[i] = reporting.Element{
			Identity:   reporting.Identity{FacetName: facet, Ordering: i, ID: fmt.Sprintf("00000000-0000-4000-8000-%012d", i)},
			Attributes: reporting.Attributes{"name": {"en": fmt.Sprintf("element %d", i)}},
		}
	}
	return out
}

// testReportingPutsAtOnce puts one tenant's elements from four pools on one database at
// once, several rounds: every put succeeds (they claim the tenant's import, the first
// writes, the others find the same elements), and a changed set replaces the old one.
func testReportingPutsAtOnce(t *testing.T, dsn string) {
	ctx := context.Background()
	const tenant = "7d6c8f5e-2a4b-4c1d-9e3f-0a1b2c3d4e5f"
	stores := make([]*sqlstore.ReportingStore, 4)
	for i := range stores {
		stores[i] = open(t, dsn).Reporting()
	}
	for round, tt := range []struct {
		n     int
		facet string
	}{{30, "Process"}, {30, "Process"}, {12, "System"}, {12, "System"}, {40, "Process"}} {
		var wg sync.WaitGroup
		errs := make([]error, len(stores))
		for i, s := range stores {
			wg.Go(func() { errs[i] = s.PutTenantContext(ctx, tenant, reportingElements(tt.n, tt.facet)) })
		}
		wg.Wait()
		for i, err := range errs {
			if err != nil {
				t.Fatalf("round %d: put %d: %v", round, i, err)
			}
		}
		page, total, err := stores[0].Elements(ctx, tenant, reporting.ElementQuery{Take: 100})
		if err != nil {
			t.Fatal(err)
		}
		if total != tt.n || len(page) != tt.n || page[0].FacetName != tt.facet {
			t.Fatalf("round %d: %d elements (total %d), facet %q; want %d of %s", round, len(page), total, page[0].FacetName, tt.n, tt.facet)
		}
	}
}

func TestReportingPutsAtOnceSQLite(t *testing.T) {
	testReportingPutsAtOnce(t, "sqlite:"+filepath.Join(t.TempDir(), "kmkit.db"))
}

func TestReportingPutsAtOncePostgres(t *testing.T) { testReportingPutsAtOnce(t, postgresDSN(t)) }
