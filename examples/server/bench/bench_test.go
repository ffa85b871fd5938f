package main

import (
	"net/http"
	"sync"
	"testing"

	"github.com/kmkit/kmkit/internal/demodata/demostore"
	"github.com/kmkit/kmkit/km/kmhttp"
)

var (
	benchOnce  sync.Once
	benchStore *timedStore
)

// benchHandler is the handler over 200,000 generated orders (2,000 customers), built once.
func benchHandler(b *testing.B) (*kmhttp.Handler, *timedStore) {
	benchOnce.Do(func() {
		s, err := demostore.Store(200_000)
		if err != nil {
			b.Fatal(err)
		}
		benchStore = &timedStore{Store: s}
	})
	return kmhttp.NewHandler(benchStore), benchStore
}

// BenchmarkHandler runs the benchmark queries through the handler and reports, next to the
// time per request, the time the store's executor took (exec-ns/op) and the handler's own
// share (overhead-ns/op).
func BenchmarkHandler(b *testing.B) {
	base := kmhttp.BasePath + "/knowledge-models/o2c"
	for _, q := range []benchQuery{
		{"orders-page", base + "/records/ORDERS/data?fields=ORDER_ID,CUSTOMER_ID,ORDER_DATE,STATUS,NET_VALUE,DAYS_LATE&filterExpr=STATUS%20eq%20'OPEN'&sort=-NET_VALUE&pageSize=50"},
		{"kpis-by-status", base + "/data?fields=ORDERS.STATUS&kpis=TOTAL_NET,AVG_NET,LATE_SHARE&sort=-TOTAL_NET"},
		{"customers-page", base + "/records/CUSTOMERS/data?fields=CUSTOMER_ID,CUSTOMER_NAME,COUNTRY,SEGMENT,CREDIT_LIMIT&filterExpr=SEGMENT%20eq%20'SMB'&sort=-CREDIT_LIMIT&pageSize=50"},
	} {
		b.Run(q.name, func(b *testing.B) {
			h, ts := benchHandler(b)
			req, err := http.NewRequest(http.MethodGet, q.path, nil)
			if err != nil {
				b.Fatal(err)
			}
			ts.nanos.Store(0)
			ts.calls.Store(0)
			b.ReportAllocs()
			for b.Loop() {
				w := &discard{h: http.Header{}}
				h.ServeHTTP(w, req)
				if w.status != http.StatusOK {
					b.Fatalf("status %d", w.status)
				}
			}
			execNs := float64(ts.nanos.Load()) / float64(ts.calls.Load())
			perOp := float64(b.Elapsed()) / float64(b.N)
			b.ReportMetric(execNs, "exec-ns/op")
			b.ReportMetric(perOp-execNs, "overhead-ns/op")
		})
	}
}
