package sqlstore

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kmkit/kmkit/km"
	"github.com/kmkit/kmkit/query"
	"github.com/kmkit/kmkit/stats"
)

// pandasPython is Debian's interpreter, which has python3-pandas (.ci/run installs it).
const pandasPython = "/usr/bin/python3"

// pandasDescribe reads the CSV file and, for each case, prints describe(include='all') of
// the rows its mask keeps (numeric columns as floats, the others as text), as JSON.
// float_precision="round_trip" makes pandas read every float correctly rounded.
const pandasDescribe = `
import json, math, sys
import pandas as pd
path, cases = sys.argv[1], json.loads(sys.argv[2])
df = pd.read_csv(path, dtype={"S": object, "D": object, "DT": object, "B": object}, keep_default_na=False, na_values=[""], float_precision="round_trip")
out = {}
for name, mask in cases.items():
    part = df if mask == "" else df[eval(mask)]
    d = part.describe(include="all")
    cols = {}
    for c in d.columns:
        stats = {}
        for k, v in d[c].items():
            if isinstance(v, float) and not math.isfinite(v):
                v = None  # NaN, or an overflowed deviation (inf): JSON's null
            elif k in ("count", "unique", "freq") and v is not None:
                v = int(v)
            elif k == "top" and v is not None:
                v = str(v)
            stats[k] = v
        cols[c] = stats
    out[name] = {"rows": len(part), "columns": cols}
print(json.dumps(out))
`

// pandasFields are the fields of record R of the generated KM "g": integers without and with
// nulls, floats of ordinary, huge and tiny magnitude, a float around zero (where a mean
// cancels), the categorical types, floats whose squares are beyond a double's range
// (pandas' deviation is inf there, PostgreSQL's stddev_samp refuses them) and floats near
// the largest double, whose sum is beyond it (pandas' mean is inf too).
var pandasFields = []struct{ id, typ string }{
	{"ID", "integer"}, {"I", "integer"}, {"F", "float"}, {"BIG", "float"}, {"TINY", "float"},
	{"U", "float"}, {"S", "string"}, {"D", "date"}, {"DT", "datetime"}, {"B", "boolean"},
	{"HUGE", "float"}, {"EDGE", "float"},
}

// pandasCases are the filters of TestSummaryAgainstPandas, each with the same filter as a
// pandas mask: all rows, subsets, a field that is all null, no row and a single row.
var pandasCases = map[string][2]string{
	"all":      {"", ""},
	"positive": {"I gt 0", "df.I > 0"},
	"or":       {"S eq 'v1' or F lt 0", "(df.S == 'v1') | (df.F < 0)"},
	"null":     {"I eq null", "df.I.isna()"},
	"and":      {"D ge 2022-01-10 and TINY le 1e-300", "(df.D.fillna('') >= '2022-01-10') & (df.TINY <= 1e-300)"},
	"none":     {"I gt 1000", "df.I > 1000"},
	"single":   {"ID eq 7", "df.ID == 7"},
}

// TestSummaryAgainstPandas summarizes a generated table of 20,000 rows (nulls, ties, huge,
// tiny and cancelling magnitudes) on SQLite and on PostgreSQL (with KMKIT_POSTGRES_DSN),
// with each of pandasCases' filters, and compares every statistic with pandas'
// describe(include='all') of the same CSV filtered the same way: numbers within 1e-9
// relative, counts, unique, top and freq exactly. Every statement the summary issues is
// also watched: the summary may read no more than the six values the quartiles need of any
// statement's result, so no column is read into the server.
func TestSummaryAgainstPandas(t *testing.T) {
	summaryAgainstPandas(t, 20_000, pandasCases)
}

// TestSummaryManyRowsAgainstPandas is TestSummaryAgainstPandas on 200,000 rows, where each
// database's own summation order shows in the last bits of the means and deviations, for
// all rows and one filter.
func TestSummaryManyRowsAgainstPandas(t *testing.T) {
	if testing.Short() {
		t.Skip("imports 200,000 rows")
	}
	if raceEnabled {
		t.Skip("one goroutine's bulk work: make test runs it without the race detector (TestSummaryAgainstPandas covers the cases under it)")
	}
	summaryAgainstPandas(t, 200_000, map[string][2]string{"all": pandasCases["all"], "or": pandasCases["or"]})
}

