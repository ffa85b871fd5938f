// Command duckdb measures kmkit's memory backend next to DuckDB on the same data: the
// order-to-cash demo generated for -orders orders, written as the CSV files a -data
// directory holds, loaded by kmkit and by DuckDB (through its Node.js client, pinned in
// package-lock.json beside this file, which lists DuckDB's native library for every
// platform; `npm ci` here installs the locked versions with this platform's).
//
//	(cd bench/duckdb && npm ci) && go run ./bench/duckdb -orders 1000000
//
// It prints three Markdown tables, each kmkit figure next to DuckDB's with their ratio
// (kmkit / DuckDB: below 1, kmkit is faster or smaller):
//
//   - load: from the CSV files to a queryable store (kmkit's -data path,
//     memory.KMStore.Import), kmkit's generated demo (-demo-rows, demostore.Store), and DuckDB's
//     CREATE TABLE ... AS SELECT * FROM read_csv(...) with the column types given, with 2
//     and 1 threads; each in a fresh process, so that the resident set after the load, after
//     three runs of every query, and its peak, are the store's own (plus the runtime's:
//     printed as "resident before loading"); kmkit's load ends, as the reference server's
//     does, with debug.FreeOSMemory, and its figures include the live Go heap after the
//     load and after the queries (what their caches keep), each measured after a collection;
//   - queries: the Knowledge Model API's queries of BENCHMARKS.md's KM table (a, b, c),
//     KPIs grouped through the ORDERS-CUSTOMERS join, with and without countdistinct (d, e),
//     a distinct page (f), a fuzzy search (g), a describe of every field of ORDERS (h)
//     and a fuzzy search with a new term in each kmkit run (i: no score cache hit),
//     through kmkit's HTTP handler in process
//     (parsing, planning, executing, encoding the JSON page) next to the same query in SQL
//     on DuckDB (executing and reading the result into JavaScript values), interleaved:
//     each round runs every query -n times on kmkit, then on each DuckDB; the figure is the
//     median over all rounds. Before timing, every query's answer from kmkit is checked
//     against DuckDB's (floats to 1e-9 relative), but the search's: DuckDB's peer keeps the
//     names of Jaro-Winkler similarity 0.7 or more, a similar question, not the same;
//     the describe's (h) on what both compute (sameSummary). The describe is the summary
//     endpoint (the memory store's Summarizer, as the reference server answers it: per
//     numeric field count, mean, std, min, exact quartiles and max; per other field count,
//     exact distinct count, top and freq; a sample of rows) next to DuckDB's SUMMARIZE of
//     the table (per column min, max, approx_unique, avg, std, approximate quartiles q25,
//     q50, q75, count and null_percentage): the whole describe call on each side;
//   - fresh against warm: kmkit's store loaded and warmed as the reference server does
//     (debug.FreeOSMemory, memory.KMStore.Warm, debug.FreeOSMemory again), each query's first run, and one run
//     after debug.FreeOSMemory (what the runtime does to the free heap of a long-idle
//     server), next to the warm median: wall time, CPU time and minor page faults
//     (getrusage) of the request; beside them, each DuckDB's first run of the query
//     (the first of its kind after its load, which is also the run whose rows are
//     compared) next to its warm median, wall time and CPU time of its process. These
//     first runs come after DuckDB's load, in another process, of the same data;
//   - fresh processes (-fresh K): K kmkit processes started one after the other, each
//     loading the CSV files and warming the store as the reference server does, then
//     running each query once and -n times more with nothing else between: per query the
//     median of the first runs, of the warm medians and of each process's first / warm.
//     Each is followed by a fresh DuckDB process that loads the same files and does the
//     same: its first / warm, and kmkit's first run next to DuckDB's. (The new-term search
//     (i) asks another term on each kmkit run, whose scoring costs differ: its ratio
//     compares terms as well as runs.)
//
// The kmkit side runs the garbage collector at GOGC=400, the reference server's setting,
// unless -gogc says otherwise (a comma-separated list repeats the load measurements for
// each value). -dir keeps the CSV files in a directory (reused when it already holds them).
package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"log"
	"math"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/kmkit/kmkit/internal/demodata"
	"github.com/kmkit/kmkit/internal/demodata/demostore"
	"github.com/kmkit/kmkit/km/kmhttp"
	"github.com/kmkit/kmkit/query"
	"github.com/kmkit/kmkit/storage/memory"
)

// benchQuery is one query in both languages.
type benchQuery struct {
	name string
	path string // the KM API request, relative to the o2c KM
	sql  string
	// similar marks a peer that answers a similar question, not the same: its rows are
	// not compared (the fuzzy search's scores are kmkit's own; DuckDB's is Jaro-Winkler).
	similar bool
	// check, where set, compares kmkit's body with DuckDB's rows in place of the
	// cell-by-cell comparison of a data page (the describe answers in two shapes).
	check func(body []byte, duck [][]any) error
	// newTerm marks a search whose path takes a new term (%s) in each kmkit run
	// (newSearchTerm), so that no run finds its scores in the cache; DuckDB keeps none.
	newTerm bool
}

// agrees reports whether kmkit's answer body and DuckDB's rows answer the query alike:
// through check where set, else cell by cell as a data page; a similar question's always.
func (q benchQuery) agrees(body []byte, duck [][]any) error {
	switch {
	case q.similar:
		return nil
	case q.check != nil:
		return q.check(body, duck)
	}
	got, err := kmkitRows(body)
	if err != nil {
		return err
	}
	return sameRows(got, duck)
}

