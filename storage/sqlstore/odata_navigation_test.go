package sqlstore_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/kmkit/kmkit/km"
	"github.com/kmkit/kmkit/odata"
	"github.com/kmkit/kmkit/storage/memory"
	"github.com/kmkit/kmkit/storage/storetest"
)

// navBackends are the stores the OData navigation tests run on: memory, SQLite and, when
// KMKIT_POSTGRES_DSN is set, PostgreSQL.
var navBackends = []struct {
	name string
	open func(testing.TB) importer
}{
	{"memory", func(testing.TB) importer { return memory.New().KM() }},
	{"sqlite", func(t testing.TB) importer { return openSQLite(t).KM() }},
	{"postgres", func(t testing.TB) importer { return openPostgres(t).KM() }},
}

// importOn opens a store with open and imports data into it.
func importOn(t *testing.T, open func(testing.TB) importer, data fs.FS) importer {
	t.Helper()
	s := open(t)
	if err := s.Import(context.Background(), data); err != nil {
		t.Fatal(err)
	}
	return s
}

// importer is a store that loads a KM directory.
type importer interface {
	km.Store
	Import(context.Context, fs.FS) error
}

// odataKeys asks h for the keys of the entities of set that target's query string
// selects, sorted by key, following nextLinks.
func odataKeys(t *testing.T, h http.Handler, set, key, query string) []string {
	t.Helper()
	return odataKeysOrdered(t, h, set, key, key, query)
}

// odataKeysOrdered is odataKeys in the order of $orderby=orderby.
func odataKeysOrdered(t *testing.T, h http.Handler, set, key, orderby, query string) []string {
	t.Helper()
	return odataKeysIn(t, h, "o2c", set, key, orderby, query)
}

// odataKeysIn is odataKeysOrdered on the service of knowledge model kmID.
func odataKeysIn(t *testing.T, h http.Handler, kmID, set, key, orderby, query string) []string {
	t.Helper()
	target := odata.BasePath + "/" + kmID + ".svc/" + set + "?$select=" + key + "&$orderby=" + strings.ReplaceAll(url.QueryEscape(orderby), "+", "%20") + "&" + query
	var keys []string
	for target != "" {
		w := httptest.NewRecorder()
		h.ServeHTTP(w, httptest.NewRequest(http.MethodGet, target, nil))
		if w.Code != http.StatusOK {
			t.Fatalf("GET %s: %d %s", target, w.Code, w.Body)
		}
		var page struct {
			Value    []map[string]any `json:"value"`
			NextLink string           `json:"@odata.nextLink"`
		}
		if err := json.Unmarshal(w.Body.Bytes(), &page); err != nil {
			t.Fatalf("GET %s: %v", target, err)
		}
		for _, e := range page.Value {
			keys = append(keys, fmt.Sprint(e[key]))
		}
		target = ""
		if page.NextLink != "" {
			u, err := url.Parse(page.NextLink)
			if err != nil {
				t.Fatal(err)
			}
			target = u.RequestURI()
		}
	}
	return keys
}

// refKeys returns the keys of record's rows that pass the KM-native filters, sorted, as
// the reference evaluator computes them from the CSV files.
func refKeys(t *testing.T, ref *storetest.Reference, record, key string, filters []string) []string {
	t.Helper()
	res, err := ref.Eval(storetest.RefRequest{Record: record, Fields: []string{key}, FilterExprs: filters, Sort: "+" + key})
	if err != nil {
		t.Fatalf("%s %v: the reference refuses it: %v", record, filters, err)
	}
	keys := make([]string, len(res.Rows))
	for i, r := range res.Rows {
		keys[i] = fmt.Sprint(r[0])
	}
	return keys
}

// navCase is an OData $filter through navigation properties and the KM-native filter
// SPEC-NOTES gives it the meaning of.
type navCase struct {
	set, key, filter string
	native           []string
}

// demoReference is the order-to-cash demo of 40 orders and the reference evaluator over it.
func demoReference(t *testing.T) (fs.FS, *storetest.Reference) {
	t.Helper()
	data, err := storetest.DemoData(40)
	if err != nil {
		t.Fatal(err)
	}
	ref, err := storetest.LoadReference(data, "o2c")
	if err != nil {
		t.Fatal(err)
	}
	return data, ref
}

