package storetest

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/fstest"

	"github.com/kmkit/kmkit/internal/pgschema"

	"github.com/kmkit/kmkit/km"
	"github.com/kmkit/kmkit/storage/memory"
	"github.com/kmkit/kmkit/storage/sqlstore"
)

// fuzzShapes are the relationship graphs of the random 3-record KMs: (child, parent)
// pairs over records R0, R1, R2.
var fuzzShapes = [][][2]int{
	{{1, 0}, {2, 1}},         // a chain
	{{1, 0}, {2, 0}},         // two children of one parent
	{{0, 1}, {0, 2}},         // one child of two parents
	{{1, 0}, {2, 1}, {2, 0}}, // a triangle
	{{2, 0}},                 // R1 stands alone
	{{0, 1}, {2, 1}},         // siblings under R1
	// Four records.
	{{1, 0}, {2, 1}, {3, 1}},         // a parent, a child, two grandchildren
	{{0, 1}, {0, 2}, {3, 1}},         // as the demo: items, orders, materials, activities
	{{1, 0}, {2, 0}, {3, 1}, {3, 2}}, // a diamond: two shortest paths between R3 and R0
	{{1, 0}, {1, 2}, {3, 2}},         // a child of two parents, one with another child
	// Five records, issue 29's procure-to-pay: R3 (invoices) reaches R0 (vendors) in one
	// step and by the chain R3-R2-R1-R0 (a cycle of paths of different length), R1
	// (purchase orders) by the chain R3-R2-R1 and by R3-R0-R1 and R3-R4-R1 of the same
	// length (the chain wins), and R0 and R4 (companies) are joined by R0-R1-R4 and
	// R0-R3-R4 only: an ambiguous pair.
	{{1, 0}, {2, 1}, {3, 2}, {3, 0}, {1, 4}, {3, 4}},
}

// ambiguousShapes are the shapes with a pair of records whose path is ambiguous (KPI
// conditions stay on their own record there, so that every definition loads).
var ambiguousShapes = []int{8, 10}

// fuzzKM is one random KM with its data, loaded in the stores under test.
type fuzzKM struct {
	ref      *Reference
	memory   *km.Service
	sqlite   *km.Service
	postgres *km.Service // nil without KMKIT_POSTGRES_DSN
	fields   []string    // every RECORD.FIELD
	kpis     []string
	close    []func() error
}

// fuzzModels caches the variants a fuzz run has loaded; dir holds their databases.
type fuzzModels struct {
	mu    sync.Mutex
	dir   string
	cache map[uint8]*fuzzKM
}