// summaryAgainstPandas runs the comparison of TestSummaryAgainstPandas on a table of n rows
// for the cases.
func summaryAgainstPandas(t *testing.T, n int, cases map[string][2]string) {
	if exec.Command(pandasPython, "-c", "import pandas").Run() != nil {
		t.Skip(pandasPython + " cannot import pandas (Debian package python3-pandas)")
	}
	dir := t.TempDir()
	writePandasKM(t, dir, n)
	masks := map[string]string{}
	for name, c := range cases {
		masks[name] = c[1]
	}
	pandas := runPandas(t, filepath.Join(dir, "data", "r.csv"), masks)

	backends := map[string]func(t *testing.T) *DB{"sqlite": func(t *testing.T) *DB {
		db, err := Open(context.Background(), "sqlite:"+filepath.Join(t.TempDir(), "summary.db"))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { db.Close() })
		return db
	}}
	if dsn := os.Getenv("KMKIT_POSTGRES_DSN"); dsn != "" {
		backends["postgres"] = func(t *testing.T) *DB { return openSchema(t, dsn) }
	}
	for name, open := range backends {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			db := open(t)
			s := db.KM()
			if err := s.Import(ctx, os.DirFS(dir)); err != nil {
				t.Fatal(err)
			}
			m, err := s.Model(ctx, "g")
			if err != nil {
				t.Fatal(err)
			}
			rec := &rowCounter{db: db.sql}
			for cname, c := range cases {
				p := summaryPlan(t, m, c[0])
				got, err := summarize(ctx, db.d, rec, p, nil)
				if err != nil {
					t.Fatalf("%s: %v", cname, err)
				}
				want := pandas[cname]
				if got.Rows != want.Rows {
					t.Errorf("%s: %d rows, pandas has %d", cname, got.Rows, want.Rows)
				}
				for i, f := range pandasFields {
					comparePandas(t, cname+" "+f.id, want.Columns[f.id], got.Fields[i])
				}
			}
			if len(rec.stmts) == 0 {
				t.Fatal("no statement recorded")
			}
			for _, c := range rec.stmts {
				if c.n > 6 {
					t.Errorf("a summary statement returns %d rows, more than the quartiles need:\n%s", c.n, c.stmt)
				}
			}
		})
	}
}

// summaryPlan compiles a summary of every field of R filtered by filter (none when empty).
func summaryPlan(t *testing.T, m *km.KnowledgeModel, filter string) *km.Plan {
	t.Helper()
	r := &km.PlanRequest{Record: "R", PageSize: math.MaxInt32}
	for _, f := range pandasFields {
		r.Fields = append(r.Fields, f.id)
	}
	if filter != "" {
		e, err := query.ParseAndBind(filter, m.FilterSchema("R"))
		if err != nil {
			t.Fatal(err)
		}
		r.Filters = []query.Expr{e}
	}
	p, err := km.NewPlan(m, r)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// rowCounter runs a summary's statements on db and records each statement with the number
// of rows the summary read of its result.
type rowCounter struct {
	db    *sql.DB
	mu    sync.Mutex
	stmts []*countedRows
}

func (r *rowCounter) query(ctx context.Context, stmt string, args []any) (resultRows, error) {
	rows, err := r.db.QueryContext(ctx, stmt, args...)
	if err != nil {
		return nil, err
	}
	c := &countedRows{Rows: rows, stmt: stmt}
	r.mu.Lock()
	r.stmts = append(r.stmts, c)
	r.mu.Unlock()
	return c, nil
}

// countedRows counts the rows read of a statement's result.
type countedRows struct {
	*sql.Rows
	stmt string
	n    int
}

func (c *countedRows) Next() bool {
	if !c.Rows.Next() {
		return false
	}
	c.n++
	return true
}

// pandasFrame is pandas' describe of one case: the row count and each column's statistics.
type pandasFrame struct {
	Rows    int
	Columns map[string]map[string]any
}

// runPandas runs pandasDescribe on the CSV file for the masks.
func runPandas(t *testing.T, path string, masks map[string]string) map[string]pandasFrame {
	t.Helper()
	arg, _ := json.Marshal(masks)
	var stderr bytes.Buffer
	cmd := exec.Command(pandasPython, "-c", pandasDescribe, path, string(arg))
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("pandas: %v\n%s", err, stderr.Bytes())
	}
	var frames map[string]pandasFrame
	if err := json.Unmarshal(out, &frames); err != nil {
		t.Fatalf("pandas output: %v\n%s", err, out)
	}
	return frames
}

