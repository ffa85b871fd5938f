package exec

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"

	"github.com/kmkit/kmkit/km"
	"github.com/kmkit/kmkit/query"
	"github.com/kmkit/kmkit/query/benchdata"
	"github.com/kmkit/kmkit/query/column"
	"github.com/kmkit/kmkit/query/fuzzy"
)

const benchRows = benchdata.Rows

var (
	benchOnce  sync.Once
	benchTable *column.Table
	benchFrame *Frame
)

// benchData returns the frame of benchdata.Orders, generated once per process.
func benchData(b *testing.B) *Frame {
	benchOnce.Do(func() {
		t, err := benchdata.Orders(benchRows)
		if err != nil {
			panic(err)
		}
		benchTable, benchFrame = t, FromTable(t)
	})
	return benchFrame
}

// benchKM returns a KM of one record ORDERS over benchdata.Orders, with the KPIs SUM and
// AVG of NET_VALUE, QTY and AVG_QTY of the integer QUANTITY, and N (count()), and the
// Source over it.
func benchKM(b *testing.B) *one {
	benchData(b)
	return kmOf(b, "ORDERS", benchTable, "SUM", "sum(ORDERS.NET_VALUE)", "AVG", "avg(ORDERS.NET_VALUE)", "N", "count()",
		"QTY", "sum(ORDERS.QUANTITY)", "AVG_QTY", "avg(ORDERS.QUANTITY)")
}

// runBench compiles req once (at record level, or at KM level when req.Record is "-")
// and times the Source running the plan, as a store runs what km.Service compiled.
func runBench(b *testing.B, req *km.PlanRequest) {
	runPlanBench(b, benchKM(b), req, false)
}

func runPlanBench(b *testing.B, o *one, req *km.PlanRequest, micro bool) {
	p := o.compile(b, *req)
	ctx := context.Background()
	// A first run builds the frame and the indexes the query uses; the Source keeps them
	// for its life. BenchmarkIndexBuild measures that once-per-frame cost.
	if _, err := o.src.RunContext(ctx, p); err != nil {
		b.Fatal(err)
	}
	if micro {
		b.ReportAllocs()
	}
	b.ResetTimer()
	for b.Loop() {
		if _, err := o.src.RunContext(ctx, p); err != nil {
			b.Fatal(err)
		}
	}
	if micro {
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/1000/float64(b.N), "µs/op")
	} else {
		b.ReportMetric(float64(b.Elapsed().Microseconds())/1000/float64(b.N), "ms/op")
	}
}

// rowScan is the peer of each benchmark: the same query row by row through Frame.Value,
// one query.Value per cell, as an executor without columns would run it.
func rowScan(f *Frame, fields []string, keep func(get func(string) query.Value) bool) [][]query.Value {
	var out [][]query.Value
	for r := range f.Rows() {
		get := func(name string) query.Value { v, _ := f.Value(name, r); return v }
		if !keep(get) {
			continue
		}
		row := make([]query.Value, len(fields))
		for i, name := range fields {
			row[i] = get(name)
		}
		out = append(out, row)
	}
	return out
}

func BenchmarkFilterSortPage(b *testing.B) {
	req := &km.PlanRequest{
		Fields:   []string{"ORDER_ID", "COUNTRY", "NET_VALUE"},
		Sort:     []query.SortTerm{{Field: "NET_VALUE", Desc: true}},
		PageSize: 50, Count: true,
		Filters: []query.Expr{and(cmpx("NET_VALUE", query.TypeFloat, query.Gt, query.Float(500)),
			&query.In{Field: field("COUNTRY", query.TypeString), Values: []query.Literal{lit(query.String("DE")), lit(query.String("FR"))}})}}
	b.Run("columnar", func(b *testing.B) { runBench(b, req) })
	// Without a count (the KM /data page): the sort index walked with the filter tested
	// row by row (plan.earlyTop), no bitmap.
	early := *req
	early.Count = false
	b.Run("columnar-nocount", func(b *testing.B) { runBench(b, &early) })
	b.Run("rows", func(b *testing.B) {
		f := benchData(b)
		b.ResetTimer()
		for b.Loop() {
			rows := rowScan(f, req.Fields, func(get func(string) query.Value) bool {
				n, c := get("NET_VALUE"), get("COUNTRY")
				return !n.Null && n.Float > 500 && !c.Null && (c.Str == "DE" || c.Str == "FR")
			})
			slices.SortStableFunc(rows, func(x, y []query.Value) int { return compareValues(x[2], y[2], true) })
			_ = rows[:50]
		}
		b.ReportMetric(float64(b.Elapsed().Microseconds())/1000/float64(b.N), "ms/op")
	})
}

