package server

import (
	"context"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/kmkit/kmkit/internal/demodata"
)

// segmentTargets are requests on every surface that read CUSTOMERS.SEGMENT (named
// field): record data, KPIs grouped by it, a filter on it from another record, OData
// and the record summary.
func segmentTargets(field string) []string {
	const km = "/intelligence/api/knowledge-models/o2c"
	return []string{
		km + "/records/CUSTOMERS/data?fields=CUSTOMER_ID," + field + "&sort=CUSTOMER_ID&pageSize=5",
		km + "/data?fields=CUSTOMERS." + field + "&kpis=ORDER_COUNT,TOTAL_NET&sort=CUSTOMERS." + field,
		km + "/records/ORDERS/data?fields=ORDER_ID&filterExpr=CUSTOMERS." + field + "%20eq%20'SMB'&sort=ORDER_ID&pageSize=5",
		"/intelligence/api/odata/o2c.svc/CUSTOMERS_entries?$select=CUSTOMER_ID," + field + "&$orderby=CUSTOMER_ID&$top=3",
		km + "/records/CUSTOMERS/summary",
	}
}

// otherTargets read what the rename leaves as it was (of the same KM).
var otherTargets = []string{
	"/intelligence/api/knowledge-models/o2c/records/CUSTOMERS/data?fields=CUSTOMER_ID,COUNTRY&sort=CUSTOMER_ID&pageSize=5",
	"/intelligence/api/knowledge-models/o2c/data?fields=CUSTOMERS.COUNTRY&kpis=ORDER_COUNT&sort=CUSTOMERS.COUNTRY",
	"/intelligence/api/odata/o2c.svc/ORDERS_entries?$top=2",
}

// TestReloadOnAnotherServer runs two servers on one PostgreSQL schema, each with its
// own copy of the data directory (two machines). A reloads a definition that renames
// CUSTOMERS.SEGMENT (and its CSV column) while clients query B on every surface: a
// reload on one server never breaks another (DESIGN.md), so B answers every request
// throughout, and until it reloads it answers exactly what it answered before, from the
// tables of the generation it loaded; after B's reload both serve the new field alike.
//
// It runs on one SQLite file, on PostgreSQL, and on PostgreSQL with B reading through the
// streaming standby of KMKIT_POSTGRES_REPLICA_DSN.
func TestReloadOnAnotherServer(t *testing.T) {
	t.Run("SQLite", func(t *testing.T) {
		testReloadOnAnotherServer(t, "sqlite:"+filepath.Join(t.TempDir(), "kmkit.db"), nil)
	})
	t.Run("Postgres", func(t *testing.T) {
		dsn := postgresSchemaDSN(t)
		if dsn == "" {
			t.Skip("KMKIT_POSTGRES_DSN is not set")
		}
		testReloadOnAnotherServer(t, dsn, nil)
	})
	t.Run("PostgresReplica", func(t *testing.T) {
		dsn := postgresSchemaDSN(t)
		if dsn == "" || os.Getenv("KMKIT_POSTGRES_REPLICA_DSN") == "" {
			t.Skip("KMKIT_POSTGRES_DSN and KMKIT_POSTGRES_REPLICA_DSN (a streaming standby of it) are not both set")
		}
		testReloadOnAnotherServer(t, dsn, []string{standbyOf(t, dsn)})
	})
}

// standbyOf returns the URL of the standby of KMKIT_POSTGRES_REPLICA_DSN with the
// search_path of dsn (a URL of postgresSchemaDSN).
func standbyOf(t *testing.T, dsn string) string {
	t.Helper()
	p, err := url.Parse(dsn)
	if err != nil {
		t.Fatal(err)
	}
	r, err := url.Parse(os.Getenv("KMKIT_POSTGRES_REPLICA_DSN"))
	if err != nil {
		t.Fatal(err)
	}
	q := r.Query()
	q.Set("search_path", p.Query().Get("search_path"))
	r.RawQuery = q.Encode()
	return r.String()
}