// TestODataPathFilters: a path expression in $filter (CUSTOMERS/COUNTRY on ORDERS) is the
// KM-native field (CUSTOMERS.COUNTRY): the same entities as the reference evaluator
// computes for the KM-native filter, on every backend.
func TestODataPathFilters(t *testing.T) {
	cases := []navCase{
		{"ORDERS_entries", "ORDER_ID", "CUSTOMERS/COUNTRY eq 'DE'", []string{"CUSTOMERS.COUNTRY eq 'DE'"}},
		{"ORDERS_entries", "ORDER_ID", "not (CUSTOMERS/COUNTRY eq 'DE') and STATUS ne 'OPEN'", []string{"not (CUSTOMERS.COUNTRY eq 'DE') and STATUS ne 'OPEN'"}},
		{"ORDERS_entries", "ORDER_ID", "startswith(CUSTOMERS/CUSTOMER_NAME,'B') or CUSTOMERS/SEGMENT eq 'Public'", []string{"startswith(CUSTOMERS.CUSTOMER_NAME,'B') or CUSTOMERS.SEGMENT eq 'Public'"}},
		{"ORDER_ITEMS_entries", "ITEM_ID", "ORDERS/CUSTOMERS/COUNTRY eq 'FR'", []string{"CUSTOMERS.COUNTRY eq 'FR'"}},
		{"ORDER_ITEMS_entries", "ITEM_ID", "ORDERS/STATUS EQ 'OPEN' and MATERIALS/UNIT_PRICE gt 100", []string{"ORDERS.STATUS eq 'OPEN' and MATERIALS.UNIT_PRICE gt 100"}},
	}
	runNavCases(t, cases)
}

// runNavCases checks every case on every backend against the reference.
func runNavCases(t *testing.T, cases []navCase) {
	data, ref := demoReference(t)
	for _, b := range navBackends {
		t.Run(b.name, func(t *testing.T) {
			h := odata.NewHandler(importOn(t, b.open, data))
			for _, c := range cases {
				want := refKeys(t, ref, strings.TrimSuffix(c.set, odata.EntitySetSuffix), c.key, c.native)
				got := odataKeys(t, h, c.set, c.key, "$filter="+strings.ReplaceAll(url.QueryEscape(c.filter), "+", "%20"))
				if len(want) == 0 {
					t.Errorf("%s %s: the reference selects nothing; the case tests little", c.set, c.filter)
				}
				if !slices.Equal(got, want) {
					t.Errorf("%s $filter=%s:\n got %v\nwant %v", c.set, c.filter, got, want)
				}
			}
		})
	}
}

// TestODataAnyFilters: PATH/any(x: BODY) keeps the entities with at least one related
// entity for which BODY is true (a semi-join, SPEC-NOTES' propagation). Where BODY is one
// condition it means the KM-native filter on the child's fields; the reference evaluator
// answers both.
func TestODataAnyFilters(t *testing.T) {
	cases := []navCase{
		{"ORDERS_entries", "ORDER_ID", "ORDER_ITEMS/any(i: i/QUANTITY gt 5)", []string{"ORDER_ITEMS.QUANTITY gt 5"}},
		{"ORDERS_entries", "ORDER_ID", "ORDER_ITEMS/ANY(i:i/QUANTITY gt 5 or i/NET_PRICE lt 20) and STATUS ne 'OPEN'", []string{"ORDER_ITEMS.QUANTITY gt 5 or ORDER_ITEMS.NET_PRICE lt 20", "STATUS ne 'OPEN'"}},
		// nulls: a null DAYS_LATE is neither ne 0 nor not gt 2
		{"CUSTOMERS_entries", "CUSTOMER_ID", "ORDERS/any(o: o/DAYS_LATE ne 0)", []string{"ORDERS.DAYS_LATE ne 0"}},
		{"CUSTOMERS_entries", "CUSTOMER_ID", "ORDERS/any(o: not (o/DAYS_LATE gt 2))", []string{"not (ORDERS.DAYS_LATE gt 2)"}},
		// the outer entity's properties and paths inside the body
		{"ORDERS_entries", "ORDER_ID", "ORDER_ITEMS/any(i: i/MATERIALS/MATERIAL_GROUP eq 'Hardware' or i/QUANTITY gt 8)", []string{"MATERIALS.MATERIAL_GROUP eq 'Hardware' or ORDER_ITEMS.QUANTITY gt 8"}},
		{"ORDERS_entries", "ORDER_ID", "ORDER_ITEMS/any(i: i/QUANTITY gt 8 or EXPRESS eq true)", []string{"ORDER_ITEMS.QUANTITY gt 8 or ORDERS.EXPRESS eq true"}},
		{"MATERIALS_entries", "MATERIAL_ID", "ORDER_ITEMS/any(i: i/ORDERS/CUSTOMERS/COUNTRY eq 'DE')", []string{"CUSTOMERS.COUNTRY eq 'DE'"}},
	}
	runNavCases(t, cases)
}

