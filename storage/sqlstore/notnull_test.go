package sqlstore_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/kmkit/kmkit/km"
	"github.com/kmkit/kmkit/query"
	"github.com/kmkit/kmkit/storage/sqlstore"
)

// notNullModel is one record whose column V holds nulls in some imports and not in
// others.
const notNullModel = `id: nn
records:
  - id: T
    source: nn_t
    key: ID
    fields:
      - {id: ID, type: string}
      - {id: V, type: integer}
    indexes: [[V]]
`

// testNotNull loads a table whose V holds no null (declared NOT NULL) and the same table
// with a null in V (nullable), in turn by Import and by the host's LoadTable: the
// ascending sort puts the null last every time, whatever the store read of the table's
// form before.
func testNotNull(t *testing.T, dsn string) {
	ctx := context.Background()
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, "models"), 0o755)
	os.MkdirAll(filepath.Join(dir, "data"), 0o755)
	if err := os.WriteFile(filepath.Join(dir, "models", "nn.yaml"), []byte(notNullModel), 0o644); err != nil {
		t.Fatal(err)
	}
	write := func(csv string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(dir, "data", "nn_t.csv"), []byte(csv), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	db := open(t, dsn)
	s := db.KM()
	sorted := func(s *sqlstore.KMStore) []string {
		t.Helper()
		m, err := s.Model(ctx, "nn")
		if err != nil {
			t.Fatal(err)
		}
		p, err := km.NewPlan(m, &km.PlanRequest{Record: "T",
			Fields: []string{"ID", "V"}, Sort: []query.SortTerm{{Field: "V"}}, PageSize: 10})
		if err != nil {
			t.Fatal(err)
		}
		res, err := s.Query(ctx, p)
		if err != nil {
			t.Fatal(err)
		}
		var ids []string
		for _, r := range res.Rows {
			ids = append(ids, r[0].Str)
		}
		return ids
	}
	notNull := func(col string) bool {
		t.Helper()
		table := sqlstore.GenerationOf(t, db, "nn_t")
		q := `SELECT "notnull" <> 0 FROM pragma_table_info(?) WHERE name = ?`
		arg := table
		if db.Dialect() == "postgres" {
			q, arg = `SELECT attnotnull FROM pg_attribute WHERE attrelid = to_regclass($1) AND attname = $2`, `"`+table+`"`
		}
		var b bool
		if err := db.SQL().QueryRowContext(ctx, q, arg, col).Scan(&b); err != nil {
			t.Fatal(err)
		}
		return b
	}

	write("ID,V\nA,3\nB,1\nC,2\nD,1\n")
	if err := s.Import(ctx, os.DirFS(dir)); err != nil {
		t.Fatal(err)
	}
	if !notNull("V") || !notNull("ID") {
		t.Error("the columns without nulls are not declared NOT NULL")
	}
	// Ties in row order: B before D.
	if got, want := sorted(s), []string{"B", "D", "C", "A"}; !slices.Equal(got, want) {
		t.Errorf("sorted by V: %q, want %q", got, want)
	}

	// LoadTable of the host, without an Import, read by a store of the host's model
	// (PutModel), which reads the view of the table's current generation: the store
	// reads the table's form again. (The store that imported the table keeps reading
	// its own generation until it imports again.)
	m, err := s.Model(ctx, "nn")
	if err != nil {
		t.Fatal(err)
	}
	host := db.KM()
	if err := host.PutModel(ctx, m); err != nil {
		t.Fatal(err)
	}
	if got, want := sorted(host), []string{"B", "D", "C", "A"}; !slices.Equal(got, want) {
		t.Errorf("the host's store, sorted by V: %q, want %q", got, want)
	}
	err = db.LoadTable(ctx, "nn_t", []sqlstore.ColumnDef{{Name: "ID", Type: query.TypeString}, {Name: "V", Type: query.TypeInteger}},
		&sqlstore.SliceRows{Rows: [][]any{{"A", int64(3)}, {"B", nil}, {"C", int64(1)}}}, nil, "host 1")
	if err != nil {
		t.Fatal(err)
	}
	if notNull("V") {
		t.Error("LoadTable declared V NOT NULL")
	}
	if got, want := sorted(host), []string{"C", "A", "B"}; !slices.Equal(got, want) {
		t.Errorf("sorted by V after LoadTable with a null: %q, want %q (nulls last)", got, want)
	}
	err = db.LoadTable(ctx, "nn_t", []sqlstore.ColumnDef{{Name: "ID", Type: query.TypeString, NotNull: true}, {Name: "V", Type: query.TypeInteger, NotNull: true}},
		&sqlstore.SliceRows{Rows: [][]any{{"A", int64(3)}, {"B", int64(1)}}}, nil, "host 2")
	if err != nil {
		t.Fatal(err)
	}
	if !notNull("V") {
		t.Error("LoadTable did not declare V NOT NULL")
	}
	if got, want := sorted(host), []string{"B", "A"}; !slices.Equal(got, want) {
		t.Errorf("sorted by V after LoadTable: %q, want %q", got, want)
	}

	write("ID,V\nA,3\nB,\nC,2\nD,1\n")
	if err := s.Import(ctx, os.DirFS(dir)); err != nil {
		t.Fatal(err)
	}
	if notNull("V") {
		t.Error("V holds a null and is declared NOT NULL")
	}
	if got, want := sorted(s), []string{"D", "C", "A", "B"}; !slices.Equal(got, want) {
		t.Errorf("sorted by V with a null: %q, want %q (nulls last)", got, want)
	}
}