// fuzzData builds the KM and rows of variant v: its shape, random rows with nulls and
// dangling references, and KPIs with conditions on their own or a related record.
func fuzzData(v uint8) fstest.MapFS {
	rng := rand.New(rand.NewPCG(uint64(v), 3))
	shape := fuzzShapes[int(v)%len(fuzzShapes)]
	nrec := 3
	for _, rel := range shape {
		nrec = max(nrec, rel[0]+1, rel[1]+1)
	}
	connected := func(a, b int) bool {
		if a == b {
			return true
		}
		// Every shape but the lone R1 connects all records.
		return len(shape) > 1 || (a != 1 && b != 1)
	}
	var y strings.Builder
	y.WriteString("id: f\nname: Fuzz\nrecords:\n")
	for i := range nrec {
		fmt.Fprintf(&y, "  - id: R%d\n    name: R%d\n    source: r%d\n    key: ID\n    fields:\n", i, i, i)
		y.WriteString("      - {id: ID, name: Id, type: string}\n      - {id: S, name: S, type: string}\n")
		y.WriteString("      - {id: N, name: N, type: integer}\n      - {id: F, name: F, type: float}\n")
		y.WriteString("      - {id: T, name: T, type: datetime}\n      - {id: DAY, name: Day, type: date}\n")
		y.WriteString("      - {id: H, name: H, type: time}\n      - {id: B, name: B, type: boolean}\n")
		for n, rel := range shape {
			if rel[0] == i {
				fmt.Fprintf(&y, "      - {id: P%d_%d, name: P%d_%d, type: string}\n", rel[1], n, rel[1], n)
			}
		}
	}
	y.WriteString("relationships:\n")
	for n, rel := range shape {
		fmt.Fprintf(&y, "  - {from: R%d.P%d_%d, to: R%d.ID}\n", rel[0], rel[1], n, rel[1])
	}
	y.WriteString("kpis:\n")
	y.WriteString("  - {id: K, name: K, expr: \"3\"}\n") // aggregates nothing: the groups the fields list
	for i := range nrec {
		j := (i + 1 + rng.IntN(nrec-1)) % nrec
		if !connected(i, j) || slices.Contains(ambiguousShapes, int(v)%len(fuzzShapes)) {
			j = i
		}
		for _, k := range []struct{ id, expr string }{
			{"C", fmt.Sprintf("count(R%d.ID)", i)},
			{"S", fmt.Sprintf("sum(R%d.N)", i)},
			{"A", fmt.Sprintf("avg(R%d.F, R%d.S eq 'a')", i, j)},
			{"D", fmt.Sprintf("countdistinct(R%d.S)", i)},
			{"M", fmt.Sprintf("median(R%d.N, R%d.N ge 0)", i, j)},
			{"R", fmt.Sprintf("ratio(R%d.N gt 0)", i)},
			{"X", fmt.Sprintf("max(R%d.F, R%d.S ne 'b')", i, i)},
			{"Q", fmt.Sprintf("sum(R%d.F) / count(R%d.ID)", i, i)},
			{"T", fmt.Sprintf("min(R%d.N, R%d.DAY ge 2025-01-02)", i, j)},
		} {
			fmt.Fprintf(&y, "  - {id: %s%d, name: %s%d, expr: %q}\n", k.id, i, k.id, i, k.expr)
		}
		// Bare count(): of the declared record, or of the only record the expression names.
		fmt.Fprintf(&y, "  - {id: B%d, name: B%d, expr: \"count()\", record: R%d}\n", i, i, i)
		fmt.Fprintf(&y, "  - {id: E%d, name: E%d, expr: \"sum(R%d.F) / count()\"}\n", i, i, i)
	}
	// Min and max of every type, typed as their field, with and without a condition (on
	// a related record where one is connected); distinct counts of a date and a boolean;
	// a ratio of a boolean. Their related records come from their own generator, so that
	// the KPIs above stay what they were.
	krng := rand.New(rand.NewPCG(uint64(v), 5))
	for i := range nrec {
		j := (i + 1 + krng.IntN(nrec-1)) % nrec
		if !connected(i, j) || slices.Contains(ambiguousShapes, int(v)%len(fuzzShapes)) {
			j = i
		}
		for _, k := range []struct{ id, expr string }{
			{"FD", fmt.Sprintf("min(R%d.DAY)", i)},
			{"LD", fmt.Sprintf("max(R%d.DAY, R%d.B eq true)", i, j)},
			{"FT", fmt.Sprintf("min(R%d.T, R%d.N ge 0)", i, j)},
			{"LT", fmt.Sprintf("max(R%d.T)", i)},
			{"FH", fmt.Sprintf("min(R%d.H)", i)},
			{"LH", fmt.Sprintf("max(R%d.H, R%d.T lt 2025-01-02T12:00:00.0000001Z)", i, j)},
			{"FS", fmt.Sprintf("min(R%d.S, R%d.DAY ge 2025-01-02T00:00:00Z)", i, j)},
			{"LS", fmt.Sprintf("max(R%d.S)", i)},
			{"FB", fmt.Sprintf("min(R%d.B)", i)},
			{"LB", fmt.Sprintf("max(R%d.B, R%d.S ne 'a')", i, j)},
			{"DD", fmt.Sprintf("countdistinct(R%d.DAY)", i)},
			{"DB", fmt.Sprintf("countdistinct(R%d.B, R%d.H ge 12:00:00)", i, j)},
			{"RB", fmt.Sprintf("ratio(R%d.B eq true)", i)},
		} {
			fmt.Fprintf(&y, "  - {id: %s%d, name: %s%d, expr: %q}\n", k.id, i, k.id, i, k.expr)
		}
	}
	fsys := fstest.MapFS{"models/f.yaml": {Data: []byte(y.String())}}
	sizes := make([]int, nrec)
	for i := range sizes {
		sizes[i] = rng.IntN(7 + i)
		if nrec > 4 { // the five records of issue 29: enough rows for each path to matter
			sizes[i] = 4 + rng.IntN(6)
		}
	}
	// The times (ties, a fraction, the last microsecond of the day) and booleans come from
	// their own generator, so that the other columns stay what they were.
	hrng := rand.New(rand.NewPCG(uint64(v), 4))
	for i := range nrec {
		var b strings.Builder
		b.WriteString("ID,S,N,F,T,DAY,H,B")
		var parents []int
		for n, rel := range shape {
			if rel[0] == i {
				fmt.Fprintf(&b, ",P%d_%d", rel[1], n)
				parents = append(parents, rel[1])
			}
		}
		b.WriteString("\n")
		for r := range sizes[i] {
			fmt.Fprintf(&b, "k%d", r)
			b.WriteString("," + []string{"a", "b", "c", ""}[rng.IntN(4)])
			if rng.IntN(5) == 0 {
				b.WriteString(",")
			} else {
				fmt.Fprintf(&b, ",%d", rng.IntN(6)-2)
			}
			if rng.IntN(5) == 0 {
				b.WriteString(",")
			} else {
				fmt.Fprintf(&b, ",%g", float64(rng.IntN(40))/8-1)
			}
			if rng.IntN(5) == 0 {
				b.WriteString(",")
			} else {
				fmt.Fprintf(&b, ",2025-01-%02dT%02d:%02d:00Z", 1+rng.IntN(3), rng.IntN(24), rng.IntN(2)*30)
			}
			if rng.IntN(5) == 0 {
				b.WriteString(",")
			} else {
				fmt.Fprintf(&b, ",2025-01-%02d", 1+rng.IntN(3))
			}
			b.WriteString("," + []string{"", "00:00:00", "08:30:00", "12:00:00", "12:00:00.5", "23:59:59.999999"}[hrng.IntN(6)])
			b.WriteString("," + []string{"", "true", "false"}[hrng.IntN(3)])
			for _, p := range parents {
				// A key of the parent, a dangling one, or null.
				switch k := rng.IntN(sizes[p] + 2); {
				case k < sizes[p]:
					fmt.Fprintf(&b, ",k%d", k)
				case k == sizes[p]:
					b.WriteString(",k99")
				default:
					b.WriteString(",")
				}
			}
			b.WriteString("\n")
		}
		fsys[fmt.Sprintf("data/r%d.csv", i)] = &fstest.MapFile{Data: []byte(b.String())}
	}
	return fsys
}