// TestODataAnyConjunction: a body of several conditions ANDed holds for one related
// entity, not for one entity each: the parents are those of the children that pass the
// whole body (computed here from the reference's child rows), not the KM-native
// filterExpr's conjunct by conjunct semi-joins. any() without a body: a parent with a
// child at all.
func TestODataAnyConjunction(t *testing.T) {
	data, ref := demoReference(t)
	parentsOf := func(record, ref_, filter string) []string {
		req := storetest.RefRequest{Record: record, Fields: []string{ref_}}
		if filter != "" {
			req.FilterExprs = []string{filter}
		}
		res, err := ref.Eval(req)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, r := range res.Rows {
			if r[0] != nil && !slices.Contains(out, fmt.Sprint(r[0])) {
				out = append(out, fmt.Sprint(r[0]))
			}
		}
		slices.Sort(out)
		return out
	}
	bothConds := parentsOf("ORDER_ITEMS", "ORDER_ID", "QUANTITY gt 8 and NET_PRICE lt 1000")
	separately := refKeys(t, ref, "ORDERS", "ORDER_ID", []string{"ORDER_ITEMS.QUANTITY gt 8 and ORDER_ITEMS.NET_PRICE lt 1000"})
	if slices.Equal(bothConds, separately) {
		t.Fatalf("the data does not tell one item passing both conditions from two items passing one each")
	}
	withOrders := parentsOf("ORDERS", "CUSTOMER_ID", "")
	allCustomers := refKeys(t, ref, "CUSTOMERS", "CUSTOMER_ID", nil)
	if len(withOrders) == len(allCustomers) {
		t.Fatalf("every customer has orders: any() tests little")
	}
	for _, b := range navBackends {
		t.Run(b.name, func(t *testing.T) {
			h := odata.NewHandler(importOn(t, b.open, data))
			for _, c := range []struct {
				set, key, filter string
				want             []string
			}{
				{"ORDERS_entries", "ORDER_ID", "ORDER_ITEMS/any(i: i/QUANTITY gt 8 and i/NET_PRICE lt 1000)", bothConds},
				{"CUSTOMERS_entries", "CUSTOMER_ID", "ORDERS/any()", withOrders},
			} {
				got := odataKeys(t, h, c.set, c.key, "$filter="+strings.ReplaceAll(url.QueryEscape(c.filter), "+", "%20"))
				if !slices.Equal(got, c.want) {
					t.Errorf("%s $filter=%s:\n got %v\nwant %v", c.set, c.filter, got, c.want)
				}
				// The reference's own lambda semantics agree.
				res, err := ref.Eval(storetest.RefRequest{Record: strings.TrimSuffix(c.set, odata.EntitySetSuffix), Fields: []string{c.key}, ODataFilter: c.filter, Sort: "+" + c.key})
				if err != nil {
					t.Fatal(err)
				}
				var refGot []string
				for _, r := range res.Rows {
					refGot = append(refGot, fmt.Sprint(r[0]))
				}
				if !slices.Equal(refGot, c.want) {
					t.Errorf("reference %s $filter=%s:\n got %v\nwant %v", c.set, c.filter, refGot, c.want)
				}
			}
		})
	}
}