func BenchmarkGroupBy(b *testing.B) {
	req := &km.PlanRequest{Record: "-",
		Fields:   []string{"ORDERS.COUNTRY"},
		KPIs:     []string{"SUM", "AVG", "N"},
		PageSize: 50, Count: true,
	}
	b.Run("columnar", func(b *testing.B) { runBench(b, req) })
	// The sum and average of an integer field.
	ints := *req
	ints.KPIs = []string{"QTY", "AVG_QTY", "N"}
	b.Run("columnar-int", func(b *testing.B) { runBench(b, &ints) })
	b.Run("rows", func(b *testing.B) {
		f := benchData(b)
		b.ResetTimer()
		for b.Loop() {
			type acc struct {
				sum  float64
				n, k int
			}
			groups := map[string]*acc{}
			for r := range f.Rows() {
				c, _ := f.Value("COUNTRY", r)
				v, _ := f.Value("NET_VALUE", r)
				a := groups[c.Str]
				if a == nil {
					a = &acc{}
					groups[c.Str] = a
				}
				a.k++
				if !v.Null {
					a.sum += v.Float
					a.n++
				}
			}
		}
		b.ReportMetric(float64(b.Elapsed().Microseconds())/1000/float64(b.N), "ms/op")
	})
}

func BenchmarkDistinct(b *testing.B) {
	for _, fields := range [][]string{{"COUNTRY", "STATUS"}, {"COUNTRY", "QUANTITY"}} {
		req := &km.PlanRequest{Fields: fields, Distinct: true, PageSize: 50, Count: true}
		name := fields[0] + "+" + fields[1]
		b.Run(name+"/columnar", func(b *testing.B) { runBench(b, req) })
		b.Run(name+"/rows", func(b *testing.B) {
			f := benchData(b)
			b.ResetTimer()
			for b.Loop() {
				seen := map[[2]query.Value]bool{}
				var out [][2]query.Value // the distinct rows, in order
				for r := range f.Rows() {
					var k [2]query.Value
					k[0], _ = f.Value(fields[0], r)
					k[1], _ = f.Value(fields[1], r)
					if !seen[k] {
						seen[k] = true
						out = append(out, k)
					}
				}
				if len(out) != len(seen) {
					b.Fatal("distinct rows lost")
				}
			}
			b.ReportMetric(float64(b.Elapsed().Microseconds())/1000/float64(b.N), "ms/op")
		})
	}
}

func BenchmarkSearch(b *testing.B) {
	req := &km.PlanRequest{
		Fields:   []string{"ORDER_ID", "MATERIAL"},
		Search:   &km.SearchRequest{Term: "materail", Fields: []string{"MATERIAL"}, Precision: fuzzy.DefaultPrecision},
		PageSize: 50, Count: true,
	}
	b.Run("columnar", func(b *testing.B) { runBench(b, req) })
	// The peer scores every row instead of every dictionary value.
	b.Run("rows", func(b *testing.B) {
		f := benchData(b)
		m := fuzzy.New(req.Search.Term)
		b.ResetTimer()
		for b.Loop() {
			n := 0
			for r := range f.Rows() {
				v, _ := f.Value("MATERIAL", r)
				if m.Score(v.Str) >= req.Search.Precision {
					n++
				}
			}
		}
		b.ReportMetric(float64(b.Elapsed().Microseconds())/1000/float64(b.N), "ms/op")
	})
}

