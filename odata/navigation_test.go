package odata

import (
	"encoding/json"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/google/go-cmp/cmp"
	"github.com/kmkit/kmkit/km"
)

// A KM with relationships both ways between two records and a field named like a
// navigation property would be, for the naming rule.
const navNamingKM = `id: nav
name: Nav
published: 2026-01-15T10:00:00Z
records:
  - id: CUSTOMERS
    name: Customers
    source: customers
    key: ID
    fields:
      - {id: ID, name: Customer, type: string}
      - {id: LAST_ORDER, name: Last order, type: string}
  - id: ORDERS
    name: Orders
    source: orders
    key: ID
    fields:
      - {id: ID, name: Order, type: string}
      - {id: SHIP_TO, name: Ship-to, type: string}
  - id: ITEMS
    name: Items
    source: items
    fields:
      - {id: ORDER_ID, name: Order, type: string}
      - {id: ORDERS, name: A field named like the navigation property, type: string}
relationships:
  - {from: ORDERS.SHIP_TO, to: CUSTOMERS.ID}
  - {from: CUSTOMERS.LAST_ORDER, to: ORDERS.ID}
  - {from: ITEMS.ORDER_ID, to: ORDERS.ID}
`

// TestNavigationNames: the naming rule of navigation.go, written out for a KM that needs
// every form of it.
func TestNavigationNames(t *testing.T) {
	models, err := km.Load(fstest.MapFS{"models/nav.yaml": {Data: []byte(navNamingKM)}})
	if err != nil {
		t.Fatal(err)
	}
	m := models[0]
	type nav struct {
		Name, Target, Partner string
		Many                  bool
	}
	want := map[string][]nav{
		"CUSTOMERS": {
			{"ORDERS_by_SHIP_TO", "ORDERS", "CUSTOMERS_via_SHIP_TO", true},
			{"ORDERS_via_LAST_ORDER", "ORDERS", "CUSTOMERS_by_LAST_ORDER", false},
		},
		"ORDERS": {
			{"CUSTOMERS_via_SHIP_TO", "CUSTOMERS", "ORDERS_by_SHIP_TO", false},
			{"CUSTOMERS_by_LAST_ORDER", "CUSTOMERS", "ORDERS_via_LAST_ORDER", true},
			{"ITEMS", "ITEMS", "ORDERS_via_ORDER_ID", true},
		},
		"ITEMS": {{"ORDERS_via_ORDER_ID", "ORDERS", "ITEMS", false}},
	}
	for rec, w := range want {
		var got []nav
		for _, n := range navNames(m, rec) {
			got = append(got, nav{n.name, n.target, n.partner, n.many})
		}
		if diff := cmp.Diff(w, got); diff != "" {
			t.Errorf("%s (-want +got):\n%s", rec, diff)
		}
	}
}