// comparePandas compares our statistics of one field with pandas': numbers within 1e-9
// relative (null, pandas' NaN, only with NaN), the others exactly.
func comparePandas(t *testing.T, field string, pandas map[string]any, ours km.FieldSummary) {
	t.Helper()
	if pandas == nil {
		t.Errorf("%s: pandas has no statistics", field)
		return
	}
	if n := ours.Numeric; n != nil {
		for k, o := range map[string]stats.Number{"count": stats.Number(n.Count), "mean": n.Mean, "std": n.Std,
			"min": n.Min, "25%": n.P25, "50%": n.P50, "75%": n.P75, "max": n.Max} {
			p, ok := pandas[k].(float64)
			switch {
			case !ok && o.Valid():
				t.Errorf("%s.%s: ours %v, pandas null", field, k, o)
			case ok && !closeTo(p, float64(o)):
				t.Errorf("%s.%s: ours %v, pandas %v", field, k, o, strconv.FormatFloat(p, 'g', -1, 64))
			}
		}
		return
	}
	c := ours.Categorical
	if c == nil {
		t.Errorf("%s: no statistics", field)
		return
	}
	want := fmt.Sprint(pandas["count"], pandas["unique"], pandas["top"], pandas["freq"])
	got := fmt.Sprint(c.Count, c.Unique, nil, nil)
	if c.Count > 0 {
		got = fmt.Sprint(c.Count, c.Unique, c.Top, c.Freq)
	}
	if strings.HasSuffix(field, " B") { // pandas reads the booleans as the CSV's text
		want = strings.ToLower(want)
	}
	if got != want {
		t.Errorf("%s: ours count, unique, top, freq %s, pandas %s", field, got, want)
	}
}

// closeTo reports whether a and b agree within 1e-9 relative.
func closeTo(a, b float64) bool {
	return a == b || math.Abs(a-b) <= 1e-9*math.Max(math.Abs(a), math.Abs(b))
}

// writePandasKM writes models/g.yaml and data/r.csv of n seeded random rows to dir.
func writePandasKM(t *testing.T, dir string, n int) {
	t.Helper()
	var model strings.Builder
	// Only S and F are indexed: on SQLite the quartiles of F walk its index, the others sort.
	model.WriteString("id: g\nname: Generated\nrecords:\n  - id: R\n    source: r\n    indexes: [[S], [F]]\n    fields:\n")
	for _, f := range pandasFields {
		fmt.Fprintf(&model, "      - {id: %s, type: %s}\n", f.id, f.typ)
	}
	for _, sub := range []string{"models", "data"} {
		if err := os.Mkdir(filepath.Join(dir, sub), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "models", "g.yaml"), []byte(model.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(5, 11))
	huge := rand.New(rand.NewPCG(13, 17)) // its own stream: the other columns stay as they were
	var buf bytes.Buffer
	cw := csv.NewWriter(&buf)
	header := make([]string, len(pandasFields))
	for i, f := range pandasFields {
		header[i] = f.id
	}
	_ = cw.Write(header)
	null := func(p float64) bool { return rng.Float64() < p }
	float := func(f float64) string { return strconv.FormatFloat(f, 'g', -1, 64) }
	for i := range n {
		row := make([]string, len(pandasFields))
		row[0] = strconv.Itoa(i)
		if !null(0.2) {
			row[1] = strconv.Itoa(rng.IntN(200) - 100)
		}
		if !null(0.1) {
			row[2] = float(math.Round(rng.NormFloat64()*1e4) / 64)
		}
		if !null(0.05) {
			row[3] = float(rng.NormFloat64() * 1e17)
		}
		if !null(0.05) {
			row[4] = float(rng.Float64() * 1e-300)
		}
		if !null(0.02) {
			row[5] = float(rng.Float64()*1000 - 500)
		}
		if !null(0.1) {
			row[6] = "v" + strconv.Itoa(rng.IntN(6))
		}
		if !null(0.1) {
			row[7] = time.Date(2022, 1, 1+rng.IntN(20), 0, 0, 0, 0, time.UTC).Format(time.DateOnly)
		}
		if !null(0.1) {
			row[8] = time.Unix(1_700_000_000+int64(rng.IntN(40)), 0).UTC().Format(time.RFC3339)
		}
		if !null(0.3) {
			row[9] = strconv.FormatBool(rng.IntN(3) == 0)
		}
		if huge.Float64() >= 0.1 {
			row[10] = float(huge.NormFloat64() * 1e200)
		}
		if huge.Float64() >= 0.1 {
			row[11] = float((1 + huge.Float64()/2) * 1e308)
		}
		_ = cw.Write(row)
	}
	cw.Flush()
	if err := os.WriteFile(filepath.Join(dir, "data", "r.csv"), buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}
