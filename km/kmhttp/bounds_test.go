package kmhttp_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/kmkit/kmkit/km"
	"github.com/kmkit/kmkit/km/kmhttp"
	"github.com/kmkit/kmkit/storage/memory"
)

// shopWith returns a handler over testdata/shop with opts.
func shopWith(t *testing.T, opts ...kmhttp.Option) *kmhttp.Handler {
	t.Helper()
	s := memory.New().KM()
	err := s.Import(context.Background(), os.DirFS("../testdata/shop"))
	if err != nil {
		t.Fatal(err)
	}
	return kmhttp.NewHandler(s, opts...)
}

func TestQueryCostBudget(t *testing.T) {
	// testdata/shop: orders.csv holds 8 orders, customers.csv 4 customers.
	five := url.QueryEscape("NET gt 1 or NET gt 2 or NET gt 3 or LATE eq 4 or STATUS eq 'X'")
	filtered := api + "/shop/records/ORDERS/data?fields=ID&filterExpr=" + five
	grouped := api + "/shop/data?fields=ORDERS.ID,CUSTOMERS.COUNTRY&kpis=NET,AVG_NET"
	summary := api + "/shop/records/ORDERS/summary?fields=ID&filterExpr=" + five
	tests := []struct {
		name   string
		budget int64
		target string
		code   int
		detail string
	}{
		// 8 rows x 5 predicates + 8 rows x 1 field x 1 = 48.
		{"filters at the budget", 48, filtered, http.StatusOK, ""},
		{"filters beyond the budget", 47, filtered, http.StatusBadRequest,
			"the query is estimated at 48 row operations, beyond the budget of 47: the filters are too large: 5 predicates over 8 rows"},
		// 8 rows x 2 fields x 2 aggregates = 32.
		{"grouping at the budget", 32, grouped, http.StatusOK, ""},
		{"grouping beyond the budget", 31, grouped, http.StatusBadRequest,
			"the query is estimated at 32 row operations, beyond the budget of 31: the grouping is too large: 8 rows by 2 fields for 2 aggregates"},
		{"no budget", -1, grouped, http.StatusOK, ""},
		// A listing, no KPI: 8 rows x 2 fields + 8 rows x 1 predicate = 24; it was worded
		// "the grouping is too large: 8 rows by 2 fields for 1 aggregates".
		{"listing beyond the budget", 23, api + "/shop/records/ORDERS/query?fields=ID,NET&sort=-NET&filterExpr=NET%20gt%201", http.StatusBadRequest,
			"the query is estimated at 24 row operations, beyond the budget of 23: the listing is too large: 8 rows by 2 fields; select fewer fields, or filter the rows first"},
		// A summary describes the filtered rows: the same 8 x 5 + 8 x 1 x 1.
		{"summary at the budget", 48, summary, http.StatusOK, ""},
		{"summary beyond the budget", 47, summary, http.StatusBadRequest,
			"the query is estimated at 48 row operations, beyond the budget of 47: the filters are too large: 5 predicates over 8 rows"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := call(shopWith(t, kmhttp.WithMaxQueryCost(tt.budget)), http.MethodGet, tt.target, "")
			if w.Code != tt.code {
				t.Fatalf("status %d, want %d: %s", w.Code, tt.code, w.Body.String())
			}
			if tt.detail == "" {
				return
			}
			if !strings.Contains(w.Body.String(), `"errorCode":"GENERAL_CONSTRAINT_VIOLATION"`) || !strings.Contains(w.Body.String(), tt.detail) {
				t.Errorf("body %s\nwant GENERAL_CONSTRAINT_VIOLATION and %q", w.Body.String(), tt.detail)
			}
		})
	}
}

func TestQueryTimeLimit(t *testing.T) {
	h := shopWith(t, kmhttp.WithQueryTimeout(time.Nanosecond))
	for _, target := range []string{
		api + "/shop/data?fields=ORDERS.ID&kpis=NET",
		api + "/shop/records/ORDERS/data?fields=ID",
		api + "/shop/records/ORDERS/summary?fields=ID",
	} {
		w := call(h, http.MethodGet, target, "")
		want := `"detail":"the query ran longer than the time limit of 1ns and was stopped; narrow it (fewer filters, fields, KPIs or rows)"`
		if w.Code != http.StatusServiceUnavailable || !strings.Contains(w.Body.String(), want) || !strings.Contains(w.Body.String(), `"errorCode":"GENERAL_SERVICE_UNAVAILABLE"`) {
			t.Errorf("%s: %d %s\nwant 503 with %s", target, w.Code, w.Body.String(), want)
		}
	}
	// Schema endpoints are not queries: the limit does not apply.
	if w := call(h, http.MethodGet, api+"/shop/records", ""); w.Code != http.StatusOK {
		t.Errorf("records: %d %s", w.Code, w.Body.String())
	}
}

// TestDefaultPageOfTheServiceCap: behind WithService, a request without pageSize gets the
// Service's default page, 50 or its page cap when lower (kmparams.ParsePaging); it was a
// 400 "50 is above the maximum page size 2" on GET and POST, as the handler read pages
// against its own cap (found by the root package's TestSurfacesShareConfiguredLimits).
func TestDefaultPageOfTheServiceCap(t *testing.T) {
	s := memory.New().KM()
	if err := s.Import(context.Background(), os.DirFS("../testdata/shop")); err != nil {
		t.Fatal(err)
	}
	h := kmhttp.NewHandler(nil, kmhttp.WithService(km.NewService(s, km.WithMaxPageSize(2))))
	for _, r := range []*http.Request{
		httptest.NewRequest(http.MethodGet, api+"/shop/records/ORDERS/data?fields=ID&sort=ID", nil),
		httptest.NewRequest(http.MethodPost, api+"/shop/records/ORDERS/data", strings.NewReader(`{"projection":{"fields":"ID","sort":"ID"}}`)),
	} {
		r.Header.Set("Content-Type", "application/json")
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		want := `{"page":0,"pageSize":2,"total":2,"sort":["+ID"],"content":{"headers":[{"id":"ID","name":"Order","type":"string","format":"","unit":"","aggregation":false,"filterable":true,"sortable":true}],"data":[{"ID":"O1"},{"ID":"O2"}]}}`
		if w.Code != 200 || strings.TrimSpace(w.Body.String()) != want {
			t.Errorf("%s: %d %s\nwant 200 %s", r.Method, w.Code, w.Body, want)
		}
	}
}
