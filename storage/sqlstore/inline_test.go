package sqlstore

import (
	"context"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"
)

// FuzzInlineLiteral checks that a value written into a statement as a literal (inlineArgs,
// for statements past the parameter bound) reads back as the same value that binding it
// gives: strings with quotes, backslashes, markers and NUL, integers and floats at their
// extremes. A literal that escaped its quoting would change the statement or the value.
func FuzzInlineLiteral(f *testing.F) {
	for _, s := range []string{"", "a'b", `a\b`, `\'`, "''", "'; DROP TABLE kmkit_migrations; --", "?1", "$1", "\"x\"", "é\u2028", "a\x00b", "E'x'"} {
		f.Add(s, int64(0), 0.0)
	}
	f.Add("x", int64(math.MinInt64), math.SmallestNonzeroFloat64)
	f.Add("x", int64(math.MaxInt64), -math.MaxFloat64)
	f.Add("x", int64(-1), 0.1)
	ctx := context.Background()
	dbs := map[string]*DB{}
	sqlite, err := Open(ctx, "sqlite:"+filepath.Join(f.TempDir(), "inline.db"))
	if err != nil {
		f.Fatal(err)
	}
	defer sqlite.Close()
	dbs["sqlite"] = sqlite
	if dsn := os.Getenv("KMKIT_POSTGRES_DSN"); dsn != "" {
		pg, err := Open(ctx, dsn)
		if err != nil {
			f.Fatal(err)
		}
		defer pg.Close()
		dbs["postgres"] = pg
	}
	f.Fuzz(func(t *testing.T, s string, i int64, fl float64) {
		if math.IsNaN(fl) {
			fl = 0
		}
		for name, db := range dbs {
			vals := []any{s, i, fl, strings.ToUpper(s) == s}
			for _, v := range vals {
				if str, ok := v.(string); ok && name == "postgres" && (!utf8.ValidString(str) || strings.IndexByte(str, 0) >= 0) {
					continue // PostgreSQL text holds neither, bound or not
				}
				q := "SELECT " + db.d.castParam(db.d.placeholder(1), v) + " AS v, 1 AS \"?1 $1 '\""
				var bound, inlined any
				if err := db.sql.QueryRowContext(ctx, q, v).Scan(&bound, new(any)); err != nil {
					t.Fatalf("%s: %q bound: %v", name, v, err)
				}
				lit, err := inlineArgs(db.d, q, []any{v})
				if err != nil {
					t.Fatalf("%s: %q: %v", name, v, err)
				}
				if err := db.sql.QueryRowContext(ctx, lit).Scan(&inlined, new(any)); err != nil {
					t.Fatalf("%s: %s: %v", name, lit, err)
				}
				if b, ok := bound.([]byte); ok {
					bound = string(b)
				}
				if b, ok := inlined.([]byte); ok {
					inlined = string(b)
				}
				if bound != inlined {
					t.Fatalf("%s: %q: bound reads %#v, the literal %s reads %#v", name, v, bound, lit, inlined)
				}
			}
		}
	})
}
