package odata

import (
	"context"
	"net/http"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kmkit/kmkit/internal/demodata/demostore"
	"github.com/kmkit/kmkit/km"
	"github.com/kmkit/kmkit/km/kmhttp"
	"github.com/kmkit/kmkit/query"
)

// The benchmarks serve a page of 1,000 orders from the generated demo of 1,000,000
// orders, as an OData JSON page, an Atom feed, with their items expanded (and the items'
// materials nested), and (the peer, in the same run) the Knowledge Model API's record
// /data JSON of the same rows. Besides the time per request they report the store's
// share (exec-ns/op, all its queries), the handler's own share (handler-ns/op: parsing,
// planning and encoding), the bytes it wrote per second of that share (encode-MB/s) and
// the store queries per request (queries/op).

const benchOrders = 1_000_000

var (
	benchOnce  sync.Once
	benchStore *timedStore
	benchErr   error
)

// timedStore measures the time spent in Query.
type timedStore struct {
	km.Store
	nanos, calls atomic.Int64
}

func (s *timedStore) Query(ctx context.Context, p *km.Plan) (*query.Result, error) {
	start := time.Now()
	res, err := s.Store.Query(ctx, p)
	s.nanos.Add(int64(time.Since(start)))
	s.calls.Add(1)
	return res, err
}

func demoStore(b *testing.B) *timedStore {
	benchOnce.Do(func() {
		s, err := demostore.Store(benchOrders)
		if err == nil {
			err = s.Warm() // as the reference server does after loading
		}
		benchStore, benchErr = &timedStore{Store: s}, err
		runtime.GC() // the generator's garbage is not the first benchmark's to collect
	})
	if benchErr != nil {
		b.Fatal(benchErr)
	}
	return benchStore
}

// countingWriter is a ResponseWriter that keeps nothing but the status and the size.
type countingWriter struct {
	h      http.Header
	status int
	n      int
}

func (w *countingWriter) Header() http.Header         { return w.h }
func (w *countingWriter) WriteHeader(status int)      { w.status = status }
func (w *countingWriter) Write(p []byte) (int, error) { w.n += len(p); return len(p), nil }

func BenchmarkPage1000(b *testing.B) {
	const fields = "ORDER_ID,CUSTOMER_ID,ORDER_DATE,CREATED_AT,STATUS,NET_VALUE,CURRENCY,DAYS_LATE,EXPRESS,SALES_ORG"
	odataSet := BasePath + "/o2c.svc/ORDERS_entries?$top=1000&$skip=500000"
	for _, c := range []struct {
		name, target string
		odata        bool
	}{
		{"km-data-json", kmhttp.BasePath + "/knowledge-models/o2c/records/ORDERS/data?fields=" + fields + "&pageSize=1000&page=500", false},
		{"odata-json", odataSet, true},
		{"odata-atom", odataSet + "&$format=xml", true},
		// The same orders with their items, and with the items' materials (nested).
		{"odata-expand-items", odataSet + "&$expand=ORDER_ITEMS", true},
		{"odata-expand-items-materials", odataSet + "&$expand=ORDER_ITEMS($expand=MATERIALS)", true},
		// One order read by its key, and its items through the navigation property.
		{"odata-by-key", BasePath + "/o2c.svc/ORDERS_entries('SO-0500000')", true},
		{"odata-by-key-items", BasePath + "/o2c.svc/ORDERS_entries('SO-0500000')/ORDER_ITEMS", true},
	} {
		b.Run(c.name, func(b *testing.B) {
			store := demoStore(b)
			var h http.Handler = kmhttp.NewHandler(store)
			if c.odata {
				h = NewHandler(store)
			}
			req, err := http.NewRequest(http.MethodGet, "http://localhost"+c.target, nil)
			if err != nil {
				b.Fatal(err)
			}
			store.nanos.Store(0)
			store.calls.Store(0)
			var size int
			b.ReportAllocs()
			for b.Loop() {
				w := &countingWriter{h: http.Header{}}
				h.ServeHTTP(w, req)
				if w.status != http.StatusOK {
					b.Fatalf("status %d", w.status)
				}
				size = w.n
			}
			b.SetBytes(int64(size))
			perOp := float64(b.Elapsed()) / float64(b.N)
			execNs := float64(store.nanos.Load()) / float64(b.N) // all the request's queries
			b.ReportMetric(execNs, "exec-ns/op")
			b.ReportMetric(perOp-execNs, "handler-ns/op")
			b.ReportMetric(float64(size)/((perOp-execNs)/1e9)/1e6, "encode-MB/s")
			b.ReportMetric(float64(store.calls.Load())/float64(b.N), "queries/op")
		})
	}
}

// BenchmarkEncode1000 encodes a page of 1,000 demo orders (all ten properties) without
// the store: the encoders' own throughput.
func BenchmarkEncode1000(b *testing.B) {
	store := demoStore(b)
	m, err := store.Model(b.Context(), "o2c")
	if err != nil {
		b.Fatal(err)
	}
	et := newEntityType(m.Record("ORDERS"))
	o := &QueryOptions{Top: 1000, Skip: 500000}
	h := NewHandler(store)
	eq, err := h.planEntities(m, et, o)
	if err != nil {
		b.Fatal(err)
	}
	eq.q.Skip, eq.q.PageSize = 500000, 1000
	p, err := h.svc.Prepare(m, &eq.q)
	if err != nil {
		b.Fatal(err)
	}
	res, err := store.Query(b.Context(), p.Plan)
	if err != nil {
		b.Fatal(err)
	}
	pg := page{eq: eq, rows: res.Rows, root: "http://localhost/intelligence/api/odata/o2c.svc/"}
	now := time.Now()
	for _, c := range []struct {
		name   string
		encode func([]byte) []byte
	}{
		{"json", pg.appendJSON},
		{"atom", func(b []byte) []byte { return pg.appendAtom(b, now) }},
	} {
		b.Run(c.name, func(b *testing.B) {
			buf := c.encode(nil)
			b.SetBytes(int64(len(buf)))
			b.ReportAllocs()
			for b.Loop() {
				buf = c.encode(buf[:0])
			}
		})
	}
}
