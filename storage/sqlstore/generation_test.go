package sqlstore_test

import (
	"errors"
	"fmt"
	"io/fs"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/fstest"

	"github.com/kmkit/kmkit/km"
	"github.com/kmkit/kmkit/outage"
	"github.com/kmkit/kmkit/query"
	"github.com/kmkit/kmkit/storage/sqlstore"
	"github.com/kmkit/kmkit/storage/storetest"
)

// TestGenerationKept opens two KMStores on one database, as two server processes would:
// after the second imports a definition that renames CUSTOMERS.SEGMENT (and its CSV
// column), the first keeps answering from the tables of its own import, SEGMENT
// included, while a store of the new definition reads SEGMENT_CODE. Once a later load
// drops the replaced tables (KeepReplaced 0), the first's reads fail with
// ErrGenerationReplaced, an outage, until it imports again. An undefined column that no
// import caused (the host drops it by hand) stays the database's error, not an outage.
func TestGenerationKept(t *testing.T) {
	for _, b := range databases {
		t.Run(b.name, func(t *testing.T) {
			dsn := b.dsn(t)
			data, err := storetest.DemoData(40)
			if err != nil {
				t.Fatal(err)
			}
			renamed := fstest.MapFS{}
			for name, f := range data.(fstest.MapFS) {
				text := string(f.Data)
				switch {
				case strings.HasPrefix(name, "models/"):
					text = strings.ReplaceAll(text, "SEGMENT", "SEGMENT_CODE")
				case name == "data/customers.csv":
					header, rest, _ := strings.Cut(text, "\n")
					text = strings.Replace(header, "SEGMENT", "SEGMENT_CODE", 1) + "\n" + rest
				}
				renamed[name] = &fstest.MapFile{Data: []byte(text)}
			}
			b1 := open(t, dsn).KM()
			if err := b1.Import(t.Context(), data); err != nil {
				t.Fatal(err)
			}
			read := func(s *sqlstore.KMStore, fields ...string) ([][]any, error) {
				m, err := s.Model(t.Context(), "o2c")
				if err != nil {
					t.Fatal(err)
				}
				p, err := km.NewPlan(m, &km.PlanRequest{Record: "CUSTOMERS", Fields: fields, PageSize: 5})
				if err != nil {
					t.Fatal(err)
				}
				res, err := s.Query(t.Context(), p)
				if err != nil {
					return nil, err
				}
				return formatted(res.Rows), nil
			}
			before, err := read(b1, "CUSTOMER_ID", "SEGMENT")
			if err != nil || len(before) != 5 {
				t.Fatalf("%v, %v", before, err)
			}
			db2 := open(t, dsn)
			b2 := db2.KM()
			if err := b2.Import(t.Context(), renamed); err != nil {
				t.Fatal(err)
			}
			if got, err := read(b1, "CUSTOMER_ID", "SEGMENT"); err != nil || !reflect.DeepEqual(got, before) {
				t.Errorf("the first store after the second's import: %v, %v; want its own generation's %v", got, err, before)
			}
			if got, err := read(b2, "CUSTOMER_ID", "SEGMENT_CODE"); err != nil || !reflect.DeepEqual(got, before) {
				t.Errorf("the second store: %v, %v; want the same values under SEGMENT_CODE %v", got, err, before)
			}

			// A later load drops the replaced tables: the first store answers an outage
			// until it imports again.
			db2.SetKeepReplaced(0)
			second, err := storetest.DemoData(45)
			if err != nil {
				t.Fatal(err)
			}
			if err := b2.Import(t.Context(), second); err != nil {
				t.Fatal(err)
			}
			for _, fields := range [][]string{{"CUSTOMER_ID", "SEGMENT"}, {"CUSTOMER_ID", "COUNTRY"}} {
				if _, err := read(b1, fields...); !errors.Is(err, sqlstore.ErrGenerationReplaced) || !outage.Is(err) {
					t.Errorf("a read of %v after its tables were dropped: %v, want ErrGenerationReplaced as an outage", fields, err)
				}
			}
			if err := b1.Import(t.Context(), data); err != nil {
				t.Fatal(err)
			}
			if got, err := read(b1, "CUSTOMER_ID", "SEGMENT"); err != nil || !reflect.DeepEqual(got, before) {
				t.Errorf("after the first store imported again: %v, %v; want %v", got, err, before)
			}

			// A column dropped by hand.
			var table string
			if err := db2.SQL().QueryRowContext(t.Context(), `SELECT table_name FROM km_imports WHERE source = 'customers'`).Scan(&table); err != nil {
				t.Fatal(err)
			}
			for _, stmt := range []string{
				`DROP INDEX IF EXISTS "` + sqlstore.IndexName(table, []string{"SEGMENT"}) + `"`, // SQLite drops no indexed column
				`DROP VIEW customers`,
				`ALTER TABLE "` + table + `" DROP COLUMN "SEGMENT"`,
			} {
				if _, err := db2.SQL().ExecContext(t.Context(), stmt); err != nil {
					t.Fatal(err)
				}
			}
			_, err = read(b1, "CUSTOMER_ID", "SEGMENT")
			if err == nil || errors.Is(err, sqlstore.ErrGenerationReplaced) || outage.Is(err) {
				t.Errorf("a column dropped by hand: %v, want the database's error, not an outage", err)
			}
		})
	}
}

