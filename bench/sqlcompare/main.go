// Command sqlcompare measures kmkit's SQL backends next to hand-written SQL on the same
// database in the same run: the order-to-cash demo generated for -rows orders is imported
// into SQLite and PostgreSQL the way the reference server's -demo-rows does
// (sqlstore.KMStore.ImportGenerated, whose fingerprint skips generating and loading when the
// database already holds the demo, so a rerun starts at once), then each query of
// queries.go runs through kmkit and as the statement a DBA would write, interleaved.
//
//	go run ./bench/sqlcompare -rows 1000000 -pg 'postgres://kmkit@127.0.0.1:55432/db?sslmode=disable'
//
// The kmkit side is a whole Knowledge Model API request served in process: kmhttp.Handler's
// ServeHTTP with a GET of the data (or summary) endpoint, which parses the query string,
// compiles the plan (km.NewPlan), runs it on the store (sqlstore's translation to one SQL
// statement, or the summary's statements) and encodes the JSON page. The hand-written
// side runs its statements through database/sql on the same connection pool and scans
// every row into Go values. Each round runs every query -n times on each side,
// alternating (fewer when the query has taken 2 s in the round); the figure is the median
// over all rounds. Before timing, the rows of both sides are compared cell by cell where
// they answer the same question (floats to 1e-9 relative; dates and instants, which the
// API formats, are left out of the comparison).
//
// kmkit runs on the database as its import left it (the KM's keys, relationship fields
// and declared indexes, nothing more); the hand-written statements run twice, on a
// second import of the same demo to which a DBA added the indexes of queries.go
// (dbaIndexes), and on kmkit's database, without them. The table prints kmkit, both
// peers and both ratios; a query's target is on the ratio to the peer with the DBA's
// indexes, or for a distinct of columns no index holds, to the peer without them.
// PostgreSQL runs in the schemas kmkit_sqlcompare (kmkit's) and kmkit_sqlcompare_dba (the
// DBA's) of the given database (created when missing); SQLite in -sqlite and the same
// name with -dba before .db (files in the temporary directory by default, kept for the
// next run). Without -pg only SQLite is measured, and -only picks one database.
package main

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log"
	"math"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"runtime/pprof"
	"slices"
	"strings"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // the "pgx" driver, to create the schema

	"github.com/kmkit/kmkit/internal/demodata"
	"github.com/kmkit/kmkit/km"
	"github.com/kmkit/kmkit/km/kmhttp"
	"github.com/kmkit/kmkit/query/column"
	"github.com/kmkit/kmkit/storage/sqlstore"
)

// roundBudget: a query runs again in a round (up to -n times) only while the round has
// spent less than this on it, so that the slow queries of a large demo keep a full run to
// a few minutes.
const roundBudget = 2 * time.Second

// profile, when set, receives a CPU profile of the timed rounds.
var profile *os.File

// schema is the PostgreSQL schema the benchmark fills.
const schema = "kmkit_sqlcompare"

