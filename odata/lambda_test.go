package odata_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/kmkit/kmkit/odata"
	"github.com/kmkit/kmkit/query"
	"github.com/kmkit/kmkit/storage/storetest"
)

// TestLambdaNotSupported: the lambdas that stay 501, with their exact bodies, on the
// demo: a path through a to-one property to a collection whose body reads the outer
// entity or an enclosing lambda's variable, and a lambda in a lambda's body on a path
// that does not start at a lambda variable.
func TestLambdaNotSupported(t *testing.T) {
	fsys, err := storetest.DemoData(storetest.DemoOrders)
	if err != nil {
		t.Fatal(err)
	}
	h := odata.NewHandler(importMemory(t, fsys))
	for _, c := range []struct{ target, msg string }{
		{"/ORDER_ITEMS_entries?$filter=ORDERS/ACTIVITIES/any(a: a/ACTIVITY eq 'Ship Goods' and QUANTITY gt 1)",
			"$filter: the condition of ORDERS/ACTIVITIES/any(...) reads QUANTITY, a property of the outer entity, which the rows of ACTIVITIES reach only through the lambda's path of to-one properties; compare it outside the lambda"},
		{"/CUSTOMERS_entries?$filter=not ORDERS/all(o: ORDERS/any(p: p/EXPRESS eq true))",
			"$filter: ORDERS/any(...) inside a lambda's condition: a lambda there is supported on a path from a lambda variable (x/NAV/any(...))"},
		{"/CUSTOMERS_entries?$filter=ORDERS/any(o: o/ORDER_ITEMS/any(i: i/ORDERS/ACTIVITIES/any(a: a/ACTIVITY eq 'Ship Goods' and o/EXPRESS eq true)))",
			"$filter: the condition of i/ORDERS/ACTIVITIES/any(...) reads o/EXPRESS, a property of an enclosing lambda's variable, which the rows of ACTIVITIES reach only through the lambda's path of to-one properties; compare it outside the lambda"},
	} {
		w := httptest.NewRecorder()
		h.ServeHTTP(w, httptest.NewRequest(http.MethodGet, odata.BasePath+"/o2c.svc"+strings.ReplaceAll(c.target, " ", "%20"), nil))
		var got struct {
			Error map[string]any `json:"error"`
		}
		if err := json.Unmarshal(w.Body.Bytes(), &got); err != nil || w.Code != http.StatusNotImplemented {
			t.Fatalf("%s: %d %s", c.target, w.Code, w.Body)
		}
		want := map[string]any{"code": query.CodeFilterNotSupported, "message": c.msg, "target": "$filter", "details": []any{}}
		if d := cmp.Diff(want, got.Error); d != "" {
			t.Errorf("%s: error (-want +got):\n%s", c.target, d)
		}
	}
}
