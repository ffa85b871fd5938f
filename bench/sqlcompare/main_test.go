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
)

// TestAgreement runs the whole benchmark on a small demo, once per query and side: every
// request succeeds and, where both sides answer the same question, kmkit's rows equal the
// hand-written statement's (measure fails otherwise). It prints a row per query.
func TestAgreement(t *testing.T) {
	ctx := context.Background()
	run := func(t *testing.T, dialect, dsn string) {
		var out bytes.Buffer
		if err := measure(ctx, &out, dialect, dsn, 3000, 1, 1); err != nil {
			t.Fatal(err)
		}
		for _, q := range queries {
			if !strings.Contains(out.String(), "| "+q.id+" | "+q.name+" |") {
				t.Errorf("no row for query %s in\n%s", q.id, out.String())
			}
		}
		// A second run finds the demo imported.
		out.Reset()
		if err := measure(ctx, &out, dialect, dsn, 3000, 1, 1); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(out.String(), "nothing generated or loaded") {
			t.Errorf("the second run imported again:\n%s", out.String())
		}
	}
	t.Run("sqlite", func(t *testing.T) {
		run(t, "sqlite", "sqlite:"+filepath.Join(t.TempDir(), "bench.db"))
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
		t.Cleanup(func() {
			if admin, err := sql.Open("pgx", dsn); err == nil {
				admin.Exec("DROP SCHEMA " + testSchema + " CASCADE")
				admin.Close()
			}
		})
		run(t, "postgres", inTest)
	})
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