// fuzzModel returns variant v loaded in the reference, the memory store and SQLite.
func (fm *fuzzModels) get(t *testing.T, v uint8) *fuzzKM {
	fm.mu.Lock()
	defer fm.mu.Unlock()
	if f, ok := fm.cache[v]; ok {
		return f
	}
	fsys := fuzzData(v)
	ref, err := LoadReference(fsys, "f")
	if err != nil {
		t.Fatalf("variant %d: %v\n%s", v, err, fsys["models/f.yaml"].Data)
	}
	mem := memory.New().KM()
	err = mem.Import(context.Background(), fsys)
	if err != nil {
		t.Fatal(err)
	}
	// The database outlives the input that opened it: it serves every later input.
	db, err := sqlstore.Open(context.Background(), "sqlite:"+filepath.Join(fm.dir, fmt.Sprintf("fuzz%d.db", v)))
	if err != nil {
		t.Fatal(err)
	}
	lite := db.KM()
	if err := lite.Import(context.Background(), fsys); err != nil {
		t.Fatal(err)
	}
	f := &fuzzKM{
		ref:    ref,
		memory: newService(mem),
		sqlite: newService(lite),
		close:  []func() error{db.Close},
	}
	if dsn := os.Getenv("KMKIT_POSTGRES_DSN"); dsn != "" {
		// A schema of this process, dropped when the fuzz target ends.
		pg, drop, err := fuzzPostgres(dsn)
		if err != nil {
			t.Fatal(err)
		}
		f.close = append(f.close, drop)
		st := pg.KM()
		if err := st.Import(context.Background(), fsys); err != nil {
			t.Fatal(err)
		}
		f.postgres = newService(st)
	}
	for _, r := range ref.KM.Records {
		for _, fl := range r.Fields {
			f.fields = append(f.fields, r.ID+"."+fl.ID)
		}
	}
	for _, k := range ref.KM.KPIs {
		f.kpis = append(f.kpis, k.ID)
	}
	fm.cache[v] = f
	return f
}

