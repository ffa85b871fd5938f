package sqlstore_test

import (
	"context"
	"encoding/csv"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/kmkit/kmkit/km"
	"github.com/kmkit/kmkit/query/column"
	"github.com/kmkit/kmkit/storage/sqlstore"
)

// loadModel declares a key, a relationship and four indexes: composite ones, descending
// columns that can hold nulls (NET, QTY) and one that cannot (CUST), and two that begin
// with the relationship field CUST.
const loadModel = `id: ld
records:
  - id: ORDERS
    source: ld_orders
    key: ID
    fields:
      - {id: ID, type: string}
      - {id: CUST, type: string}
      - {id: STATUS, type: string}
      - {id: NET, type: float}
      - {id: QTY, type: integer}
    indexes: [[STATUS, -NET], [-QTY], [CUST, STATUS], [-CUST]]
  - id: CUSTOMERS
    source: ld_customers
    key: CID
    fields:
      - {id: CID, type: string}
      - {id: NAME, type: string}
relationships:
  - {from: ORDERS.CUST, to: CUSTOMERS.CID}
`

// writeLoadData writes loadModel and n orders (more than one insert batch on SQLite, with
// empty cells, quotes and non-ASCII text) into a data directory.
func writeLoadData(t *testing.T, n int) string {
	t.Helper()
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, "models"), 0o755)
	os.MkdirAll(filepath.Join(dir, "data"), 0o755)
	if err := os.WriteFile(filepath.Join(dir, "models", "ld.yaml"), []byte(loadModel), 0o644); err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	b.WriteString("ID,CUST,STATUS,NET,QTY\n")
	for i := range n {
		net, qty := strconv.FormatFloat(float64(i%997)*1.25+0.1, 'f', -1, 64), strconv.Itoa(i%13-3)
		if i%17 == 0 {
			net = ""
		}
		if i%19 == 0 {
			qty = ""
		}
		status := []string{"OPEN", "CLOSED", `"Zoë, ""late"""`, ""}[i%4]
		fmt.Fprintf(&b, "O%05d,C%d,%s,%s,%s\n", i, i%7, status, net, qty)
	}
	os.WriteFile(filepath.Join(dir, "data", "ld_orders.csv"), []byte(b.String()), 0o644)
	b.Reset()
	b.WriteString("CID,NAME\n")
	for i := range 7 {
		fmt.Fprintf(&b, "C%d,Customer %d\n", i, i)
	}
	os.WriteFile(filepath.Join(dir, "data", "ld_customers.csv"), []byte(b.String()), 0o644)
	return dir
}

// csvRows reads a CSV file with encoding/csv: the expected table, independent of the loader.
func csvRows(t *testing.T, path string) [][]string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	recs, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	return recs[1:]
}

