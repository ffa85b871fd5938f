package sqlstore_test

import (
	"context"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/kmkit/kmkit/auth/ratelimit"
	"github.com/kmkit/kmkit/auth/ratelimit/limitertest"
	"github.com/kmkit/kmkit/storage/sqlstore"
)

// testMigrations opens one database from several goroutines at once (as replicas starting
// together would) and again later: every Open succeeds and the schema has its version.
func testMigrations(t *testing.T, dsn string) {
	var wg sync.WaitGroup
	dbs := make([]*sqlstore.DB, 4)
	for i := range dbs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			db, err := sqlstore.Open(context.Background(), dsn)
			if err != nil {
				t.Error(err)
				return
			}
			dbs[i] = db
		}()
	}
	wg.Wait()
	for _, db := range dbs {
		if db != nil {
			db.Close()
		}
	}
	db := open(t, dsn)
	v, err := db.SchemaVersion(context.Background())
	if err != nil || v != 4 {
		t.Errorf("SchemaVersion = %d, %v; want 4", v, err)
	}
}

func TestMigrationsSQLite(t *testing.T) {
	testMigrations(t, "sqlite:"+filepath.Join(t.TempDir(), "kmkit.db"))
}

func TestMigrationsPostgres(t *testing.T) { testMigrations(t, postgresDSN(t)) }

func TestLimiterSweep(t *testing.T) {
	ctx := context.Background()
	for name, open := range map[string]func(testing.TB) *sqlstore.DB{"sqlite": openSQLite, "postgres": openPostgres} {
		t.Run(name, func(t *testing.T) {
			l := open(t).Limiter()
			now := time.Date(2026, 1, 1, 10, 30, 0, 0, time.UTC)
			for _, key := range []string{"a", "b"} {
				if d, err := l.Allow(ctx, key, 5, time.Hour, now); err != nil || !d.Allowed {
					t.Fatalf("Allow(%s) = %+v, %v", key, d, err)
				}
			}
			if n, err := l.Sweep(ctx, now); err != nil || n != 0 {
				t.Errorf("Sweep within the window removed %d, %v; want 0", n, err)
			}
			if n, err := l.Sweep(ctx, now.Add(30*time.Minute)); err != nil || n != 2 {
				t.Errorf("Sweep at the window's end removed %d, %v; want 2", n, err)
			}
			d, err := l.Allow(ctx, "a", 5, time.Hour, now)
			if err != nil || !d.Allowed || d.Remaining != 4 {
				t.Errorf("after the sweep: %+v, %v; want a fresh budget", d, err)
			}
		})
	}
}

func TestLimiterConformance(t *testing.T) {
	for name, open := range map[string]func(testing.TB) *sqlstore.DB{"sqlite": openSQLite, "postgres": openPostgres} {
		t.Run(name, func(t *testing.T) {
			limitertest.Run(t, func(t *testing.T) ratelimit.Limiter { return open(t).Limiter() })
		})
	}
}

// TestPostgresChecksItsClient: every connection of the pool asks the server to check its
// client every second while a statement runs, so that a statement whose request has ended
// stops even if the cancel request is lost.
func TestPostgresChecksItsClient(t *testing.T) {
	db := openPostgres(t)
	pool := db.SQL()
	pool.SetMaxIdleConns(0) // each query below on a connection of its own
	for range 2 {
		var v string
		if err := pool.QueryRowContext(context.Background(), "SHOW client_connection_check_interval").Scan(&v); err != nil {
			t.Fatal(err)
		}
		if v != "1s" {
			t.Errorf("client_connection_check_interval is %q, want 1s", v)
		}
	}
}