var queries = []benchQuery{
	{"(a) ORDERS page: filter + sort, pageSize 50",
		"/records/ORDERS/data?fields=ORDER_ID,CUSTOMER_ID,ORDER_DATE,STATUS,NET_VALUE,DAYS_LATE&filterExpr=STATUS%20eq%20'OPEN'&sort=-NET_VALUE&pageSize=50",
		`SELECT ORDER_ID, CUSTOMER_ID, ORDER_DATE, STATUS, NET_VALUE, DAYS_LATE FROM orders
		 WHERE STATUS = 'OPEN' ORDER BY NET_VALUE DESC NULLS LAST, rowid LIMIT 50`, false, nil, false},
	{"(b) KPIs grouped by ORDERS.STATUS",
		"/data?fields=ORDERS.STATUS&kpis=TOTAL_NET,AVG_NET,LATE_SHARE&sort=-TOTAL_NET",
		`SELECT STATUS, sum(NET_VALUE) AS TOTAL_NET, avg(NET_VALUE) AS AVG_NET,
		 count(*) FILTER (WHERE DAYS_LATE > 0) / count(*) AS LATE_SHARE
		 FROM orders GROUP BY STATUS ORDER BY TOTAL_NET DESC`, false, nil, false},
	{"(c) CUSTOMERS page: filter + sort, pageSize 50",
		"/records/CUSTOMERS/data?fields=CUSTOMER_ID,CUSTOMER_NAME,COUNTRY,SEGMENT,CREDIT_LIMIT&filterExpr=SEGMENT%20eq%20'SMB'&sort=-CREDIT_LIMIT&pageSize=50",
		`SELECT CUSTOMER_ID, CUSTOMER_NAME, COUNTRY, SEGMENT, CREDIT_LIMIT FROM customers
		 WHERE SEGMENT = 'SMB' ORDER BY CREDIT_LIMIT DESC NULLS LAST, rowid LIMIT 50`, false, nil, false},
	{"(d) KPIs by CUSTOMERS.COUNTRY through the join, with countdistinct",
		"/data?fields=CUSTOMERS.COUNTRY&kpis=ORDER_COUNT,TOTAL_NET&sort=CUSTOMERS.COUNTRY",
		`SELECT c.COUNTRY, count(DISTINCT o.ORDER_ID) AS ORDER_COUNT, sum(o.NET_VALUE) AS TOTAL_NET
		 FROM orders o JOIN customers c ON c.CUSTOMER_ID = o.CUSTOMER_ID
		 GROUP BY c.COUNTRY ORDER BY c.COUNTRY NULLS LAST`, false, nil, false},
	{"(e) KPIs by CUSTOMERS.COUNTRY through the join, sum and avg",
		"/data?fields=CUSTOMERS.COUNTRY&kpis=TOTAL_NET,AVG_NET&sort=CUSTOMERS.COUNTRY",
		`SELECT c.COUNTRY, sum(o.NET_VALUE) AS TOTAL_NET, avg(o.NET_VALUE) AS AVG_NET
		 FROM orders o JOIN customers c ON c.CUSTOMER_ID = o.CUSTOMER_ID
		 GROUP BY c.COUNTRY ORDER BY c.COUNTRY NULLS LAST`, false, nil, false},
	{"(f) ORDERS distinct CUSTOMER_ID, STATUS, pageSize 50", // first row of each pair, in row order
		"/records/ORDERS/data?fields=CUSTOMER_ID,STATUS&options=distinct&pageSize=50",
		`SELECT CUSTOMER_ID, STATUS FROM orders GROUP BY CUSTOMER_ID, STATUS
		 ORDER BY min(rowid) LIMIT 50`, false, nil, false},
	{"(g) CUSTOMERS fuzzy search 'schmidt logistik' in CUSTOMER_NAME, pageSize 50",
		"/records/CUSTOMERS/data?fields=CUSTOMER_ID,CUSTOMER_NAME&searchTerm=schmidt%20logistik&searchField=CUSTOMER_NAME&pageSize=50",
		`SELECT CUSTOMER_ID, CUSTOMER_NAME FROM customers
		 WHERE jaro_winkler_similarity(lower(CUSTOMER_NAME), 'schmidt logistik') >= 0.7
		 ORDER BY jaro_winkler_similarity(lower(CUSTOMER_NAME), 'schmidt logistik') DESC, rowid LIMIT 50`, true, nil, false},
	{"(i) CUSTOMERS fuzzy search, a new term each run ('rossi helth', 'schmidt helth' ...; DuckDB: 'schmidt logistik') in CUSTOMER_NAME, pageSize 50",
		"/records/CUSTOMERS/data?fields=CUSTOMER_ID,CUSTOMER_NAME&searchTerm=%s&searchField=CUSTOMER_NAME&pageSize=50",
		`SELECT CUSTOMER_ID, CUSTOMER_NAME FROM customers
		 WHERE jaro_winkler_similarity(lower(CUSTOMER_NAME), 'schmidt logistik') >= 0.7
		 ORDER BY jaro_winkler_similarity(lower(CUSTOMER_NAME), 'schmidt logistik') DESC, rowid LIMIT 50`, true, nil, true},
	{"(h) describe ORDERS, every field (the summary endpoint; DuckDB's SUMMARIZE)",
		"/records/ORDERS/summary",
		`SUMMARIZE orders`, false, sameSummary, false},
}

// searchStems and searchKinds make the terms of the new-term search: the words of the
// demo's customer names (internal/demodata), as a user types them.
var (
	searchStems = []string{"rossi", "schmidt", "müller", "dubois", "garcia", "jansen", "smith", "novak", "berg",
		"weber", "martin", "bianchi", "lopez", "de vries", "johnson", "kowalski", "fischer", "moreau"}
	searchKinds = []string{"helth", "logistik", "maschinenbau", "industries", "foods", "retail", "trading",
		"manufacturing", "energy", "electronics"}
	searchRuns int // the new-term searches sent so far
)

// newSearchTerm returns the term of the next new-term search: a stem and a kind, the
// first 180 distinct, then each with a number.
func newSearchTerm() string {
	k := searchRuns
	searchRuns++
	term := searchStems[k%len(searchStems)] + " " + searchKinds[k/len(searchStems)%len(searchKinds)]
	if n := k / (len(searchStems) * len(searchKinds)); n > 0 {
		term += " " + strconv.Itoa(n)
	}
	return term
}