// Path expressions that are not served: the status and the message say why.
func TestPathErrors(t *testing.T) {
	h := testHandler(t)
	tests := []struct {
		target string
		status int
		code   string
		msg    string
	}{
		{"/ORDERS_entries?$filter=EVENTS/ACTIVITY eq 'Ship'", 400, "GENERAL_PARAMETER_ILLEGAL",
			"$filter: EVENTS is a collection of EVENTS; a condition over it needs any or all: EVENTS/any(x: x/ACTIVITY ...)"},
		{"/ORDERS_entries?$filter=CUSTOMER/COUNTRY eq 'DE'", 400, "KM_FIELD_NOTFOUND",
			"$filter: ORDERS has no navigation property CUSTOMER; it has CUSTOMERS, EVENTS"},
		{"/ORDERS_entries?$filter=CUSTOMERS/CITY eq 'DE'", 400, "KM_FIELD_NOTFOUND",
			"$filter: entity type CUSTOMERS has no property CITY"},
		{"/ORDERS_entries?$orderby=CUSTOMERS/CITY desc", 400, "KM_FIELD_NOTFOUND",
			"$orderby: entity type CUSTOMERS has no property CITY"},
		{"/ORDERS_entries?$orderby=EVENTS/AT", 400, "GENERAL_PARAMETER_ILLEGAL",
			"$orderby: EVENTS is a collection of EVENTS, which has no single value of AT to sort by; sort by a property of a single-valued (to-one) navigation property"},
		{"/CUSTOMERS_entries?$orderby=ORDERS/EVENTS/AT", 400, "GENERAL_PARAMETER_ILLEGAL",
			"$orderby: ORDERS is a collection of ORDERS, which has no single value of EVENTS/AT to sort by; sort by a property of a single-valued (to-one) navigation property"},
		{"/ORDERS_entries?$filter=CUSTOMERS/$count gt 1", 501, "FILTER_NOT_SUPPORTED", ""},
		// valid OData the plan does not take: 501 saying what to ask instead, not "unknown
		// field"
		{"/ORDERS_entries?$filter=CUSTOMERS eq null", 501, "FILTER_NOT_SUPPORTED",
			"$filter: CUSTOMERS is a navigation property; using it as a value is not supported: compare its properties, as CUSTOMERS/PROPERTY"},
		{"/ORDERS_entries?$filter=EVENTS ne null", 501, "FILTER_NOT_SUPPORTED",
			"$filter: EVENTS is a navigation property; using it as a value is not supported: ask EVENTS/any() or not EVENTS/any()"},
		{"/ORDERS_entries?$orderby=tolower(CUSTOMERS/NAME),ID", 501, "ODATA_OPTION_NOT_SUPPORTED",
			"$orderby: tolower(CUSTOMERS/NAME): an expression over a navigation path (CUSTOMERS/NAME) is not supported; sort by the path itself or by an expression over properties of ORDERS"},
		// lambdas
		{"/CUSTOMERS_entries?$filter=ORDERS/any(o: ORDERS/any(p: p/STATUS eq 'x'))", 501, "FILTER_NOT_SUPPORTED",
			"$filter: ORDERS/any(...) inside a lambda's condition: a lambda there is supported on a path from a lambda variable (x/NAV/any(...))"},
		{"/CUSTOMERS_entries?$filter=COUNTRY eq 'DE' or not ORDERS/all(o: o/any())", 400, "GENERAL_PARAMETER_ILLEGAL",
			"$filter: o/any(...) needs a collection; o is an entity of ORDERS"},
		{"/CUSTOMERS_entries?$filter=ORDERS/any(o: o/EVENTS/any(e: o))", 400, "GENERAL_PARAMETER_ILLEGAL",
			"$filter: o is an entity of ORDERS; compare its properties, as o/FIELD"},
		{"/CUSTOMERS_entries?$filter=ORDERS/any(o: o/EVENTS/any(e: o/NOPE eq 1))", 400, "KM_FIELD_NOTFOUND",
			"$filter: o/EVENTS: entity type ORDERS has no property NOPE"},
		{"/ORDERS_entries?$filter=CUSTOMERS/any(c: c/COUNTRY eq 'DE')", 400, "GENERAL_PARAMETER_ILLEGAL",
			"$filter: CUSTOMERS/any(...) needs a collection; CUSTOMERS is a single entity: compare its properties as CUSTOMERS/FIELD"},
		{"/ORDERS_entries?$filter=STATUS/any(s: s eq 'x')", 400, "GENERAL_PARAMETER_ILLEGAL",
			"$filter: STATUS/any(...) needs a collection-valued navigation property; STATUS is a property of ORDERS"},
		{"/CUSTOMERS_entries?$filter=ORDERS/EVENTS/any(e: e/ACTIVITY eq 'Ship')", 400, "GENERAL_PARAMETER_ILLEGAL",
			"$filter: ORDERS is a collection; a lambda's path may only end in one: ORDERS/any(x: x/EVENTS/...)"},
		{"/ORDERS_entries?$filter=EVENTS/any(e: e/WHO eq 'x')", 400, "KM_FIELD_NOTFOUND",
			"$filter: EVENTS: entity type EVENTS has no property WHO"},
		{"/ORDERS_entries?$filter=EVENTS/any(e: e eq 'x')", 400, "GENERAL_PARAMETER_ILLEGAL",
			"$filter: e is an entity of EVENTS; compare its properties, as e/FIELD"},
	}
	for _, tt := range tests {
		u := strings.ReplaceAll(tt.target, " ", "%20")
		w := get(h, svc+u)
		if w.Code != tt.status {
			t.Errorf("%s: %d %s, want %d", tt.target, w.Code, w.Body, tt.status)
			continue
		}
		var body struct {
			ErrorCode string `json:"errorCode"`
			Error     struct{ Message string }
		}
		if err := json.Unmarshal(w.Body.Bytes(), &body); err != nil {
			t.Fatalf("%s: %v", tt.target, err)
		}
		if body.ErrorCode != tt.code || (tt.msg != "" && body.Error.Message != tt.msg) {
			t.Errorf("%s: %s %q, want %s %q", tt.target, body.ErrorCode, body.Error.Message, tt.code, tt.msg)
		}
	}
}

