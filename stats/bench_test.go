package stats

import (
	"maps"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"testing"
)

// benchRows is the length of the benchmark columns.
const benchRows = 1_000_000

// benchColumns are 8 columns of benchRows rows: 5 numeric (3 float, 2 integer; some with
// nulls) and 3 string columns of low, medium and high cardinality.
func benchColumns() []*column {
	r := rand.New(rand.NewPCG(11, 13))
	g := gen{r, benchRows}
	return []*column{
		g.floats("net_value", 0.05, func(int) float64 { return math.Round(r.NormFloat64()*50_000+100_000) / 100 }),
		g.floats("lead_time", 0, func(int) float64 { return math.Exp(r.NormFloat64()) }),
		g.floats("score", 0.01, func(int) float64 { return r.Float64() }),
		g.ints("quantity", kindInt, 0, func(int) int64 { return r.Int64N(10_000) }),
		g.ints("days_late", kindInt, 0.1, func(int) int64 { return r.Int64N(120) - 30 }),
		g.strings("country", 0.01, func(int) string { return words[r.IntN(len(words))] }),
		g.strings("material", 0, func(int) string { return "MAT-" + strconv.Itoa(r.IntN(10_000)) }),
		g.strings("order_id", 0, func(int) string { return "ORD-" + strconv.Itoa(r.IntN(benchRows/2)) }),
	}
}

// describeAll describes every column; string columns as []string, or as dictionary codes
// when codes holds them.
func describeAll(cols []*column, codes map[*column]encoded) []any {
	out := make([]any, 0, len(cols))
	for _, c := range cols {
		if e, ok := codes[c]; ok {
			out = append(out, DescribeCodes(e.codes, e.dict, c.nulls()))
			continue
		}
		out = append(out, c.describe())
	}
	return out
}

type encoded struct {
	codes []uint32
	dict  []string
}

func encodeStrings(cols []*column) map[*column]encoded {
	m := map[*column]encoded{}
	for _, c := range cols {
		if c.kind == kindString {
			codes, dict := encode(c.s)
			m[c] = encoded{codes, dict}
		}
	}
	return m
}

// BenchmarkDescribe times describing 1,000,000 rows by 8 columns, strings held as []string
// and as dictionary codes (the memory store's form), and reports rows described per second.
func BenchmarkDescribe(b *testing.B) {
	cols := benchColumns()
	for _, variant := range []struct {
		name  string
		codes map[*column]encoded
	}{{"strings", nil}, {"codes", encodeStrings(cols)}} {
		b.Run(variant.name, func(b *testing.B) {
			for b.Loop() {
				describeAll(cols, variant.codes)
			}
			b.ReportMetric(float64(benchRows)*float64(b.N)/b.Elapsed().Seconds(), "rows/s")
		})
	}
}

// BenchmarkDescribeVsPandas times the same describe as BenchmarkDescribe next to pandas'
// describe(include='all') on the same data, in the same run: pandas-ms is the best of 5 calls
// of describe() alone (not reading the CSV), ms the mean of ours, and ratio ours over pandas
// (the goal is at most 1), for strings held as []string and as dictionary codes.
func BenchmarkDescribeVsPandas(b *testing.B) {
	if !havePandas() {
		b.Skip(python + " cannot import pandas (Debian package python3-pandas)")
	}
	cols := benchColumns()
	pandas := runPandas(b, b.TempDir(), []oracleCase{{"bench", cols}}, 5)["bench"].Seconds
	for _, variant := range []struct {
		name  string
		codes map[*column]encoded
	}{{"strings", nil}, {"codes", encodeStrings(cols)}} {
		b.Run(variant.name, func(b *testing.B) {
			for b.Loop() {
				describeAll(cols, variant.codes)
			}
			ours := b.Elapsed().Seconds() / float64(b.N)
			b.ReportMetric(pandas*1e3, "pandas-ms")
			b.ReportMetric(ours*1e3, "ms")
			b.ReportMetric(ours/pandas, "ratio")
		})
	}
}

// BenchmarkDescribeDatesVsPandas describes 1,000,000 dates over three years with 1% nulls
// (the shape of an order date) next to pandas' describe of the same column in the same
// run: ms is ours, pandas-ms the best of 5 pandas calls, ratio ours over pandas. The
// "map" variant is the hashing path dates took before they were counted over their range.
func BenchmarkDescribeDatesVsPandas(b *testing.B) {
	r := rand.New(rand.NewPCG(3, 5))
	g := gen{r, benchRows}
	col := g.ints("order_date", kindDate, 0.01, func(int) int64 { return 19_000 + r.Int64N(3*365) })
	benchCategoricalVsPandas(b, col, map[string]func() Categorical{
		"range": func() Categorical { return DescribeDates(col.i, col.nulls()) },
		"map":   func() Categorical { return DescribeCategorical(col.i, col.nulls(), FormatDate) },
	})
}

// BenchmarkDescribeInstantsVsPandas describes 1,000,000 instants at whole seconds over
// three years with 1% nulls (the shape of an order's creation time, mostly distinct) next
// to pandas, as BenchmarkDescribeDatesVsPandas does. The "map" variant is the hashing path
// instants took before they were sorted and counted in runs ("sort").
func BenchmarkDescribeInstantsVsPandas(b *testing.B) {
	r := rand.New(rand.NewPCG(3, 7))
	g := gen{r, benchRows}
	col := g.ints("created_at", kindInstant, 0.01, func(int) int64 {
		return 1_640_995_200_000_000 + r.Int64N(3*365*24*60*60)*1_000_000
	})
	benchCategoricalVsPandas(b, col, map[string]func() Categorical{
		"sort": func() Categorical { return DescribeInstants(col.i, col.nulls()) },
		"map":  func() Categorical { return DescribeCategorical(col.i, col.nulls(), FormatInstant) },
	})
}

// benchCategoricalVsPandas runs each variant describing col as a sub-benchmark, reporting
// its ms next to the best of 5 pandas calls on the same column (without pandas, ms alone).
func benchCategoricalVsPandas(b *testing.B, col *column, variants map[string]func() Categorical) {
	pandas := -1.0
	if havePandas() {
		pandas = runPandas(b, b.TempDir(), []oracleCase{{col.name, []*column{col}}}, 5)[col.name].Seconds
	}
	for _, name := range slices.Sorted(maps.Keys(variants)) {
		b.Run(name, func(b *testing.B) {
			for b.Loop() {
				variants[name]()
			}
			ours := b.Elapsed().Seconds() / float64(b.N)
			b.ReportMetric(ours*1e3, "ms")
			if pandas > 0 {
				b.ReportMetric(pandas*1e3, "pandas-ms")
				b.ReportMetric(ours/pandas, "ratio")
			}
		})
	}
}