func BenchmarkTableMemory(b *testing.B) {
	benchData(b)
	for b.Loop() {
		_ = benchTable.Bytes()
	}
	b.ReportMetric(float64(benchTable.Bytes()), "bytes")
	b.ReportMetric(float64(benchTable.RawBytes()), "raw-bytes")
	b.ReportMetric(float64(benchTable.Bytes())/float64(benchTable.RawBytes()), "ratio")
}

// BenchmarkSortAll sorts the whole table on two keys for the first page: the top-k path.
func BenchmarkSortAll(b *testing.B) {
	req := &km.PlanRequest{
		Fields:   []string{"ORDER_ID", "COUNTRY", "NET_VALUE"},
		Sort:     []query.SortTerm{{Field: "COUNTRY"}, {Field: "NET_VALUE", Desc: true}},
		PageSize: 50,
	}
	b.Run("columnar", func(b *testing.B) { runBench(b, req) })
	b.Run("rows", func(b *testing.B) {
		f := benchData(b)
		b.ResetTimer()
		for b.Loop() {
			rows := rowScan(f, req.Fields, func(func(string) query.Value) bool { return true })
			// ORDER_ID is the row number: the tie-breaker that makes the sort stable.
			slices.SortFunc(rows, func(x, y []query.Value) int {
				if c := compareValues(x[1], y[1], false); c != 0 {
					return c
				}
				if c := compareValues(x[2], y[2], true); c != 0 {
					return c
				}
				return compareValues(x[0], y[0], false)
			})
			_ = rows[:50]
		}
		b.ReportMetric(float64(b.Elapsed().Microseconds())/1000/float64(b.N), "ms/op")
	})
}

// smallRows is the size of the small-record benchmark's table: the demo's customers at
// 1,000,000 orders.
const smallRows = 10_000

var (
	smallOnce  sync.Once
	smallFrame *Frame
	smallTable *column.Table
)

// smallData returns a 10,000-row customer table shaped like the demo's: a unique id, a
// name, a country with every 23rd row null, one of three segments and a credit limit with
// 490 distinct values (many ties).
func smallData() *Frame {
	smallOnce.Do(func() {
		r := rand.New(rand.NewPCG(11, 11))
		segments := []string{"Enterprise", "SMB", "Public"}
		countries := []string{"DE", "FR", "US", "GB", "IT", "ES", "NL", "PL", "JP", "BR"}
		names := []string{"CUSTOMER_ID", "CUSTOMER_NAME", "COUNTRY", "SEGMENT", "CREDIT_LIMIT"}
		types := []query.Type{query.TypeString, query.TypeString, query.TypeString, query.TypeString, query.TypeFloat}
		bs := make([]*column.Builder, len(types))
		for i, t := range types {
			bs[i] = column.NewBuilder(t)
		}
		for i := range smallRows {
			bs[0].AppendString(fmt.Sprintf("C-%06d", i+1))
			bs[1].AppendString(fmt.Sprintf("Customer %d", i+1))
			if i%23 == 22 {
				bs[2].AppendNull()
			} else {
				bs[2].AppendString(countries[r.IntN(len(countries))])
			}
			bs[3].AppendString(segments[r.IntN(len(segments))])
			bs[4].AppendFloat(float64(10+r.IntN(490)) * 1000)
		}
		cols := make([]column.Column, len(bs))
		for i, bl := range bs {
			cols[i] = bl.Build()
		}
		t, err := column.NewTable(names, cols)
		if err != nil {
			panic(err)
		}
		smallTable, smallFrame = t, FromTable(t)
	})
	return smallFrame
}