// fuzzPostgres opens the PostgreSQL of dsn in a new schema, which drop closes and drops.
func fuzzPostgres(dsn string) (db *sqlstore.DB, drop func() error, err error) {
	ctx := context.Background()
	u, dropSchema, err := pgschema.Create(ctx, dsn, "kmkit_fuzz")
	if err != nil {
		return nil, nil, err
	}
	if db, err = sqlstore.Open(ctx, u); err != nil {
		dropSchema()
		return nil, nil, err
	}
	return db, func() error {
		db.Close()
		return dropSchema()
	}, nil
}

// fuzzRequest reads a request over f from the bytes of a fuzz input.
func fuzzRequest(f *fuzzKM, in []byte) RefRequest {
	next := func() int {
		if len(in) == 0 {
			return 0
		}
		b := in[0]
		in = in[1:]
		return int(b)
	}
	var req RefRequest
	nrec := len(f.ref.KM.Records)
	recordLevel := next()%3 == 0
	if recordLevel {
		req.Record = fmt.Sprintf("R%d", next()%nrec)
	}
	for range next() % 3 {
		name := f.fields[next()%len(f.fields)]
		if recordLevel {
			rec, field, _ := strings.Cut(name, ".")
			if rec != req.Record {
				continue
			}
			name = field
		}
		req.Fields = append(req.Fields, name)
	}
	if recordLevel && len(req.Fields) == 0 {
		req.Fields = []string{"ID"} // the data endpoint needs a field
	}
	if !recordLevel {
		for range next() % 4 {
			req.KPIs = append(req.KPIs, f.kpis[next()%len(f.kpis)])
		}
		if len(req.Fields) == 0 && len(req.KPIs) == 0 {
			req.KPIs = []string{f.kpis[0]}
		}
	}
	for range next() % 3 {
		rec := fmt.Sprintf("R%d", next()%nrec)
		var cond string
		other := fmt.Sprintf("R%d", next()%nrec)
		op := []string{"eq", "ne", "lt", "le", "gt", "ge"}[next()%6]
		switch next() % 25 {
		case 0:
			cond = fmt.Sprintf("%s.S eq '%s'", rec, []string{"a", "b", "c"}[next()%3])
		case 1:
			cond = fmt.Sprintf("%s.N gt %d", rec, next()%5-2)
		case 2:
			cond = fmt.Sprintf("%s.F le %g", rec, float64(next()%16)/4-1)
		case 3:
			cond = fmt.Sprintf("%s.S eq null", rec)
		case 4:
			cond = fmt.Sprintf("%s.N ne 1 or %s.S ne 'a'", rec, rec)
		case 5:
			cond = fmt.Sprintf("not (%s.N lt 0)", rec)
		case 6: // two records in one condition: a home, or a 400 for siblings
			cond = fmt.Sprintf("%s.S eq 'b' or %s.N ge 1", rec, other)
		case 7: // quoted literals read as the field's type
			cond = fmt.Sprintf("%s.N eq '%d' or %s.F lt '%g'", rec, next()%4-1, rec, float64(next()%8)/4)
		case 8: // ne '' on a number: not null
			cond = fmt.Sprintf("%s.N ne ''", rec)
		case 9:
			cond = fmt.Sprintf("%s.N in (0, 1, 3) and %s.S in ('a', 'c')", rec, rec)
		case 10:
			cond = fmt.Sprintf("startswith(%s.ID, 'k1') or contains(%s.S, 'b')", rec, rec)
		case 11: // a day against a datetime: that day
			cond = fmt.Sprintf("%s.T %s 2025-01-%02d", rec, []string{"eq", "ne", "gt", "le"}[next()%4], 1+next()%3)
		case 12:
			cond = fmt.Sprintf("%s.T lt '2025-01-02T%02d:00:00Z' or %s.DAY eq '2025-01-0%d'", rec, next()%24, rec, 1+next()%3)
		case 13:
			cond = fmt.Sprintf("%s.DAY %s 2025-01-02T12:00:00Z", rec, []string{"eq", "lt", "gt"}[next()%3])
		case 14:
			cond = fmt.Sprintf("%s.T ge '2025-01-0%d'", rec, 1+next()%3)
		case 15: // times: ties, a fraction, a quoted time, digits past the microsecond
			cond = fmt.Sprintf("%s.H %s %s", rec, op, []string{"12:00:00", "12:00", "'08:30:00'", "12:00:00.5", "23:59:59.9999995", "12:00:00.0000001"}[next()%6])
		case 16:
			cond = fmt.Sprintf([]string{"%s.B eq true", "%s.B ne false", "%s.B eq 'true'", "%s.B eq null", "not %s.B eq false", "%s.B in (true, null)"}[next()%6], rec)
		case 17: // a date-time of 7 to 12 fraction digits against a datetime field
			cond = fmt.Sprintf("%s.T %s 2025-01-02T%02d:%s", rec, op, next()%24,
				[]string{"00:00.0000001Z", "29:59.9999999Z", "30:00.000000000000Z", "00:00.0000000001+01:00", "30:00.1234567-00:30"}[next()%5])
		case 18: // a date-time against a date field: its midnight, fractions and offsets too
			cond = fmt.Sprintf("%s.DAY %s 2025-01-02T%s", rec, op,
				[]string{"00:00:00Z", "00:00:00.0000001Z", "00:00:00.000000000Z", "01:00:00+01:00", "23:59:59.9999999-01:00", "00:00Z"}[next()%6])
		case 19: // a date against a datetime field with every operator: that day
			cond = fmt.Sprintf("%s.T %s 2025-01-0%d", rec, op, 1+next()%3)
		case 20: // strings ordered byte by byte
			cond = fmt.Sprintf("%s.S %s '%s'", rec, op, []string{"a", "b", "", "B", "bb"}[next()%5])
		case 21: // in-lists of temporal literals of the other kind
			cond = fmt.Sprintf([]string{
				"%s.DAY in (2025-01-01, 2025-01-02T00:00:00Z, 2025-01-03T00:00:00.0000001Z)",
				"%s.T in (2025-01-02, 2025-01-01T00:00:00Z)",
				"%s.H in (12:00:00, '12:00:00.5', 23:59:59.999999)",
				"%s.B in (false)",
			}[next()%4], rec)
		case 22: // quoted date-times of 7 and more fraction digits, and against a date
			cond = fmt.Sprintf("%s.%s %s '2025-01-02T00:00:00.%sZ'", rec, []string{"T", "DAY"}[next()%2], op, []string{"0000001", "000000000", "9999999999"}[next()%3])
		case 23: // the negation of a comparison that holds between two microseconds
			cond = fmt.Sprintf("not (%s.%s %s 2025-01-02T00:00:00.0000001Z)", rec, []string{"T", "DAY"}[next()%2], op)
		default:
			cond = fmt.Sprintf("%s.F gt %s.F", rec, rec) // not a comparison of two fields: a 400
		}
		req.FilterExprs = append(req.FilterExprs, cond)
	}
	cols := append(dedup(req.Fields), dedup(req.KPIs)...)
	if len(cols) > 0 && next()%2 == 0 {
		sign := "+"
		if next()%2 == 0 {
			sign = "-"
		}
		req.Sort = sign + cols[next()%len(cols)]
		if len(cols) > 1 && next()%2 == 0 { // a second key, whose ties the first leaves
			req.Sort += "," + []string{"+", "-"}[next()%2] + cols[next()%len(cols)]
		}
	}
	req.Distinct = next()%4 == 0
	if next()%4 == 0 {
		req.PageSize = 1 + next()%3
		req.Page = next() % 3
	}
	if next()%3 == 0 {
		// A fuzzy search of the values of S (a, b, c) and ID (k0, k1, ...): over the selected
		// string fields, or naming a field (of any type: a 400 where it is not a string
		// field, or, with KPIs, not selected).
		s := &RefSearch{Term: []string{"a", "b", "k1", "K", "ak", "k1x", "1k", "", "12:00"}[next()%9], Precision: next() % 101}
		if next()%2 == 0 {
			name := f.fields[next()%len(f.fields)]
			if recordLevel {
				name = strings.TrimPrefix(name, req.Record+".")
			}
			s.Fields = []string{name}
		}
		req.Search = s
	}
	return req
}