// TestODataLambdasAnywhere: any and all under or and not, all alone, not all: the
// entities the reference evaluator's own lambdas select (its row-at-a-time reading of
// OData's rules: any is false and all true over no related entity, a null body is not
// true), on every backend.
func TestODataLambdasAnywhere(t *testing.T) {
	data, ref := demoReference(t)
	cases := []struct{ set, key, filter string }{
		{"ORDERS_entries", "ORDER_ID", "ORDER_ITEMS/all(i: i/QUANTITY gt 3)"},
		{"ORDERS_entries", "ORDER_ID", "ORDER_ITEMS/all(i: i/QUANTITY gt 2 or EXPRESS eq true)"},
		{"ORDERS_entries", "ORDER_ID", "STATUS eq 'OPEN' or ORDER_ITEMS/any(i: i/QUANTITY gt 8)"},
		{"ORDERS_entries", "ORDER_ID", "not ORDER_ITEMS/any(i: i/QUANTITY gt 8)"},
		{"ORDERS_entries", "ORDER_ID", "not ORDER_ITEMS/all(i: i/NET_PRICE lt 500) and DAYS_LATE gt 0"},
		{"ORDERS_entries", "ORDER_ID", "not (ORDER_ITEMS/any() and DAYS_LATE gt 0)"},
		{"CUSTOMERS_entries", "CUSTOMER_ID", "ORDERS/all(o: o/DAYS_LATE le 2)"},
		{"CUSTOMERS_entries", "CUSTOMER_ID", "COUNTRY eq 'DE' or (ORDERS/any(o: o/STATUS eq 'OPEN') and not ORDERS/all(o: o/EXPRESS eq true))"},
		{"MATERIALS_entries", "MATERIAL_ID", "ORDER_ITEMS/all(i: i/QUANTITY lt 9) or not ORDER_ITEMS/any(i: i/QUANTITY lt 2)"},
		// Nested lambdas: the inner one's body reads its own variable, the enclosing one's
		// and the outer entity's.
		{"CUSTOMERS_entries", "CUSTOMER_ID", "ORDERS/any(o: o/ORDER_ITEMS/any(i: i/QUANTITY gt 8))"},
		{"CUSTOMERS_entries", "CUSTOMER_ID", "ORDERS/any(o: o/ORDER_ITEMS/all(i: i/QUANTITY gt 3 or o/EXPRESS eq true))"},
		{"CUSTOMERS_entries", "CUSTOMER_ID", "ORDERS/all(o: o/ORDER_ITEMS/any(i: i/QUANTITY gt 5 or COUNTRY eq 'DE'))"},
		{"CUSTOMERS_entries", "CUSTOMER_ID", "COUNTRY ne 'DE' and not ORDERS/any(o: o/STATUS eq 'OPEN' and o/ORDER_ITEMS/any())"},
	}
	for _, b := range navBackends {
		t.Run(b.name, func(t *testing.T) {
			h := odata.NewHandler(importOn(t, b.open, data))
			for _, c := range cases {
				rec := strings.TrimSuffix(c.set, odata.EntitySetSuffix)
				res, err := ref.Eval(storetest.RefRequest{Record: rec, Fields: []string{c.key}, ODataFilter: c.filter, Sort: "+" + c.key})
				if err != nil {
					t.Fatalf("%s: the reference refuses it: %v", c.filter, err)
				}
				var want []string
				for _, r := range res.Rows {
					want = append(want, fmt.Sprint(r[0]))
				}
				if all := refKeys(t, ref, rec, c.key, nil); len(want) == 0 || len(want) == len(all) {
					t.Errorf("%s %s: the reference selects %d of %d entities; the case tests little", c.set, c.filter, len(want), len(all))
				}
				got := odataKeys(t, h, c.set, c.key, "$filter="+strings.ReplaceAll(url.QueryEscape(c.filter), "+", "%20"))
				if !slices.Equal(got, want) {
					t.Errorf("%s $filter=%s:\n got %v\nwant %v", c.set, c.filter, got, want)
				}
			}
		})
	}
}

// TestODataLambdaRowKey: in a lambda's body, the generated key of a related record that
// declares no key (x/ROW_NUMBER, the row's position in events.csv of the shop fixture) is
// a property like the others, in nested lambdas too; the entities are the reference
// evaluator's and, read off events.csv by hand (rows 1-2 of O1, 3-5 of O2, 6 of O3, 7 of
// O4, 8-9 of O5; O'6 and O7 have none), the ones listed.
func TestODataLambdaRowKey(t *testing.T) {
	data := os.DirFS("../../odata/testdata/shop")
	ref, err := storetest.LoadReference(data, "shop")
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		set, filter string
		want        []string
	}{
		{"ORDERS", "EVENTS/any(e: e/ROW_NUMBER gt 5)", []string{"O3", "O4", "O5"}},
		{"ORDERS", "EVENTS/all(e: e/ROW_NUMBER le 3)", []string{"O'6", "O1", "O7"}},
		{"ORDERS", "EVENTS/any(e: e/ROW_NUMBER eq 4 and e/ACTIVITY eq 'Ship')", []string{"O2"}},
		{"ORDERS", "not EVENTS/any(e: e/ROW_NUMBER ge 8)", []string{"O'6", "O1", "O2", "O3", "O4", "O7"}},
		{"CUSTOMERS", "ORDERS/any(o: o/EVENTS/any(e: e/ROW_NUMBER eq 2))", []string{"C1"}},
	}
	for _, b := range navBackends {
		t.Run(b.name, func(t *testing.T) {
			h := odata.NewHandler(importOn(t, b.open, data))
			for _, c := range cases {
				res, err := ref.Eval(storetest.RefRequest{Record: c.set, Fields: []string{"ID"}, ODataFilter: c.filter})
				if err != nil {
					t.Fatalf("%s: the reference refuses it: %v", c.filter, err)
				}
				var want []string
				for _, r := range res.Rows {
					want = append(want, fmt.Sprint(r[0]))
				}
				slices.Sort(want)
				if !slices.Equal(want, c.want) {
					t.Fatalf("%s: the reference selects %v, the CSV file %v", c.filter, want, c.want)
				}
				got := odataKeysIn(t, h, "shop", c.set+odata.EntitySetSuffix, "ID", "ID", "$filter="+strings.ReplaceAll(url.QueryEscape(c.filter), "+", "%20"))
				slices.Sort(got)
				if !slices.Equal(got, want) {
					t.Errorf("%s $filter=%s:\n got %v\nwant %v", c.set, c.filter, got, want)
				}
			}
		})
	}
}

