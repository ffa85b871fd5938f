package sqlstore_test

import (
	"slices"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/kmkit/kmkit/km"
	"github.com/kmkit/kmkit/query"
	"github.com/kmkit/kmkit/storage/sqlstore"
)

// TestGenerationHostViews: a view of the host's own over a source's name keeps reading
// the source through its loads, the new generation each time; on PostgreSQL, which keeps
// the columns of a view, a load that changes the source's columns is refused with an
// error saying which view the host's objects depend on and what to do, and the source
// keeps its generation. A view of the host over a replaced generation table holds that
// table: the load that replaced it and the later ones succeed, and the table is dropped
// by the first load after the view is gone.
func TestGenerationHostViews(t *testing.T) {
	for _, b := range databases {
		t.Run(b.name, func(t *testing.T) {
			testGenerationHostViews(t, b.dsn(t), b.name == "Postgres", sqlstore.Distribution{})
		})
	}
}

// TestCitusGenerationHostViews is TestGenerationHostViews on Citus with the table
// hash-distributed: a view is replaced after the load's COPY into the shards.
func TestCitusGenerationHostViews(t *testing.T) {
	testGenerationHostViews(t, schemaDSN(t, CitusEnv, citusSkip), true, sqlstore.Distribution{Column: "A"})
}

func testGenerationHostViews(t *testing.T, dsn string, pg bool, dist sqlstore.Distribution) {
	db := open(t, dsn)
	a := []sqlstore.ColumnDef{{Name: "A", Type: query.TypeInteger, NotNull: true}}
	load := func(source string, cols []sqlstore.ColumnDef, digest string, rows ...[]any) error {
		return db.LoadDistributedTable(t.Context(), source, cols, &sqlstore.SliceRows{Rows: rows}, nil, dist, digest)
	}
	values := func(q string) []int64 {
		t.Helper()
		rows, err := db.SQL().QueryContext(t.Context(), q)
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		var out []int64
		for rows.Next() {
			var v int64
			if err := rows.Scan(&v); err != nil {
				t.Fatal(err)
			}
			out = append(out, v)
		}
		return out
	}
	if err := load("things", a, "1", []any{int64(1)}); err != nil {
		t.Fatal(err)
	}
	if _, err := db.SQL().ExecContext(t.Context(), `CREATE VIEW positive AS SELECT "A" FROM things WHERE "A" > 0`); err != nil {
		t.Fatal(err)
	}
	if err := load("things", a, "2", []any{int64(2)}, []any{int64(-2)}, []any{int64(3)}); err != nil {
		t.Fatalf("a load of the same columns under a view of the host: %v", err)
	}
	if got := values(`SELECT "A" FROM positive ORDER BY "A"`); !slices.Equal(got, []int64{2, 3}) {
		t.Errorf("the host's view reads %v after the load, want the new generation's [2 3]", got)
	}

	ab := append(a, sqlstore.ColumnDef{Name: "B", Type: query.TypeString})
	err := load("things", ab, "3", []any{int64(4), "x"})
	if pg {
		if err == nil || !strings.Contains(err.Error(), "the load replaces the view things, which other objects of the database depend on") {
			t.Errorf("a load changing the columns of a view the host's view depends on: %v, want the refusal that says so", err)
		}
		if got := values(`SELECT "A" FROM positive ORDER BY "A"`); !slices.Equal(got, []int64{2, 3}) {
			t.Errorf("the host's view reads %v after a refused load, want the current generation's [2 3]", got)
		}
		if _, err := db.SQL().ExecContext(t.Context(), `DROP VIEW positive`); err != nil {
			t.Fatal(err)
		}
		err = load("things", ab, "3", []any{int64(4), "x"})
	}
	if err != nil {
		t.Fatal(err)
	}
	if got := values(`SELECT "A" FROM things`); !slices.Equal(got, []int64{4}) {
		t.Errorf("the source reads %v, want the last load's [4]", got)
	}

	// A view of the host over the current generation table, which the next load
	// replaces while no generation is kept.
	held := sqlstore.GenerationOf(t, db, "things")
	if _, err := db.SQL().ExecContext(t.Context(), `CREATE VIEW held AS SELECT "A" FROM "`+held+`"`); err != nil {
		t.Fatal(err)
	}
	db.SetKeepReplaced(0)
	if err := load("things", ab, "4", []any{int64(5), "y"}); err != nil {
		t.Errorf("the load replacing a generation table a view of the host reads: %v", err)
	}
	if err := load("others", a, "1", []any{int64(1)}); err != nil {
		t.Errorf("a later load: %v", err)
	}
	if got := values(`SELECT "A" FROM things`); !slices.Equal(got, []int64{5}) {
		t.Errorf("the source reads %v, want the last load's [5]", got)
	}
	count := `SELECT count(*) FROM km_generations WHERE table_name = '` + held + `'`
	if pg {
		if got := values(`SELECT "A" FROM held`); !slices.Equal(got, []int64{4}) {
			t.Errorf("the host's view of the replaced generation reads %v, want [4]", got)
		}
		if got := values(count); !slices.Equal(got, []int64{1}) {
			t.Errorf("the held generation table is recorded %v times, want once until it is dropped", got)
		}
		if _, err := db.SQL().ExecContext(t.Context(), `DROP VIEW held`); err != nil {
			t.Fatal(err)
		}
		if err := load("others", a, "2", []any{int64(2)}); err != nil {
			t.Fatal(err)
		}
	}
	if got := values(count); !slices.Equal(got, []int64{0}) {
		t.Errorf("the replaced generation table is recorded %v times once nothing holds it, want dropped", got)
	}
}

