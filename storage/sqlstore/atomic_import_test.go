package sqlstore_test

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/fstest"

	"github.com/kmkit/kmkit/km"
	"github.com/kmkit/kmkit/storage/sqlstore"
)

// demoSources are the sources of the demo data set.
var demoSources = []string{"activities", "customers", "materials", "order_items", "orders"}

// currentTables returns the current generation table of every demo source, as another
// server process on db sees them.
func currentTables(t *testing.T, db *sqlstore.DB) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, src := range demoSources {
		out[src] = sqlstore.GenerationOf(t, db, src)
	}
	return out
}

// viewCounts returns the rows of the views orders and order_items, read in one statement
// (one snapshot), as a host's SQL reads them.
func viewCounts(ctx context.Context, db *sqlstore.DB) (orders, items int, err error) {
	err = db.SQL().QueryRowContext(ctx, `SELECT (SELECT count(*) FROM orders), (SELECT count(*) FROM order_items)`).Scan(&orders, &items)
	return orders, items, err
}

// withFile returns data with the file name rewritten by edit.
func withFile(t *testing.T, data fs.FS, name string, edit func(string) string) fs.FS {
	t.Helper()
	out := fstest.MapFS{}
	for n, f := range data.(fstest.MapFS) {
		out[n] = f
	}
	b, err := fs.ReadFile(data, name)
	if err != nil {
		t.Fatal(err)
	}
	out[name] = &fstest.MapFile{Data: []byte(edit(string(b)))}
	return out
}

// TestImportAllOrNothing: an import whose later file is refused (a cell that is no value
// of its field; a relationship target holding a value twice) or whose context ends while
// it loads changes nothing another server process sees: every source's current
// generation, and the views a host's SQL reads, stay those of the import before. The
// import again with the file put right makes the whole data set current and does not
// load again the sources the refused import loaded already (a marker index on each of
// their tables survives). No generation table is left that no load would collect.
func TestImportAllOrNothing(t *testing.T) {
	for _, b := range databases {
		t.Run(b.name, func(t *testing.T) { testImportAllOrNothing(t, b.dsn(t), b.name == "Postgres") })
	}
}

func testImportAllOrNothing(t *testing.T, dsn string, pg bool) {
	_, second, _, _, _ := twoDataSets(t, dsn)
	other := open(t, dsn) // another server process
	before := currentTables(t, other)
	o, i, err := viewCounts(t.Context(), other)
	if err != nil || o != 40 {
		t.Fatalf("the views hold %d orders, %v; want 40", o, err)
	}
	unchanged := func(what string) {
		t.Helper()
		if got := currentTables(t, other); !maps.Equal(got, before) {
			t.Errorf("after %s, another process sees the current tables %v, want those of the import before %v", what, got, before)
		}
		if o2, i2, err := viewCounts(t.Context(), other); err != nil || o2 != o || i2 != i {
			t.Errorf("after %s, another process's views hold %d orders and %d items, %v; want %d and %d", what, o2, i2, err, o, i)
		}
	}

	importer := open(t, dsn)
	importer.SetKeepReplaced(0)

	// A process that ends (its context) while its import loads.
	ctx, cancel := context.WithCancel(t.Context())
	var opened atomic.Int32
	err = importer.KM().Import(ctx, &onOpen{FS: second, open: func(name string) {
		// Each data file is opened to hash it, then to load it: cancel at the third load.
		if strings.HasPrefix(name, "data/") && opened.Add(1) == int32(len(demoSources))+3 {
			cancel()
		}
	}})
	cancel()
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("the import whose context ended: %v, want context.Canceled", err)
	}
	unchanged("an import whose context ended")

	// materials.csv is the smallest file, which the import loads last.
	badValue := withFile(t, second, "data/materials.csv", func(s string) string {
		return strings.TrimSuffix(s, "\n") + "\nM-X,Bad,G,not-a-price\n"
	})
	duplicated := withFile(t, second, "data/materials.csv", func(s string) string {
		header, rest, _ := strings.Cut(s, "\n")
		firstRow, _, _ := strings.Cut(rest, "\n")
		return header + "\n" + rest + firstRow + "\n"
	})
	for _, c := range []struct {
		name string
		data fs.FS
		want func(error) bool
	}{
		{"a cell that is no number", badValue, func(err error) bool { return strings.Contains(err.Error(), `"not-a-price" is not a finite number`) }},
		{"a duplicated relationship target", duplicated, func(err error) bool { return errors.Is(err, km.ErrDuplicateTarget) }},
	} {
		err := importer.KM().Import(t.Context(), c.data)
		if err == nil || !c.want(err) {
			t.Fatalf("the import of data with %s: %v", c.name, err)
		}
		unchanged("an import refused for " + c.name)
	}

	// The sources loaded by the imports that failed are kept, not current: a marker
	// index on each shows whether the import that succeeds loads it again.
	staged := stagedTables(t, other, before)
	if !pg && len(staged) == 0 {
		t.Fatal("the failed imports loaded no source before the refused one: the test shows nothing")
	}
	for n, table := range staged {
		if _, err := other.SQL().ExecContext(t.Context(), fmt.Sprintf(`CREATE INDEX staged_marker_%d ON "%s" ("%s")`, n, table, sqlstore.RowColumn)); err != nil {
			t.Fatal(err)
		}
	}
	if err := importer.KM().Import(t.Context(), second); err != nil {
		t.Fatal(err)
	}
	after := currentTables(t, other)
	for _, src := range demoSources {
		if after[src] == before[src] { // every file of the second data set differs
			t.Errorf("source %s still reads %s after the import of the second data set", src, after[src])
		}
	}
	if o2, _, err := viewCounts(t.Context(), other); err != nil || o2 != 45 {
		t.Errorf("the views hold %d orders, %v; want the second data set's 45", o2, err)
	}
	current := map[string]bool{}
	for _, table := range after {
		current[table] = true
	}
	markers := markerIndexes(t, other, pg)
	for n, table := range staged {
		if current[table] && !markers[fmt.Sprintf("staged_marker_%d", n)] {
			t.Errorf("the import loaded %s again, which a failed import had loaded", table)
		}
	}
	// The imports keep no replaced table (SetKeepReplaced(0)): the generation tables
	// in the catalog are the current ones, each recorded.
	if tables := generationTablesInCatalog(t, other, pg); !maps.Equal(tables, current) {
		t.Errorf("the catalog holds the generation tables %v, want the current ones %v", tables, current)
	}
	var recorded int
	if err := other.SQL().QueryRowContext(t.Context(), `SELECT count(*) FROM km_generations`).Scan(&recorded); err != nil || recorded != len(current) {
		t.Errorf("km_generations records %d tables, %v; want the %d current", recorded, err, len(current))
	}
}