// request returns the path of q's next kmkit run.
func (q benchQuery) request() string {
	if q.newTerm {
		return fmt.Sprintf(q.path, url.QueryEscape(newSearchTerm()))
	}
	return q.path
}

func main() {
	orders := flag.Int("orders", 1_000_000, "orders of the generated demo (customers are orders/100)")
	dir := flag.String("dir", "", "keep the data directory here (default: a temporary one)")
	rounds := flag.Int("rounds", 3, "interleaved rounds of the queries (0: none)")
	n := flag.Int("n", 5, "timed runs of each query per round and engine")
	loadRounds := flag.Int("load-rounds", 1, "rounds of the load measurements (0: none)")
	threadList := flag.String("threads", "2,1", "DuckDB thread counts")
	gogcList := flag.String("gogc", "400", "kmkit's GOGC (a comma-separated list repeats the load measurements)")
	only := flag.String("q", "abcdefghi", "the queries to run, by letter")
	fresh := flag.Int("fresh", 3, "freshly started kmkit processes whose first run of each query is measured next to its warm runs (0: none)")
	child := flag.String("child", "", "internal: measure one kmkit load (data or demo), or a fresh process's runs (fresh), in this process")
	cpuprofile := flag.String("cpuprofile", "", "with -child: write a CPU profile of the load to this file")
	flag.Parse()
	log.SetFlags(0)
	queries = slices.DeleteFunc(queries, func(q benchQuery) bool { return !strings.Contains(*only, q.name[1:2]) })
	if *child != "" {
		if *cpuprofile != "" {
			f, err := os.Create(*cpuprofile)
			if err != nil {
				log.Fatal(err)
			}
			if err := pprof.StartCPUProfile(f); err != nil {
				log.Fatal(err)
			}
			defer pprof.StopCPUProfile()
		}
		run := func() error { return runChild(*child, *dir, *orders) }
		if *child == "fresh" {
			run = func() error { return runFresh(*dir, *n) }
		}
		if err := run(); err != nil {
			log.Fatal(err)
		}
		return
	}
	threads, err := ints(*threadList)
	if err != nil {
		log.Fatalf("-threads: %v", err)
	}
	gogcs, err := ints(*gogcList)
	if err != nil {
		log.Fatalf("-gogc: %v", err)
	}
	debug.SetGCPercent(gogcs[0])
	peerDir, err := peerDirectory()
	if err != nil {
		log.Fatal(err)
	}
	if *dir == "" {
		tmp, err := os.MkdirTemp("", "kmkit-duckdb-")
		if err != nil {
			log.Fatal(err)
		}
		defer os.RemoveAll(tmp)
		*dir = tmp
	}
	start := time.Now()
	if err := writeDataDir(*dir, *orders); err != nil {
		log.Fatal(err)
	}
	fmt.Printf("%d orders as CSV in %s (%v); GOMAXPROCS %d; DuckDB threads %v\n\n", *orders, *dir,
		time.Since(start).Round(time.Millisecond), runtime.GOMAXPROCS(0), threads)

	if *loadRounds > 0 {
		if err := measureLoads(*dir, *orders, peerDir, threads, gogcs, *loadRounds); err != nil {
			log.Fatal(err)
		}
	}
	if len(queries) > 0 && *rounds > 0 {
		if err := measureQueries(*dir, peerDir, threads, *rounds, *n); err != nil {
			log.Fatal(err)
		}
	}
	if len(queries) > 0 && *fresh > 0 {
		if err := measureFresh(*dir, peerDir, *orders, gogcs[0], threads[0], *fresh, *n); err != nil {
			log.Fatal(err)
		}
	}
}

func ints(list string) ([]int, error) {
	var out []int
	for _, f := range strings.Split(list, ",") {
		v, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || v < 1 {
			return nil, fmt.Errorf("%q is not a positive integer", f)
		}
		out = append(out, v)
	}
	return out, nil
}

// peerDirectory finds bench/duckdb with its installed node_modules, from the working
// directory (the repository root or bench/duckdb).
func peerDirectory() (string, error) {
	for _, d := range []string{"bench/duckdb", "."} {
		if _, err := os.Stat(filepath.Join(d, "node_modules", "@duckdb", "node-api", "package.json")); err == nil {
			return filepath.Abs(d)
		}
	}
	return "", errors.New("@duckdb/node-api is not installed: run `npm ci` in bench/duckdb, then run this from the repository root")
}

// writeDataDir writes the models and the generated CSV files of the demo into dir, in the
// layout of the reference server's -data, unless they are there already.
func writeDataDir(dir string, orders int) error {
	stamp := filepath.Join(dir, "orders.txt")
	if b, err := os.ReadFile(stamp); err == nil && string(b) == strconv.Itoa(orders) {
		return nil
	}
	for _, sub := range []string{"models", "data"} {
		if err := os.MkdirAll(filepath.Join(dir, sub), 0o755); err != nil {
			return err
		}
	}
	models, err := fs.Glob(demodata.FS, "models/*.yaml")
	if err != nil {
		return err
	}
	for _, m := range models {
		b, err := demodata.FS.ReadFile(m)
		if err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(dir, m), b, 0o644); err != nil {
			return err
		}
	}
	var files []*os.File
	var bufs []*bufio.Writer
	err = demodata.WriteCSV(orders, func(source string) (io.Writer, error) {
		f, err := os.Create(filepath.Join(dir, "data", source+".csv"))
		if err != nil {
			return nil, err
		}
		files = append(files, f)
		bufs = append(bufs, bufio.NewWriterSize(f, 1<<20))
		return bufs[len(bufs)-1], nil
	})
	for i, f := range files {
		if ferr := bufs[i].Flush(); err == nil {
			err = ferr
		}
		if cerr := f.Close(); err == nil {
			err = cerr
		}
	}
	if err != nil {
		return err
	}
	return os.WriteFile(stamp, []byte(strconv.Itoa(orders)), 0o644)
}