// TestGenerationSourceNamedLikeGeneration: a source named like the generation table of
// another is refused with an error that says so, and the other source keeps its data (a
// first load drops a table under the source's name, as the databases imported before
// generations hold them).
func TestGenerationSourceNamedLikeGeneration(t *testing.T) {
	for _, b := range databases {
		t.Run(b.name, func(t *testing.T) {
			db := open(t, b.dsn(t))
			a := []sqlstore.ColumnDef{{Name: "A", Type: query.TypeInteger, NotNull: true}}
			for i, digest := range []string{"1", "2"} {
				if err := db.LoadTable(t.Context(), "things", a, &sqlstore.SliceRows{Rows: [][]any{{int64(i + 1)}}}, nil, digest); err != nil {
					t.Fatal(err)
				}
			}
			var kept string
			if err := db.SQL().QueryRowContext(t.Context(), `SELECT table_name FROM km_generations WHERE replaced_at IS NOT NULL`).Scan(&kept); err != nil {
				t.Fatal(err)
			}
			for _, name := range []string{sqlstore.GenerationOf(t, db, "things"), kept} {
				err := db.LoadTable(t.Context(), name, a, &sqlstore.SliceRows{Rows: [][]any{{int64(9)}}}, nil, "x")
				if want := "sqlstore: source " + name + " is named like a generation table of source things"; err == nil || !strings.Contains(err.Error(), want) {
					t.Errorf("a load of source %s: %v, want %q", name, err, want)
				}
			}
			var v int64
			if err := db.SQL().QueryRowContext(t.Context(), `SELECT "A" FROM things`).Scan(&v); err != nil || v != 2 {
				t.Errorf("things reads %d, %v; want its own 2", v, err)
			}
			if err := db.SQL().QueryRowContext(t.Context(), `SELECT "A" FROM "`+kept+`"`).Scan(&v); err != nil || v != 1 {
				t.Errorf("the kept generation reads %d, %v; want its own 1", v, err)
			}
		})
	}
}

