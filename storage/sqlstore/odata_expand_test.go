package sqlstore_test

import (
	"encoding/csv"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strconv"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/kmkit/kmkit/odata"
	"github.com/kmkit/kmkit/query"
)

// shopRows reads odata/testdata/shop/data/NAME.csv as maps of column to text.
func shopRows(t *testing.T, name string) []map[string]string {
	t.Helper()
	f, err := os.Open("../../odata/testdata/shop/data/" + name + ".csv")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	var out []map[string]string
	for _, r := range rows[1:] {
		m := map[string]string{}
		for i, c := range rows[0] {
			m[c] = r[i]
		}
		out = append(out, m)
	}
	return out
}

// TestODataExpand: $expand of a to-one and of to-many navigation properties (one to a
// record without a key), with nested
// $select, $filter (lambdas too), $orderby, $top and $expand, on memory, SQLite and PostgreSQL, against what the
// shop fixture's CSV files say; the in lists of join values are split at 2 values and the
// related rows paged at 2 per request, so that every store pages through them.
func TestODataExpand(t *testing.T) {
	customers, orders := shopRows(t, "customers"), shopRows(t, "orders")
	byID := func(a, b map[string]string) int {
		switch {
		case a["ID"] < b["ID"]:
			return -1
		case a["ID"] > b["ID"]:
			return 1
		}
		return 0
	}
	slices.SortFunc(customers, byID)
	slices.SortFunc(orders, byID)
	country := map[string]any{}
	for _, c := range customers {
		country[c["ID"]] = nil
		if c["COUNTRY"] != "" {
			country[c["ID"]] = c["COUNTRY"]
		}
	}
	var toOne []any
	for _, o := range orders {
		var c any
		if co, ok := country[o["CUST"]]; ok {
			c = map[string]any{"ID": o["CUST"], "COUNTRY": co}
		}
		toOne = append(toOne, map[string]any{"ID": o["ID"], "CUSTOMERS": c})
	}
	net := func(o map[string]string) float64 { f, _ := strconv.ParseFloat(o["NET"], 64); return f }
	var toMany []any
	for _, c := range customers {
		var mine []map[string]string
		for _, o := range orders {
			if o["CUST"] == c["ID"] && net(o) > 0 {
				mine = append(mine, o)
			}
		}
		slices.SortStableFunc(mine, func(a, b map[string]string) int {
			switch {
			case net(a) > net(b):
				return -1
			case net(a) < net(b):
				return 1
			}
			return 0
		})
		list := []any{}
		for _, o := range mine[:min(2, len(mine))] {
			list = append(list, map[string]any{"ID": o["ID"], "NET": net(o)})
		}
		toMany = append(toMany, map[string]any{"ID": c["ID"], "ORDERS": list})
	}
	// ORDERS with their events (a record without a key: ROW_NUMBER is the row's position),
	// by activity descending, then position.
	events := shopRows(t, "events")
	var withEvents []any
	eventsOf := map[string][]any{}
	for _, o := range orders {
		var mine []any
		for _, a := range []string{"Ship", "Pay", "Create"} {
			for i, e := range events {
				if e["ORDER_ID"] == o["ID"] && e["ACTIVITY"] == a {
					mine = append(mine, map[string]any{"ROW_NUMBER": float64(i + 1), "ACTIVITY": a})
				}
			}
		}
		if mine == nil {
			mine = []any{}
		}
		withEvents = append(withEvents, map[string]any{"ID": o["ID"], "EVENTS": mine})
		eventsOf[o["ID"]] = mine
	}
	// The same customers with their top orders, each with its events (nested $expand).
	var nested []any
	for _, c := range toMany {
		c := c.(map[string]any)
		list := []any{}
		for _, o := range c["ORDERS"].([]any) {
			o := o.(map[string]any)
			list = append(list, map[string]any{"ID": o["ID"], "NET": o["NET"], "EVENTS": eventsOf[o["ID"].(string)]})
		}
		nested = append(nested, map[string]any{"ID": c["ID"], "ORDERS": list})
	}
	// The customers with their orders that have a Ship event, and with those that have an
	// event past the fifth row of events.csv (a lambda in the nested $filter, on the
	// activity and on the generated key).
	lambdaExpand := func(has func(pos int, e map[string]string) bool) []any {
		var out []any
		for _, c := range customers {
			list := []any{}
			for _, o := range orders {
				if o["CUST"] != c["ID"] {
					continue
				}
				for i, e := range events {
					if e["ORDER_ID"] == o["ID"] && has(i+1, e) {
						list = append(list, map[string]any{"ID": o["ID"]})
						break
					}
				}
			}
			out = append(out, map[string]any{"ID": c["ID"], "ORDERS": list})
		}
		return out
	}
	shipped := lambdaExpand(func(_ int, e map[string]string) bool { return e["ACTIVITY"] == "Ship" })
	late := lambdaExpand(func(pos int, _ map[string]string) bool { return pos > 5 })
	cases := []struct {
		target string
		want   []any
	}{
		{"CUSTOMERS_entries?$select=ID&$orderby=ID&$expand=ORDERS($select=ID;$orderby=ID;$filter=EVENTS/any(e:%20e/ACTIVITY%20eq%20'Ship'))", shipped},
		{"CUSTOMERS_entries?$select=ID&$orderby=ID&$expand=ORDERS($select=ID;$orderby=ID;$filter=not%20EVENTS/all(e:%20e/ROW_NUMBER%20le%205))", late},
		{"ORDERS_entries?$select=ID&$orderby=ID&$expand=CUSTOMERS($select=COUNTRY)", toOne},
		{"ORDERS_entries?$select=ID&$orderby=ID&$expand=EVENTS($select=ACTIVITY;$orderby=ACTIVITY%20desc)", withEvents},
		{"CUSTOMERS_entries?$select=ID&$orderby=ID&$expand=ORDERS($select=ID,NET;$filter=NET%20gt%200;$orderby=NET%20desc;$top=2)", toMany},
		{"CUSTOMERS_entries?$select=ID&$orderby=ID&$expand=ORDERS($select=ID,NET;$filter=NET%20gt%200;$orderby=NET%20desc;$top=2;$expand=EVENTS($select=ACTIVITY;$orderby=ACTIVITY%20desc))", nested},
	}
	data := os.DirFS("../../odata/testdata/shop")
	for _, b := range navBackends {
		t.Run(b.name, func(t *testing.T) {
			h := odata.NewHandler(importOn(t, b.open, data), odata.WithMaxPageSize(2), odata.WithLimits(query.Limits{MaxIn: 2}))
			for _, c := range cases {
				var got []any
				target := odata.BasePath + "/shop.svc/" + c.target + "&$format=application/json;odata.metadata=none"
				for target != "" {
					w := httptest.NewRecorder()
					h.ServeHTTP(w, httptest.NewRequest(http.MethodGet, target, nil))
					var page struct {
						Value    []any  `json:"value"`
						NextLink string `json:"@odata.nextLink"`
					}
					if err := json.Unmarshal(w.Body.Bytes(), &page); w.Code != 200 || err != nil {
						t.Fatalf("GET %s: %d %s", target, w.Code, w.Body)
					}
					got = append(got, page.Value...)
					target = page.NextLink
					if target != "" {
						target = target[len("http://example.com"):]
					}
				}
				if d := cmp.Diff(c.want, got); d != "" {
					t.Errorf("%s (-want +got):\n%s", c.target, d)
				}
			}
		})
	}
}
