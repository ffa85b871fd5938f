package sqlstore_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"testing"

	"github.com/kmkit/kmkit/km/kmhttp"
	"github.com/kmkit/kmkit/storage/storetest"
)

// FuzzQuery sends arbitrary filters and sorts, as rows of ORDERS or as KPIs grouped by
// fields of several records, to SQLite through the KM handler and compares the answer with
// the reference evaluator of storetest. Requests the reference refuses must be refused
// (400); the translation must never fail on a plan.
func FuzzQuery(f *testing.F) {
	for _, s := range []struct{ filter, sort string }{
		{"STATUS eq 'PAID'", "+NET_VALUE"},
		{"not (DAYS_LATE gt 1.5) or ORDER_DATE eq 2025-04-01", "-DAYS_LATE"},
		{"contains(STATUS, 'A') and ORDER_DATE le 2025-03-01", "+ORDER_DATE"},
		{"STATUS in ('OPEN', 'x''; DROP TABLE orders; --')", "-ORDER_ID"},
		{"endswith(CUSTOMER_ID, '1') or EXPRESS eq false", "+EXPRESS"},
		{"CREATED_AT ge 2025-02-10T08:30:00.5Z and NET_VALUE ne 999.99", ""},
		{"ORDER_ITEMS.QUANTITY gt 5 or ORDERS.STATUS eq 'OPEN'", "+STATUS"},
		{"ACTIVITIES.ACTIVITY eq 'Change Price'", "-NET_VALUE"},
		{"CUSTOMERS.COUNTRY eq 'DE' and MATERIALS.MATERIAL_GROUP ne 'Hardware'", ""},
	} {
		f.Add(s.filter, s.sort, false, uint8(0))
	}
	f.Add("DAYS_LATE gt 0", "", true, uint8(0))
	f.Add("ORDER_ITEMS.QUANTITY gt 3", "", false, uint8(3))
	f.Add("ACTIVITIES.AUTOMATED eq true", "-TOTAL_NET", false, uint8(2))
	ctx := context.Background()
	fsys, err := storetest.DemoData(30)
	if err != nil {
		f.Fatal(err)
	}
	ref, err := storetest.LoadReference(fsys, "o2c")
	if err != nil {
		f.Fatal(err)
	}
	s := open(f, "sqlite:"+filepath.Join(f.TempDir(), "fuzz.db")).KM()
	if err := s.Import(ctx, fsys); err != nil {
		f.Fatal(err)
	}
	h := kmhttp.NewHandler(s, kmhttp.WithMaxPageSize(5000))
	dims := [][]string{{"ORDERS.STATUS"}, {"CUSTOMERS.COUNTRY"}, {"MATERIALS.MATERIAL_GROUP", "ORDERS.EXPRESS"}, {"ACTIVITIES.ACTIVITY"}, nil}
	// group > 0 asks for KPIs grouped by dims[group-1] (modulo), filtered at KM level
	// with the filter's fields named RECORD.FIELD, instead of the rows of ORDERS.
	f.Fuzz(func(t *testing.T, filter, sort string, distinct bool, group uint8) {
		req := storetest.RefRequest{Record: "ORDERS", Fields: []string{"ORDER_ID", "STATUS", "NET_VALUE", "DAYS_LATE", "EXPRESS"}, Sort: sort, Distinct: distinct, PageSize: 7}
		if group > 0 {
			req = storetest.RefRequest{Fields: dims[int(group-1)%len(dims)], KPIs: []string{"ORDER_COUNT", "TOTAL_NET", "ITEM_QUANTITY", "MEDIAN_DAYS_LATE", "AUTOMATION_RATE"}, Sort: sort, PageSize: 7}
		}
		if filter != "" {
			req.FilterExprs = []string{filter}
		}
		target := queryTarget(req)
		want, err := ref.Eval(req)
		if err != nil {
			if _, ok := err.(*storetest.RefError); !ok {
				t.Fatalf("%s: the reference failed: %v", target, err)
			}
			return // the handler and the reference may disagree on refusals; not this test's subject
		}
		w := httptest.NewRecorder()
		h.ServeHTTP(w, httptest.NewRequest(http.MethodGet, target, nil))
		if w.Code == http.StatusBadRequest {
			return
		}
		checkRows(t, h, target, want.Columns, want.Rows)
	})
}
