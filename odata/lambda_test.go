package odata_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"testing/fstest"

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
		checkFilterNotSupported(t, h, "/o2c.svc"+c.target, c.msg)
	}
}

// checkFilterNotSupported checks that h answers target (spaces unescaped) with 501
// FILTER_NOT_SUPPORTED and the message msg.
func checkFilterNotSupported(t *testing.T, h http.Handler, target, msg string) {
	t.Helper()
	w := httptest.NewRecorder()
	h.ServeHTTP(w, httptest.NewRequest(http.MethodGet, odata.BasePath+strings.ReplaceAll(target, " ", "%20"), nil))
	var got struct {
		Error map[string]any `json:"error"`
	}
	if err := json.Unmarshal(w.Body.Bytes(), &got); err != nil || w.Code != http.StatusNotImplemented {
		t.Fatalf("%s: %d %s", target, w.Code, w.Body)
	}
	want := map[string]any{"code": query.CodeFilterNotSupported, "message": msg, "target": "$filter", "details": []any{}}
	if d := cmp.Diff(want, got.Error); d != "" {
		t.Errorf("%s: error (-want +got):\n%s", target, d)
	}
}

// TestLambdaGeneratedKeys: on a KM of keyless records (PARENTS and KIDS number their
// rows), a lambda's condition reads the generated key of the related entities it
// quantifies over (the third kid, k3, is b's), while the generated key of the outer
// entity or of an enclosing lambda's variable is 501, with its exact body.
func TestLambdaGeneratedKeys(t *testing.T) {
	fsys := fstest.MapFS{
		"models/kl.yaml": {Data: []byte(`id: kl
name: Keyless
records:
  - {id: PARENTS, name: Parents, source: parents, fields: [{id: P, name: P, type: string}]}
  - {id: KIDS, name: Kids, source: kids, fields: [{id: ID, name: Kid, type: string}, {id: P, name: P, type: string}, {id: N, name: N, type: integer}]}
  - {id: TOYS, name: Toys, source: toys, key: T, fields: [{id: T, name: Toy, type: string}, {id: KID, name: Kid, type: string}]}
relationships:
  - {from: KIDS.P, to: PARENTS.P}
  - {from: TOYS.KID, to: KIDS.ID}
`)},
		"data/parents.csv": {Data: []byte("P\na\nb\n")},
		"data/kids.csv":    {Data: []byte("ID,P,N\nk1,a,1\nk2,a,2\nk3,b,3\n")},
		"data/toys.csv":    {Data: []byte("T,KID\nt1,k1\nt2,k3\n")},
	}
	h := odata.NewHandler(importMemory(t, fsys))
	w := httptest.NewRecorder()
	h.ServeHTTP(w, httptest.NewRequest(http.MethodGet, odata.BasePath+"/kl.svc/PARENTS_entries?$select=P&$filter=KIDS/any(k:%20k/ROW_NUMBER%20eq%203)", nil))
	var got struct {
		Value []map[string]any `json:"value"`
	}
	if err := json.Unmarshal(w.Body.Bytes(), &got); err != nil || w.Code != http.StatusOK {
		t.Fatalf("%d %s", w.Code, w.Body)
	}
	if d := cmp.Diff([]map[string]any{{"ROW_NUMBER": 2.0, "P": "b"}}, got.Value); d != "" {
		t.Errorf("KIDS/any(k: k/ROW_NUMBER eq 3) (-want +got):\n%s", d)
	}
	checkFilterNotSupported(t, h, "/kl.svc/PARENTS_entries?$filter=KIDS/any(k: k/N gt 1 and ROW_NUMBER eq 2)",
		"$filter: the condition of KIDS/any(...) reads ROW_NUMBER, the generated key of the outer entity, which a lambda's condition cannot read; compare it outside the lambda")
	checkFilterNotSupported(t, h, "/kl.svc/PARENTS_entries?$filter=KIDS/any(k: k/TOYS/any(t: k/ROW_NUMBER eq 1))",
		"$filter: the condition of k/TOYS/any(...) reads k/ROW_NUMBER, the generated key of an enclosing lambda's variable, which a lambda's condition cannot read; compare it outside the lambda")
}
