// Command bench measures the Knowledge Model handler over the generated order-to-cash
// demo, next to its peers measured in the same run:
//
//   - in process: the time a request spends in the handler next to the time it spends in
//     the store's executor (km.Store.Query), over the same requests;
//   - over loopback with wrk: the handler's latency and throughput next to a static handler
//     that writes the same response bytes from memory.
//
// Usage (wrk is the Debian package of that name):
//
//	go run ./examples/server/bench -rows 1000000 -d 10s -c 8 -t 2
//
// -q picks queries by letter (-q c runs query (c) only); -n sets the in-process requests
// per query; -rounds repeats the wrk runs of each query, handler and static handler
// alternately, and prints the median ratio (the machine's load moves between runs);
// -cpuprofile writes a CPU profile of the handler's wrk runs (the last query's
// when there are several).
//
// Next to the throughputs it prints the CPU time per request of the server (this process:
// handler and net/http, garbage collection included) and of wrk, from getrusage, and the
// ratio they imply on a machine of its own: (static server + wrk) / (handler server +
// wrk) CPU per request. On a shared machine the throughputs follow the other processes'
// load; the CPU per request much less.
//
// It prints a Markdown table for BENCHMARKS.md. Like the reference server it runs the garbage
// collector at GOGC=400 unless GOGC is set.
package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"os/exec"
	"runtime"
	"runtime/debug"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/kmkit/kmkit/internal/demodata"
	"github.com/kmkit/kmkit/internal/demodata/demostore"
	"github.com/kmkit/kmkit/km"
	"github.com/kmkit/kmkit/km/kmhttp"
	"github.com/kmkit/kmkit/query"
)

// timedStore measures the time spent in Query.
type timedStore struct {
	km.Store
	nanos atomic.Int64
	calls atomic.Int64
}

func (s *timedStore) Query(ctx context.Context, p *km.Plan) (*query.Result, error) {
	start := time.Now()
	res, err := s.Store.Query(ctx, p)
	s.nanos.Add(int64(time.Since(start)))
	s.calls.Add(1)
	return res, err
}

// discard is a ResponseWriter that keeps only the status and size.
type discard struct {
	h      http.Header
	status int
	n      int
}

func (d *discard) Header() http.Header         { return d.h }
func (d *discard) WriteHeader(status int)      { d.status = status }
func (d *discard) Write(b []byte) (int, error) { d.n += len(b); return len(b), nil }

type benchQuery struct {
	name, path string
}