func main() {
	rows := flag.Int("rows", 1_000_000, "orders of the generated demo (100000 for a quick run)")
	pg := flag.String("pg", "", "PostgreSQL URL (the benchmark fills the schema "+schema+")")
	lite := flag.String("sqlite", "", "SQLite file (default: kmkit-sqlcompare-<rows>.db in the temporary directory)")
	only := flag.String("only", "", "measure one database only: sqlite or postgres")
	rounds := flag.Int("rounds", 3, "interleaved rounds")
	n := flag.Int("n", 50, "runs of each query per round and side (fewer when a round of the query has taken 2 s)")
	which := flag.String("q", "", "the queries to run, by id (comma-separated; default all)")
	cpuprofile := flag.String("cpuprofile", "", "write a CPU profile of the timed rounds (both sides; use with -q and -only)")
	flag.Parse()
	if *cpuprofile != "" {
		f, err := os.Create(*cpuprofile)
		if err != nil {
			log.Fatal(err)
		}
		profile = f
		defer f.Close()
	}
	log.SetFlags(0)
	if *which != "" {
		ids := strings.Split(*which, ",")
		queries = slices.DeleteFunc(queries, func(q benchQuery) bool { return !slices.Contains(ids, q.id) })
	}
	if *lite == "" {
		*lite = filepath.Join(os.TempDir(), fmt.Sprintf("kmkit-sqlcompare-%d.db", *rows))
	}
	ctx := context.Background()
	fmt.Printf("o2c demo with %d orders; %d rounds of %d runs per side; load average %s\n\n", *rows, *rounds, *n, loadAverage())
	if *only != "postgres" {
		dba := strings.TrimSuffix(*lite, ".db") + "-dba.db"
		if err := measure(ctx, os.Stdout, "sqlite", "sqlite:"+*lite, "sqlite:"+dba, *rows, *rounds, *n); err != nil {
			log.Fatalf("sqlite: %v", err)
		}
	}
	if *pg != "" && *only != "sqlite" {
		dsn, err := inSchema(ctx, *pg, schema)
		if err != nil {
			log.Fatalf("postgres: %v", err)
		}
		dba, err := inSchema(ctx, *pg, schema+"_dba")
		if err != nil {
			log.Fatalf("postgres: %v", err)
		}
		if err := measure(ctx, os.Stdout, "postgres", dsn, dba, *rows, *rounds, *n); err != nil {
			log.Fatalf("postgres: %v", err)
		}
	}
	fmt.Printf("load average at the end %s\n", loadAverage())
}

// inSchema creates a schema (the benchmark's) and returns dsn with it as the search path.
func inSchema(ctx context.Context, dsn, schema string) (string, error) {
	admin, err := sql.Open("pgx", dsn)
	if err != nil {
		return "", err
	}
	defer admin.Close()
	if _, err := admin.ExecContext(ctx, "CREATE SCHEMA IF NOT EXISTS "+schema); err != nil {
		return "", err
	}
	u, err := url.Parse(dsn)
	if err != nil {
		return "", err
	}
	q := u.Query()
	q.Set("search_path", schema)
	u.RawQuery = q.Encode()
	return u.String(), nil
}

