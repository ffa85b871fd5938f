package sqlstore

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/csv"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/kmkit/kmkit/internal/demodata"
	"github.com/kmkit/kmkit/km"
	"github.com/kmkit/kmkit/stats"
)

// summaryBenchOrders is the default number of demo orders BenchmarkSummary loads;
// KMKIT_SUMMARY_BENCH_ORDERS overrides it (1000000 for the 1M-order demo).
const summaryBenchOrders = 200_000

// BenchmarkSummary times the summary of every field of the demo's ORDERS (the o2c demo's
// record, its declared indexes, only its table filled) through KMStore.Summarize, next to
// hand-written SQL computing the same statistics on the same database, interleaved in the
// same run: kmkit-ms and sql-ms are the medians of the rounds, ratio is kmkit over SQL (the
// goal is at most 1.5). Before timing, the two answers are compared (numbers within 1e-9
// relative). SQLite always; PostgreSQL with KMKIT_POSTGRES_DSN.
func BenchmarkSummary(b *testing.B) {
	n := summaryBenchOrders
	if v := os.Getenv("KMKIT_SUMMARY_BENCH_ORDERS"); v != "" {
		var err error
		if n, err = strconv.Atoi(v); err != nil {
			b.Fatalf("KMKIT_SUMMARY_BENCH_ORDERS: %v", err)
		}
	}
	data := demoOrdersOnly(b, n)
	backends := map[string]func(b *testing.B) *DB{"sqlite": func(b *testing.B) *DB {
		db, err := Open(context.Background(), "sqlite:"+filepath.Join(b.TempDir(), "summary.db"))
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { db.Close() })
		return db
	}}
	if dsn := os.Getenv("KMKIT_POSTGRES_DSN"); dsn != "" {
		backends["postgres"] = func(b *testing.B) *DB { return openSchema(b, dsn) }
	}
	for _, name := range []string{"sqlite", "postgres"} {
		open, ok := backends[name]
		if !ok {
			continue
		}
		b.Run(name, func(b *testing.B) {
			ctx := context.Background()
			db := open(b)
			s := db.KM()
			start := time.Now()
			if err := s.Import(ctx, data); err != nil {
				b.Fatal(err)
			}
			if _, err := db.sql.ExecContext(ctx, "ANALYZE"); err != nil {
				b.Fatal(err)
			}
			b.Logf("%s: imported %d orders in %v", name, n, time.Since(start).Round(time.Millisecond))
			m, err := s.Model(ctx, "o2c")
			if err != nil {
				b.Fatal(err)
			}
			rec := m.Record("ORDERS")
			r := &km.PlanRequest{Record: "ORDERS", PageSize: math.MaxInt32}
			for _, f := range rec.Fields {
				r.Fields = append(r.Fields, f.ID)
			}
			p, err := km.NewPlan(m, r)
			if err != nil {
				b.Fatal(err)
			}
			peer := handWrittenSummary{table: rec.Source, fields: rec.Fields, postgres: name == "postgres"}
			got, err := s.Summarize(ctx, p)
			if err != nil {
				b.Fatal(err)
			}
			want, err := peer.run(ctx, db.sql)
			if err != nil {
				b.Fatal(err)
			}
			if err := sameSummary(want, got); err != nil {
				b.Fatalf("kmkit and the hand-written SQL disagree: %v", err)
			}
			var ours, theirs []time.Duration
			for b.Loop() {
				t0 := time.Now()
				if _, err := s.Summarize(ctx, p); err != nil {
					b.Fatal(err)
				}
				t1 := time.Now()
				if _, err := peer.run(ctx, db.sql); err != nil {
					b.Fatal(err)
				}
				ours, theirs = append(ours, t1.Sub(t0)), append(theirs, time.Since(t1))
			}
			k, q := median(ours), median(theirs)
			b.ReportMetric(k.Seconds()*1e3, "kmkit-ms")
			b.ReportMetric(q.Seconds()*1e3, "sql-ms")
			b.ReportMetric(k.Seconds()/q.Seconds(), "ratio")
		})
	}
}