func main() {
	rows := flag.Int("rows", 1_000_000, "orders to generate (customers are rows/100)")
	dur := flag.Duration("d", 10*time.Second, "wrk duration per run")
	conns := flag.Int("c", 8, "wrk connections")
	threads := flag.Int("t", 2, "wrk threads")
	iters := flag.Int("n", 200, "in-process requests per query")
	only := flag.String("q", "abc", "the queries to run, by letter")
	cpuprofile := flag.String("cpuprofile", "", "write a CPU profile of the handler's wrk runs to this file")
	rounds := flag.Int("rounds", 1, "wrk runs of each query and peer, alternating")
	flag.Parse()
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(400) // as the reference server runs
	}

	start := time.Now()
	store, err := demostore.Store(*rows)
	if err != nil {
		log.Fatal(err)
	}
	runtime.GC()
	ts := &timedStore{Store: store}
	h := kmhttp.NewHandler(ts)
	customers, _ := demodata.Sizes(*rows)
	fmt.Printf("generated %d orders and %d customers in %v; GOMAXPROCS %d\n\n", *rows, customers, time.Since(start).Round(time.Millisecond), runtime.GOMAXPROCS(0))

	base := kmhttp.BasePath + "/knowledge-models/o2c"
	queries := []benchQuery{
		{"(a) ORDERS page: filter + sort, pageSize 50", base + "/records/ORDERS/data?fields=ORDER_ID,CUSTOMER_ID,ORDER_DATE,STATUS,NET_VALUE,DAYS_LATE&filterExpr=STATUS%20eq%20'OPEN'&sort=-NET_VALUE&pageSize=50"},
		{"(b) KM KPIs grouped by one field", base + "/data?fields=ORDERS.STATUS&kpis=TOTAL_NET,AVG_NET,LATE_SHARE&sort=-TOTAL_NET"},
		{fmt.Sprintf("(c) CUSTOMERS page (%d rows): filter + sort, pageSize 50", customers), base + "/records/CUSTOMERS/data?fields=CUSTOMER_ID,CUSTOMER_NAME,COUNTRY,SEGMENT,CREDIT_LIMIT&filterExpr=SEGMENT%20eq%20'SMB'&sort=-CREDIT_LIMIT&pageSize=50"},
	}
	queries = slices.DeleteFunc(queries, func(q benchQuery) bool { return !strings.Contains(*only, q.name[1:2]) })

	// In process: handler time next to executor time.
	bodies := map[string][]byte{}
	fmt.Println("| query | handler, in process | executor (Store.Query) | handler / executor |")
	fmt.Println("|---|---|---|---|")
	for _, q := range queries {
		rec := &bytes.Buffer{}
		req, _ := http.NewRequest(http.MethodGet, q.path, nil)
		w := &recorder{h: http.Header{}, body: rec}
		h.ServeHTTP(w, req)
		if w.status != http.StatusOK {
			log.Fatalf("%s: status %d: %s", q.name, w.status, rec)
		}
		bodies[q.path] = append([]byte(nil), rec.Bytes()...)
		ts.nanos.Store(0)
		ts.calls.Store(0)
		t0 := time.Now()
		for range *iters {
			d := &discard{h: http.Header{}}
			h.ServeHTTP(d, req)
		}
		total := time.Since(t0)
		perReq := total / time.Duration(*iters)
		perExec := time.Duration(ts.nanos.Load() / ts.calls.Load())
		fmt.Printf("| %s | %v | %v | %.2f |\n", q.name, perReq.Round(time.Microsecond), perExec.Round(time.Microsecond), float64(perReq)/float64(perExec))
	}

	if _, err := exec.LookPath("wrk"); err != nil {
		fmt.Println("\nwrk not found: skipping the loopback runs")
		return
	}
	real := serve(h)
	static := serve(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, ok := bodies[r.URL.RequestURI()]
		if !ok {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Content-Length", strconv.Itoa(len(body)))
		_, _ = w.Write(body)
	}))
	fmt.Printf("\nwrk -t%d -c%d -d%v --latency, loopback, same run:\n\n", *threads, *conns, *dur)
	fmt.Println("| query | handler req/s | static req/s | handler/static | handler p50 | handler p99 | static p50 | static p99 | body bytes | CPU µs/req: handler server, static server, wrk | CPU-implied handler/static |")
	fmt.Println("|---|---|---|---|---|---|---|---|---|---|---|")
	medians, cpuMedians := map[string]float64{}, map[string]float64{}
	for _, q := range queries {
		var ratios, cpuRatios []float64
		for round := range max(*rounds, 1) {
			if *cpuprofile != "" {
				f, err := os.Create(*cpuprofile)
				if err != nil {
					log.Fatal(err)
				}
				if err := pprof.StartCPUProfile(f); err != nil {
					log.Fatal(err)
				}
			}
			hr := runWrk(*threads, *conns, *dur, "http://"+real+q.path)
			if *cpuprofile != "" {
				pprof.StopCPUProfile()
			}
			sr := runWrk(*threads, *conns, *dur, "http://"+static+q.path)
			name := q.name
			if *rounds > 1 {
				name = fmt.Sprintf("%s, round %d", q.name, round+1)
			}
			wrkCPU := (hr.clientCPU + sr.clientCPU) / 2
			cpuRatio := (sr.serverCPU + wrkCPU) / (hr.serverCPU + wrkCPU)
			fmt.Printf("| %s | %.0f | %.0f | %.2f | %s | %s | %s | %s | %d | %.1f, %.1f, %.1f | %.2f |\n", name, hr.rps, sr.rps, hr.rps/sr.rps,
				hr.p50, hr.p99, sr.p50, sr.p99, len(bodies[q.path]), hr.serverCPU, sr.serverCPU, wrkCPU, cpuRatio)
			ratios = append(ratios, hr.rps/sr.rps)
			cpuRatios = append(cpuRatios, cpuRatio)
		}
		slices.Sort(ratios)
		slices.Sort(cpuRatios)
		medians[q.name] = ratios[len(ratios)/2]
		cpuMedians[q.name] = cpuRatios[len(cpuRatios)/2]
	}
	if *rounds > 1 {
		fmt.Println("\nmedian handler/static over the rounds (throughput; CPU-implied):")
		for _, q := range queries {
			fmt.Printf("  %s: %.2f; %.2f\n", q.name, medians[q.name], cpuMedians[q.name])
		}
	}
}

// cpuTime returns the user and system CPU time this process has used.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		log.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// recorder keeps the response body.
type recorder struct {
	h      http.Header
	status int
	body   io.Writer
}

func (r *recorder) Header() http.Header { return r.h }
func (r *recorder) WriteHeader(s int)   { r.status = s }
func (r *recorder) Write(b []byte) (int, error) {
	if r.status == 0 {
		r.status = http.StatusOK
	}
	return r.body.Write(b)
}

// serve starts h on a loopback port and returns its address.
func serve(h http.Handler) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		log.Fatal(err)
	}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	go func() {
		if err := srv.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
			log.Fatal(err)
		}
	}()
	return ln.Addr().String()
}

type wrkResult struct {
	rps      float64
	p50, p99 string
	// serverCPU and clientCPU are the CPU microseconds per request of this process (the
	// server) and of wrk.
	serverCPU, clientCPU float64
}

// runWrk runs wrk and reads requests per second and the 50th and 99th latency percentiles.
func runWrk(threads, conns int, d time.Duration, url string) wrkResult {
	cmd := exec.Command("wrk", "-t", strconv.Itoa(threads), "-c", strconv.Itoa(conns), "-d", d.String(), "--latency", url)
	cmd.Stderr = os.Stderr
	cpu0 := cpuTime()
	out, err := cmd.Output()
	serverCPU := cpuTime() - cpu0
	if err != nil {
		log.Fatalf("wrk %s: %v", url, err)
	}
	clientCPU := cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
	var r wrkResult
	var requests float64
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		switch {
		case len(f) >= 3 && f[1] == "requests" && f[2] == "in":
			requests, _ = strconv.ParseFloat(f[0], 64)
		case len(f) == 2 && f[0] == "Requests/sec:":
			r.rps, _ = strconv.ParseFloat(f[1], 64)
		case len(f) == 2 && f[0] == "50%":
			r.p50 = f[1]
		case len(f) == 2 && f[0] == "99%":
			r.p99 = f[1]
		case len(f) >= 4 && f[0] == "Non-2xx":
			log.Fatalf("wrk %s: %s", url, sc.Text())
		}
	}
	if r.rps == 0 || requests == 0 {
		log.Fatalf("wrk %s: no result in\n%s", url, out)
	}
	r.serverCPU = float64(serverCPU.Microseconds()) / requests
	r.clientCPU = float64(clientCPU.Microseconds()) / requests
	return r
}