// FuzzSemantics generates requests over random KMs of 3 to 5 records (random
// relationships, a diamond among them, nulls, dangling keys; fields of every type; KPIs
// of every aggregate, min and max of dates, date-times, times, strings and booleans,
// with conditions on their own or a related record; filters on any record, date-time
// literals against dates and the reverse, fractions past the microsecond) and compares
// the answers of the memory store, SQLite and, with KMKIT_POSTGRES_DSN, PostgreSQL
// (a schema per variant), through the request layer (km.Service), with the reference
// evaluator.
func FuzzSemantics(f *testing.F) {
	f.Add(uint8(0), []byte{1, 2, 9, 13, 2, 3, 7, 1, 1, 2, 1, 0})
	fm := &fuzzModels{dir: f.TempDir(), cache: map[uint8]*fuzzKM{}}
	f.Cleanup(func() {
		for _, fk := range fm.cache {
			for _, c := range fk.close {
				c()
			}
		}
	})
	// Issue 29: listed rows whose parent fails a filter that reaches it by a shorter path
	// than through the row (five records: rows of R1 with R0, of R1 with R0 and R4 sorted
	// by R0; the triangle: rows of R2 with R0 and of R1 with R0), and a KPI of R4 grouped
	// by R0, an ambiguous join.
	f.Add(uint8(10), []byte{1, 2, 0, 6, 0, 1, 3, 0, 0, 0, 1, 1, 1})
	f.Add(uint8(21), []byte{1, 2, 35, 0, 0, 1, 3, 0, 0, 0, 0, 0, 1, 1, 1})
	f.Add(uint8(3), []byte{1, 2, 20, 0, 0, 1, 1, 0, 0, 2, 0, 0, 1, 1, 1})
	f.Add(uint8(14), []byte{1, 2, 12, 0, 0, 1, 2, 0, 0, 2, 0, 0, 1, 1, 1})
	f.Add(uint8(10), []byte{1, 1, 1, 1, 44, 0, 1, 1, 1})
	// The extremes of every type: max of a time and a boolean, min of a string, grouped
	// by R0 under a date-time of seven fraction digits against a child's date, sorted by
	// two of them; min of a date-time, a distinct count of booleans and a ratio, grouped
	// by a grandchild's fields under a date-time of ten fraction digits on R0.
	f.Add(uint8(0), []byte{1, 1, 0, 3, 39, 40, 43, 1, 1, 0, 2, 18, 4, 0, 0, 1, 0, 0, 3, 1, 1, 1})
	f.Add(uint8(3), []byte{1, 2, 24, 18, 3, 36, 58, 72, 1, 0, 0, 4, 17, 12, 3, 0, 1, 3, 1, 0, 0, 1, 0, 1})
	f.Fuzz(func(t *testing.T, variant uint8, in []byte) {
		fk := fm.get(t, variant%24)
		req := fuzzRequest(fk, in)
		t.Run("memory", func(t *testing.T) { checkService(t, fk.memory, fk.ref, "f", req) })
		t.Run("sqlite", func(t *testing.T) { checkService(t, fk.sqlite, fk.ref, "f", req) })
		if fk.postgres != nil {
			t.Run("postgres", func(t *testing.T) { checkService(t, fk.postgres, fk.ref, "f", req) })
		}
		t.Run("rows as groups", func(t *testing.T) { checkRowsAsGroups(t, fk, req) })
	})
}