// twoDataSets returns the demo data set and its reference, a second data set of other
// rows, and a KMStore on dsn that imported the first, with its KM.
func twoDataSets(t *testing.T, dsn string) (first, second fs.FS, ref *storetest.Reference, reader *sqlstore.KMStore, m *km.KnowledgeModel) {
	t.Helper()
	first, ref = demoReference(t)
	second, err := storetest.DemoData(45)
	if err != nil {
		t.Fatal(err)
	}
	reader = open(t, dsn).KM()
	if err := reader.Import(t.Context(), first); err != nil {
		t.Fatal(err)
	}
	if m, err = reader.Model(t.Context(), "o2c"); err != nil {
		t.Fatal(err)
	}
	return first, second, ref, reader, m
}

// TestGenerationSnapshot reads through one KMStore (a server process) while another
// imports a second data set and the first one again, over and over: every read answers
// the store's own generation, exactly (its page and its count from the same tables, as
// the reference evaluator computes them on the first data set), never rows of the other
// data set, never a page of one and a count of the other. With the replaced tables kept
// (the default), every read is answered; with none kept, a read may also find the
// store's tables dropped (ErrGenerationReplaced, an outage) until the other store loads
// the first data set again, and answers nothing else.
func TestGenerationSnapshot(t *testing.T) {
	for _, b := range databases {
		for _, keep := range []bool{true, false} {
			t.Run(fmt.Sprintf("%s/keep=%v", b.name, keep), func(t *testing.T) {
				testGenerationSnapshot(t, b.dsn(t), keep)
			})
		}
	}
}