// onOpen is a file system that calls open with the name of each file opened.
type onOpen struct {
	fs.FS
	open func(name string)
}

func (f *onOpen) Open(name string) (fs.File, error) {
	f.open(name)
	return f.FS.Open(name)
}

// stagedTables returns the generation tables recorded in km_generations that are none of
// current's.
func stagedTables(t *testing.T, db *sqlstore.DB, current map[string]string) []string {
	t.Helper()
	rows, err := db.SQL().QueryContext(t.Context(), `SELECT table_name FROM km_generations ORDER BY table_name`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	cur := map[string]bool{}
	for _, table := range current {
		cur[table] = true
	}
	var out []string
	for rows.Next() {
		var table string
		if err := rows.Scan(&table); err != nil {
			t.Fatal(err)
		}
		if !cur[table] {
			out = append(out, table)
		}
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// markerIndexes returns the names of the indexes named staged_marker_*.
func markerIndexes(t *testing.T, db *sqlstore.DB, pg bool) map[string]bool {
	t.Helper()
	q := `SELECT name FROM sqlite_schema WHERE type = 'index' AND name LIKE 'staged_marker_%'`
	if pg {
		q = `SELECT indexname FROM pg_indexes WHERE schemaname = current_schema() AND indexname LIKE 'staged_marker_%'`
	}
	return names(t, db, q)
}

// generationTablesInCatalog returns the tables of the database named like generation
// tables.
func generationTablesInCatalog(t *testing.T, db *sqlstore.DB, pg bool) map[string]bool {
	t.Helper()
	q := `SELECT name FROM sqlite_schema WHERE type = 'table' AND name LIKE '%@%'`
	if pg {
		q = `SELECT tablename FROM pg_tables WHERE schemaname = current_schema() AND tablename LIKE '%@%'`
	}
	return names(t, db, q)
}

// names returns the first column of the rows of q.
func names(t *testing.T, db *sqlstore.DB, q string) map[string]bool {
	t.Helper()
	rows, err := db.SQL().QueryContext(t.Context(), q)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	out := map[string]bool{}
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			t.Fatal(err)
		}
		out[n] = true
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestImportsAtOnce: two server processes import two data sets at once, over and over,
// while a third reads the views orders and order_items in one statement: every read
// sees both of one data set, never the orders of one with the items of the other, and
// after each round every source's current generation is of the same data set (the
// import that made its data current last, whole).
func TestImportsAtOnce(t *testing.T) {
	for _, b := range databases {
		t.Run(b.name, func(t *testing.T) {
			dsn := b.dsn(t)
			first, second, _, _, _ := twoDataSets(t, dsn)
			reader := open(t, dsn)
			firstCounts := [2]int{}
			var err error
			if firstCounts[0], firstCounts[1], err = viewCounts(t.Context(), reader); err != nil {
				t.Fatal(err)
			}
			a, bdb := open(t, dsn), open(t, dsn)
			if err := a.KM().Import(t.Context(), second); err != nil {
				t.Fatal(err)
			}
			secondTables := currentTables(t, reader)
			var secondCounts [2]int
			if secondCounts[0], secondCounts[1], err = viewCounts(t.Context(), reader); err != nil {
				t.Fatal(err)
			}
			if err := a.KM().Import(t.Context(), first); err != nil {
				t.Fatal(err)
			}
			firstTables := currentTables(t, reader)

			var (
				done  atomic.Bool
				reads atomic.Int64
				wg    sync.WaitGroup
			)
			wg.Go(func() {
				for !done.Load() {
					o, i, err := viewCounts(t.Context(), reader)
					if err != nil {
						t.Errorf("a read of the views: %v", err)
						return
					}
					if got := [2]int{o, i}; got != firstCounts && got != secondCounts {
						t.Errorf("a read saw %d orders and %d items, want one data set's: %v or %v", o, i, firstCounts, secondCounts)
						return
					}
					reads.Add(1)
				}
			})
			for range 4 {
				var imports sync.WaitGroup
				for _, p := range []struct {
					db   *sqlstore.DB
					data fs.FS
				}{{a, second}, {bdb, first}} {
					imports.Go(func() {
						if err := p.db.KM().Import(t.Context(), p.data); err != nil {
							t.Error(err)
						}
					})
				}
				imports.Wait()
				if got := currentTables(t, reader); !maps.Equal(got, firstTables) && !maps.Equal(got, secondTables) {
					t.Errorf("after two imports at once the current tables are %v, want one data set's: %v or %v", got, firstTables, secondTables)
				}
			}
			done.Store(true)
			wg.Wait()
			t.Logf("reads of the views: %d", reads.Load())
		})
	}
}

// TestImportGenerationCollectedMeanwhile: while one process imports a second data set
// with the materials of the first (their generation current when it began), another
// process that keeps no replaced table imports new materials, and so drops the
// generation the first counts on. The first then loads its materials again and makes its
// whole data set current, instead of failing or leaving its sources with the other's
// materials.
func TestImportGenerationCollectedMeanwhile(t *testing.T) {
	for _, b := range databases {
		t.Run(b.name, func(t *testing.T) {
			dsn := b.dsn(t)
			first, second, _, _, _ := twoDataSets(t, dsn)
			reader := open(t, dsn)
			materials := sqlstore.GenerationOf(t, reader, "materials")
			renamed := withFile(t, first, "data/materials.csv", func(s string) string {
				header, rest, _ := strings.Cut(s, "\n")
				row, rest, _ := strings.Cut(rest, "\n")
				cells := strings.Split(row, ",")
				cells[1] += " (renamed)"
				return header + "\n" + strings.Join(cells, ",") + "\n" + rest
			})
			// The second data set with the first's materials, current now.
			firstMaterials, err := fs.ReadFile(first, "data/materials.csv")
			if err != nil {
				t.Fatal(err)
			}
			second = withFile(t, second, "data/materials.csv", func(string) string { return string(firstMaterials) })
			other := open(t, dsn)
			other.SetKeepReplaced(0)
			var opened atomic.Int32
			var otherErr error
			err = open(t, dsn).KM().Import(t.Context(), &onOpen{FS: second, open: func(name string) {
				// The first data file opened after the hashes: the import's first load.
				if strings.HasPrefix(name, "data/") && opened.Add(1) == int32(len(demoSources))+1 {
					otherErr = other.KM().Import(t.Context(), renamed)
				}
			}})
			if otherErr != nil {
				t.Fatalf("the other process's import: %v", otherErr)
			}
			if err != nil {
				t.Fatalf("the import whose materials' generation was dropped meanwhile: %v", err)
			}
			if got := sqlstore.GenerationOf(t, reader, "materials"); got != materials {
				t.Errorf("materials reads %s, want the import's own %s loaded again", got, materials)
			}
			var n int
			if err := reader.SQL().QueryRowContext(t.Context(), `SELECT count(*) FROM materials WHERE "MATERIAL_NAME" LIKE '% (renamed)'`).Scan(&n); err != nil || n != 0 {
				t.Errorf("the view materials holds %d renamed rows, %v; want the import's own data", n, err)
			}
			if o, _, err := viewCounts(t.Context(), reader); err != nil || o != 45 {
				t.Errorf("the views hold %d orders, %v; want the second data set's 45", o, err)
			}
		})
	}
}
