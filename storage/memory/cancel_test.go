//go:build unix

package memory_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/kmkit/kmkit/internal/demodata/demostore"
	"github.com/kmkit/kmkit/km/kmhttp"
)

// heavyBody is the request of issue 20: two fields, four KPIs and 100 filterExpr entries
// of 200 or'ed comparisons each (within the 8 KiB limit of an expression).
func heavyBody() string {
	filters := make([]string, 100)
	for i := range filters {
		parts := make([]string, 200)
		for j := range parts {
			switch j % 3 {
			case 0:
				parts[j] = fmt.Sprintf("CUSTOMERS.COUNTRY eq 'X%d'", i*200+j)
			case 1:
				parts[j] = fmt.Sprintf("ORDERS.NET_VALUE gt %d.5", 1000+i*200+j)
			default:
				parts[j] = fmt.Sprintf("ACTIVITIES.ACTIVITY_ID lt %d", -(i*200 + j))
			}
		}
		filters[i] = strings.Join(parts, " or ")
	}
	b, _ := json.Marshal(map[string]any{"projection": map[string]any{
		"fields":  "ACTIVITIES.ACTIVITY_ID,CUSTOMERS.COUNTRY",
		"kpis":    []string{"ACTIVITY_COUNT", "TOTAL_NET", "AVG_NET", "ORDER_COUNT"},
		"filters": map[string]any{"filterExpr": filters},
	}})
	return string(b)
}

// cpuTime is the CPU time the process has used.
func cpuTime(t *testing.T) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		t.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// allKPIs are the demo's fifteen KPIs.
const allKPIs = "ORDER_COUNT,TOTAL_NET,AVG_NET,LATE_SHARE,STATUS_VALUE,BIG_ORDER_SHARE,MEDIAN_DAYS_LATE," +
	"NET_PER_CUSTOMER,ITEM_QUANTITY,CURRENCY_NET,SEVERE_DELAYS,ORDERS_SINCE,ACTIVITY_COUNT,ACTIVITY_SHARE,AUTOMATION_RATE"

// TestHeavyRequestsStopWhenCanceled cancels heavy requests while the executor works on
// them: the handler returns within 100 ms of CPU time after the cancellation, its
// goroutines are gone and the CPU is idle. The requests are issue 20's filters and issue
// 27's two that ran on for seconds after their client left: every KPI grouped by the order
// key and sorted by a KPI (hash grouping, a million-group sort), and a distinct page of
// activities sorted by time (hash distinct, a sort of every row). Each of issue 27's is
// first run to its end, and then canceled a quarter, a half and three quarters of that
// time after it starts, so that the cancellations land in each of its phases on a machine
// of any speed; issue 20's, which runs for minutes, is canceled after 1.5 s.
func TestHeavyRequestsStopWhenCanceled(t *testing.T) {
	if testing.Short() {
		t.Skip("generates the 300,000-order demo")
	}
	orders := 300_000
	if raceEnabled {
		orders = 60_000 // about as long to run under the race detector
	}
	s, err := demostore.Store(orders)
	if err != nil {
		t.Fatal(err)
	}
	// No budget and no time limit: only the cancellation may stop the request.
	h := kmhttp.NewHandler(s, kmhttp.WithMaxBodyBytes(4<<20), kmhttp.WithMaxQueryCost(-1), kmhttp.WithQueryTimeout(-1))
	km := kmhttp.BasePath + "/knowledge-models/o2c"
	for _, c := range []struct {
		name, method, target, body string
		after                      time.Duration // 0: at fractions of an uncanceled run
	}{
		{"filters", http.MethodPost, km + "/data", heavyBody(), 1500 * time.Millisecond},
		{"KPIs by key", http.MethodGet, km + "/data?fields=ORDERS.ORDER_ID,ORDERS.STATUS&kpis=" + allKPIs + "&sort=-TOTAL_NET", "", 0},
		{"distinct sorted", http.MethodGet, km + "/records/ACTIVITIES/data?fields=ACTIVITY_ID,ORDER_ID,EVENT_TIME,ACTIVITY&options=distinct&sort=-EVENT_TIME&pageSize=5000", "", 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			serve := func(ctx context.Context) *httptest.ResponseRecorder {
				req := httptest.NewRequestWithContext(ctx, c.method, c.target, strings.NewReader(c.body))
				if c.body != "" {
					req.Header.Set("Content-Type", "application/json")
				}
				rec := httptest.NewRecorder()
				h.ServeHTTP(rec, req)
				return rec
			}
			waits := []time.Duration{c.after}
			if c.after == 0 {
				// The shortest of two runs: the first builds the sort indexes later
				// runs reuse.
				full := time.Duration(math.MaxInt64)
				for range 2 {
					start := time.Now()
					if rec := serve(context.Background()); rec.Code != http.StatusOK {
						t.Fatalf("uncanceled: status %d: %s", rec.Code, head(rec))
					}
					full = min(full, time.Since(start))
				}
				if full < 200*time.Millisecond {
					t.Fatalf("the request took only %v: the test needs a heavier one", full)
				}
				waits = []time.Duration{full / 5, full * 2 / 5, full * 3 / 5}
			}
			// Some cancellation must find the request running; on a loaded machine a
			// run may go faster than the timed ones, and then the last try cancels
			// far sooner.
			ran := false
			for _, wait := range waits {
				ran = cancelDuring(t, serve, wait, false) || ran
			}
			if !ran {
				cancelDuring(t, serve, waits[0]/10, true)
			}
		})
	}
}

