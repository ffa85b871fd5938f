package kmhttp_test

import (
	"context"
	"net/http"
	"os"
	"strings"
	"testing"

	"github.com/kmkit/kmkit/km/kmhttp"
	"github.com/kmkit/kmkit/problem"
	"github.com/kmkit/kmkit/query/column"
	"github.com/kmkit/kmkit/storage/memory"
)

// TestDuplicateTargetAnswer replaces the orders of testdata/shop with a table holding O2
// twice (PutTable, which cannot refuse it): a query joining items to orders answers 409
// naming the relationship and the value, not a 500; one of orders alone still answers.
func TestDuplicateTargetAnswer(t *testing.T) {
	ctx := context.Background()
	s := memory.New().KM()
	if err := s.Import(ctx, os.DirFS("../testdata/shop")); err != nil {
		t.Fatal(err)
	}
	m, err := s.Model(ctx, "shop")
	if err != nil {
		t.Fatal(err)
	}
	schema := column.Schema{}
	for _, f := range m.Record("ORDERS").Fields {
		schema[f.ID] = f.Type
	}
	data, err := os.ReadFile("../testdata/shop/data/orders.csv")
	if err != nil {
		t.Fatal(err)
	}
	orders, err := column.LoadCSV(strings.NewReader(string(data)+"O2,C2,2025-03-01,2025-03-01T09:00:00Z,OPEN,1,,false\n"), schema)
	if err != nil {
		t.Fatal(err)
	}
	s.PutTable("orders", orders)
	h := kmhttp.NewHandler(s)
	w := call(h, http.MethodGet, api+"/shop/query?fields=ITEMS.ID,ORDERS.STATUS", "")
	want := problemJSON(http.StatusConflict, problem.CodeConstraint, `the data of the KM cannot be joined: relationship ITEMS.ORDER_ID -> ORDERS.ID: ORDERS.ID holds "O2" in more than one row; the target of a relationship must be unique; load the data again without the duplicates`)
	if w.Code != http.StatusConflict {
		t.Fatalf("status %d, want 409: %s", w.Code, w.Body)
	}
	if d := jsonDiff(t, want, w.Body.String()); d != "" {
		t.Errorf("body (-want +got):\n%s", d)
	}
	if w := call(h, http.MethodGet, api+"/shop/records/ORDERS/query?fields=ID", ""); w.Code != http.StatusOK {
		t.Errorf("orders alone: %d %s", w.Code, w.Body)
	}
}
