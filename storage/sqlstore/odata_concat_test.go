package sqlstore_test

import (
	"encoding/json"
	"math"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"strconv"
	"testing"

	"github.com/kmkit/kmkit/odata"
)

// TestODataApplyConcat: $apply=concat(...) on memory, SQLite and PostgreSQL, paged two
// entities at a time: the total net value, then the net value per status, as the shop
// fixture's CSV file sums them.
func TestODataApplyConcat(t *testing.T) {
	orders := shopRows(t, "orders")
	total, byStatus := 0.0, map[string]float64{}
	var statuses []string
	for _, o := range orders {
		s := o["STATUS"]
		if _, ok := byStatus[s]; !ok {
			statuses = append(statuses, s)
		}
		if o["NET"] != "" {
			f, err := strconv.ParseFloat(o["NET"], 64)
			if err != nil {
				t.Fatal(err)
			}
			total += f
			byStatus[s] += f
		}
	}
	const apply = "concat(aggregate(NET with sum as S),groupby((STATUS),aggregate(NET with sum as S)))"
	data := os.DirFS("../../odata/testdata/shop")
	for _, b := range navBackends {
		t.Run(b.name, func(t *testing.T) {
			h := odata.NewHandler(importOn(t, b.open, data), odata.WithMaxPageSize(2))
			var got []map[string]any
			target := odata.BasePath + "/shop.svc/ORDERS_entries?$count=true&$apply=" + url.QueryEscape(apply)
			for target != "" {
				w := httptest.NewRecorder()
				h.ServeHTTP(w, httptest.NewRequest(http.MethodGet, target, nil))
				var page struct {
					Count    int              `json:"@odata.count"`
					Value    []map[string]any `json:"value"`
					NextLink string           `json:"@odata.nextLink"`
				}
				if err := json.Unmarshal(w.Body.Bytes(), &page); w.Code != 200 || err != nil {
					t.Fatalf("GET %s: %d %s", target, w.Code, w.Body)
				}
				if page.Count != 1+len(statuses) {
					t.Errorf("@odata.count %d, want %d", page.Count, 1+len(statuses))
				}
				got = append(got, page.Value...)
				target = page.NextLink
				if target != "" {
					target = target[len("http://example.com"):]
				}
			}
			if len(got) != 1+len(statuses) || len(got[0]) != 1 {
				t.Fatalf("%d entities, the first %v; want the total, then %d statuses", len(got), got, len(statuses))
			}
			near := func(v any, want float64) bool {
				f, ok := v.(float64)
				return ok && math.Abs(f-want) <= 1e-9*math.Abs(want)
			}
			if !near(got[0]["S"], total) {
				t.Errorf("total %v, want %v", got[0]["S"], total)
			}
			seen := map[string]bool{}
			for _, g := range got[1:] {
				st, _ := g["STATUS"].(string) // null: the orders without a status, ""
				if seen[st] || !near(g["S"], byStatus[st]) && !(g["S"] == nil && byStatus[st] == 0) {
					t.Errorf("group %v: want S %v once", g, byStatus[st])
				}
				seen[st] = true
			}
		})
	}
}
