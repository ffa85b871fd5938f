package sqlstore_test

import (
	"context"
	"database/sql"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/kmkit/kmkit/query"
	"github.com/kmkit/kmkit/storage/sqlstore"
)

var typedCols = []sqlstore.ColumnDef{
	{Name: "S", Type: query.TypeString},
	{Name: "F", Type: query.TypeFloat},
	{Name: "I", Type: query.TypeInteger},
	{Name: "B", Type: query.TypeBoolean},
	{Name: "D", Type: query.TypeDate},
	{Name: "T", Type: query.TypeDateTime},
}

// typedRows covers every type, nulls in every column, extreme numbers, multi-byte text
// and an integer given for a float column; more rows than one COPY chunk or insert batch.
func typedRows() [][]any {
	rows := [][]any{
		{"Zoë \"quoted\", line\nbreak", -0.5, int64(math.MinInt64), true, int64(-719162), int64(1_700_000_000_123_456)},
		{nil, nil, nil, nil, nil, nil},
		{"", math.MaxFloat64, int64(math.MaxInt64), false, int64(20_000), int64(-1)},
		{"日本", int64(3), int64(0), nil, int64(0), int64(0)},
	}
	for i := range 5_000 { // more than one COPY chunk (256 KiB) and insert batch
		rows = append(rows, []any{strings.Repeat("x", i%40), float64(i) / 3, int64(i), i%2 == 0, int64(i), int64(i) * 1_000_003})
	}
	return rows
}