// loadFigures is what one load measurement reports.
type loadFigures struct {
	NS          int64 `json:"ns"`          // the load
	Before      int64 `json:"before"`      // resident set before the load
	RSS         int64 `json:"rss"`         // resident set after the load
	AfterRSS    int64 `json:"afterRSS"`    // after three runs of every query
	Peak        int64 `json:"peak"`        // peak resident set of the process
	HeapInuse   int64 `json:"heapInuse"`   // kmkit only: the live Go heap after the load
	HeapInQuery int64 `json:"heapInQuery"` // kmkit only: the live Go heap after the queries (their caches)
}

// runChild loads the demo as kmkit's server would (what: "data" for the CSV files of dir,
// "demo" for the generator), then runs every query three times, and prints its figures as
// JSON.
func runChild(what, dir string, orders int) error {
	var f loadFigures
	f.Before = rss()
	start := time.Now()
	var store *memory.KMStore
	var err error
	switch what {
	case "data":
		store = memory.New().KM()
		err = store.Import(context.Background(), os.DirFS(dir))
	case "demo":
		store, err = demostore.Store(orders)
	default:
		err = fmt.Errorf("-child %q: want data or demo", what)
	}
	if err != nil {
		return err
	}
	debug.FreeOSMemory() // as the reference server does after loading
	f.NS = int64(time.Since(start))
	// Ready: the server warms the store in the background from here on (its resident set
	// below is the warmed one).
	if err := store.Warm(); err != nil {
		return err
	}
	debug.FreeOSMemory()
	f.RSS = rss()
	f.HeapInuse = heapInuse()
	h := kmhttp.NewHandler(store)
	for range 3 {
		for _, q := range queries {
			if _, err := serve(h, q.request()); err != nil {
				return err
			}
		}
	}
	f.AfterRSS, f.Peak = rss(), peakRSS()
	runtime.GC()
	f.HeapInQuery = heapInuse()
	runtime.KeepAlive(store) // the live heap above includes the store
	return json.NewEncoder(os.Stdout).Encode(f)
}

func heapInuse() int64 {
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return int64(m.HeapInuse)
}

// procStatus reads a kB figure of /proc/self/status, in bytes (0 where there is no /proc).
func procStatus(key string) int64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for line := range strings.SplitSeq(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, key+":"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			return kb * 1024
		}
	}
	return 0
}

func rss() int64     { return procStatus("VmRSS") }
func peakRSS() int64 { return procStatus("VmHWM") }

// freshFigures is what a fresh process reports of each query: its first run and the
// median of the n runs that follow it.
type freshFigures struct {
	First []usage `json:"first"`
	Warm  []usage `json:"warm"`
}

// MarshalJSON and UnmarshalJSON carry a usage between processes.
func (u usage) MarshalJSON() ([]byte, error) { return json.Marshal([3]int64{u.ns, u.cpu, u.faults}) }

// UnmarshalJSON reads what MarshalJSON wrote.
func (u *usage) UnmarshalJSON(b []byte) error {
	var v [3]int64
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	u.ns, u.cpu, u.faults = v[0], v[1], v[2]
	return nil
}

// runFresh is a freshly started server: it loads the CSV files of dir and readies the
// store as the reference server does (debug.FreeOSMemory, Warm, debug.FreeOSMemory), then
// runs each query once, its first run, and n times more at once, and prints the figures
// as JSON. Nothing else runs between the load and the first runs.
func runFresh(dir string, n int) error {
	h, err := readyHandler(dir)
	if err != nil {
		return err
	}
	var f freshFigures
	for _, q := range queries {
		var runs []usage
		for range 1 + n {
			u0 := now()
			if _, err := serve(h, q.request()); err != nil {
				return err
			}
			runs = append(runs, now().sub(u0))
		}
		f.First = append(f.First, runs[0])
		f.Warm = append(f.Warm, medianUsage(runs[1:]))
	}
	return json.NewEncoder(os.Stdout).Encode(f)
}

// measureFresh starts k fresh kmkit processes one after the other (runFresh), each
// followed by a fresh DuckDB peer on threads threads (duckFresh), and prints, per query,
// the median over the processes of kmkit's first run, of its warm median and of their
// ratio, each process's ratio, DuckDB's first / warm, and kmkit's first run / DuckDB's.
func measureFresh(dir, peerDir string, orders, gogc, threads, k, n int) error {
	self, err := os.Executable()
	if err != nil {
		return err
	}
	letters := ""
	for _, q := range queries {
		letters += q.name[1:2]
	}
	var runs, duck []freshFigures
	for range k {
		cmd := exec.Command(self, "-child", "fresh", "-dir", dir, "-orders", strconv.Itoa(orders), "-q", letters, "-n", strconv.Itoa(n))
		cmd.Env = append(os.Environ(), "GOGC="+strconv.Itoa(gogc))
		cmd.Stderr = os.Stderr
		out, err := cmd.Output()
		if err != nil {
			return fmt.Errorf("kmkit fresh process: %w", err)
		}
		var f freshFigures
		if err := json.Unmarshal(out, &f); err != nil {
			return err
		}
		runs = append(runs, f)
		d, err := duckFresh(peerDir, dir, threads, n)
		if err != nil {
			return err
		}
		duck = append(duck, d)
	}
	fmt.Printf("| query (kmkit, %d fresh processes) | first run: time, cpu, page faults | warm (median of %d after it) | first / warm: time | first / warm: cpu | cpu ratios, each process | DuckDB %d thread(s) first / warm: cpu | kmkit first / DuckDB first: time |\n", k, n, threads)
	fmt.Println("|---|---|---|---|---|---|---|---|")
	cpu := func(u usage) int64 { return u.cpu }
	for qi, q := range queries {
		first := medianUsage(mapSlice(runs, func(f freshFigures) usage { return f.First[qi] }))
		warm := medianUsage(mapSlice(runs, func(f freshFigures) usage { return f.Warm[qi] }))
		each := mapSlice(runs, func(f freshFigures) string { return fmt.Sprintf("%.2f", ratio(f.First[qi].cpu, f.Warm[qi].cpu)) })
		vsDuck := make([]float64, k)
		for i := range k {
			vsDuck[i] = ratio(runs[i].First[qi].ns, duck[i].First[qi].ns)
		}
		slices.Sort(vsDuck)
		fmt.Printf("| %s | %s | %s | %.2f | %.2f | %s | %.2f | %.2f |\n", q.name, first, warm,
			medianRatio(runs, func(u usage) int64 { return u.ns }, qi), medianRatio(runs, cpu, qi),
			strings.Join(each, ", "), medianRatio(duck, cpu, qi), vsDuck[k/2])
	}
	fmt.Println("\nfirst / warm: the median over the processes of each process's ratio; a fresh process loads the CSV files and warms the store as the reference server does (DuckDB: loads them), then runs each query once and -n times more; cpu of DuckDB: its Node.js process, its threads included")
	return nil
}