// dbOrders reads the orders table back as text in row order, with "" for NULL.
func dbOrders(t *testing.T, db *sqlstore.DB) [][]string {
	t.Helper()
	rows, err := db.SQL().Query(`SELECT "ID", "CUST", "STATUS", "NET", "QTY" FROM ld_orders ORDER BY kmkit_row`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out [][]string
	for rows.Next() {
		var id, cust, status *string
		var net *float64
		var qty *int64
		if err := rows.Scan(&id, &cust, &status, &net, &qty); err != nil {
			t.Fatal(err)
		}
		rec := []string{*id, *cust, "", "", ""}
		if status != nil {
			rec[2] = *status
		}
		if net != nil {
			rec[3] = strconv.FormatFloat(*net, 'f', -1, 64)
		}
		if qty != nil {
			rec[4] = strconv.FormatInt(*qty, 10)
		}
		out = append(out, rec)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// indexColumns lists the indexes of table as their columns, from the database's catalog:
// a descending column is written "NAME desc" and, on PostgreSQL, one sorting nulls first
// "NAME nulls first". On SQLite the rowid every index entry ends with is listed as the
// column it is, kmkit_row.
func indexColumns(t *testing.T, db *sqlstore.DB, table string) [][]string {
	t.Helper()
	var q string
	if db.Dialect() == "sqlite" {
		q = `SELECT m.name, coalesce(ii.name, 'kmkit_row') || CASE WHEN ii.desc THEN ' desc' ELSE '' END
			FROM sqlite_master m, pragma_index_xinfo(m.name) ii
			WHERE m.type = 'index' AND m.tbl_name = ? AND m.sql IS NOT NULL AND (ii.key OR ii.cid = -1)
			ORDER BY m.name, ii.seqno`
	} else {
		q = `SELECT i.relname, a.attname
				|| CASE WHEN x.indoption[k.ord - 1] & 1 = 1 THEN ' desc' ELSE '' END
				|| CASE WHEN x.indoption[k.ord - 1] & 2 = 2 THEN ' nulls first' ELSE '' END
			FROM pg_index x
			JOIN pg_class i ON i.oid = x.indexrelid JOIN pg_class c ON c.oid = x.indrelid
			JOIN pg_namespace n ON n.oid = c.relnamespace
			CROSS JOIN LATERAL unnest(x.indkey) WITH ORDINALITY k(attnum, ord)
			JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum = k.attnum
			WHERE c.relname = $1 AND n.nspname = current_schema() AND NOT x.indisprimary
			ORDER BY i.relname, k.ord`
	}
	rows, err := db.SQL().Query(q, table)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	byName := map[string][]string{}
	for rows.Next() {
		var name, col string
		if err := rows.Scan(&name, &col); err != nil {
			t.Fatal(err)
		}
		byName[name] = append(byName[name], col)
	}
	var out [][]string
	for _, cols := range byName {
		out = append(out, cols)
	}
	slices.SortFunc(out, func(a, b []string) int { return slices.Compare(a, b) })
	return out
}

func testLoad(t *testing.T, dsn string) {
	ctx := context.Background()
	dir := writeLoadData(t, 1500)
	db := open(t, dsn)
	if err := db.KM().Import(ctx, os.DirFS(dir)); err != nil {
		t.Fatal(err)
	}
	want := csvRows(t, filepath.Join(dir, "data", "ld_orders.csv"))
	got := dbOrders(t, db)
	if len(got) != len(want) {
		t.Fatalf("%d rows in the table, %d in the CSV", len(got), len(want))
	}
	var sumWant, sumGot float64
	for i := range want {
		if !slices.Equal(got[i], want[i]) {
			t.Fatalf("row %d: %q in the table, %q in the CSV", i+1, got[i], want[i])
		}
		w, _ := strconv.ParseFloat(want[i][3], 64)
		g, _ := strconv.ParseFloat(got[i][3], 64)
		sumWant, sumGot = sumWant+w, sumGot+g
	}
	if math.Abs(sumWant-sumGot) > 1e-9 {
		t.Errorf("sum of NET %v, CSV %v", sumGot, sumWant)
	}
	// The rows are numbered 0 to n-1 in the file's order (the order compared above).
	var lo, hi, count int64
	if err := db.SQL().QueryRow(`SELECT min(kmkit_row), max(kmkit_row), count(DISTINCT kmkit_row) FROM ld_orders`).Scan(&lo, &hi, &count); err != nil {
		t.Fatal(err)
	}
	if lo != 0 || hi != int64(len(want))-1 || count != int64(len(want)) {
		t.Errorf("kmkit_row from %d to %d, %d distinct, want 0 to %d", lo, hi, count, len(want)-1)
	}
	// The declared indexes, each ending with the row order, their descending columns with
	// nulls last (PostgreSQL: plain DESC, nulls first, where the column holds none, as the
	// statements sort it), and a lookup index on the key; the relationship field CUST
	// begins declared indexes, which serve its lookups. On PostgreSQL a lookup index does
	// not hold the row order; on SQLite every index ends with the rowid.
	wantIdx := [][]string{{"CUST", "STATUS", "kmkit_row"}, {"CUST desc nulls first", "kmkit_row"}, {"ID"},
		{"QTY desc", "kmkit_row"}, {"STATUS", "NET desc", "kmkit_row"}}
	if db.Dialect() == "sqlite" {
		wantIdx[1], wantIdx[2] = []string{"CUST desc", "kmkit_row"}, []string{"ID", "kmkit_row"}
	}
	if got := indexColumns(t, db, sqlstore.GenerationOf(t, db, "ld_orders")); !slices.EqualFunc(got, wantIdx, slices.Equal) {
		t.Errorf("indexes of ld_orders: %q, want %q", got, wantIdx)
	}
	// CUSTOMERS declares none: every field is indexed, as before indexes: existed.
	wantIdx = [][]string{{"CID", "kmkit_row"}, {"NAME", "kmkit_row"}}
	if got := indexColumns(t, db, sqlstore.GenerationOf(t, db, "ld_customers")); !slices.EqualFunc(got, wantIdx, slices.Equal) {
		t.Errorf("indexes of ld_customers: %q, want %q", got, wantIdx)
	}
}

func TestLoadSQLite(t *testing.T) { testLoad(t, "sqlite:"+filepath.Join(t.TempDir(), "kmkit.db")) }

func TestLoadPostgres(t *testing.T) { testLoad(t, postgresDSN(t)) }

// testGenerated starts three replicas at once on one database, then restarts one: the
// data is generated and loaded by at least one replica, and a restart generates nothing.
func testGenerated(t *testing.T, dsn string) {
	ctx := context.Background()
	dir := writeLoadData(t, 600)
	models, err := km.Load(os.DirFS(dir))
	if err != nil {
		t.Fatal(err)
	}
	var calls atomic.Int32
	generate := func() (map[string]*column.Table, error) {
		calls.Add(1)
		tables := map[string]*column.Table{}
		for _, src := range []struct {
			name string
			sc   column.Schema
		}{
			{"ld_orders", column.Schema{"ID": 0, "CUST": 0, "STATUS": 0, "NET": 0, "QTY": 0}},
			{"ld_customers", column.Schema{"CID": 0, "NAME": 0}},
		} {
			for _, r := range models[0].Records {
				if r.Source == src.name {
					for _, f := range r.Fields {
						src.sc[f.ID] = f.Type
					}
				}
			}
			f, err := os.Open(filepath.Join(dir, "data", src.name+".csv"))
			if err != nil {
				return nil, err
			}
			tab, err := column.LoadCSV(f, src.sc)
			f.Close()
			if err != nil {
				return nil, err
			}
			tables[src.name] = tab
		}
		return tables, nil
	}
	var wg sync.WaitGroup
	for range 3 {
		s := open(t, dsn).KM()
		wg.Go(func() {
			if _, err := s.ImportGenerated(ctx, models, "rows=600", generate); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	if n := calls.Load(); n < 1 || n > 3 {
		t.Fatalf("generated %d times by 3 replicas", n)
	}
	db := open(t, dsn)
	if got := dbOrders(t, db); len(got) != 600 {
		t.Fatalf("%d orders after the replicas started, want 600", len(got))
	}
	calls.Store(0)
	generated, err := db.KM().ImportGenerated(ctx, models, "rows=600", generate)
	if err != nil {
		t.Fatal(err)
	}
	if generated || calls.Load() != 0 {
		t.Errorf("a restart with the same version generated the data (%v, %d calls)", generated, calls.Load())
	}
	// Another version is generated and loaded again.
	generated, err = db.KM().ImportGenerated(ctx, models, "rows=601", generate)
	if err != nil || !generated || calls.Load() != 1 {
		t.Errorf("a new version: generated %v, %d calls, %v", generated, calls.Load(), err)
	}
}

func TestGeneratedSQLite(t *testing.T) {
	testGenerated(t, "sqlite:"+filepath.Join(t.TempDir(), "kmkit.db"))
}

func TestGeneratedPostgres(t *testing.T) { testGenerated(t, postgresDSN(t)) }

func TestImportBadIndex(t *testing.T) {
	dir := writeLoadData(t, 3)
	bad := strings.Replace(loadModel, "[-QTY]", "[-QTY, PRICE]", 1)
	os.WriteFile(filepath.Join(dir, "models", "ld.yaml"), []byte(bad), 0o644)
	err := openSQLite(t).KM().Import(context.Background(), os.DirFS(dir))
	want := `models/ld.yaml:12: index field "PRICE" is not a field of record ORDERS`
	if err == nil || err.Error() != want {
		t.Errorf("Import = %v, want %s", err, want)
	}
}