// median returns the median of ds.
func median(ds []time.Duration) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[len(s)/2]
}

// demoOrdersOnly returns the o2c demo with n generated orders in the layout Import reads,
// every other source's CSV file holding only its header: the summary reads ORDERS alone,
// and the import stays short.
func demoOrdersOnly(b *testing.B, n int) fs.FS {
	b.Helper()
	out := fstest.MapFS{}
	models, err := fs.Glob(demodata.FS, "models/*.yaml")
	if err != nil {
		b.Fatal(err)
	}
	for _, name := range models {
		data, err := fs.ReadFile(demodata.FS, name)
		if err != nil {
			b.Fatal(err)
		}
		out[name] = &fstest.MapFile{Data: data}
	}
	var orders bytes.Buffer
	err = demodata.WriteCSV(n, func(source string) (io.Writer, error) {
		if source == "orders" {
			return &orders, nil
		}
		return io.Discard, nil
	})
	if err != nil {
		b.Fatal(err)
	}
	out["data/orders.csv"] = &fstest.MapFile{Data: orders.Bytes()}
	for _, src := range demodata.Sources {
		if src.Name == "orders" {
			continue
		}
		var h bytes.Buffer
		w := csv.NewWriter(&h)
		_ = w.Write(src.Columns)
		w.Flush()
		out["data/"+src.Name+".csv"] = &fstest.MapFile{Data: h.Bytes()}
	}
	return out
}

// handWrittenSummary is the SQL a DBA would write for describe(include='all') of a table:
// one statement of aggregates, then the most frequent value of each non-numeric column.
// PostgreSQL computes the deviations and quartiles in the first statement; on SQLite, which
// has neither, a second statement sums the squared deviations from the mean and the
// quartiles' neighbours are read by ORDER BY ... LIMIT 2 OFFSET, interpolated as numpy does.
type handWrittenSummary struct {
	table    string
	fields   []*km.Field
	postgres bool
}