// duckFresh starts a DuckDB peer on threads threads, loads the CSV files of dir, and runs
// each query once and n times more, as runFresh does on kmkit.
func duckFresh(peerDir, dir string, threads, n int) (freshFigures, error) {
	var f freshFigures
	p, err := startPeer(peerDir, threads)
	if err != nil {
		return f, err
	}
	defer p.close()
	if _, err := p.load(dir); err != nil {
		return f, err
	}
	for _, q := range queries {
		r, err := p.query(q.sql, n)
		if err != nil {
			return f, fmt.Errorf("%s: %w", q.name, err)
		}
		warm := make([]usage, len(r.NS))
		for i := range r.NS {
			warm[i] = usage{ns: r.NS[i], cpu: r.CPU[i]}
		}
		f.First = append(f.First, usage{ns: r.First.NS, cpu: r.First.CPU})
		f.Warm = append(f.Warm, medianUsage(warm))
	}
	return f, nil
}

// medianRatio is the median over runs of query qi's first / warm of the figure pick reads.
func medianRatio(runs []freshFigures, pick func(usage) int64, qi int) float64 {
	r := mapSlice(runs, func(f freshFigures) float64 { return ratio(pick(f.First[qi]), pick(f.Warm[qi])) })
	slices.Sort(r)
	return r[len(r)/2]
}

// kmkitLoad runs a child process measuring one kmkit load.
func kmkitLoad(what, dir string, orders, gogc int) (loadFigures, error) {
	self, err := os.Executable()
	if err != nil {
		return loadFigures{}, err
	}
	letters := ""
	for _, q := range queries {
		letters += q.name[1:2]
	}
	cmd := exec.Command(self, "-child", what, "-dir", dir, "-orders", strconv.Itoa(orders), "-q", letters)
	cmd.Env = append(os.Environ(), "GOGC="+strconv.Itoa(gogc))
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		return loadFigures{}, fmt.Errorf("kmkit %s load: %w", what, err)
	}
	var f loadFigures
	return f, json.Unmarshal(out, &f)
}

// duckLoad starts a DuckDB peer, loads the CSV files of dir, runs every query three times
// and stops it.
func duckLoad(peerDir, dir string, threads int) (loadFigures, error) {
	p, err := startPeer(peerDir, threads)
	if err != nil {
		return loadFigures{}, err
	}
	defer p.close()
	f, err := p.load(dir)
	if err != nil {
		return f, err
	}
	f.Before = p.before
	for range 3 {
		for _, q := range queries {
			if _, err := p.query(q.sql, 0); err != nil {
				return f, err
			}
		}
	}
	var m struct{ RSS, Peak int64 }
	if err := p.call(map[string]any{"op": "memory"}, &m); err != nil {
		return f, err
	}
	f.AfterRSS, f.Peak = m.RSS, m.Peak
	return f, nil
}

