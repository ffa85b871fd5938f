package server

import (
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"testing"
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