// readTyped reads the table back in row order as Go values: strings, float64, int64,
// bool (0/1 on SQLite, read as int64 and turned into bool) or nil.
func readTyped(t *testing.T, db *sqlstore.DB) [][]any {
	t.Helper()
	rows, err := db.SQL().Query(`SELECT kmkit_row, "S", "F", "I", "B", "D", "T" FROM typed ORDER BY kmkit_row`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out [][]any
	for rows.Next() {
		var (
			n    int64
			s    sql.NullString
			f    sql.NullFloat64
			i    sql.NullInt64
			b    sql.NullBool
			d, x sql.NullInt64
		)
		if err := rows.Scan(&n, &s, &f, &i, &b, &d, &x); err != nil {
			t.Fatal(err)
		}
		if n != int64(len(out)) {
			t.Fatalf("row %d numbered %d", len(out), n)
		}
		row := []any{nil, nil, nil, nil, nil, nil}
		if s.Valid {
			row[0] = s.String
		}
		if f.Valid {
			row[1] = f.Float64
		}
		if i.Valid {
			row[2] = i.Int64
		}
		if b.Valid {
			row[3] = b.Bool
		}
		if d.Valid {
			row[4] = d.Int64
		}
		if x.Valid {
			row[5] = x.Int64
		}
		out = append(out, row)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

func testLoadTypes(t *testing.T, dsn string) {
	ctx := context.Background()
	db := open(t, dsn)
	in := typedRows()
	if err := db.LoadTable(ctx, "typed", typedCols, &sqlstore.SliceRows{Rows: in}, []string{"S"}, "v1"); err != nil {
		t.Fatal(err)
	}
	want := make([][]any, len(in))
	for i, r := range in {
		want[i] = append([]any(nil), r...)
		if v, ok := r[1].(int64); ok {
			want[i][1] = float64(v)
		}
	}
	if diff := cmp.Diff(want, readTyped(t, db)); diff != "" {
		t.Errorf("table differs from the rows loaded (-loaded +table):\n%s", diff)
	}
	if got, err := db.Imported(ctx, "typed"); err != nil || got != "v1" {
		t.Errorf("Imported = %q, %v; want v1", got, err)
	}

	// A value of the wrong type fails the load and leaves the table as it was.
	bad := [][]any{{"a", 1.5, int64(1), true, int64(1), int64(1)}, {"b", "not a float", int64(1), true, int64(1), int64(1)}}
	err := db.LoadTable(ctx, "typed", typedCols, &sqlstore.SliceRows{Rows: bad}, nil, "v2")
	if err == nil {
		t.Fatal("a string for a float column loaded")
	}
	if got, err := db.Imported(ctx, "typed"); err != nil || got != "v1" {
		t.Errorf("after a failed load Imported = %q, %v; want v1", got, err)
	}
	if got := readTyped(t, db); len(got) != len(in) {
		t.Errorf("after a failed load the table has %d rows, want the %d loaded before", len(got), len(in))
	}
}

func TestLoadTypesSQLite(t *testing.T) {
	testLoadTypes(t, "sqlite:"+t.TempDir()+"/kmkit.db")
}

func TestLoadTypesPostgres(t *testing.T) { testLoadTypes(t, postgresDSN(t)) }

// TestLoadRestoresSQLiteSettings: the import's connection sorts with temporary files, worker
// threads and a small cache; the pool's connections keep temporary data in memory and
// their 64 MiB cache afterwards.
func TestLoadRestoresSQLiteSettings(t *testing.T) {
	ctx := context.Background()
	db := open(t, "sqlite:"+t.TempDir()+"/kmkit.db")
	db.SQL().SetMaxOpenConns(1) // the one connection the import used
	if err := db.LoadTable(ctx, "typed", typedCols, &sqlstore.SliceRows{Rows: typedRows()[:10]}, []string{"S", "F"}, "v1"); err != nil {
		t.Fatal(err)
	}
	var store, threads, cache int
	for q, v := range map[string]*int{"PRAGMA temp_store": &store, "PRAGMA threads": &threads, "PRAGMA cache_size": &cache} {
		if err := db.SQL().QueryRowContext(ctx, q).Scan(v); err != nil {
			t.Fatal(err)
		}
	}
	if store != 2 || threads != 0 || cache != -65536 { // 2: MEMORY; -65536: 64 MiB
		t.Errorf("after a load temp_store = %d, threads = %d, cache_size = %d; want 2 (MEMORY), 0 and -65536", store, threads, cache)
	}
}

// testBrokenSecond: a CSV error in one source fails the import with an error naming the
// file and changes nothing that readers see (the import is all or nothing); the sources
// before it (in the import's order: the most work first), the one loading while the
// broken file was parsed included, are loaded and staged, not current, for the import's
// next run to find.
func testBrokenSecond(t *testing.T, dsn string) {
	ctx := context.Background()
	dir := writeLoadData(t, 600)
	db := open(t, dsn)
	if err := db.KM().Import(ctx, os.DirFS(dir)); err != nil {
		t.Fatal(err)
	}
	// ld_orders (imported first: 600 rows and six indexes against 7 rows and two) gains a
	// row; ld_customers breaks.
	f, err := os.OpenFile(filepath.Join(dir, "data", "ld_orders.csv"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString("O99999,C1,OPEN,1.5,1\n")
	f.Close()
	f, err = os.OpenFile(filepath.Join(dir, "data", "ld_customers.csv"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString("C7,Customer 7,one field too many\n")
	f.Close()
	err = db.KM().Import(ctx, os.DirFS(dir))
	if err == nil || !strings.Contains(err.Error(), "ld_customers.csv") {
		t.Fatalf("import of a broken ld_customers.csv: %v, want an error naming the file", err)
	}
	var customers, orders int
	if err := db.SQL().QueryRow("SELECT count(*) FROM ld_customers").Scan(&customers); err != nil {
		t.Fatal(err)
	}
	if err := db.SQL().QueryRow("SELECT count(*) FROM ld_orders").Scan(&orders); err != nil {
		t.Fatal(err)
	}
	if customers != 7 || orders != 600 {
		t.Errorf("after the failed import: %d customers (want the old 7), %d orders (want the old 600)", customers, orders)
	}
	var staged int
	if err := db.SQL().QueryRow(`SELECT rows_loaded FROM km_generations WHERE source = 'ld_orders' AND replaced_at IS NOT NULL`).Scan(&staged); err != nil || staged != 601 {
		t.Errorf("the staged generation of ld_orders holds %d rows, %v; want the new 601", staged, err)
	}
}

func TestBrokenSecondSQLite(t *testing.T) {
	testBrokenSecond(t, "sqlite:"+filepath.Join(t.TempDir(), "kmkit.db"))
}

func TestBrokenSecondPostgres(t *testing.T) { testBrokenSecond(t, postgresDSN(t)) }