func measureLoads(dir string, orders int, peerDir string, threads, gogcs []int, rounds int) error {
	type row struct {
		name string
		figs []loadFigures
	}
	var rows []*row
	get := func(name string) *row {
		for _, r := range rows {
			if r.name == name {
				return r
			}
		}
		r := &row{name: name}
		rows = append(rows, r)
		return r
	}
	for range rounds {
		for _, g := range gogcs {
			for _, what := range []string{"data", "demo"} {
				f, err := kmkitLoad(what, dir, orders, g)
				if err != nil {
					return err
				}
				label := map[string]string{"data": "kmkit -data (CSV files)", "demo": "kmkit -demo-rows (generated)"}[what]
				r := get(fmt.Sprintf("%s, GOGC=%d", label, g))
				r.figs = append(r.figs, f)
			}
		}
		for _, t := range threads {
			f, err := duckLoad(peerDir, dir, t)
			if err != nil {
				return err
			}
			r := get(fmt.Sprintf("DuckDB, %d thread(s)", t))
			r.figs = append(r.figs, f)
		}
	}
	med := func(r *row, pick func(loadFigures) int64) int64 {
		v := make([]int64, len(r.figs))
		for i, f := range r.figs {
			v[i] = pick(f)
		}
		slices.Sort(v)
		return v[len(v)/2]
	}
	peers := rows[len(rows)-len(threads):]
	fmt.Println("| load | time | resident after load | after queries | peak | live Go heap after load / after queries |")
	fmt.Println("|---|---|---|---|---|---|")
	for _, r := range rows {
		heap := ""
		if strings.HasPrefix(r.name, "kmkit") {
			heap = fmt.Sprintf("%s / %s", mib(med(r, func(f loadFigures) int64 { return f.HeapInuse })),
				mib(med(r, func(f loadFigures) int64 { return f.HeapInQuery })))
		}
		fmt.Printf("| %s | %s | %s | %s | %s | %s |\n", r.name,
			time.Duration(med(r, func(f loadFigures) int64 { return f.NS })).Round(time.Millisecond),
			mib(med(r, func(f loadFigures) int64 { return f.RSS })),
			mib(med(r, func(f loadFigures) int64 { return f.AfterRSS })),
			mib(med(r, func(f loadFigures) int64 { return f.Peak })), heap)
	}
	fmt.Printf("\nresident before loading: kmkit %s, Node.js with DuckDB %s\n\n",
		mib(med(rows[0], func(f loadFigures) int64 { return f.Before })),
		mib(med(peers[0], func(f loadFigures) int64 { return f.Before })))
	fmt.Println("| kmkit / DuckDB | " + strings.Join(mapSlice(peers, func(p *row) string {
		return "time, " + p.name[8:] + " | resident, " + p.name[8:] + " | peak, " + p.name[8:]
	}), " | ") + " |")
	fmt.Println("|---" + strings.Repeat("|---", 3*len(peers)) + "|")
	for _, r := range rows[:len(rows)-len(peers)] {
		cells := []string{}
		for _, p := range peers {
			ratio := func(pick func(loadFigures) int64) string {
				return fmt.Sprintf("%.2f", float64(med(r, pick))/float64(med(p, pick)))
			}
			cells = append(cells, ratio(func(f loadFigures) int64 { return f.NS }),
				ratio(func(f loadFigures) int64 { return f.RSS }), ratio(func(f loadFigures) int64 { return f.Peak }))
		}
		fmt.Printf("| %s | %s |\n", r.name, strings.Join(cells, " | "))
	}
	fmt.Println()
	return nil
}

func mapSlice[T, U any](s []T, f func(T) U) []U {
	out := make([]U, len(s))
	for i, v := range s {
		out[i] = f(v)
	}
	return out
}

func mib(b int64) string { return fmt.Sprintf("%.0f MiB", float64(b)/(1<<20)) }

// readyHandler loads the CSV files of dir into a memory store and readies it as the
// reference server does after loading (internal/server's loadData: debug.FreeOSMemory,
// Warm, debug.FreeOSMemory), and returns the KM API's handler over it.
func readyHandler(dir string) (http.Handler, error) {
	store := memory.New().KM()
	if err := store.Import(context.Background(), os.DirFS(dir)); err != nil {
		return nil, err
	}
	debug.FreeOSMemory()
	if err := store.Warm(); err != nil {
		return nil, err
	}
	debug.FreeOSMemory()
	return kmhttp.NewHandler(store), nil
}

// measureQueries loads the CSV files into kmkit in this process and into one DuckDB peer
// per thread count, checks every query's answers agree, and times them interleaved.
func measureQueries(dir, peerDir string, threads []int, rounds, n int) error {
	h, err := readyHandler(dir)
	if err != nil {
		return err
	}
	peers := make([]*peer, len(threads))
	for i, t := range threads {
		p, err := startPeer(peerDir, t)
		if err != nil {
			return err
		}
		defer p.close()
		if _, err := p.load(dir); err != nil {
			return err
		}
		peers[i] = p
	}
	// The first run of each query, the first request the freshly loaded store meets of its
	// kind, is measured as it checks the answer.
	// So is each DuckDB's first run of it, the first query of its kind after its load.
	first := make([]usage, len(queries))
	peerFirst := make([][]usage, len(queries)) // query, peer
	for qi, q := range queries {
		u0 := now()
		body, err := serve(h, q.request())
		if err != nil {
			return err
		}
		first[qi] = now().sub(u0)
		for i, p := range peers {
			want, err := p.query(q.sql, 0)
			if err != nil {
				return fmt.Errorf("%s: %w", q.name, err)
			}
			peerFirst[qi] = append(peerFirst[qi], usage{ns: want.First.NS, cpu: want.First.CPU})
			if err := q.agrees(body, want.Rows); err != nil {
				return fmt.Errorf("%s: kmkit and DuckDB (%d threads) disagree: %w", q.name, threads[i], err)
			}
		}
	}
	times := make([][][]int64, len(queries)) // query, engine (kmkit, then the peers), runs
	warm := make([][]usage, len(queries))    // kmkit's runs
	peerWarm := make([][][]usage, len(queries))
	for qi := range times {
		times[qi] = make([][]int64, 1+len(peers))
		peerWarm[qi] = make([][]usage, len(peers))
	}
	for range rounds {
		for qi, q := range queries {
			for range n {
				u0 := now()
				if _, err := serve(h, q.request()); err != nil {
					return err
				}
				u := now().sub(u0)
				warm[qi] = append(warm[qi], u)
				times[qi][0] = append(times[qi][0], u.ns)
			}
			for pi, p := range peers {
				res, err := p.query(q.sql, n)
				if err != nil {
					return err
				}
				times[qi][1+pi] = append(times[qi][1+pi], res.NS...)
				for i := range res.NS {
					peerWarm[qi][pi] = append(peerWarm[qi][pi], usage{ns: res.NS[i], cpu: res.CPU[i]})
				}
			}
		}
	}
	header := "| query | kmkit"
	sep := "|---|---"
	for _, t := range threads {
		header += fmt.Sprintf(" | DuckDB %d thread(s) | kmkit / DuckDB %d", t, t)
		sep += "|---|---"
	}
	fmt.Println(header + " |")
	fmt.Println(sep + "|")
	for qi, q := range queries {
		k := median(times[qi][0])
		line := fmt.Sprintf("| %s | %s", q.name, dur(k))
		for pi := range peers {
			d := median(times[qi][1+pi])
			line += fmt.Sprintf(" | %s | %.2f", dur(d), float64(k)/float64(d))
		}
		fmt.Println(line + " |")
	}
	fmt.Printf("\nmedians of %d runs (%d rounds of %d), same process, same data\n\n", rounds*n, rounds, n)

	// After a long idle period the runtime has returned the free heap to the system;
	// debug.FreeOSMemory does the same at once. Then one run of each query.
	idle := make([]usage, len(queries))
	for qi, q := range queries {
		debug.FreeOSMemory()
		u0 := now()
		if _, err := serve(h, q.request()); err != nil {
			return err
		}
		idle[qi] = now().sub(u0)
	}
	header = "| query (kmkit) | first run after the load: time, cpu, page faults | after the free heap went back to the system | warm (median) | first / warm: time, cpu | idle / warm: time, cpu"
	sep = "|---|---|---|---|---|---"
	for _, t := range threads {
		header += fmt.Sprintf(" | DuckDB %d thread(s), first / warm: time, cpu", t)
		sep += "|---"
	}
	fmt.Println(header + " |")
	fmt.Println(sep + "|")
	for qi, q := range queries {
		w := medianUsage(warm[qi])
		line := fmt.Sprintf("| %s | %s | %s | %s | %.2f, %.2f | %.2f, %.2f", q.name, first[qi], idle[qi], w,
			ratio(first[qi].ns, w.ns), ratio(first[qi].cpu, w.cpu), ratio(idle[qi].ns, w.ns), ratio(idle[qi].cpu, w.cpu))
		for pi := range peers {
			f, pw := peerFirst[qi][pi], medianUsage(peerWarm[qi][pi])
			line += fmt.Sprintf(" | %.2f, %.2f", ratio(f.ns, pw.ns), ratio(f.cpu, pw.cpu))
		}
		fmt.Println(line + " |")
	}
	fmt.Println("\npage faults: minor faults of the process (getrusage ru_minflt) during the request; cpu: user and system time of the process (DuckDB's: its Node.js process, DuckDB's threads included)")
	return nil
}