// run computes the summary.
func (h handWrittenSummary) run(ctx context.Context, db *sql.DB) (*km.Summary, error) {
	items := []string{"count(*)"}
	for _, f := range h.fields {
		c := quoteIdent(f.ID)
		if !f.Type.Numeric() {
			items = append(items, "count("+c+")", "count(DISTINCT "+c+")")
			continue
		}
		items = append(items, "count("+c+")", "avg("+c+")::float8", "min("+c+")", "max("+c+")")
		if h.postgres {
			items = append(items, "stddev_samp("+c+")::float8", "percentile_cont(ARRAY[0.25, 0.5, 0.75]) WITHIN GROUP (ORDER BY "+c+")::text")
		}
	}
	if !h.postgres {
		for i, it := range items {
			items[i] = strings.ReplaceAll(it, "::float8", "")
		}
	}
	from := " FROM " + quoteIdent(h.table)
	cells := make([]any, len(items))
	dest := make([]any, len(items))
	for i := range cells {
		dest[i] = &cells[i]
	}
	if err := db.QueryRowContext(ctx, "SELECT "+strings.Join(items, ", ")+from).Scan(dest...); err != nil {
		return nil, err
	}
	sum := &km.Summary{Rows: int(asInt(cells[0])), Fields: make([]km.FieldSummary, len(h.fields))}
	next := cells[1:]
	for i, f := range h.fields {
		c := quoteIdent(f.ID)
		if !f.Type.Numeric() {
			cat := &stats.Categorical{Count: asInt(next[0]), Unique: asInt(next[1])}
			next = next[2:]
			var top any
			err := db.QueryRowContext(ctx, "SELECT "+c+", count(*)"+from+" WHERE "+c+" IS NOT NULL GROUP BY "+c+" ORDER BY 2 DESC LIMIT 1").
				Scan(&top, &cat.Freq)
			if err != nil && err != sql.ErrNoRows {
				return nil, err
			}
			sum.Fields[i].Categorical = cat
			continue
		}
		nm := &stats.Numeric{Count: asInt(next[0]), Mean: asFloat(next[1]), Min: asFloat(next[2]), Max: asFloat(next[3])}
		next = next[4:]
		if h.postgres {
			nm.Std = asFloat(next[0])
			var q [3]float64
			text, _ := next[1].(string)
			if _, err := fmt.Sscanf(text, "{%g,%g,%g}", &q[0], &q[1], &q[2]); err != nil {
				return nil, fmt.Errorf("quartiles %q: %w", text, err)
			}
			nm.P25, nm.P50, nm.P75 = stats.Number(q[0]), stats.Number(q[1]), stats.Number(q[2])
			next = next[2:]
		} else {
			var squares float64
			err := db.QueryRowContext(ctx, "SELECT sum(("+c+" - m) * ("+c+" - m))"+from+", (SELECT avg("+c+") AS m"+from+")").Scan(&squares)
			if err != nil {
				return nil, err
			}
			nm.Std = stats.Number(math.Sqrt(squares / float64(nm.Count-1)))
			lo, _, t := stats.QuartileRanks(int(nm.Count))
			var q [3]stats.Number
			for k := range q {
				var a, z float64
				rows, err := db.QueryContext(ctx, "SELECT "+c+from+" WHERE "+c+" IS NOT NULL ORDER BY "+c+" LIMIT 2 OFFSET "+strconv.Itoa(lo[k]))
				if err != nil {
					return nil, err
				}
				for j := 0; rows.Next(); j++ {
					if j == 0 {
						err = rows.Scan(&a)
						z = a
					} else {
						err = rows.Scan(&z)
					}
				}
				rows.Close()
				if err != nil {
					return nil, err
				}
				q[k] = stats.Number(stats.LerpFloat(a, z, t[k]))
			}
			nm.P25, nm.P50, nm.P75 = q[0], q[1], q[2]
		}
		sum.Fields[i].Numeric = nm
	}
	return sum, nil
}

// sameSummary reports how want and got differ: numbers beyond 1e-9 relative, counts, unique
// values and frequencies at all (the hand-written SQL does not break ties for top).
func sameSummary(want, got *km.Summary) error {
	if want.Rows != got.Rows || len(want.Fields) != len(got.Fields) {
		return fmt.Errorf("rows %d and %d, fields %d and %d", want.Rows, got.Rows, len(want.Fields), len(got.Fields))
	}
	for i, w := range want.Fields {
		g := got.Fields[i]
		switch {
		case w.Numeric != nil && g.Numeric != nil:
			wn, gn := w.Numeric, g.Numeric
			if wn.Count != gn.Count {
				return fmt.Errorf("field %d: count %d, hand-written %d", i, gn.Count, wn.Count)
			}
			for k, pair := range [][2]stats.Number{{wn.Mean, gn.Mean}, {wn.Std, gn.Std}, {wn.Min, gn.Min}, {wn.P25, gn.P25},
				{wn.P50, gn.P50}, {wn.P75, gn.P75}, {wn.Max, gn.Max}} {
				if !closeTo(float64(pair[0]), float64(pair[1])) {
					return fmt.Errorf("field %d statistic %d: %v, hand-written %v", i, k, pair[1], pair[0])
				}
			}
		case w.Categorical != nil && g.Categorical != nil:
			wc, gc := w.Categorical, g.Categorical
			if wc.Count != gc.Count || wc.Unique != gc.Unique || wc.Freq != gc.Freq {
				return fmt.Errorf("field %d: %+v, hand-written %+v", i, *gc, *wc)
			}
		default:
			return fmt.Errorf("field %d: kinds differ", i)
		}
	}
	return nil
}
