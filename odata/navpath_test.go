package odata

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// navAnswer is a JSON answer of a navigation path: a collection or one entity.
type navAnswer struct {
	Context string           `json:"@odata.context"`
	Count   *int             `json:"@odata.count"`
	Next    string           `json:"@odata.nextLink"`
	Value   []map[string]any `json:"value"`
	Entity  map[string]any   `json:"-"`
}

func getNav(t *testing.T, h http.Handler, target string, header ...string) (int, navAnswer) {
	t.Helper()
	w := get(h, target, header...)
	var a navAnswer
	if w.Code == http.StatusOK {
		if err := json.Unmarshal(w.Body.Bytes(), &a); err != nil {
			t.Fatalf("%s: %v %s", target, err, w.Body)
		}
		if a.Value == nil {
			json.Unmarshal(w.Body.Bytes(), &a.Entity) //nolint:errcheck // decoded above
		}
	}
	return w.Code, a
}

// column lists one property of the entities of a collection.
func column(a navAnswer, name string) []any {
	out := []any{}
	for _, e := range a.Value {
		out = append(out, e[name])
	}
	return out
}

// TestNavigationPaths reads the entities a navigation property of one entity leads to,
// SET(key)/NAV, checked against testdata/shop's CSV files: collections with the options
// of an entity set (and their next links), single entities, 204 where a single-valued
// property leads to none, and the errors.
func TestNavigationPaths(t *testing.T) {
	h := testHandler(t)
	svc := BasePath + "/shop.svc/"
	root := "http://example.com" + svc

	code, a := getNav(t, h, svc+"ORDERS_entries('O2')/EVENTS")
	if code != 200 || a.Context != root+"$metadata#EVENTS_entries" || !cmp.Equal(column(a, "ACTIVITY"), []any{"Create", "Ship", "Pay"}) {
		t.Errorf("O2's events: %d %+v", code, a)
	}
	code, a = getNav(t, h, svc+"ORDERS_entries('O2')/EVENTS?$filter=ACTIVITY%20ne%20'Create'&$count=true&$select=ACTIVITY&$orderby=AT%20desc")
	if code != 200 || a.Count == nil || *a.Count != 2 || !cmp.Equal(column(a, "ACTIVITY"), []any{"Pay", "Ship"}) ||
		a.Context != root+"$metadata#EVENTS_entries(ACTIVITY)" {
		t.Errorf("O2's events, filtered and sorted: %d %+v", code, a)
	}
	// Paged by the client's preference: the next link continues the navigation path.
	var acts []any
	next := svc + "ORDERS_entries('O2')/EVENTS?$select=ACTIVITY"
	for i := 0; next != "" && i < 5; i++ {
		code, a = getNav(t, h, next, "Prefer", "odata.maxpagesize=2")
		if code != 200 {
			t.Fatalf("page %d: %d", i, code)
		}
		acts = append(acts, column(a, "ACTIVITY")...)
		if a.Next != "" && !strings.HasPrefix(a.Next, root+"ORDERS_entries('O2')/EVENTS?") {
			t.Errorf("next link %q does not continue the navigation path", a.Next)
		}
		next = strings.TrimPrefix(a.Next, "http://example.com")
	}
	if !cmp.Equal(acts, []any{"Create", "Ship", "Pay"}) {
		t.Errorf("O2's events page by page: %v", acts)
	}
	code, a = getNav(t, h, svc+"CUSTOMERS_entries('C1')/ORDERS?$select=ID")
	if code != 200 || !cmp.Equal(column(a, "ID"), []any{"O1", "O2"}) {
		t.Errorf("C1's orders: %d %+v", code, a)
	}
	code, a = getNav(t, h, svc+"CUSTOMERS_entries('C3')/ORDERS?$select=ID&$expand=EVENTS($select=ACTIVITY)")
	if code != 200 || len(a.Value) != 1 || a.Value[0]["ID"] != "O4" || !cmp.Equal(a.Value[0]["EVENTS"], []any{map[string]any{"ROW_NUMBER": 7.0, "ACTIVITY": "Create"}}) {
		t.Errorf("C3's orders with their events: %d %+v", code, a)
	}
	code, a = getNav(t, h, svc+"ORDERS_entries('O''6')/EVENTS")
	if code != 200 || a.Value == nil || len(a.Value) != 0 {
		t.Errorf("O'6 has no events: %d %+v", code, a)
	}
	// Single-valued: the entity, with its context; 204 where the order names no customer.
	code, a = getNav(t, h, svc+"ORDERS_entries('O1')/CUSTOMERS")
	if code != 200 || a.Context != root+"$metadata#CUSTOMERS_entries/$entity" || a.Entity["ID"] != "C1" || a.Entity["NAME"] != "Müller & Söhne <GmbH>" {
		t.Errorf("O1's customer: %d %+v", code, a)
	}
	code, a = getNav(t, h, svc+"EVENTS_entries(5)/ORDERS?$select=STATUS")
	if code != 200 || a.Entity["ID"] != "O2" || a.Entity["STATUS"] != "PAID" {
		t.Errorf("the fifth event's order: %d %+v", code, a)
	}
	if w := get(h, svc+"ORDERS_entries('O7')/CUSTOMERS"); w.Code != http.StatusNoContent || w.Body.Len() != 0 {
		t.Errorf("O7 names no customer: %d %q", w.Code, w.Body)
	}
	if w := get(h, svc+"ORDERS_entries('O1')/CUSTOMERS?$format=atom"); w.Code != 200 || !strings.Contains(w.Body.String(), "<entry") {
		t.Errorf("O1's customer as Atom: %d %.200s", w.Code, w.Body)
	}
	// What a navigation path does not take.
	for target, want := range map[string]string{
		svc + "ORDERS_entries('O2')/EVENTS?$apply=groupby((ACTIVITY))":     `"status":501`,
		svc + "ORDERS_entries('O1')/CUSTOMERS?$filter=COUNTRY%20eq%20'DE'": `an entity addressed by key takes $select, $expand and $format only`,
		svc + "ORDERS_entries('O1')/CUSTOMERS?$select=NOPE":                `entity type CUSTOMERS has no property NOPE`,
		svc + "EVENTS_entries(0)/ORDERS":                                   `key predicate (0): ROW_NUMBER is a row number`,
	} {
		if w := get(h, target); w.Code < 400 || !strings.Contains(w.Body.String(), want) {
			t.Errorf("%s: %d %s, want %s", target, w.Code, w.Body, want)
		}
	}
}