// usage is what one request cost the process: wall time, CPU time (user and system, all
// threads) and minor page faults (getrusage), or a reading of them (now).
type usage struct {
	ns, cpu, faults int64
}

// now reads the process's clock, CPU time and minor page faults so far.
func now() usage {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		log.Fatal(err)
	}
	return usage{ns: time.Now().UnixNano(), cpu: ru.Utime.Nano() + ru.Stime.Nano(), faults: int64(ru.Minflt)}
}

// sub returns u - v, the cost between two readings.
func (u usage) sub(v usage) usage {
	return usage{ns: u.ns - v.ns, cpu: u.cpu - v.cpu, faults: u.faults - v.faults}
}

// String is "time, cpu, page faults".
func (u usage) String() string {
	return fmt.Sprintf("%s, %s, %d", dur(u.ns), dur(u.cpu), u.faults)
}

// medianUsage is the median of each figure over runs, separately.
func medianUsage(runs []usage) usage {
	return usage{
		ns:     median(mapSlice(runs, func(u usage) int64 { return u.ns })),
		cpu:    median(mapSlice(runs, func(u usage) int64 { return u.cpu })),
		faults: median(mapSlice(runs, func(u usage) int64 { return u.faults })),
	}
}

// ratio is a / b, 0 where b is 0 (a CPU time below the clock's tick).
func ratio(a, b int64) float64 {
	if b == 0 {
		return 0
	}
	return float64(a) / float64(b)
}

func median(v []int64) int64 {
	v = slices.Clone(v)
	slices.Sort(v)
	return v[len(v)/2]
}

func dur(ns int64) string {
	d := time.Duration(ns)
	switch {
	case d >= 100*time.Millisecond:
		return d.Round(time.Millisecond).String()
	case d >= time.Millisecond:
		return fmt.Sprintf("%.1fms", float64(d)/1e6)
	}
	return d.Round(time.Microsecond).String()
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

// kmkitRows returns the rows of a data page, {"content":{"headers":[{"id":...}],"data":
// [{id: value, ...}, ...]}}, as cells in header order.
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

// sameRows compares kmkit's rows with DuckDB's JSON rows cell by cell: numbers to 1e-9
// relative, dates and timestamps by their leading date, everything else as text.
func sameRows(got [][]any, want [][]any) error {
	if len(got) != len(want) {
		return fmt.Errorf("%d rows, DuckDB %d", len(got), len(want))
	}
	for i := range got {
		if len(got[i]) != len(want[i]) {
			return fmt.Errorf("row %d: %d cells, DuckDB %d", i, len(got[i]), len(want[i]))
		}
		for j := range got[i] {
			if !sameCell(got[i][j], want[i][j]) {
				return fmt.Errorf("row %d cell %d: %v, DuckDB %v", i, j, got[i][j], want[i][j])
			}
		}
	}
	return nil
}

func sameCell(a, b any) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	as, bs := fmt.Sprint(a), fmt.Sprint(b)
	if as == bs {
		return true
	}
	af, err1 := strconv.ParseFloat(as, 64)
	bf, err2 := strconv.ParseFloat(bs, 64)
	if err1 == nil && err2 == nil {
		return math.Abs(af-bf) <= 1e-9*math.Max(math.Abs(af), math.Abs(bf))
	}
	return false
}

// peer is a running bench/duckdb/peer.mjs.
type peer struct {
	cmd *exec.Cmd
	in  io.WriteCloser
	out *bufio.Reader

	before int64 // resident set of the process before DuckDB started
}

func startPeer(dir string, threads int) (*peer, error) {
	cmd := exec.Command("node", "peer.mjs")
	cmd.Dir = dir
	cmd.Stderr = os.Stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("node peer.mjs: %w", err)
	}
	p := &peer{cmd: cmd, in: in, out: bufio.NewReaderSize(out, 1<<20)}
	var opened struct{ Before struct{ RSS int64 } }
	if err := p.call(map[string]any{"op": "open", "threads": threads}, &opened); err != nil {
		p.close()
		return nil, err
	}
	p.before = opened.Before.RSS
	return p, nil
}

