package memory_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"testing"

	"github.com/kmkit/kmkit/internal/demodata/demostore"
	"github.com/kmkit/kmkit/km"
	"github.com/kmkit/kmkit/km/kmhttp"
	"github.com/kmkit/kmkit/query"
)

// TestQueryMemoryBound checks the memory estimate (km.Cost.Memory) against the memory the
// executor allocates, measured by the runtime, and that a request estimated beyond
// WithMaxQueryMemory is refused with a 400 saying what to change before anything runs.
func TestQueryMemoryBound(t *testing.T) {
	if testing.Short() {
		t.Skip("generates the 100,000-order demo")
	}
	s, err := demostore.Store(100_000)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	m, err := s.Model(ctx, "o2c")
	if err != nil {
		t.Fatal(err)
	}
	base := kmhttp.BasePath + "/knowledge-models/o2c"
	byKey := base + "/data?fields=ORDERS.ORDER_ID,ORDERS.STATUS&kpis=" + allKPIs + "&sort=-TOTAL_NET"
	byStatus := base + "/data?fields=ORDERS.STATUS&kpis=" + allKPIs
	distinct := base + "/records/ACTIVITIES/data?fields=ACTIVITY_ID,ORDER_ID,EVENT_TIME,ACTIVITY&options=distinct&sort=-EVENT_TIME&pageSize=5000"

	// The estimate is an order of magnitude of what the memory executor allocates.
	unbounded := kmhttp.NewHandler(s, kmhttp.WithMaxQueryMemory(-1), kmhttp.WithMaxQueryCost(-1), kmhttp.WithMaxPageSize(5000))
	for _, c := range []struct {
		name   string
		target string
		plan   *km.PlanRequest
	}{
		{"KPIs by key", byKey, &km.PlanRequest{Fields: []string{"ORDERS.ORDER_ID", "ORDERS.STATUS"}, PageSize: 50}},
		{"distinct", distinct, &km.PlanRequest{Record: "ACTIVITIES", Fields: []string{"ACTIVITY_ID", "ORDER_ID", "EVENT_TIME", "ACTIVITY"}, Distinct: true, PageSize: 5000,
			Sort: []query.SortTerm{{Field: "EVENT_TIME", Desc: true}}}},
	} {
		t.Run(c.name, func(t *testing.T) {
			if c.plan.Record == "" {
				c.plan.KPIs = strings.Split(allKPIs, ",")
			}
			p, err := km.NewPlan(m, c.plan)
			if err != nil {
				t.Fatal(err)
			}
			est := p.Cost(km.StoreSizes(ctx, s, m)).Memory
			serve(t, unbounded, c.target) // builds the sort indexes, which outlive the request
			runtime.GC()
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			if code, body := serve(t, unbounded, c.target); code != http.StatusOK {
				t.Fatalf("status %d: %s", code, body)
			}
			runtime.ReadMemStats(&after)
			used := int64(after.TotalAlloc - before.TotalAlloc)
			t.Logf("estimated %d MB, allocated %d MB", est>>20, used>>20)
			if est < used/4 || est > used*4 {
				t.Errorf("estimated %d bytes, the request allocated %d: the estimate is off by more than 4x", est, used)
			}
		})
	}

	// Beyond the bound: 400 naming the estimate and what to change; within it: served.
	bounded := kmhttp.NewHandler(s, kmhttp.WithMaxQueryMemory(64<<20), kmhttp.WithMaxQueryCost(-1))
	code, body := serve(t, bounded, byKey)
	var prob struct {
		Status    int    `json:"status"`
		ErrorCode string `json:"errorCode"`
		Detail    string `json:"detail"`
	}
	if err := json.Unmarshal([]byte(body), &prob); err != nil {
		t.Fatalf("%d %s: %v", code, body, err)
	}
	if code != http.StatusBadRequest || prob.ErrorCode != "GENERAL_CONSTRAINT_VIOLATION" ||
		!strings.Contains(prob.Detail, "in memory, beyond the limit of 64 MB") ||
		!strings.Contains(prob.Detail, "about 100001 groups") || !strings.Contains(prob.Detail, "group by fewer or coarser fields") {
		t.Errorf("KPIs by key under a 64 MB bound: %d %s", code, body)
	}
	if code, body := serve(t, bounded, byStatus); code != http.StatusOK {
		t.Errorf("KPIs by status under a 64 MB bound: %d %s", code, body)
	}
}

// serve answers a GET of target with h.
func serve(t *testing.T, h http.Handler, target string) (int, string) {
	t.Helper()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, target, nil))
	return rec.Code, rec.Body.String()
}
