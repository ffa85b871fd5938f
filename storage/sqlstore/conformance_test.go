package sqlstore_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kmkit/kmkit/internal/pgschema"

	_ "github.com/jackc/pgx/v5/stdlib"

	"github.com/kmkit/kmkit/auth/ratelimit"
	"github.com/kmkit/kmkit/reporting/reportingtest"
	"github.com/kmkit/kmkit/storage/sqlstore"
	"github.com/kmkit/kmkit/storage/storetest"
)

// PostgresEnv names the variable holding a PostgreSQL URL for the PostgreSQL suites. Without
// it they skip; with it, an unreachable server fails them.
const PostgresEnv = "KMKIT_POSTGRES_DSN"

// openPostgres returns a DB in a fresh schema of the server named by PostgresEnv, dropped
// when the test ends.
func openPostgres(t testing.TB) *sqlstore.DB { return open(t, postgresDSN(t)) }

// databases are the two backends a test runs on, each a DSN of a new database: a SQLite
// file in the test's directory, or the PostgreSQL of KMKIT_POSTGRES_DSN (skipped without).
var databases = []struct {
	name string
	dsn  func(testing.TB) string
}{
	{"SQLite", func(t testing.TB) string { return "sqlite:" + filepath.Join(t.TempDir(), "kmkit.db") }},
	{"Postgres", func(t testing.TB) string { return postgresDSN(t) }},
}

// postgresDSN creates a fresh schema on the server named by PostgresEnv, dropped when the
// test ends, and returns the URL that uses it.
func postgresDSN(t testing.TB) string {
	t.Helper()
	return schemaDSN(t, PostgresEnv, PostgresEnv+" is not set")
}

// schemaDSN is postgresDSN on the server named by the variable env, skipping with the
// message skip when it is not set.
func schemaDSN(t testing.TB, env, skip string) string {
	t.Helper()
	dsn := os.Getenv(env)
	if dsn == "" {
		t.Skip(skip)
	}
	return pgschema.ForTest(t, dsn, "kmkit_test")
}

func openSQLite(t testing.TB) *sqlstore.DB {
	t.Helper()
	return open(t, "sqlite:"+filepath.Join(t.TempDir(), "kmkit.db"))
}

func open(t testing.TB, dsn string) *sqlstore.DB {
	t.Helper()
	db, err := sqlstore.Open(context.Background(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

func backend(open func(testing.TB) *sqlstore.DB) storetest.Backend {
	return storetest.Backend{
		KM:        storetest.ImportKM(func(t *testing.T) *sqlstore.KMStore { return open(t).KM() }),
		SCIM:      storetest.SeatedSCIM(func(t *testing.T) *sqlstore.SCIMStore { return open(t).SCIM() }),
		Reporting: func(t *testing.T) reportingtest.Store { return open(t).Reporting() },
		Limiter:   func(t *testing.T) ratelimit.Limiter { return open(t).Limiter() },
		Importer:  func(t *testing.T) storetest.Importer { return open(t).KM() },
	}
}

func TestSQLite(t *testing.T) { storetest.Run(t, backend(openSQLite)) }

func TestPostgres(t *testing.T) { storetest.Run(t, backend(openPostgres)) }

func TestOpenErrors(t *testing.T) {
	for _, dsn := range []string{"", "mysql://x", "sqlite:", "postgres://nobody@127.0.0.1:1/x?connect_timeout=1"} {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		_, err := sqlstore.Open(ctx, dsn)
		cancel()
		if err == nil {
			t.Errorf("Open(%q): no error", dsn)
		} else if !strings.Contains(err.Error(), "sqlstore:") {
			t.Errorf("Open(%q): %v, want an error naming the package", dsn, err)
		}
	}
}