// checkRowsAsGroups checks, for a KM-level request that lists rows, that its distinct
// rows are exactly the groups of the same request with the KPI counting the row grain's
// rows (B<i>, count() of record R<i>), in the reference and in both stores.
func checkRowsAsGroups(t *testing.T, fk *fuzzKM, req RefRequest) {
	if req.Record != "" || len(req.KPIs) > 0 || len(req.Fields) == 0 || req.Search != nil && len(req.Search.Fields) > 0 {
		return // (with KPIs a search names only selected fields)
	}
	rows := req
	rows.Fields = dedup(req.Fields) // the answer has one column per distinct field
	rows.Sort, rows.Page, rows.PageSize, rows.Distinct = "", 0, 0, true
	if _, err := fk.ref.Eval(rows); err != nil {
		return // refused: checkService has checked the stores refuse it too
	}
	grain, err := fk.ref.RowGrain(rows.Fields)
	if err != nil {
		t.Fatalf("%+v: the reference lists rows but names no grain: %v", rows, err)
	}
	groups := rows
	groups.Distinct = false
	groups.KPIs = []string{"B" + strings.TrimPrefix(grain, "R")}
	set := func(r *RefResult, kpis int) []string {
		var out []string
		for _, row := range r.Rows {
			out = append(out, fmt.Sprint(row[:len(row)-kpis]))
		}
		slices.Sort(out)
		return slices.Compact(out)
	}
	a, errA := fk.ref.Eval(rows)
	b, errB := fk.ref.Eval(groups)
	if errA != nil || errB != nil {
		t.Fatalf("reference: %+v: %v; with %s: %v", rows, errA, groups.KPIs[0], errB)
	}
	if x, y := set(a, 0), set(b, 1); !slices.Equal(x, y) {
		t.Errorf("reference: fields %v filters %v: rows %v, groups of %s %v", rows.Fields, rows.FilterExprs, x, groups.KPIs[0], y)
	}
	for _, st := range []struct {
		name string
		svc  *km.Service
	}{{"memory", fk.memory}, {"sqlite", fk.sqlite}, {"postgres", fk.postgres}} {
		if st.svc == nil {
			continue
		}
		var got [2][]string
		for i, r := range []RefRequest{rows, groups} {
			res, err := ask(context.Background(), st.svc, "f", r)
			if err != nil {
				t.Fatalf("%s: %s: %v", st.name, describe("f", r), err)
			}
			for _, row := range cells(res.Rows) {
				got[i] = append(got[i], fmt.Sprint(row[:len(r.Fields)]))
			}
			slices.Sort(got[i])
			got[i] = slices.Compact(got[i])
		}
		if !slices.Equal(got[0], got[1]) {
			t.Errorf("%s: fields %v filters %v: rows %v, groups of %s %v", st.name, rows.Fields, rows.FilterExprs, got[0], groups.KPIs[0], got[1])
		}
	}
}