// measure imports the demo into kmkit's database and the DBA's (peerDSN), adds the DBA's
// indexes to the latter (and drops them from kmkit's, where an earlier version of the
// benchmark created them), checks, times and prints the queries.
func measure(ctx context.Context, w io.Writer, dialect, kmkitDSN, peerDSN string, rows, rounds, n int) error {
	db, store, err := importDemo(ctx, w, dialect, kmkitDSN, rows)
	if err != nil {
		return err
	}
	defer db.Close()
	peer, _, err := importDemo(ctx, w, dialect+" (DBA's)", peerDSN, rows)
	if err != nil {
		return err
	}
	defer peer.Close()
	start := time.Now()
	indexes := dbaIndexes[dialect]
	if dialect == "postgres" {
		var ext string
		_, err := peer.SQL().ExecContext(ctx, trigramExtension)
		if err == nil {
			err = peer.SQL().QueryRowContext(ctx, trigramSchema).Scan(&ext)
		}
		if err == nil {
			var stmt string
			if stmt, err = onGeneration(ctx, peer, fmt.Sprintf(trigramIndex, ext)); err == nil {
				_, err = peer.SQL().ExecContext(ctx, stmt)
			}
		}
		if err != nil {
			fmt.Fprintf(w, "no trigram index for the search's peer: %v\n", err)
		}
		indexes = append(slices.Clone(indexes), "ANALYZE")
	}
	for _, s := range indexes {
		stmt, err := onGeneration(ctx, peer, s)
		if err != nil {
			return err
		}
		if _, err := peer.SQL().ExecContext(ctx, stmt); err != nil {
			return fmt.Errorf("%s: %w", stmt, err)
		}
	}
	fmt.Fprintf(w, "%s: DBA indexes in %v\n", dialect, time.Since(start).Round(time.Millisecond))
	for _, s := range dbaIndexes[dialect] {
		if _, err := db.SQL().ExecContext(ctx, "DROP INDEX IF EXISTS "+indexName(s)); err != nil {
			return fmt.Errorf("kmkit's database: %w", err)
		}
	}
	if dialect == "postgres" {
		if _, err := db.SQL().ExecContext(ctx, "DROP INDEX IF EXISTS "+trigramIndexName); err != nil {
			return fmt.Errorf("kmkit's database: %w", err)
		}
	}

	// No time limit: the summary of a million rows on a busy machine can take longer
	// than the server's default 30 s, and the benchmark is there to say how long.
	h := kmhttp.NewHandler(store, kmhttp.WithQueryTimeout(-1))
	for _, q := range queries {
		body, err := serve(h, q.path)
		if err != nil {
			return fmt.Errorf("query %s: %w", q.id, err)
		}
		if !q.exact {
			continue
		}
		got, err := kmkitRows(body)
		if err != nil {
			return fmt.Errorf("query %s: %w", q.id, err)
		}
		for _, on := range []*sqlstore.DB{peer, db} {
			want, err := handWritten(ctx, on.SQL(), q.sql[dialect], nil)
			if err != nil {
				return fmt.Errorf("query %s: %w", q.id, err)
			}
			if q.unordered {
				got, want = sortedRows(got), sortedRows(want)
			}
			if err := sameRows(got, want); err != nil {
				return fmt.Errorf("query %s: kmkit and the hand-written SQL disagree: %w", q.id, err)
			}
		}
	}
	times := make([][3][]time.Duration, len(queries))
	if profile != nil {
		if err := pprof.StartCPUProfile(profile); err != nil {
			return err
		}
		defer pprof.StopCPUProfile()
	}
	for range rounds {
		for qi, q := range queries {
			begun := time.Now()
			for i := 0; i < n && (i == 0 || time.Since(begun) < roundBudget); i++ {
				t0 := time.Now()
				if _, err := serve(h, q.path); err != nil {
					return err
				}
				times[qi][0] = append(times[qi][0], time.Since(t0))
				for side, on := range []*sqlstore.DB{peer, db} {
					t0 = time.Now()
					if _, err := handWritten(ctx, on.SQL(), q.sql[dialect], q.extra[dialect]); err != nil {
						return fmt.Errorf("query %s: %w", q.id, err)
					}
					times[qi][1+side] = append(times[qi][1+side], time.Since(t0))
				}
			}
		}
	}
	name := map[string]string{"sqlite": "SQLite", "postgres": "PostgreSQL"}[dialect]
	fmt.Fprintf(w, "\n| # | query (%s, %d orders) | kmkit | %s hand-written, DBA's indexes | ratio | hand-written, kmkit's indexes only | ratio | target | runs |\n|---|---|---|---|---|---|---|---|---|\n", dialect, rows, name)
	for qi, q := range queries {
		k, p, plain := median(times[qi][0]), median(times[qi][1]), median(times[qi][2])
		ratio, plainRatio := float64(k)/float64(p), float64(k)/float64(plain)
		verdict := ""
		if q.target > 0 {
			verdict = fmt.Sprintf("<= %gx", q.target)
			against := ratio
			if q.targetNoIndex {
				verdict += " without an index"
				against = plainRatio
			}
			if against > q.target {
				verdict += " (not met)"
			}
		}
		fmt.Fprintf(w, "| %s | %s | %s | %s | %.2fx | %s | %.2fx | %s | %d |\n", q.id, q.name, dur(k), dur(p), ratio, dur(plain), plainRatio, verdict, len(times[qi][0]))
	}
	fmt.Fprintf(w, "\nmedians over %d rounds of up to %d runs per side; kmkit: kmhttp.Handler GET in process on the database as kmkit imported it; hand-written: database/sql, rows scanned\n\n", rounds, n)
	return nil
}

