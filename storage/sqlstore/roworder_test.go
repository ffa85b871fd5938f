package sqlstore_test

import (
	"context"
	"encoding/json"
	"io/fs"
	"slices"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/kmkit/kmkit/km/kmhttp"
	"github.com/kmkit/kmkit/storage/sqlstore"
	"github.com/kmkit/kmkit/storage/storetest"
)

// TestRowOrderedKeys: pages sorted by the record's key, alone or after a value, on the
// demo as generated (ITEM_ID ascends in row order: the import records it, and the
// statement sorts by the row order in its place) and with the items in reverse order
// (ITEM_ID descends: nothing is recorded, the statement sorts by ITEM_ID), give the
// reference evaluator's rows on SQLite and PostgreSQL. One store imports the two in turn
// (and the first again), so that what it read of one import is not used for the next. A
// key recorded wrongly, a stale record, or a substitution in the wrong place (a
// distinct, a descending key) reorders the pages.
func TestRowOrderedKeys(t *testing.T) {
	asc, _ := demoReference(t)
	desc := withReversedRows(t, asc, "data/order_items.csv")
	items := []string{"ITEM_ID", "ORDER_ID", "MATERIAL_ID", "QUANTITY", "ITEM_VALUE"}
	reqs := []storetest.RefRequest{
		{Record: "ORDER_ITEMS", Fields: items, Sort: "-ITEM_VALUE,+ITEM_ID", PageSize: 9, Page: 1},
		{Record: "ORDER_ITEMS", Fields: items, Sort: "QUANTITY,-ITEM_ID", PageSize: 12, Page: 2},
		{Record: "ORDER_ITEMS", Fields: items, FilterExprs: []string{"QUANTITY ge 3"}, Sort: "-QUANTITY,ITEM_ID,-ITEM_VALUE"},
		{Record: "ORDER_ITEMS", Fields: items, Sort: "-ITEM_ID", PageSize: 7, Page: 3},
		{Record: "ORDER_ITEMS", Fields: []string{"MATERIAL_ID", "ITEM_ID"}, Distinct: true, Sort: "MATERIAL_ID,-ITEM_ID", PageSize: 10},
		{Record: "ORDERS", Fields: []string{"ORDER_ID", "STATUS", "NET_VALUE"}, Sort: "STATUS,-ORDER_ID"},
		{Record: "ORDER_ITEMS", Fields: items, FilterExprs: []string{"ORDERS.STATUS eq 'OPEN'"}, Sort: "MATERIAL_ID,ITEM_ID"},
	}
	for _, b := range []struct {
		name string
		open func(testing.TB) *sqlstore.DB
	}{{"SQLite", openSQLite}, {"Postgres", openPostgres}} {
		t.Run(b.name, func(t *testing.T) {
			db := b.open(t)
			s := db.KM()
			for _, data := range []struct {
				name    string
				fsys    fs.FS
				ordered bool
			}{{"ascending", asc, true}, {"reversed", desc, false}, {"ascending again", asc, true}} {
				t.Run(data.name, func(t *testing.T) {
					if err := s.Import(context.Background(), data.fsys); err != nil {
						t.Fatal(err)
					}
					if got := rowOrdered(t, db, "order_items"); slices.Contains(got, "ITEM_ID") != data.ordered {
						t.Errorf("the import records %q as ascending in row order", got)
					}
					ref, err := storetest.LoadReference(data.fsys, "o2c")
					if err != nil {
						t.Fatal(err)
					}
					h := kmhttp.NewHandler(s, kmhttp.WithMaxPageSize(5000))
					for _, req := range reqs {
						checkReference(t, h, ref, req)
					}
				})
			}
		})
	}
}

// rowOrdered returns the columns of source that its import recorded as ascending in row
// order.
func rowOrdered(t *testing.T, db *sqlstore.DB, source string) []string {
	t.Helper()
	q := `SELECT row_ordered FROM km_imports WHERE source = ?`
	if db.Dialect() == "postgres" {
		q = strings.ReplaceAll(q, "?", "$1")
	}
	var text string
	if err := db.SQL().QueryRowContext(context.Background(), q, source).Scan(&text); err != nil {
		t.Fatal(err)
	}
	var cols []string
	if text != "" {
		if err := json.Unmarshal([]byte(text), &cols); err != nil {
			t.Fatal(err)
		}
	}
	return cols
}

// withReversedRows returns a copy of fsys whose CSV file name has its data rows in
// reverse order.
func withReversedRows(t *testing.T, fsys fs.FS, name string) fs.FS {
	t.Helper()
	out := fstest.MapFS{}
	err := fs.WalkDir(fsys, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := fs.ReadFile(fsys, p)
		if err != nil {
			return err
		}
		if p == name {
			lines := strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
			slices.Reverse(lines[1:])
			b = []byte(strings.Join(lines, "\n") + "\n")
		}
		out[p] = &fstest.MapFile{Data: b}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}
