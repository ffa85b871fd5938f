package sqlstore_test

import (
	"context"
	"database/sql"
	"net/url"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"testing/fstest"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/kmkit/kmkit/km"
	"github.com/kmkit/kmkit/query"
	"github.com/kmkit/kmkit/query/benchdata"
	"github.com/kmkit/kmkit/query/column"
	"github.com/kmkit/kmkit/query/fuzzy"
	"github.com/kmkit/kmkit/storage/memory"
	"github.com/kmkit/kmkit/storage/sqlstore"
)

// The benchmarks run the query benchmarks of km/exec (same data: 1,000,000 generated
// orders of ten columns, same seed) on the memory backend, SQLite and, with
// KMKIT_POSTGRES_DSN, PostgreSQL, one sub-benchmark per backend in the same run. Before
// timing, each backend's result is checked against the memory backend's (floats within
// 1e-9 relative). CREATED is the only indexed column; IndexedCount is the query only
// pushdown makes fast.

const benchRows = benchdata.Rows

type benchBackend struct {
	name  string
	store km.Store
	model *km.KnowledgeModel
}

var (
	benchOnce     sync.Once
	benchBackends []benchBackend
	benchErr      error
	benchCleanup  []func()
)

func TestMain(m *testing.M) {
	code := m.Run()
	for _, f := range benchCleanup {
		f()
	}
	os.Exit(code)
}

const benchModel = `id: bench
name: Benchmark
records:
  - id: ORDERS
    name: Orders
    source: bench_orders
    fields:
      - {id: ORDER_ID, name: Order, type: integer}
      - {id: COUNTRY, name: Country, type: string}
      - {id: NET_VALUE, name: Net value, type: float}
      - {id: QUANTITY, name: Quantity, type: integer}
      - {id: CREATED, name: Created, type: date}
      - {id: CHANGED_AT, name: Changed at, type: datetime}
      - {id: STATUS, name: Status, type: string}
      - {id: MATERIAL, name: Material, type: string}
      - {id: LATE, name: Late, type: boolean}
      - {id: SHIP_TIME, name: Ship time, type: time}
kpis:
  - {id: SUM, name: Sum, expr: sum(ORDERS.NET_VALUE)}
  - {id: AVG, name: Average, expr: avg(ORDERS.NET_VALUE)}
  - {id: N, name: Orders, expr: count(ORDERS.ORDER_ID)}
`

// tableSource yields a column.Table's rows for LoadTable.
type tableSource struct {
	t    *column.Table
	i    int
	vals []any
}

func (s *tableSource) Next() bool {
	if s.i >= s.t.Rows() {
		return false
	}
	for j, c := range s.t.Columns() {
		v := c.Value(s.i)
		switch {
		case v.Null:
			s.vals[j] = nil
		case v.Type == query.TypeString:
			s.vals[j] = v.Str
		case v.Type == query.TypeFloat:
			s.vals[j] = v.Float
		case v.Type == query.TypeBoolean:
			s.vals[j] = v.Bool
		default:
			s.vals[j] = v.Int
		}
	}
	s.i++
	return true
}

func (s *tableSource) Values() []any { return s.vals }

func loadBench(b *testing.B, db *sqlstore.DB, t *column.Table, models []*km.KnowledgeModel) (km.Store, error) {
	ctx := context.Background()
	var cols []sqlstore.ColumnDef
	for i, name := range t.Names() {
		cols = append(cols, sqlstore.ColumnDef{Name: name, Type: t.Columns()[i].Type()})
	}
	src := &tableSource{t: t, vals: make([]any, len(cols))}
	start := testingNow()
	if err := db.LoadTable(ctx, "bench_orders", cols, src, []string{"CREATED"}, "bench"); err != nil {
		return nil, err
	}
	b.Logf("%s: loaded %d rows in %v", db.Dialect(), t.Rows(), testingSince(start))
	s := db.KM()
	for _, m := range models {
		if err := s.PutModel(ctx, m); err != nil {
			return nil, err
		}
	}
	return s, nil
}