func testGenerationSnapshot(t *testing.T, dsn string, keep bool) {
	first, second, ref, reader, m := twoDataSets(t, dsn)
	type read struct {
		plan *km.Plan
		want [][]any
		rows int // before paging
	}
	var reads []read
	for _, r := range []struct {
		ref  storetest.RefRequest
		plan km.PlanRequest
	}{
		{storetest.RefRequest{Record: "ORDERS", Fields: []string{"ORDER_ID", "NET_VALUE"}, Sort: "-NET_VALUE"},
			km.PlanRequest{Record: "ORDERS", Fields: []string{"ORDER_ID", "NET_VALUE"}, Sort: []query.SortTerm{{Field: "NET_VALUE", Desc: true}}}},
		{storetest.RefRequest{Fields: []string{"CUSTOMERS.COUNTRY"}, KPIs: []string{"TOTAL_NET"}, Sort: "CUSTOMERS.COUNTRY"},
			km.PlanRequest{Fields: []string{"CUSTOMERS.COUNTRY"}, KPIs: []string{"TOTAL_NET"}, Sort: []query.SortTerm{{Field: "CUSTOMERS.COUNTRY"}}}},
	} {
		want, err := ref.Eval(r.ref)
		if err != nil {
			t.Fatal(err)
		}
		r.plan.PageSize, r.plan.Count = 3, true
		p, err := km.NewPlan(m, &r.plan)
		if err != nil {
			t.Fatal(err)
		}
		reads = append(reads, read{plan: p, want: want.Rows[:min(3, len(want.Rows))], rows: len(want.Rows)})
	}

	other := open(t, dsn)
	if !keep {
		other.SetKeepReplaced(0)
	}
	var (
		done     atomic.Bool
		answered atomic.Int64
		refused  atomic.Int64
		wg       sync.WaitGroup
	)
	for i := range 3 {
		wg.Go(func() {
			for n := i; !done.Load(); n++ {
				r := reads[n%len(reads)]
				res, err := reader.Query(t.Context(), r.plan)
				if err != nil {
					if keep || !errors.Is(err, sqlstore.ErrGenerationReplaced) || !outage.Is(err) {
						t.Errorf("a read: %v, want its answer", err)
					}
					refused.Add(1)
					continue
				}
				answered.Add(1)
				got := formatted(res.Rows)
				if res.Count != r.rows || !reflect.DeepEqual(got, r.want) {
					t.Errorf("a read answered count %d and %v, want the store's generation: count %d and %v", res.Count, got, r.rows, r.want)
				}
			}
		})
	}
	for range 6 {
		for _, data := range []fs.FS{second, first} {
			if err := other.KM().Import(t.Context(), data); err != nil {
				t.Error(err)
			}
		}
	}
	done.Store(true)
	wg.Wait()
	t.Logf("reads answered: %d; refused while the store's tables were dropped: %d", answered.Load(), refused.Load())
	if answered.Load() == 0 {
		t.Error("no read answered")
	}
}

// TestGenerationTables: each load of a changed source creates a table of its own and
// makes the source's name a view of it, which a host's SQL reads; a load of a kept
// generation makes it current again without loading; the replaced tables are dropped
// once the DB keeps them no longer. A database imported before generations (the tables
// under the sources' names) is loaded again into generation tables by its next import.
func TestGenerationTables(t *testing.T) {
	for _, b := range databases {
		t.Run(b.name, func(t *testing.T) { testGenerationTables(t, b.dsn(t), b.name == "Postgres") })
	}
}

// TestCitusGenerationTables is TestGenerationTables on Citus, whose demo tables are
// distributed and reference tables (the demo's KM declares them so): a changed source is
// loaded into a new distributed table and its view replaced after the COPY into the
// shards, and a database imported before generations loaded again.
func TestCitusGenerationTables(t *testing.T) {
	testGenerationTables(t, schemaDSN(t, CitusEnv, citusSkip), true)
}

