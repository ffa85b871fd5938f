//go:build unix

package memory_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/kmkit/kmkit/internal/demodata"
	"github.com/kmkit/kmkit/km/kmhttp"
)

// heavyBody is the request of issue 20: two fields, four KPIs and 100 filterExpr entries
// of 200 or'ed comparisons each (within the 8 KiB limit of an expression), over the 100,000-order demo.
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

// TestHeavyRequestStopsWhenCanceled cancels the heavy request while the executor works
// on it: the handler returns within 100 ms of CPU time, its goroutines are gone and the CPU is idle.
func TestHeavyRequestStopsWhenCanceled(t *testing.T) {
	if testing.Short() {
		t.Skip("generates the 100,000-order demo")
	}
	s, err := demodata.Store(100_000)
	if err != nil {
		t.Fatal(err)
	}
	// No budget and no time limit: only the cancellation may stop the request.
	h := kmhttp.NewHandler(s, kmhttp.WithMaxBodyBytes(4<<20), kmhttp.WithMaxQueryCost(-1), kmhttp.WithQueryTimeout(-1))
	body := heavyBody()
	runtime.GC()
	before := runtime.NumGoroutine()

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	req := httptest.NewRequestWithContext(ctx, http.MethodPost, kmhttp.BasePath+"/knowledge-models/o2c/data", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	rec := httptest.NewRecorder()
	done := make(chan struct{})
	go func() {
		defer close(done)
		h.ServeHTTP(rec, req)
	}()
	select {
	case <-done:
		t.Fatalf("the heavy request finished before it was canceled (%d %s): the test needs a heavier one", rec.Code, rec.Body.String()[:min(200, rec.Body.Len())])
	case <-time.After(1500 * time.Millisecond):
	}
	cancel()
	canceledAt, cpuAtCancel := time.Now(), cpuTime(t)
	<-done
	// The work done after the cancellation is measured in CPU time, which other processes
	// on a loaded machine do not inflate as they inflate the wall-clock time.
	stop, wall := cpuTime(t)-cpuAtCancel, time.Since(canceledAt)
	limit := 100 * time.Millisecond
	if raceEnabled {
		limit *= 5 // the race detector slows each column pass several times
	}
	if stop > limit {
		t.Errorf("the handler used %v of CPU after the cancellation (returned after %v), want within %v", stop, wall, limit)
	}
	if rec.Code != http.StatusServiceUnavailable {
		t.Errorf("status %d, want 503 (nobody reads it): %s", rec.Code, rec.Body.String())
	}
	deadline := time.Now().Add(2 * time.Second)
	for runtime.NumGoroutine() > before && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if n := runtime.NumGoroutine(); n > before {
		buf := make([]byte, 1<<16)
		t.Errorf("%d goroutines after the request, %d before:\n%s", n, before, buf[:runtime.Stack(buf, true)])
	}
	// The CPU is idle: over 300 ms, the process uses a small share of one core.
	c0 := cpuTime(t)
	time.Sleep(300 * time.Millisecond)
	if used := cpuTime(t) - c0; used > 100*time.Millisecond {
		t.Errorf("the process used %v of CPU in the 300 ms after the request returned", used)
	}
}
