package sqlstore

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/kmkit/kmkit/internal/pgschema"
	"github.com/kmkit/kmkit/query"
)

// TestSwitchCheckRollsBack switches a source to a staged generation whose check fails,
// then to one whose check passes: the failed switch leaves the current generation and
// the source's view as they were and returns the check's error; the check reads the
// staged table inside the switch's transaction.
func TestSwitchCheckRollsBack(t *testing.T) {
	dsns := map[string]string{"SQLite": "sqlite:" + filepath.Join(t.TempDir(), "kmkit.db")}
	if dsn := os.Getenv("KMKIT_POSTGRES_DSN"); dsn != "" {
		dsns["PostgreSQL"] = pgschema.ForTest(t, dsn, "kmkit_switch")
	}
	for name, dsn := range dsns {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			db, err := Open(ctx, dsn)
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			cols := []ColumnDef{{Name: "N", Type: query.TypeInteger}}
			if err := db.LoadTable(ctx, "things", cols, &SliceRows{Rows: [][]any{{int64(1)}}}, nil, "one"); err != nil {
				t.Fatal(err)
			}
			before, err := db.CurrentTable(ctx, "things")
			if err != nil {
				t.Fatal(err)
			}
			if err := db.loadGeneration(ctx, "things", cols, &SliceRows{Rows: [][]any{{int64(2)}}}, nil, Distribution{}, "two", true); err != nil {
				t.Fatal(err)
			}
			staged := generationTable("things", "two")
			refused := errors.New("refused")
			var read int64
			check := func(fail bool) func(context.Context, querier) error {
				return func(ctx context.Context, q querier) error {
					if err := q.QueryRowContext(ctx, `SELECT "N" FROM `+quoteIdent(staged)).Scan(&read); err != nil {
						return err
					}
					if fail {
						return refused
					}
					return nil
				}
			}
			if _, err := db.switchGenerations(ctx, []generation{{source: "things", table: staged}}, check(true)); !errors.Is(err, refused) {
				t.Fatalf("the switch whose check fails: %v, want the check's error", err)
			}
			if read != 2 {
				t.Errorf("the check read %d from the staged table, want 2", read)
			}
			var n int64
			if got, err := db.CurrentTable(ctx, "things"); err != nil || got != before {
				t.Errorf("after the refused switch the current table is %s (%v), want %s", got, err, before)
			}
			if err := db.SQL().QueryRowContext(ctx, `SELECT "N" FROM things`).Scan(&n); err != nil || n != 1 {
				t.Errorf("after the refused switch the view reads %d (%v), want 1", n, err)
			}
			if missing, err := db.switchGenerations(ctx, []generation{{source: "things", table: staged}}, check(false)); err != nil || missing != nil {
				t.Fatalf("the switch whose check passes: missing %v, %v", missing, err)
			}
			if err := db.SQL().QueryRowContext(ctx, `SELECT "N" FROM things`).Scan(&n); err != nil || n != 2 {
				t.Errorf("after the switch the view reads %d (%v), want 2", n, err)
			}
		})
	}
}