func testGenerationTables(t *testing.T, dsn string, pg bool) {
	first, second, _, reader, _ := twoDataSets(t, dsn)
	db := open(t, dsn)
	orders := func() int {
		t.Helper()
		var n int
		if err := db.SQL().QueryRowContext(t.Context(), `SELECT count(*) FROM orders`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	generations := func() (current, replaced int) {
		t.Helper()
		if err := db.SQL().QueryRowContext(t.Context(), `SELECT count(CASE WHEN replaced_at IS NULL THEN 1 END), count(replaced_at) FROM km_generations`).Scan(&current, &replaced); err != nil {
			t.Fatal(err)
		}
		return current, replaced
	}
	sources, _ := generations()
	var firstOrders string
	if err := db.SQL().QueryRowContext(t.Context(), `SELECT table_name FROM km_imports WHERE source = 'orders'`).Scan(&firstOrders); err != nil {
		t.Fatal(err)
	}
	if n := orders(); n != 40 {
		t.Errorf("the view orders holds %d rows, want the first data set's 40", n)
	}
	if err := db.KM().Import(t.Context(), second); err != nil {
		t.Fatal(err)
	}
	if n := orders(); n != 45 {
		t.Errorf("the view orders holds %d rows after the second import, want 45", n)
	}
	if cur, rep := generations(); cur != sources || rep != sources {
		t.Errorf("%d current and %d replaced generation tables, want %d of each", cur, rep, sources)
	}
	// An index of the test's own marks the first data set's kept table: a load
	// would create the table anew, without it.
	if _, err := db.SQL().ExecContext(t.Context(), `CREATE INDEX kept_marker ON "`+firstOrders+`" ("ORDER_ID")`); err != nil {
		t.Fatal(err)
	}
	if err := db.KM().Import(t.Context(), first); err != nil {
		t.Fatal(err)
	}
	if n := orders(); n != 40 {
		t.Errorf("the view orders holds %d rows after the first data set came back, want 40", n)
	}
	if cur, rep := generations(); cur != sources || rep != sources {
		t.Errorf("%d current and %d replaced generation tables, want %d of each", cur, rep, sources)
	}
	marker := `SELECT count(*) FROM sqlite_schema WHERE type = 'index' AND name = 'kept_marker'`
	if pg {
		marker = `SELECT count(*) FROM pg_indexes WHERE indexname = 'kept_marker'`
	}
	var marked int
	if err := db.SQL().QueryRowContext(t.Context(), marker).Scan(&marked); err != nil || marked != 1 {
		t.Errorf("the kept table of the first data set was loaded again (its marker index: %d, %v)", marked, err)
	}
	db.SetKeepReplaced(0)
	if err := db.KM().Import(t.Context(), second); err != nil {
		t.Fatal(err)
	}
	if cur, rep := generations(); cur != sources || rep != 0 {
		t.Errorf("%d current and %d replaced generation tables with none kept, want %d and 0", cur, rep, sources)
	}
	var tables int
	q := `SELECT count(*) FROM sqlite_schema WHERE type = 'table' AND name LIKE '%@%'`
	if pg {
		q = `SELECT count(*) FROM pg_tables WHERE schemaname = current_schema() AND tablename LIKE '%@%'`
	}
	if err := db.SQL().QueryRowContext(t.Context(), q).Scan(&tables); err != nil || tables != sources {
		t.Errorf("%d generation tables in the catalog, %v; want %d", tables, err, sources)
	}

	// The layout of a database imported before generations: each source's table
	// under its own name.
	rows, err := db.SQL().QueryContext(t.Context(), `SELECT source, table_name FROM km_imports WHERE table_name <> ''`)
	if err != nil {
		t.Fatal(err)
	}
	var legacy [][2]string
	for rows.Next() {
		var src, table string
		if err := rows.Scan(&src, &table); err != nil {
			t.Fatal(err)
		}
		legacy = append(legacy, [2]string{src, table})
	}
	rows.Close()
	for _, l := range legacy {
		for _, stmt := range []string{
			`DROP VIEW "` + l[0] + `"`,
			`ALTER TABLE "` + l[1] + `" RENAME TO "` + l[0] + `"`,
			`UPDATE km_imports SET table_name = '' WHERE source = '` + l[0] + `'`,
			`DELETE FROM km_generations WHERE table_name = '` + l[1] + `'`,
		} {
			if _, err := db.SQL().ExecContext(t.Context(), stmt); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := reader.Import(t.Context(), second); err != nil {
		t.Fatal(err)
	}
	if n := orders(); n != 45 {
		t.Errorf("the view orders holds %d rows after the import of a database of before generations, want 45", n)
	}
	if cur, _ := generations(); cur != sources {
		t.Errorf("%d current generation tables after the import of a database of before generations, want %d", cur, sources)
	}
}

// rewrittenFS is a data directory whose files are rewritten while an import reads them:
// each data file reads as first's on its first open (the import's hash) and as second's
// after.
type rewrittenFS struct {
	first, second fs.FS
	mu            sync.Mutex
	opened        map[string]bool
}

func (f *rewrittenFS) Open(name string) (fs.File, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if !strings.HasPrefix(name, "data/") || !f.opened[name] {
		if f.opened == nil {
			f.opened = map[string]bool{}
		}
		f.opened[name] = true
		return f.first.Open(name)
	}
	return f.second.Open(name)
}

// TestGenerationOfFileRewritten: a data file that changes between the import's hash of it
// and its load (written while a reload began) is loaded with its new data, which becomes
// the source's current generation; the store answers from that generation, exactly as the
// reference evaluator computes on the new data, not ErrGenerationReplaced for the
// generation of the data it hashed, which no load made.
func TestGenerationOfFileRewritten(t *testing.T) {
	for _, b := range databases {
		t.Run(b.name, func(t *testing.T) {
			first, _ := demoReference(t)
			second, err := storetest.DemoData(45)
			if err != nil {
				t.Fatal(err)
			}
			ref, err := storetest.LoadReference(second, "o2c")
			if err != nil {
				t.Fatal(err)
			}
			want, err := ref.Eval(storetest.RefRequest{Record: "ORDERS", Fields: []string{"ORDER_ID", "NET_VALUE"}, Sort: "-NET_VALUE"})
			if err != nil {
				t.Fatal(err)
			}
			s := open(t, b.dsn(t)).KM()
			if err := s.Import(t.Context(), &rewrittenFS{first: first, second: second}); err != nil {
				t.Fatal(err)
			}
			m, err := s.Model(t.Context(), "o2c")
			if err != nil {
				t.Fatal(err)
			}
			p, err := km.NewPlan(m, &km.PlanRequest{Record: "ORDERS", Fields: []string{"ORDER_ID", "NET_VALUE"},
				Sort: []query.SortTerm{{Field: "NET_VALUE", Desc: true}}, PageSize: 5, Count: true})
			if err != nil {
				t.Fatal(err)
			}
			res, err := s.Query(t.Context(), p)
			if err != nil {
				t.Fatalf("a read after the import of rewritten files: %v", err)
			}
			got := formatted(res.Rows)
			if res.Count != len(want.Rows) || !reflect.DeepEqual(got, want.Rows[:5]) {
				t.Errorf("count %d and %v, want the new data's: count %d and %v", res.Count, got, len(want.Rows), want.Rows[:5])
			}
		})
	}
}

// TestGenerationKeptDroppedByHand: a kept generation whose table a DBA dropped is loaded
// again when its data comes back, instead of failing the load on the missing table.
func TestGenerationKeptDroppedByHand(t *testing.T) {
	for _, b := range databases {
		t.Run(b.name, func(t *testing.T) {
			dsn := b.dsn(t)
			first, second, _, _, _ := twoDataSets(t, dsn)
			db := open(t, dsn)
			kept := sqlstore.GenerationOf(t, db, "orders")
			if err := db.KM().Import(t.Context(), second); err != nil {
				t.Fatal(err)
			}
			if _, err := db.SQL().ExecContext(t.Context(), `DROP TABLE "`+kept+`"`); err != nil {
				t.Fatal(err)
			}
			s := db.KM()
			if err := s.Import(t.Context(), first); err != nil {
				t.Fatalf("the import of the data of a kept generation dropped by hand: %v", err)
			}
			if got := sqlstore.GenerationOf(t, db, "orders"); got != kept {
				t.Errorf("orders reads %s, want the generation %s loaded again", got, kept)
			}
			var n int
			if err := db.SQL().QueryRowContext(t.Context(), `SELECT count(*) FROM orders`).Scan(&n); err != nil || n != 40 {
				t.Errorf("the view orders holds %d rows, %v; want the first data set's 40", n, err)
			}
			var loaded int
			if err := db.SQL().QueryRowContext(t.Context(), `SELECT rows_loaded FROM km_generations WHERE table_name = '`+kept+`'`).Scan(&loaded); err != nil || loaded != 40 {
				t.Errorf("km_generations records %d rows for %s, %v; want 40", loaded, kept, err)
			}
		})
	}
}
