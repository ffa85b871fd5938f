package main

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kmkit/kmkit/storage/sqlstore"
)

// TestAgreement runs the whole benchmark on a small demo, once per query and side: every
// request succeeds and, where both sides answer the same question, kmkit's rows equal the
// hand-written statement's (measure fails otherwise). It prints a row per query.
func TestAgreement(t *testing.T) {
	ctx := context.Background()
	run := func(t *testing.T, dialect, dsn, dba string) {
		var out bytes.Buffer
		if err := measure(ctx, &out, dialect, dsn, dba, 3000, 1, 1); err != nil {
			t.Fatal(err)
		}
		for _, q := range queries {
			if !strings.Contains(out.String(), "| "+q.id+" | "+q.name+" |") {
				t.Errorf("no row for query %s in\n%s", q.id, out.String())
			}
		}
		// A second run finds the demo imported.
		out.Reset()
		if err := measure(ctx, &out, dialect, dsn, dba, 3000, 1, 1); err != nil {
			t.Fatal(err)
		}
		if strings.Count(out.String(), "nothing generated or loaded") != 2 {
			t.Errorf("the second run imported again:\n%s", out.String())
		}
		// kmkit runs on its own import: none of the DBA's indexes is in its database.
		if n := dbaIndexCount(t, dialect, dsn); n != 0 {
			t.Errorf("kmkit's database holds %d of the DBA's indexes", n)
		}
		if n := dbaIndexCount(t, dialect, dba); n < len(dbaIndexes[dialect]) {
			t.Errorf("the DBA's database holds %d of the DBA's %d indexes", n, len(dbaIndexes[dialect]))
		}
	}
	t.Run("sqlite", func(t *testing.T) {
		dir := t.TempDir()
		run(t, "sqlite", "sqlite:"+filepath.Join(dir, "bench.db"), "sqlite:"+filepath.Join(dir, "bench-dba.db"))
	})
	t.Run("postgres", func(t *testing.T) {
		dsn := os.Getenv("KMKIT_POSTGRES_DSN")
		if dsn == "" {
			t.Skip("KMKIT_POSTGRES_DSN is not set")
		}
		// A schema of its own: the benchmark's keeps its large demo.
		const testSchema = schema + "_test"
		inTest, err := inSchema(ctx, dsn, testSchema)
		if err != nil {
			t.Fatal(err)
		}
		dba, err := inSchema(ctx, dsn, testSchema+"_dba")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			if admin, err := sql.Open("pgx", dsn); err == nil {
				admin.Exec("DROP SCHEMA " + testSchema + " CASCADE")
				admin.Exec("DROP SCHEMA " + testSchema + "_dba CASCADE")
				admin.Close()
			}
		})
		run(t, "postgres", inTest, dba)
	})
}

// dbaIndexCount returns how many indexes named dba_* the database of dsn holds (in its
// search path's schema on PostgreSQL).
func dbaIndexCount(t *testing.T, dialect, dsn string) int {
	t.Helper()
	db, err := sqlstore.Open(context.Background(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	q := map[string]string{
		"sqlite":   `SELECT count(*) FROM sqlite_master WHERE type = 'index' AND name LIKE 'dba\_%' ESCAPE '\'`,
		"postgres": `SELECT count(*) FROM pg_indexes WHERE schemaname = current_schema() AND indexname LIKE 'dba\_%'`,
	}[dialect]
	var n int
	if err := db.SQL().QueryRowContext(context.Background(), q).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

func TestSameCell(t *testing.T) {
	for _, c := range []struct {
		a, b any
		same bool
	}{
		{nil, nil, true},
		{nil, "x", false},
		{"x", "x", true},
		{"x", []byte("x"), true},
		{"x", "y", false},
		{jsonNumber("1.5"), 1.5, true},
		{jsonNumber("1.5000000000001"), 1.5, true},
		{jsonNumber("1.6"), 1.5, false},
		{jsonNumber("3"), int64(3), true},
		{jsonNumber("3"), int64(4), false},
		{"2025-01-01", int64(20089), true}, // a date the API formats
		{true, true, true},
		{true, false, false},
	} {
		if got := sameCell(c.a, c.b); got != c.same {
			t.Errorf("sameCell(%#v, %#v) = %v, want %v", c.a, c.b, got, c.same)
		}
	}
}

func jsonNumber(s string) any { return json.Number(s) }