// TestGenerationViewOfAnotherProcess: a KM registered with PutModel over a source's name
// reads the source's view live, and sorts it right whatever another process (another
// DB on the same database) loaded into it since: V held no null and ascended in row
// order in the first load (declared NOT NULL, recorded row-ordered), and in the second
// holds a null and descends; the store must not sort the second by the first's facts.
func TestGenerationViewOfAnotherProcess(t *testing.T) {
	for _, b := range databases {
		t.Run(b.name, func(t *testing.T) {
			dsn := b.dsn(t)
			db := open(t, dsn)
			load := func(db *sqlstore.DB, digest string, notNull bool, rows ...[]any) {
				t.Helper()
				cols := []sqlstore.ColumnDef{{Name: "ID", Type: query.TypeString, NotNull: true},
					{Name: "V", Type: query.TypeInteger, NotNull: notNull, RowOrdered: notNull}}
				if err := db.LoadTable(t.Context(), "nn_t", cols, &sqlstore.SliceRows{Rows: rows}, []string{"V"}, digest); err != nil {
					t.Fatal(err)
				}
			}
			load(db, "1", true, []any{"A", int64(1)}, []any{"B", int64(2)}, []any{"C", int64(3)})
			models, err := km.Load(fstest.MapFS{"models/nn.yaml": {Data: []byte(notNullModel)}})
			if err != nil {
				t.Fatal(err)
			}
			m := models[0]
			host := db.KM()
			if err := host.PutModel(t.Context(), m); err != nil {
				t.Fatal(err)
			}
			sorted := func(desc bool) []string {
				t.Helper()
				p, err := km.NewPlan(m, &km.PlanRequest{Record: "T", Fields: []string{"ID", "V"},
					Sort: []query.SortTerm{{Field: "V", Desc: desc}}, PageSize: 10})
				if err != nil {
					t.Fatal(err)
				}
				res, err := host.Query(t.Context(), p)
				if err != nil {
					t.Fatal(err)
				}
				var ids []string
				for _, r := range res.Rows {
					ids = append(ids, r[0].Str)
				}
				return ids
			}
			for desc, want := range map[bool][]string{false: {"A", "B", "C"}, true: {"C", "B", "A"}} {
				if got := sorted(desc); !slices.Equal(got, want) {
					t.Errorf("sorted by V (desc %v) after the first load: %q, want %q", desc, got, want)
				}
			}
			load(open(t, dsn), "2", false, []any{"D", int64(3)}, []any{"E", nil}, []any{"F", int64(2)}, []any{"G", int64(1)})
			for desc, want := range map[bool][]string{false: {"G", "F", "D", "E"}, true: {"D", "F", "G", "E"}} {
				if got := sorted(desc); !slices.Equal(got, want) {
					t.Errorf("sorted by V (desc %v) after another process's load: %q, want %q (nulls last)", desc, got, want)
				}
			}
		})
	}
}

// TestGenerationLongSourceName: PostgreSQL cuts names to 63 bytes, so the view of a
// source with a longer name would take the cut name, which the source's first load drops
// first: there it is refused with an error that says so, and a host's table under the
// cut name keeps its rows. SQLite, which cuts no name, loads it beside the host's table.
func TestGenerationLongSourceName(t *testing.T) {
	for _, b := range databases {
		t.Run(b.name, func(t *testing.T) {
			db := open(t, b.dsn(t))
			host := strings.Repeat("é", 31) + "x" // 63 bytes
			if _, err := db.SQL().ExecContext(t.Context(), `CREATE TABLE "`+host+`" (v INTEGER)`); err != nil {
				t.Fatal(err)
			}
			if _, err := db.SQL().ExecContext(t.Context(), `INSERT INTO "`+host+`" VALUES (7)`); err != nil {
				t.Fatal(err)
			}
			a := []sqlstore.ColumnDef{{Name: "A", Type: query.TypeInteger, NotNull: true}}
			err := db.LoadTable(t.Context(), host+"_source", a, &sqlstore.SliceRows{Rows: [][]any{{int64(1)}}}, nil, "1")
			if b.name == "Postgres" {
				want := `sqlstore: source "` + host + `_source" is 70 bytes long, and PostgreSQL cuts names to 63 bytes ("` + host + `", which another table may hold)`
				if err == nil || !strings.Contains(err.Error(), want) {
					t.Errorf("the load of a source of 70 bytes: %v, want %q", err, want)
				}
			} else if err != nil {
				t.Fatal(err)
			}
			var v int64
			if err := db.SQL().QueryRowContext(t.Context(), `SELECT v FROM "`+host+`"`).Scan(&v); err != nil || v != 7 {
				t.Errorf("the host's table reads %d, %v; want its own 7", v, err)
			}
		})
	}
}