// testReloadOnAnotherServer is TestReloadOnAnotherServer on the database dsn, B reading
// through the replicas of bReplicas.
func testReloadOnAnotherServer(t *testing.T, dsn string, bReplicas []string) {
	keys := filepath.Join(t.TempDir(), "keys.yaml")
	writeFile(t, keys, "keys:\n  - key: \"all-key-0001\"\n    name: all\n    team: acme\n    tenant: 7d6c8f5e-2a4b-4c1d-9e3f-0a1b2c3d4e5f\n    permissions: [km, odata, scim, reporting]\n")
	dirA, dirB := t.TempDir(), t.TempDir()
	for _, dir := range []string{dirA, dirB} {
		if err := os.CopyFS(dir, demodata.FS); err != nil {
			t.Fatal(err)
		}
	}
	cfg := func(dir string) config {
		return config{keysFile: keys, db: dsn, dataDir: dir, ratePerHour: -1, burst: -1, concurrency: -1}
	}
	a := newTestApp(t, cfg(dirA))
	defer a.close()
	cfgB := cfg(dirB)
	cfgB.dbReplicas = bReplicas
	b := newTestApp(t, cfgB)
	defer b.close()
	before := map[string]string{}
	for _, target := range append(segmentTargets("SEGMENT"), otherTargets...) {
		w := getTenant(t, b, target)
		if w.Code != 200 {
			t.Fatalf("before the reload: GET %s: %d %s", target, w.Code, w.Body)
		}
		before[target] = w.Body.String()
	}

	// Clients query B on every surface throughout A's reload.
	var (
		stop    atomic.Bool
		clients sync.WaitGroup
		mu      sync.Mutex
		codes   = map[int]int{}
	)
	for i := range 4 {
		clients.Go(func() {
			targets := append(segmentTargets("SEGMENT"), otherTargets...)
			for n := i; !stop.Load(); n++ {
				target := targets[n%len(targets)]
				w := getTenant(t, b, target)
				mu.Lock()
				codes[w.Code]++
				mu.Unlock()
				if w.Code != 200 || w.Body.String() != before[target] {
					t.Errorf("during A's reload: GET %s: %d %s, want what B answered before", target, w.Code, w.Body)
				}
			}
		})
	}
	renameSegment(t, dirA)
	if err := a.reload(context.Background()); err != nil {
		t.Fatal(err)
	}
	// B's clients go on a while after the swap.
	for _, target := range segmentTargets("SEGMENT_CODE") {
		if w := getTenant(t, a, target); w.Code != 200 {
			t.Errorf("A after its reload: GET %s: %d %s", target, w.Code, w.Body)
		}
	}
	stop.Store(true)
	clients.Wait()
	t.Logf("B's answers during A's reload: %v", codes)

	for _, target := range append(segmentTargets("SEGMENT"), otherTargets...) {
		if w := getTenant(t, b, target); w.Code != 200 || w.Body.String() != before[target] {
			t.Errorf("B before its reload: GET %s: %d %s, want what it answered before A's reload", target, w.Code, w.Body)
		}
	}

	renameSegment(t, dirB)
	if err := b.reload(context.Background()); err != nil {
		t.Fatal(err)
	}
	for _, target := range append(segmentTargets("SEGMENT_CODE"), otherTargets...) {
		wa, wb := getTenant(t, a, target), getTenant(t, b, target)
		if wb.Code != 200 || wb.Body.String() != wa.Body.String() {
			t.Errorf("after both reloads: GET %s: B %d %s, A %d %s", target, wb.Code, wb.Body, wa.Code, wa.Body)
		}
	}
}

// renameSegment renames the field CUSTOMERS.SEGMENT to SEGMENT_CODE in the definitions
// and in the CSV header of the data directory dir.
func renameSegment(t *testing.T, dir string) {
	t.Helper()
	word := regexp.MustCompile(`\bSEGMENT\b`)
	models, err := filepath.Glob(filepath.Join(dir, "models", "*.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range append(models, filepath.Join(dir, "data", "customers.csv")) {
		data, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		text := string(data)
		if strings.HasSuffix(name, ".csv") {
			header, rest, _ := strings.Cut(text, "\n")
			text = word.ReplaceAllString(header, "SEGMENT_CODE") + "\n" + rest
		} else {
			text = word.ReplaceAllString(text, "SEGMENT_CODE")
		}
		writeFile(t, name, text)
	}
}
