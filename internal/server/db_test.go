package server

import (
	"encoding/json"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"

	"github.com/kmkit/kmkit/internal/pgschema"

	"github.com/google/go-cmp/cmp"
)

// postgresSchemaDSN returns a URL for a fresh schema on the PostgreSQL server of
// KMKIT_POSTGRES_DSN (dropped at the end of the test), or "" when the variable is unset.
func postgresSchemaDSN(t *testing.T) string {
	dsn := os.Getenv("KMKIT_POSTGRES_DSN")
	if dsn == "" {
		return ""
	}
	return pgschema.ForTest(t, dsn, "kmkit_server_test")
}

// TestDatabasesServeTheSame serves the demo from memory, SQLite and (with
// KMKIT_POSTGRES_DSN) PostgreSQL and compares the bodies of the same requests.
func TestDatabasesServeTheSame(t *testing.T) {
	dir := t.TempDir()
	keys := filepath.Join(dir, "keys.yaml")
	data := "keys:\n  - key: \"all-key-0001\"\n    name: all\n    team: acme\n    tenant: 7d6c8f5e-2a4b-4c1d-9e3f-0a1b2c3d4e5f\n    permissions: [km, odata, scim, reporting]\n"
	if err := os.WriteFile(keys, []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
	dbs := map[string]string{"sqlite": "sqlite:" + filepath.Join(dir, "kmkit.db")}
	if dsn := postgresSchemaDSN(t); dsn != "" {
		dbs["postgres"] = dsn
	}
	const km = "/intelligence/api/knowledge-models/o2c"
	targets := []string{
		km + "/records/ORDERS/data?fields=ORDER_ID,STATUS,NET_VALUE,DAYS_LATE&sort=-DAYS_LATE,+STATUS&pageSize=20&page=3",
		km + "/records/ORDERS/data?fields=ORDER_ID,ORDER_DATE,CREATED_AT&filterExpr=ORDER_DATE%20ge%202025-06-01%20and%20CREATED_AT%20lt%202025-09-01&pageSize=30",
		km + "/records/ORDERS/data?fields=STATUS,EXPRESS&options=distinct&sort=STATUS",
		km + "/records/CUSTOMERS/data?fields=CUSTOMER_ID,CUSTOMER_NAME,CITY&searchTerm=gmbh&pageSize=15",
		km + "/records/MATERIALS/query?searchTerm=bolt&searchPrecision=60",
		km + "/data?fields=CUSTOMERS.COUNTRY&kpis=ORDER_COUNT,TOTAL_NET,AVG_NET,LATE_SHARE&sort=-TOTAL_NET",
		km + "/data?fields=ORDER_ITEMS.ITEM_ID,ORDERS.STATUS,CUSTOMERS.SEGMENT&filterExpr=not%20(ORDERS.STATUS%20eq%20'OPEN')&sort=CUSTOMERS.SEGMENT&page=2",
		km + "/data?fields=ORDERS.STATUS,ORDER_ITEMS.MATERIAL_ID&kpis=ORDER_COUNT&filterExpr=ORDERS.EXPRESS%20eq%20true&pageSize=40",
		"/intelligence/api/odata/o2c.svc/ORDERS_entries?$top=7&$skip=3&$orderby=NET_VALUE%20desc&$count=true&$filter=contains(STATUS,'E')",
		"/api/v1/elements?Take=5&Skip=1",
		"/api/v1/facets",
	}
	memApp := newTestApp(t, config{keysFile: keys, db: "memory:"})
	for name, dsn := range dbs {
		t.Run(name, func(t *testing.T) {
			a := newTestApp(t, config{keysFile: keys, db: dsn})
			defer a.close()
			for _, target := range targets {
				want := getTenant(t, memApp, target)
				got := getTenant(t, a, target)
				if want.Code != 200 {
					t.Errorf("GET %s from memory: %d %s", target, want.Code, want.Body)
				}
				if got.Code != want.Code {
					t.Errorf("GET %s: status %d, memory %d: %s", target, got.Code, want.Code, got.Body)
				}
				if diff := cmp.Diff(decodeJSON(t, want.Body.Bytes()), decodeJSON(t, got.Body.Bytes()), floatsAgree); diff != "" {
					t.Errorf("GET %s (-memory +%s):\n%s", target, name, diff)
				}
			}
			// A second start on the same database imports nothing again and serves the same.
			b := newTestApp(t, config{keysFile: keys, db: dsn})
			defer b.close()
			if diff := cmp.Diff(getTenant(t, a, targets[0]).Body.String(), getTenant(t, b, targets[0]).Body.String()); diff != "" {
				t.Errorf("after a restart (-before +after):\n%s", diff)
			}
		})
	}
}

// floatsAgree compares numbers within 1e-9 relative: every database sums in its own order
// (DESIGN.md, agreement between backends); everything else must be equal.
var floatsAgree = cmp.Comparer(func(a, b float64) bool {
	return a == b || math.Abs(a-b) <= 1e-9*math.Max(math.Abs(a), math.Abs(b))
})

// decodeJSON decodes an answer's JSON body.
func decodeJSON(t *testing.T, body []byte) any {
	t.Helper()
	var v any
	if err := json.Unmarshal(body, &v); err != nil {
		t.Fatalf("answer is not JSON: %v: %s", err, body)
	}
	return v
}

// getTenant sends GET target with the test key as AppKey and as the reporting API's
// x-api-key for its tenant.
func getTenant(t *testing.T, a *app, target string) *httptest.ResponseRecorder {
	t.Helper()
	r := httptest.NewRequest(http.MethodGet, target, nil)
	r.Header.Set("Authorization", "AppKey all-key-0001")
	r.Header.Set("x-api-key", "all-key-0001")
	r.Header.Set("x-tenant-id", "7d6c8f5e-2a4b-4c1d-9e3f-0a1b2c3d4e5f")
	w := httptest.NewRecorder()
	a.handler.ServeHTTP(w, r)
	return w
}
