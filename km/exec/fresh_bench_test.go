package exec

import (
	"context"
	"runtime/debug"
	"slices"
	"syscall"
	"testing"
	"time"

	"github.com/kmkit/kmkit/km"
	"github.com/kmkit/kmkit/query"
	"github.com/kmkit/kmkit/query/fuzzy"
)

// BenchmarkFreshVsWarm runs heavy requests (KPIs, a KPI under a condition, count
// distinct, distinct, search, a
// filtered page sorted by a column the record's declared indexes name) on a new Source
// over the 1M-row benchmark table as a freshly started server meets them (the Source
// warmed where it can be, then the free heap returned to the system, as the reference
// server does after loading): the first run, the warm runs, and one run after
// debug.FreeOSMemory (what the runtime does to the free heap of a long-idle server). Per
// run it reports the minor page faults and the CPU time of the process (getrusage) and
// the wall time, first-, warm- (median) and idle-. The warm run is the peer of the other
// two: the target is first and idle within 1.2x. Every run of the search asks one term
// (a typo of "material") with the Source's cached scores of terms dropped before it
// (forgetTerms), so that every run scores the dictionary and does the same work: the
// first is a new term on a fresh Source, the warm ones a new term on a Source that has
// served searches. (Different terms cost the scoring up to 4x apart: a warm median over
// other terms is no peer of one first term.)
//
// A warm run finds what the run before it read in the processor's caches (this machine's
// last-level cache is 260 MiB: the 1M-row table's columns fit), which no first run after
// a start or an idle period does. So it also reports cold-: the median of runs like the
// warm ones, each after writing evictBytes of other memory, which leaves the caches
// holding none of the data. first against cold is what a start costs beyond the caches'
// state (structures built, pages faulted); cold against warm is the caches' share. And
// asleep-: the median of runs each after the process slept 200 ms with its caches
// intact, what a request meets after a pause (a processor woken, its clock raised again).
func BenchmarkFreshVsWarm(b *testing.B) {
	cases := []struct {
		name string
		req  *km.PlanRequest
	}{
		{"page", &km.PlanRequest{
			Fields: []string{"ORDER_ID", "COUNTRY", "STATUS", "NET_VALUE"}, PageSize: 50,
			Sort:    []query.SortTerm{{Field: "NET_VALUE", Desc: true}},
			Filters: []query.Expr{cmpx("STATUS", query.TypeString, query.Eq, query.String("OPEN"))}}},
		{"kpis-by-country", &km.PlanRequest{Record: "-",
			Fields: []string{"ORDERS.COUNTRY"}, KPIs: []string{"SUM", "AVG", "N"}, PageSize: 50, Count: true}},
		{"distinct", &km.PlanRequest{
			Fields: []string{"COUNTRY", "STATUS"}, Distinct: true, PageSize: 50, Count: true}},
		{"conditional-sum-by-country", &km.PlanRequest{Record: "-",
			Fields: []string{"ORDERS.COUNTRY"}, KPIs: []string{"OPEN_SUM"}, PageSize: 50, Count: true}},
		{"countdistinct-by-country", &km.PlanRequest{Record: "-",
			Fields: []string{"ORDERS.COUNTRY"}, KPIs: []string{"ORDERS_SEEN"}, PageSize: 50, Count: true}},
		{"search", &km.PlanRequest{
			Fields: []string{"ORDER_ID", "MATERIAL"}, PageSize: 50, Count: true,
			Search: &km.SearchRequest{Term: "materail", Fields: []string{"MATERIAL"}, Precision: fuzzy.DefaultPrecision}}},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			// A Source of its own: nothing built yet. ORDERS_SEEN counts distinct orders
			// per group in per-group bitmaps (30 countries x 1M orders: 3.75 MB a run).
			benchData(b)
			o := kmOf(b, "ORDERS", benchTable, "SUM", "sum(ORDERS.NET_VALUE)", "AVG", "avg(ORDERS.NET_VALUE)",
				"N", "count()", "ORDERS_SEEN", "countdistinct(ORDERS.ORDER_ID)",
				"OPEN_SUM", "sum(ORDERS.NET_VALUE, ORDERS.STATUS eq 'OPEN')")
			// The indexes the demo's ORDERS declares, in the table's terms.
			o.m.Record("ORDERS").Indexes = []km.Index{{{Field: "STATUS"}, {Field: "NET_VALUE"}}, {{Field: "NET_VALUE"}}}
			o.src.Warm()
			run := func() cost {
				o.src.scores.forgetTerms()
				p := o.compile(b, *c.req)
				u0 := readCost()
				if _, err := o.src.RunContext(context.Background(), p); err != nil {
					b.Fatal(err)
				}
				return readCost().sub(u0)
			}
			debug.FreeOSMemory()
			first := run()
			var warm []cost
			for b.Loop() {
				warm = append(warm, run())
			}
			var cold, asleep []cost
			for range 5 {
				evictCaches()
				cold = append(cold, run())
			}
			for range 5 {
				time.Sleep(200 * time.Millisecond)
				asleep = append(asleep, run())
			}
			debug.FreeOSMemory()
			idle := run()
			w := medianCost(warm)
			for _, f := range []struct {
				unit string
				v    cost
			}{{"first", first}, {"warm", w}, {"cold", medianCost(cold)}, {"asleep", medianCost(asleep)}, {"idle", idle}} {
				b.ReportMetric(float64(f.v.faults), f.unit+"-faults")
				b.ReportMetric(float64(f.v.cpu)/1e6, f.unit+"-cpu-ms")
				b.ReportMetric(float64(f.v.ns)/1e6, f.unit+"-ms")
			}
		})
	}
}

// evictBytes is more memory than the last-level cache of the machines the benchmarks run
// on holds (260 MiB here).
const evictBytes = 512 << 20

// evictBuffer is what evictCaches writes, allocated once per process.
var evictBuffer []byte

// evictCaches writes a byte of every cache line of evictBytes of memory, so that the
// processor's caches hold none of what the process read before.
func evictCaches() {
	if evictBuffer == nil {
		evictBuffer = make([]byte, evictBytes)
	}
	for i := 0; i < len(evictBuffer); i += 64 {
		evictBuffer[i]++
	}
}

// forgetTerms drops the scores of terms the cache holds, keeping the dictionaries'
// fuzzy indexes: the next search of any term scores the dictionary again.
func (c *scoreCache) forgetTerms() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.lru.Init()
	clear(c.byKey)
	c.bytes = 0
}

// cost is what a run cost the process, or a reading of the process's figures so far.
type cost struct{ ns, cpu, faults int64 }

func readCost() cost {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		panic(err)
	}
	return cost{ns: time.Now().UnixNano(), cpu: ru.Utime.Nano() + ru.Stime.Nano(), faults: int64(ru.Minflt)}
}

func (c cost) sub(d cost) cost { return cost{c.ns - d.ns, c.cpu - d.cpu, c.faults - d.faults} }

// medianCost is the median of each figure of runs, separately.
func medianCost(runs []cost) cost {
	med := func(f func(cost) int64) int64 {
		v := make([]int64, len(runs))
		for i, r := range runs {
			v[i] = f(r)
		}
		slices.Sort(v)
		return v[len(v)/2]
	}
	return cost{med(func(c cost) int64 { return c.ns }), med(func(c cost) int64 { return c.cpu }), med(func(c cost) int64 { return c.faults })}
}
