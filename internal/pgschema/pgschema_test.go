package pgschema

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"os/exec"
	"testing"
)

// TestCreateAndOrphans creates a schema on KMKIT_POSTGRES_DSN's server next to one a
// finished process left and one a running process holds: Create drops the first only,
// its URL works in its own schema, and drop removes it.
func TestCreateAndOrphans(t *testing.T) {
	dsn := os.Getenv("KMKIT_POSTGRES_DSN")
	if dsn == "" {
		t.Skip("KMKIT_POSTGRES_DSN is not set: no PostgreSQL server to create schemas on")
	}
	ctx := context.Background()
	admin, err := sql.Open("pgx", dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close()
	done := exec.Command("true")
	if err := done.Run(); err != nil {
		t.Fatal(err)
	}
	prefix := fmt.Sprintf("kmkit_pgschema_%d", os.Getpid())
	orphan := fmt.Sprintf("%s_%d_1", prefix, done.Process.Pid)
	alive := fmt.Sprintf("%s_%d_1", prefix, os.Getppid())
	for _, s := range []string{orphan, alive} {
		if _, err := admin.ExecContext(ctx, "CREATE SCHEMA "+s); err != nil {
			t.Fatal(err)
		}
	}
	defer admin.ExecContext(ctx, "DROP SCHEMA IF EXISTS "+alive+" CASCADE")
	u, drop, err := Create(ctx, dsn, prefix)
	if err != nil {
		t.Fatal(err)
	}
	defer drop() // again, should the test stop before it drops the schema (a no-op then)
	exists := func(name string) bool {
		var n int
		if err := admin.QueryRowContext(ctx, "SELECT count(*) FROM pg_namespace WHERE nspname = $1", name).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n == 1
	}
	if exists(orphan) || !exists(alive) {
		t.Errorf("after Create: the finished process's schema exists %v (want false), the running one's %v (want true)", exists(orphan), exists(alive))
	}
	db, err := sql.Open("pgx", u)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var schema string
	if _, err := db.ExecContext(ctx, "CREATE TABLE t (x int)"); err != nil {
		t.Fatal(err)
	}
	schema = fmt.Sprintf("%s_%d_%d", prefix, os.Getpid(), seq.Load())
	var table sql.NullString
	if err := admin.QueryRowContext(ctx, "SELECT to_regclass($1)::text", schema+".t").Scan(&table); err != nil {
		t.Fatal(err)
	}
	if !table.Valid {
		t.Errorf("the table the URL created is not in schema %s", schema)
	}
	if err := drop(); err != nil {
		t.Fatal(err)
	}
	if exists(schema) {
		t.Errorf("schema %s is still there after drop", schema)
	}
}