func (p *peer) close() {
	p.in.Close()
	_ = p.cmd.Wait()
}

// call sends one command and decodes the answer into v (nil: discard it).
func (p *peer) call(cmd any, v any) error {
	b, err := json.Marshal(cmd)
	if err != nil {
		return err
	}
	if _, err := p.in.Write(append(b, '\n')); err != nil {
		return fmt.Errorf("DuckDB peer: %w", err)
	}
	line, err := p.out.ReadBytes('\n')
	if err != nil {
		return fmt.Errorf("DuckDB peer: %w", err)
	}
	var e struct{ Error string }
	if err := json.Unmarshal(line, &e); err != nil {
		return fmt.Errorf("DuckDB peer: %w", err)
	}
	if e.Error != "" {
		return fmt.Errorf("DuckDB: %s", e.Error)
	}
	if v == nil {
		return nil
	}
	return json.Unmarshal(line, v)
}

// duckTypes maps kmkit's field types to DuckDB's column types.
var duckTypes = map[query.Type]string{
	query.TypeString:   "VARCHAR",
	query.TypeInteger:  "BIGINT",
	query.TypeFloat:    "DOUBLE",
	query.TypeBoolean:  "BOOLEAN",
	query.TypeDate:     "DATE",
	query.TypeDateTime: "TIMESTAMP",
}

func (p *peer) load(dir string) (loadFigures, error) {
	type table struct {
		Name    string      `json:"name"`
		Columns [][2]string `json:"columns"`
	}
	var tables []table
	for _, s := range demodata.Sources {
		t := table{Name: s.Name}
		for i, c := range s.Columns {
			t.Columns = append(t.Columns, [2]string{c, duckTypes[s.Types[i]]})
		}
		tables = append(tables, t)
	}
	var f loadFigures
	err := p.call(map[string]any{"op": "load", "dir": filepath.Join(dir, "data"), "tables": tables}, &f)
	return f, err
}

// queryResult is the answer to a query command.
type queryResult struct {
	First struct {
		NS  int64 `json:"ns"`
		CPU int64 `json:"cpu"`
	} `json:"first"` // the warm-up run's
	NS   []int64 `json:"ns"`
	CPU  []int64 `json:"cpu"`
	Rows [][]any `json:"rows"` // the first run's
}

func (p *peer) query(sql string, n int) (queryResult, error) {
	var r queryResult
	err := p.call(map[string]any{"op": "query", "sql": sql, "n": n}, &r)
	return r, err
}

// sameSummary compares kmkit's summary body with the rows of DuckDB's SUMMARIZE (one per
// column: column_name, column_type, min, max, approx_unique, avg, std, q25, q50, q75,
// count, null_percentage) on what both compute exactly: the fields in order, the row
// count, each field's count of values (DuckDB gives the null percentage to two decimals:
// to within 0.005% of the rows), and a numeric field's min, max and mean (1e-9 relative).
// Quantiles and distinct counts are not compared: DuckDB's are approximate, kmkit's exact.
func sameSummary(body []byte, duck [][]any) error {
	var sum struct {
		Shape   [2]int64 `json:"shape"`
		Summary map[string]struct {
			Count *int64       `json:"count"`
			Mean  *json.Number `json:"mean"`
			Min   *json.Number `json:"min"`
			Max   *json.Number `json:"max"`
		} `json:"summary"`
		Content struct {
			Headers []struct {
				ID string `json:"id"`
			} `json:"headers"`
		} `json:"content"`
	}
	d := json.NewDecoder(bytes.NewReader(body))
	d.UseNumber()
	if err := d.Decode(&sum); err != nil {
		return err
	}
	if len(sum.Content.Headers) != len(duck) {
		return fmt.Errorf("%d fields, DuckDB %d columns", len(sum.Content.Headers), len(duck))
	}
	for i, h := range sum.Content.Headers {
		row := duck[i]
		if len(row) != 12 {
			return fmt.Errorf("SUMMARIZE row %d: %d cells, want 12", i, len(row))
		}
		if fmt.Sprint(row[0]) != h.ID {
			return fmt.Errorf("field %d: %s, DuckDB %v", i, h.ID, row[0])
		}
		f, ok := sum.Summary[h.ID]
		if !ok || f.Count == nil {
			return fmt.Errorf("%s: no count in the summary", h.ID)
		}
		rows, err1 := strconv.ParseFloat(fmt.Sprint(row[10]), 64)
		nullPct, err2 := strconv.ParseFloat(fmt.Sprint(row[11]), 64)
		if err1 != nil || err2 != nil {
			return fmt.Errorf("%s: DuckDB's count %v, null percentage %v", h.ID, row[10], row[11])
		}
		if int64(rows) != sum.Shape[0] {
			return fmt.Errorf("%s: %d rows, DuckDB %v", h.ID, sum.Shape[0], row[10])
		}
		if math.Abs(float64(*f.Count)-rows*(1-nullPct/100)) > rows*0.00005+0.5 {
			return fmt.Errorf("%s: %d values, DuckDB %v rows with %v%% nulls", h.ID, *f.Count, row[10], row[11])
		}
		if f.Mean == nil { // categorical
			continue
		}
		for _, c := range []struct {
			name string
			ours *json.Number
			duck any
		}{{"min", f.Min, row[2]}, {"max", f.Max, row[3]}, {"mean", f.Mean, row[5]}} {
			if c.ours == nil || !sameCell(c.ours.String(), c.duck) {
				return fmt.Errorf("%s %s: %v, DuckDB %v", h.ID, c.name, c.ours, c.duck)
			}
		}
	}
	return nil
}