func benchSetup(b *testing.B) []benchBackend {
	benchOnce.Do(func() {
		t, err := benchdata.Orders(benchRows)
		if err != nil {
			benchErr = err
			return
		}
		models, err := km.Load(fstest.MapFS{"models/bench.yaml": {Data: []byte(benchModel)}})
		if err != nil {
			benchErr = err
			return
		}
		mem := memory.New().KM()
		mem.PutTable("bench_orders", t)
		if err := mem.PutModel(context.Background(), models[0]); err != nil {
			benchErr = err
			return
		}
		benchBackends = append(benchBackends, benchBackend{"memory", mem, models[0]})

		dir, err := os.MkdirTemp("", "kmkit-bench")
		if err != nil {
			benchErr = err
			return
		}
		benchCleanup = append(benchCleanup, func() { os.RemoveAll(dir) })
		lite, err := sqlstore.Open(context.Background(), "sqlite:"+filepath.Join(dir, "bench.db"))
		if err != nil {
			benchErr = err
			return
		}
		s, err := loadBench(b, lite, t, models)
		if err != nil {
			benchErr = err
			return
		}
		benchBackends = append(benchBackends, benchBackend{"sqlite", s, models[0]})

		if dsn := os.Getenv(PostgresEnv); dsn != "" {
			admin, err := sql.Open("pgx", dsn)
			if err != nil {
				benchErr = err
				return
			}
			defer admin.Close()
			if _, err := admin.Exec("DROP SCHEMA IF EXISTS kmkit_bench CASCADE; CREATE SCHEMA kmkit_bench"); err != nil {
				benchErr = err
				return
			}
			u, _ := url.Parse(dsn)
			q := u.Query()
			q.Set("search_path", "kmkit_bench")
			u.RawQuery = q.Encode()
			pg, err := sqlstore.Open(context.Background(), u.String())
			if err != nil {
				benchErr = err
				return
			}
			s, err := loadBench(b, pg, t, models)
			if err != nil {
				benchErr = err
				return
			}
			if _, err := pg.SQL().Exec("ANALYZE bench_orders"); err != nil {
				benchErr = err
				return
			}
			benchBackends = append(benchBackends, benchBackend{"postgres", s, models[0]})
		}
	})
	if benchErr != nil {
		b.Fatal(benchErr)
	}
	return benchBackends
}

// runBenchQuery runs a request on record ORDERS (see runBench).
func runBenchQuery(b *testing.B, req km.PlanRequest, filters ...query.Expr) {
	runBench(b, "ORDERS", req, filters...)
}

// runBench checks each backend against memory (floats within 1e-9 relative: each
// database sums in its own order), then times each. record "" is a KM-level request;
// filters are bound filter expressions, ANDed. Each run compiles the request with
// km.NewPlan, as the handlers do, and runs the plan.
func runBench(b *testing.B, record string, req km.PlanRequest, filters ...query.Expr) {
	backends := benchSetup(b)
	ctx := context.Background()
	r := &req
	r.Record, r.Filters = record, filters
	run := func(be benchBackend) (*query.Result, error) {
		p, err := km.NewPlan(be.model, r)
		if err != nil {
			return nil, err
		}
		return be.store.Query(ctx, p)
	}
	var want *query.Result
	for _, be := range backends {
		got, err := run(be)
		if err != nil {
			b.Fatalf("%s: %v", be.name, err)
		}
		if want == nil {
			want = got
		} else if diff := cmp.Diff(want, got, cmpopts.EquateEmpty(), cmpopts.EquateApprox(1e-9, 0)); diff != "" {
			b.Fatalf("%s differs from memory (-memory +%s):\n%s", be.name, be.name, diff)
		}
	}
	for _, be := range backends {
		b.Run(be.name, func(b *testing.B) {
			for b.Loop() {
				if _, err := run(be); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Microseconds())/1000/float64(b.N), "ms/op")
		})
	}
}

func benchField(name string, t query.Type) query.FieldRef { return query.FieldRef{Name: name, Type: t} }