// importDemo opens dsn and imports the demo of rows orders into it, as the reference
// server's -demo-rows does (nothing when the database already holds it).
func importDemo(ctx context.Context, w io.Writer, name, dsn string, rows int) (*sqlstore.DB, *sqlstore.KMStore, error) {
	db, err := sqlstore.Open(ctx, dsn)
	if err != nil {
		return nil, nil, err
	}
	models, err := km.Load(demodata.FS)
	if err != nil {
		db.Close()
		return nil, nil, err
	}
	store := db.KM() // keeps the models it imported
	start := time.Now()
	generated, err := store.ImportGenerated(ctx, models, fmt.Sprintf("demo-rows=%d", rows),
		func() (map[string]*column.Table, error) { return demodata.Tables(rows) })
	if err != nil {
		db.Close()
		return nil, nil, err
	}
	if generated {
		fmt.Fprintf(w, "%s: generated and imported the demo in %v\n", name, time.Since(start).Round(time.Millisecond))
	} else {
		fmt.Fprintf(w, "%s: the database holds the demo (checked in %v, nothing generated or loaded)\n", name, time.Since(start).Round(time.Millisecond))
	}
	return db, store, nil
}

// indexName is the name of the index a CREATE INDEX IF NOT EXISTS statement creates.
func indexName(ddl string) string {
	return strings.Fields(ddl)[5]
}

// onGeneration returns the CREATE INDEX statement ddl on the table holding the current
// generation of the source it names (the source's name is a view of it, see
// sqlstore.DB.CurrentTable), the index named after the generation too: an index name is
// the schema's, and IF NOT EXISTS would otherwise find the index of a replaced generation
// that the database still keeps and create none on the current one. Other statements as
// they are.
func onGeneration(ctx context.Context, db *sqlstore.DB, ddl string) (string, error) {
	f := strings.Fields(ddl)
	if len(f) < 8 || f[0] != "CREATE" || f[6] != "ON" {
		return ddl, nil
	}
	table, err := db.CurrentTable(ctx, f[7])
	if err != nil || table == "" {
		return "", fmt.Errorf("%s: no generation table of %s (%v)", ddl, f[7], err)
	}
	_, generation, _ := strings.Cut(table, "@")
	ddl = strings.Replace(ddl, " "+f[5]+" ON "+f[7]+" ", " "+f[5]+"_"+generation+` ON "`+table+`" `, 1)
	return ddl, nil
}

// sortedRows returns the rows in the order of their printed cells, for answers whose
// order the question leaves open.
func sortedRows(rows [][]any) [][]any {
	out := slices.Clone(rows)
	key := func(row []any) string {
		var b strings.Builder
		for _, c := range row {
			if raw, ok := c.([]byte); ok {
				c = string(raw)
			}
			fmt.Fprintf(&b, "%v\x00", c)
		}
		return b.String()
	}
	slices.SortFunc(out, func(a, b []any) int { return strings.Compare(key(a), key(b)) })
	return out
}

// handWritten runs the statement and the extra ones, reading every row, and returns the
// first statement's rows.
func handWritten(ctx context.Context, db *sql.DB, stmt string, extra []string) ([][]any, error) {
	out, err := readRows(ctx, db, stmt)
	if err != nil {
		return nil, err
	}
	for _, s := range extra {
		if _, err := readRows(ctx, db, s); err != nil {
			return nil, err
		}
	}
	return out, nil
}