// TestODataLambdaThroughToOne: a lambda's path may start with to-one properties; it then
// quantifies over the related rows of the entity they reach (the item's order), which is
// the KM-native filter on the related record (SPEC-NOTES' propagation up, then down).
func TestODataLambdaThroughToOne(t *testing.T) {
	runNavCases(t, []navCase{
		{"ORDER_ITEMS_entries", "ITEM_ID", "ORDERS/ACTIVITIES/any(a: a/ACTIVITY eq 'Ship Goods')", []string{"ACTIVITIES.ACTIVITY eq 'Ship Goods'"}},
	})
}

// TestODataOrderByPath: $orderby by a path through to-one navigation properties sorts the
// entities by the related entity's property (nulls last both ways, where there is none
// too), as the KM-level request listing the record with the related field sorts its rows
// in the reference evaluator; with $filter and across pages ($top, nextLink).
func TestODataOrderByPath(t *testing.T) {
	data, ref := demoReference(t)
	cases := []struct {
		set, key, orderby, filter string
		// fields and sort of the KM-level reference request
		fields []string
		sort   string
		native []string
	}{
		{"ORDERS_entries", "ORDER_ID", "CUSTOMERS/COUNTRY,ORDER_ID", "",
			[]string{"ORDERS.ORDER_ID", "CUSTOMERS.COUNTRY"}, "+CUSTOMERS.COUNTRY,+ORDERS.ORDER_ID", nil},
		{"ORDERS_entries", "ORDER_ID", "CUSTOMERS/CUSTOMER_NAME desc,NET_VALUE", "STATUS ne 'OPEN'",
			[]string{"ORDERS.ORDER_ID", "CUSTOMERS.CUSTOMER_NAME", "ORDERS.NET_VALUE"}, "-CUSTOMERS.CUSTOMER_NAME,+ORDERS.NET_VALUE", []string{"ORDERS.STATUS ne 'OPEN'"}},
		{"ORDER_ITEMS_entries", "ITEM_ID", "ORDERS/CUSTOMERS/SEGMENT desc,MATERIALS/UNIT_PRICE,ITEM_ID", "QUANTITY gt 2",
			[]string{"ORDER_ITEMS.ITEM_ID", "CUSTOMERS.SEGMENT", "MATERIALS.UNIT_PRICE"}, "-CUSTOMERS.SEGMENT,+MATERIALS.UNIT_PRICE,+ORDER_ITEMS.ITEM_ID", []string{"ORDER_ITEMS.QUANTITY gt 2"}},
	}
	for _, b := range navBackends {
		t.Run(b.name, func(t *testing.T) {
			h := odata.NewHandler(importOn(t, b.open, data), odata.WithMaxPageSize(7))
			for _, c := range cases {
				res, err := ref.Eval(storetest.RefRequest{Fields: c.fields, FilterExprs: c.native, Sort: c.sort})
				if err != nil {
					t.Fatalf("%s: the reference refuses it: %v", c.orderby, err)
				}
				var want []string
				for _, r := range res.Rows {
					want = append(want, fmt.Sprint(r[0]))
				}
				q := ""
				if c.filter != "" {
					q = "$filter=" + strings.ReplaceAll(url.QueryEscape(c.filter), "+", "%20")
				}
				got := odataKeysOrdered(t, h, c.set, c.key, c.orderby, q)
				if !slices.Equal(got, want) {
					t.Errorf("%s $orderby=%s:\n got %v\nwant %v", c.set, c.orderby, got, want)
				}
				if slices.IsSorted(want) {
					t.Errorf("%s $orderby=%s: the reference's order is the key order; the case tests little", c.set, c.orderby)
				}
			}
		})
	}
}