// head is the start of a recorded body, for messages.
func head(rec *httptest.ResponseRecorder) string { return rec.Body.String()[:min(300, rec.Body.Len())] }

// cancelDuring serves a request, cancels it after wait and checks that it stops at once,
// answers 503 and leaves nothing running. It reports whether the request was still
// running when canceled; unless mustRun, a request that finished before wait, or that
// answered 200 because the cancellation came as it wrote its answer, is not checked
// further.
func cancelDuring(t *testing.T, serve func(context.Context) *httptest.ResponseRecorder, wait time.Duration, mustRun bool) bool {
	t.Helper()
	runtime.GC()
	before := runtime.NumGoroutine()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var rec *httptest.ResponseRecorder
	done := make(chan struct{})
	go func() {
		defer close(done)
		rec = serve(ctx)
	}()
	select {
	case <-done:
		if !mustRun {
			t.Logf("the request finished before it was canceled after %v", wait)
			return false
		}
		t.Fatalf("the request finished before it was canceled after %v (%d): the test needs a heavier one", wait, rec.Code)
	case <-time.After(wait):
	}
	cancel()
	canceledAt, cpuAtCancel := time.Now(), cpuTime(t)
	<-done
	// The work done after the cancellation is measured in CPU time, which other
	// processes on a loaded machine do not inflate as they inflate the wall-clock time.
	stop, wall := cpuTime(t)-cpuAtCancel, time.Since(canceledAt)
	limit := 100 * time.Millisecond
	if raceEnabled {
		limit *= 5 // the race detector slows each column pass several times
	}
	t.Logf("canceled after %v, returned %v later after %v of CPU", wait, wall, stop)
	if stop > limit {
		t.Errorf("canceled after %v: the handler used %v of CPU after the cancellation (returned after %v), want within %v", wait, stop, wall, limit)
	}
	if rec.Code == http.StatusOK && !mustRun {
		// The cancellation landed as the answer was written: its work was done (the
		// CPU check above holds). Another try, or the one that must run, checks the 503.
		t.Logf("canceled after %v as it was answering: status 200", wait)
		return false
	}
	if rec.Code != http.StatusServiceUnavailable {
		t.Errorf("canceled after %v: status %d, want 503 (nobody reads it): %s", wait, rec.Code, head(rec))
	}
	deadline := time.Now().Add(2 * time.Second)
	for runtime.NumGoroutine() > before && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if n := runtime.NumGoroutine(); n > before {
		buf := make([]byte, 1<<16)
		t.Errorf("%d goroutines after the request, %d before:\n%s", n, before, buf[:runtime.Stack(buf, true)])
	}
	// The CPU is idle: over 300 ms, the process uses a small share of one core. The
	// collection of the request's garbage runs first, so that only work left running
	// counts (a collection started late, on a loaded machine, took 125 ms of CPU there).
	runtime.GC()
	c0 := cpuTime(t)
	time.Sleep(300 * time.Millisecond)
	if used := cpuTime(t) - c0; used > 100*time.Millisecond {
		t.Errorf("the process used %v of CPU in the 300 ms after the request returned", used)
	}
	return true
}