func TestNotNullSQLite(t *testing.T) {
	testNotNull(t, "sqlite:"+filepath.Join(t.TempDir(), "kmkit.db"))
}

func TestNotNullPostgres(t *testing.T) { testNotNull(t, postgresDSN(t)) }

// TestNotNullOfAnotherGeneration: while another import (without the nulls, so with V
// NOT NULL) is the table's current generation, a store reads its own, and sorts its
// nulls last in both directions, never by the other import's columns; so it does once
// its import is current again.
func TestNotNullOfAnotherGeneration(t *testing.T) {
	for _, b := range databases {
		t.Run(b.name, func(t *testing.T) {
			dsn := b.dsn(t)
			dir := func(csv string) string {
				d := t.TempDir()
				os.MkdirAll(filepath.Join(d, "models"), 0o755)
				os.MkdirAll(filepath.Join(d, "data"), 0o755)
				if err := os.WriteFile(filepath.Join(d, "models", "nn.yaml"), []byte(notNullModel), 0o644); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(filepath.Join(d, "data", "nn_t.csv"), []byte(csv), 0o644); err != nil {
					t.Fatal(err)
				}
				return d
			}
			withNull, without := dir("ID,V\nA,3\nB,\nC,2\nD,1\n"), dir("ID,V\nA,3\nB,1\nC,2\nD,1\n")
			db := open(t, dsn)
			s := db.KM()
			if err := s.Import(t.Context(), os.DirFS(withNull)); err != nil {
				t.Fatal(err)
			}
			m, err := s.Model(t.Context(), "nn")
			if err != nil {
				t.Fatal(err)
			}
			sorted := func(desc bool) ([]string, error) {
				p, err := km.NewPlan(m, &km.PlanRequest{Record: "T", Fields: []string{"ID", "V"},
					Sort: []query.SortTerm{{Field: "V", Desc: desc}}, PageSize: 10})
				if err != nil {
					t.Fatal(err)
				}
				res, err := s.Query(t.Context(), p)
				if err != nil {
					return nil, err
				}
				var ids []string
				for _, r := range res.Rows {
					ids = append(ids, r[0].Str)
				}
				return ids, nil
			}
			check := func(when string) {
				t.Helper()
				for _, c := range []struct {
					desc bool
					want []string
				}{{false, []string{"D", "C", "A", "B"}}, {true, []string{"A", "C", "D", "B"}}} {
					got, err := sorted(c.desc)
					if err != nil || !slices.Equal(got, c.want) {
						t.Errorf("%s: sorted by V (desc %v): %q, %v; want %q (nulls last)", when, c.desc, got, err, c.want)
					}
				}
			}
			// Another store of this DB (a reload under way) imports the table without
			// its null (V NOT NULL): the first store reads its own generation, with its
			// own columns' facts.
			if err := db.KM().Import(t.Context(), os.DirFS(without)); err != nil {
				t.Fatal(err)
			}
			check("after another store's import")
			// Another process imports the first store's data again.
			if err := open(t, dsn).KM().Import(t.Context(), os.DirFS(withNull)); err != nil {
				t.Fatal(err)
			}
			check("after the first store's data came back")
		})
	}
}
