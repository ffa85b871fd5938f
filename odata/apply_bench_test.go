package odata

import (
	"net/http"
	"net/url"
	"testing"

	"github.com/kmkit/kmkit/km/kmhttp"
)

// BenchmarkApplyGroupBy asks the 1,000,000-order demo one question two ways: OData's
// $apply groupby with an ad-hoc sum and KPIs, and the Knowledge Model API's /data with the
// same dimension and KPIs (TOTAL_NET is sum(ORDERS.NET_VALUE)): queries (e) and (b) of
// bench/duckdb, which times DuckDB on them. Both compile into the same
// plan, so the difference is the handlers' own work. exec-ns/op is the store's share.
func BenchmarkApplyGroupBy(b *testing.B) {
	for _, c := range []struct {
		name, target string
		odata        bool
	}{
		{"country/odata-apply", BasePath + "/o2c.svc/ORDERS_entries?$apply=" +
			url.QueryEscape("groupby((CUSTOMERS/COUNTRY),aggregate(NET_VALUE with sum as NET,AVG_NET))"), true},
		{"country/km-data", kmhttp.BasePath + "/knowledge-models/o2c/data?fields=CUSTOMERS.COUNTRY&kpis=TOTAL_NET,AVG_NET", false},
		{"status/odata-apply", BasePath + "/o2c.svc/ORDERS_entries?$apply=" +
			url.QueryEscape("groupby((STATUS),aggregate(NET_VALUE with sum as NET,AVG_NET,LATE_SHARE))"), true},
		{"status/km-data", kmhttp.BasePath + "/knowledge-models/o2c/data?fields=ORDERS.STATUS&kpis=TOTAL_NET,AVG_NET,LATE_SHARE", false},
		// An aggregate along a navigation property: the customers the orders of each
		// status refer to (the input set's condition on ORDERS restricts CUSTOMERS).
		{"credit/odata-apply", BasePath + "/o2c.svc/ORDERS_entries?$apply=" +
			url.QueryEscape("groupby((STATUS),aggregate(CUSTOMERS/CREDIT_LIMIT with sum as CREDIT,NET_VALUE with sum as NET))"), true},
		// Aggregates that read customers only: the plan also counts the orders (unanswered)
		// so that every group of the orders is there, as for the latest order date of the
		// customers per country.
		{"credit-only/odata-apply", BasePath + "/o2c.svc/ORDERS_entries?$apply=" +
			url.QueryEscape("groupby((CUSTOMERS/COUNTRY),aggregate(CUSTOMERS/CREDIT_LIMIT with sum as CREDIT,CUSTOMERS/CUSTOMER_ID with max as LAST))"), true},
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
			b.ReportAllocs()
			for b.Loop() {
				w := &countingWriter{h: http.Header{}}
				h.ServeHTTP(w, req)
				if w.status != http.StatusOK && w.status != 0 {
					b.Fatalf("status %d", w.status)
				}
			}
			perOp := float64(b.Elapsed()) / float64(b.N)
			execNs := float64(store.nanos.Load()) / float64(store.calls.Load())
			b.ReportMetric(execNs, "exec-ns/op")
			b.ReportMetric(perOp-execNs, "handler-ns/op")
		})
	}
}