// BenchmarkSmallPage is the KM benchmark's query (c): a filtered, sorted first page of a
// 10,000-row record. Its peer is the same page computed row by row as in BenchmarkFilterSortPage.
func BenchmarkSmallPage(b *testing.B) {
	req := &km.PlanRequest{
		Fields:   []string{"CUSTOMER_ID", "CUSTOMER_NAME", "COUNTRY", "SEGMENT", "CREDIT_LIMIT"},
		Sort:     []query.SortTerm{{Field: "CREDIT_LIMIT", Desc: true}},
		PageSize: 50, Count: true,
		Filters: []query.Expr{cmpx("SEGMENT", query.TypeString, query.Eq, query.String("SMB"))}}
	early := *req
	early.Count = false
	for _, v := range []struct {
		name string
		req  *km.PlanRequest
	}{{"columnar", req}, {"columnar-nocount", &early}} {
		b.Run(v.name, func(b *testing.B) {
			smallData()
			runPlanBench(b, kmOf(b, "CUSTOMERS", smallTable), v.req, true)
		})
	}
	b.Run("rows", func(b *testing.B) {
		f := smallData()
		b.ReportAllocs()
		for b.Loop() {
			rows := rowScan(f, req.Fields, func(get func(string) query.Value) bool {
				s := get("SEGMENT")
				return !s.Null && s.Str == "SMB"
			})
			slices.SortStableFunc(rows, func(x, y []query.Value) int { return compareValues(x[4], y[4], true) })
			_ = rows[:50]
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/1000/float64(b.N), "µs/op")
	})
}

// BenchmarkIndexBuild measures the once-per-frame cost of the indexes on the 1,000,000-row
// table: the sort index of a float and of a string column, and the per-value row bitmaps
// of a string column of 30 values. The peer of a sort index is one full sort of the rows by
// the column's comparator, what a query sorting every row costs without it.
func BenchmarkIndexBuild(b *testing.B) {
	for _, name := range []string{"NET_VALUE", "COUNTRY"} {
		b.Run("sort-index/"+name, func(b *testing.B) {
			f := benchData(b)
			c := f.refs[name]
			b.ResetTimer()
			for b.Loop() {
				var ix sortIndex
				ix.build(f.rows, c, nil)
			}
			b.ReportMetric(float64(b.Elapsed().Microseconds())/1000/float64(b.N), "ms/op")
		})
		b.Run("full-sort/"+name, func(b *testing.B) {
			f := benchData(b)
			order := chain([]rowCmp{keyCmp(f.refs[name], false)})
			sel := make([]int32, f.rows)
			b.ResetTimer()
			for b.Loop() {
				for i := range sel {
					sel[i] = int32(i)
				}
				sortTop(sel, order, len(sel))
			}
			b.ReportMetric(float64(b.Elapsed().Microseconds())/1000/float64(b.N), "ms/op")
		})
	}
	b.Run("code-rows/COUNTRY", func(b *testing.B) {
		benchData(b)
		c, _ := benchTable.Column("COUNTRY")
		b.ResetTimer()
		for b.Loop() {
			FromTable(benchTable).codeRows(c.(*column.Strings))
		}
		b.ReportMetric(float64(b.Elapsed().Microseconds())/1000/float64(b.N), "ms/op")
	})
}

// BenchmarkFilterFunctions: filters with OData's functions next to the same filters
// without them, page of 50 with the count (see storage/sqlstore's BenchmarkFilterFunctions
// for the SQL backends).
func BenchmarkFilterFunctions(b *testing.B) {
	schema := query.MapSchema{"STATUS": query.TypeString, "CREATED": query.TypeDate, "QUANTITY": query.TypeInteger}
	for _, c := range []struct{ name, filter string }{
		{"tolower", "tolower(STATUS) eq 'open'"},
		{"plain-status", "STATUS eq 'OPEN'"},
		{"year", "year(CREATED) eq 2023"},
		{"date-range", "CREATED ge 2023-01-01 and CREATED lt 2024-01-01"},
		{"arithmetic", "QUANTITY mul 2 gt 150"},
		{"plain-quantity", "QUANTITY gt 75"},
	} {
		e, err := query.ParseAndBind(c.filter, schema, query.ODataSyntax())
		if err != nil {
			b.Fatal(err)
		}
		b.Run(c.name, func(b *testing.B) {
			runBench(b, &km.PlanRequest{Fields: []string{"ORDER_ID", "STATUS"}, PageSize: 50, Count: true, Filters: []query.Expr{e}})
		})
	}
}