func BenchmarkFilterSortPage(b *testing.B) {
	runBenchQuery(b, km.PlanRequest{
		Fields:   []string{"ORDER_ID", "COUNTRY", "NET_VALUE"},
		Sort:     []query.SortTerm{{Field: "NET_VALUE", Desc: true}},
		PageSize: 50, Count: true,
	}, &query.Logical{Op: query.And,
		L: &query.Compare{Field: benchField("NET_VALUE", query.TypeFloat), Op: query.Gt, Value: query.Literal{Value: query.Float(500)}},
		R: &query.In{Field: benchField("COUNTRY", query.TypeString), Values: []query.Literal{{Value: query.String("DE")}, {Value: query.String("FR")}}}})
}

func BenchmarkGroupBy(b *testing.B) {
	runBench(b, "", km.PlanRequest{
		Fields:   []string{"ORDERS.COUNTRY"},
		KPIs:     []string{"SUM", "AVG", "N"},
		PageSize: 50, Count: true,
	})
}

func BenchmarkDistinct(b *testing.B) {
	for _, fields := range [][]string{{"COUNTRY", "STATUS"}, {"COUNTRY", "QUANTITY"}} {
		b.Run(fields[0]+"+"+fields[1], func(b *testing.B) {
			runBenchQuery(b, km.PlanRequest{Fields: fields, Distinct: true, PageSize: 50, Count: true})
		})
	}
}

func BenchmarkSearch(b *testing.B) {
	runBenchQuery(b, km.PlanRequest{
		Fields:   []string{"ORDER_ID", "MATERIAL"},
		Search:   &km.SearchRequest{Term: "materail", Fields: []string{"MATERIAL"}, Precision: fuzzy.DefaultPrecision},
		PageSize: 50, Count: true,
	})
}

func BenchmarkSortAll(b *testing.B) {
	runBenchQuery(b, km.PlanRequest{
		Fields:   []string{"ORDER_ID", "COUNTRY", "NET_VALUE"},
		Sort:     []query.SortTerm{{Field: "COUNTRY"}, {Field: "NET_VALUE", Desc: true}},
		PageSize: 50,
	})
}

// BenchmarkIndexedCount counts the orders of one day: an index range scan in SQL, a scan
// of the column in memory.
func BenchmarkIndexedCount(b *testing.B) {
	runBenchQuery(b, km.PlanRequest{
		Fields:   []string{"ORDER_ID"},
		PageSize: 1, Count: true,
	}, &query.Compare{Field: benchField("CREATED", query.TypeDate), Op: query.Eq, Value: query.Literal{Value: query.Value{Type: query.TypeDate, Int: 19_500}}})
}

func testingNow() time.Time                  { return time.Now() }
func testingSince(t time.Time) time.Duration { return time.Since(t).Round(time.Millisecond) }

// BenchmarkFilterFunctions compares OData's canonical functions in $filter with the same
// filters written without them: tolower(STATUS) eq 'open' with STATUS eq 'OPEN' (the
// memory backend computes tolower once per dictionary value), year(CREATED) eq 2023 with
// the range of that year's days (memory: a loop over the day numbers).
func BenchmarkFilterFunctions(b *testing.B) {
	schema := query.MapSchema{"STATUS": query.TypeString, "CREATED": query.TypeDate}
	for _, c := range []struct{ name, filter string }{
		{"tolower", "tolower(STATUS) eq 'open'"},
		{"plain-status", "STATUS eq 'OPEN'"},
		{"year", "year(CREATED) eq 2023"},
		{"date-range", "CREATED ge 2023-01-01 and CREATED lt 2024-01-01"},
	} {
		e, err := query.ParseAndBind(c.filter, schema, query.ODataSyntax())
		if err != nil {
			b.Fatal(err)
		}
		b.Run(c.name, func(b *testing.B) {
			runBenchQuery(b, km.PlanRequest{Fields: []string{"ORDER_ID", "STATUS"}, PageSize: 50, Count: true}, e)
		})
	}
}