func readRows(ctx context.Context, db *sql.DB, stmt string) ([][]any, error) {
	rows, err := db.QueryContext(ctx, stmt)
	if err != nil {
		return nil, fmt.Errorf("%w\n%s", err, stmt)
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		return nil, err
	}
	var out [][]any
	for rows.Next() {
		row := make([]any, len(cols))
		ptrs := make([]any, len(cols))
		for i := range row {
			ptrs[i] = &row[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			return nil, err
		}
		out = append(out, row)
	}
	return out, rows.Err()
}

// recorder is a ResponseWriter that keeps the status and body.
type recorder struct {
	h      http.Header
	status int
	body   bytes.Buffer
}

func (r *recorder) Header() http.Header         { return r.h }
func (r *recorder) WriteHeader(status int)      { r.status = status }
func (r *recorder) Write(b []byte) (int, error) { return r.body.Write(b) }

// serve sends one GET of the o2c KM to the handler and returns the body.
func serve(h http.Handler, path string) ([]byte, error) {
	req, err := http.NewRequest(http.MethodGet, kmhttp.BasePath+"/knowledge-models/o2c"+path, nil)
	if err != nil {
		return nil, err
	}
	w := &recorder{h: http.Header{}, status: http.StatusOK}
	h.ServeHTTP(w, req)
	if w.status != http.StatusOK {
		return nil, fmt.Errorf("%s: status %d: %s", path, w.status, w.body.Bytes())
	}
	return w.body.Bytes(), nil
}

// kmkitRows returns the rows of a data page as cells in header order.
func kmkitRows(body []byte) ([][]any, error) {
	var page struct {
		Content struct {
			Headers []struct {
				ID string `json:"id"`
			} `json:"headers"`
			Data []map[string]any `json:"data"`
		} `json:"content"`
	}
	d := json.NewDecoder(bytes.NewReader(body))
	d.UseNumber()
	if err := d.Decode(&page); err != nil {
		return nil, err
	}
	rows := make([][]any, len(page.Content.Data))
	for i, obj := range page.Content.Data {
		for _, h := range page.Content.Headers {
			rows[i] = append(rows[i], obj[h.ID])
		}
	}
	return rows, nil
}

// sameRows compares kmkit's rows with the hand-written ones cell by cell: numbers to
// 1e-9 relative, strings exactly; a string against a number (a date the API formats and
// the database stores as a number) is not compared.
func sameRows(got, want [][]any) error {
	if len(got) != len(want) {
		return fmt.Errorf("%d rows, hand-written %d", len(got), len(want))
	}
	for i := range got {
		if len(got[i]) != len(want[i]) {
			return fmt.Errorf("row %d: %d cells, hand-written %d", i, len(got[i]), len(want[i]))
		}
		for j := range got[i] {
			if !sameCell(got[i][j], want[i][j]) {
				return fmt.Errorf("row %d cell %d: %v, hand-written %v", i, j, got[i][j], want[i][j])
			}
		}
	}
	return nil
}

func sameCell(a, b any) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	num, isNum := a.(json.Number)
	var w float64
	switch b := b.(type) {
	case int64:
		w = float64(b)
	case float64:
		w = b
	case bool:
		return a == b
	case []byte:
		return a == string(b)
	case string:
		if isNum {
			return true // not comparable as written; see sameRows
		}
		return a == b
	default:
		return fmt.Sprint(a) == fmt.Sprint(b)
	}
	if !isNum {
		return true // a formatted date or instant
	}
	g, err := num.Float64()
	if err != nil {
		return false
	}
	return g == w || math.Abs(g-w) <= 1e-9*math.Max(math.Abs(g), math.Abs(w))
}

func median(v []time.Duration) time.Duration {
	v = slices.Clone(v)
	slices.Sort(v)
	return v[len(v)/2]
}

func dur(d time.Duration) string {
	switch {
	case d >= 100*time.Millisecond:
		return fmt.Sprintf("%.0f ms", float64(d)/1e6)
	case d >= 10*time.Millisecond:
		return fmt.Sprintf("%.1f ms", float64(d)/1e6)
	case d >= time.Millisecond:
		return fmt.Sprintf("%.2f ms", float64(d)/1e6)
	}
	return fmt.Sprintf("%.3f ms", float64(d)/1e6)
}

// loadAverage returns the machine's 1, 5 and 15 minute load averages.
func loadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "unknown"
	}
	return strings.Join(f[:3], " ")
}