// A path that is not the KM's join (two relationships connect ORDERS and CUSTOMERS, so
// the KM joins them by neither) or that leads back to its record: 501, saying so.
func TestPathNotTheKMJoin(t *testing.T) {
	models, err := km.Load(fstest.MapFS{"models/nav.yaml": {Data: []byte(navNamingKM)}})
	if err != nil {
		t.Fatal(err)
	}
	m := models[0]
	for _, tt := range []struct{ rec, path, msg string }{
		{"ORDERS", "CUSTOMERS_via_SHIP_TO/ID", "$filter: CUSTOMERS_via_SHIP_TO/ID: the knowledge model cannot join ORDERS and CUSTOMERS: "},
		{"ITEMS", "ORDERS_via_ORDER_ID/ID", ""},
		{"CUSTOMERS", "ORDERS_via_LAST_ORDER/CUSTOMERS_via_SHIP_TO/ID", "$filter: ORDERS_via_LAST_ORDER/CUSTOMERS_via_SHIP_TO/ID leads from CUSTOMERS back to CUSTOMERS"},
	} {
		name, err := resolvePath(m, tt.rec, tt.path, "$filter")
		if tt.msg == "" {
			if err != nil || name != "ORDERS.ID" {
				t.Errorf("%s %s: %q %v, want ORDERS.ID", tt.rec, tt.path, name, err)
			}
			continue
		}
		tg, ok := err.(*targeted)
		if !ok || tg.Status != 501 || !strings.HasPrefix(tg.Detail, tt.msg) {
			t.Errorf("%s %s: %v, want a 501 starting %q", tt.rec, tt.path, err, tt.msg)
		}
	}
}

// A path filter is the KM's filter across records: an order passes when its customer
// does, so O7, which has no customer, passes neither CUSTOMERS/COUNTRY eq null (only O4,
// whose customer C3 has no country) nor its negation (testdata/shop).
func TestPathNullParent(t *testing.T) {
	h := testHandler(t)
	for _, c := range []struct{ filter, want string }{
		{"CUSTOMERS/COUNTRY eq null", `[{"ID":"O4"}]`},
		{"CUSTOMERS/COUNTRY ne null", `[{"ID":"O'6"},{"ID":"O1"},{"ID":"O2"},{"ID":"O3"},{"ID":"O5"}]`},
	} {
		w := get(h, svc+"/ORDERS_entries?$select=ID&$orderby=ID&$format=application/json;odata.metadata=none&$filter="+strings.ReplaceAll(c.filter, " ", "%20"))
		if w.Code != 200 || w.Body.String() != `{"value":`+c.want+`}` {
			t.Errorf("%s: %d %s, want %s", c.filter, w.Code, w.Body, c.want)
		}
	}
}
