package server

import (
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"
)

// TestReplicasStartAtOnce starts four servers at once on one PostgreSQL database, fresh
// and then existing, several rounds: every one starts (migrations, KM tables and reporting
// elements are each imported once, by whichever replica claims them) and serves the data.
func TestReplicasStartAtOnce(t *testing.T) {
	if os.Getenv("KMKIT_POSTGRES_DSN") == "" {
		t.Skip("KMKIT_POSTGRES_DSN is not set")
	}
	dir := t.TempDir()
	keys := filepath.Join(dir, "keys.yaml")
	data := "keys:\n  - key: \"all-key-0001\"\n    name: all\n    team: acme\n    tenant: 7d6c8f5e-2a4b-4c1d-9e3f-0a1b2c3d4e5f\n    permissions: [km, odata, scim, reporting]\n"
	if err := os.WriteFile(keys, []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
	const replicas = 4
	for round := range 3 {
		dsn := postgresSchemaDSN(t)
		for _, state := range []string{"fresh", "existing", "existing"} {
			var wg sync.WaitGroup
			apps := make([]*app, replicas)
			errs := make([]error, replicas)
			for i := range replicas {
				wg.Go(func() {
					cfg := &config{keysFile: keys, db: dsn, maxPageSize: 5000, maxBody: 1 << 20}
					apps[i], errs[i] = newApp(cfg, slog.New(slog.NewTextHandler(io.Discard, nil)))
				})
			}
			wg.Wait()
			for i, err := range errs {
				if err != nil {
					t.Fatalf("round %d, %s database: replica %d did not start: %v", round, state, i, err)
				}
			}
			for i, a := range apps {
				for _, target := range []string{"/api/v1/facets", "/intelligence/api/knowledge-models/o2c/records/ORDERS/data?fields=ORDER_ID&pageSize=1"} {
					if w := getTenant(t, a, target); w.Code != 200 {
						t.Errorf("round %d, replica %d: GET %s: %d %s", round, i, target, w.Code, w.Body)
					}
				}
				a.close()
			}
		}
	}
}

// TestReadReplicaFlag starts a server with -db-replicas naming the standby of
// KMKIT_POSTGRES_REPLICA_DSN (its copy of the test's schema) and a replica that is down:
// it starts, serves what a server without replicas serves, and counts its KM reads in
// kmkit_db_replica_reads_total, on the standby once it has replayed the import (the
// replica that is down is passed over for it).
func TestReadReplicaFlag(t *testing.T) {
	standby := os.Getenv("KMKIT_POSTGRES_REPLICA_DSN")
	dsn := postgresSchemaDSN(t)
	if dsn == "" || standby == "" {
		t.Skip("KMKIT_POSTGRES_DSN and KMKIT_POSTGRES_REPLICA_DSN (a streaming standby of it) are not both set")
	}
	r := standbyOf(t, dsn)
	down := "postgres://kmkit@127.0.0.1:1/kmkit?connect_timeout=1"
	keys := filepath.Join(t.TempDir(), "keys.yaml")
	writeFile(t, keys, "keys:\n  - key: \"all-key-0001\"\n    name: all\n    team: acme\n    tenant: 7d6c8f5e-2a4b-4c1d-9e3f-0a1b2c3d4e5f\n    permissions: [km, odata, scim, reporting, metrics]\n")
	plain := newTestApp(t, config{keysFile: keys, db: dsn, ratePerHour: -1, burst: -1, concurrency: -1})
	defer plain.close()
	a := newTestApp(t, config{keysFile: keys, db: dsn, dbReplicas: []string{r, down}, ratePerHour: -1, burst: -1, concurrency: -1})
	defer a.close()
	targets := append(segmentTargets("SEGMENT"), otherTargets...)
	deadline := time.Now().Add(30 * time.Second)
	for {
		for _, target := range targets {
			want, got := getTenant(t, plain, target), getTenant(t, a, target)
			if want.Code != 200 || got.Code != 200 || got.Body.String() != want.Body.String() {
				t.Fatalf("GET %s: with replicas %d %s; without %d %s", target, got.Code, got.Body, want.Code, want.Body)
			}
		}
		families := scrape(t, a.handler, "all-key-0001")
		onReplica := value(families, "kmkit_db_replica_reads_total", map[string]string{"served_by": "replica", "fallback": ""})
		if onReplica > 0 {
			t.Logf("KM reads on the standby: %v", onReplica)
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after 30 s no KM read on the standby (kmkit_db_replica_reads_total: %v)", families["kmkit_db_replica_reads_total"])
		}
		time.Sleep(50 * time.Millisecond)
	}
}
