package odata

import (
	"context"
	"encoding/csv"
	"encoding/json"
	"encoding/xml"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"testing/fstest"

	"github.com/google/go-cmp/cmp"
	"github.com/kmkit/kmkit/km"
	"github.com/kmkit/kmkit/problem"
	"github.com/kmkit/kmkit/query"
	"github.com/kmkit/kmkit/storage/memory"
)

// shopCSV reads testdata/shop/data/NAME.csv as maps of column to text, in file order.
func shopCSV(t testing.TB, name string) []map[string]string {
	t.Helper()
	f, err := os.Open("testdata/shop/data/" + name + ".csv")
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

// orNull is a CSV text as a JSON string, or nil when empty.
func orNull(s string) any {
	if s == "" {
		return nil
	}
	return s
}

// expandCase is one $expand request on the shop fixture and its expected JSON value
// (decoded), computed from the CSV files.
type expandCase struct {
	name, target string
	want         any
}

// expandCases are the $expand requests the tests make on every store; ctx is the
// service's $metadata URL.
func expandCases(t testing.TB, ctx string) []expandCase {
	customers, orders := shopCSV(t, "customers"), shopCSV(t, "orders")
	customer := map[string]map[string]string{}
	for _, c := range customers {
		customer[c["ID"]] = c
	}
	byID := func(a, b map[string]string) int { return strings.Compare(a["ID"], b["ID"]) }
	slices.SortFunc(orders, byID)
	slices.SortFunc(customers, byID)

	// ORDERS with their customer (to-one), ordered by ID.
	var toOne []any
	for _, o := range orders {
		var c any
		if cu, ok := customer[o["CUST"]]; ok {
			c = map[string]any{"ID": cu["ID"], "NAME": cu["NAME"]}
		}
		toOne = append(toOne, map[string]any{"ID": o["ID"], "CUSTOMERS": c})
	}
	// CUSTOMERS with their orders (to-many): all, and the PAID ones, highest NET first,
	// at most one, with their count.
	var toMany, nested []any
	for _, c := range customers {
		var all, paid []map[string]string
		for _, o := range orders {
			if o["CUST"] == c["ID"] {
				all = append(all, o)
				if o["STATUS"] == "PAID" || o["STATUS"] == "SHIPPED" {
					paid = append(paid, o)
				}
			}
		}
		ids := []any{}
		for _, o := range all {
			ids = append(ids, map[string]any{"ID": o["ID"], "STATUS": o["STATUS"]})
		}
		toMany = append(toMany, map[string]any{"ID": c["ID"], "COUNTRY": orNull(c["COUNTRY"]), "ORDERS": ids})
		net := func(o map[string]string) float64 { f, _ := strconv.ParseFloat(o["NET"], 64); return f }
		slices.SortFunc(paid, func(a, b map[string]string) int {
			switch {
			case net(a) > net(b):
				return -1
			case net(a) < net(b):
				return 1
			}
			return 0
		})
		top := []any{}
		if len(paid) > 0 {
			top = append(top, map[string]any{"ID": paid[0]["ID"], "NET": net(paid[0])})
		}
		nested = append(nested, map[string]any{"ID": c["ID"], "ORDERS@odata.count": float64(len(paid)), "ORDERS": top})
	}
	// The first customer's orders by ID descending: the nested $orderby names the key.
	var firstDesc []any
	for i := len(orders) - 1; i >= 0; i-- {
		if orders[i]["CUST"] == customers[0]["ID"] {
			firstDesc = append(firstDesc, map[string]any{"ID": orders[i]["ID"]})
		}
	}
	o1 := orders[slices.IndexFunc(orders, func(o map[string]string) bool { return o["ID"] == "O1" })]
	c1 := customer[o1["CUST"]]
	return []expandCase{
		{"to-one", "/ORDERS_entries?$select=ID&$orderby=ID&$expand=CUSTOMERS($select=NAME)",
			map[string]any{"@odata.context": ctx + "#ORDERS_entries(ID,CUSTOMERS(NAME))", "value": toOne}},
		{"to-many", "/CUSTOMERS_entries?$select=ID,COUNTRY&$orderby=ID&$expand=ORDERS($select=STATUS)",
			map[string]any{"@odata.context": ctx + "#CUSTOMERS_entries(ID,COUNTRY,ORDERS(STATUS))", "value": toMany}},
		{"nested options", "/CUSTOMERS_entries?$select=ID&$orderby=ID&$expand=ORDERS($select=ID,NET;$filter=STATUS%20in%20('PAID','SHIPPED');$orderby=NET%20desc;$top=1;$count=true)",
			map[string]any{"@odata.context": ctx + "#CUSTOMERS_entries(ID,ORDERS(ID,NET))", "value": nested}},
		{"key descending", "/CUSTOMERS_entries?$select=ID&$orderby=ID&$top=1&$expand=ORDERS($select=ID;$orderby=ID%20desc)",
			map[string]any{"@odata.context": ctx + "#CUSTOMERS_entries(ID,ORDERS(ID))", "value": []any{map[string]any{"ID": customers[0]["ID"], "ORDERS": firstDesc}}}},
		{"by key", "/ORDERS_entries('O1')?$select=ID&$expand=CUSTOMERS()",
			map[string]any{"@odata.context": ctx + "#ORDERS_entries(ID,CUSTOMERS())/$entity", "ID": "O1",
				"CUSTOMERS": map[string]any{"ID": c1["ID"], "NAME": c1["NAME"], "COUNTRY": orNull(c1["COUNTRY"])}}},
	}
}

// checkExpand makes the requests of expandCases on h, whose service root is root.
func checkExpand(t *testing.T, h http.Handler, root string) {
	t.Helper()
	for _, c := range expandCases(t, "http://example.com"+root+"/$metadata") {
		w := get(h, root+c.target)
		var got any
		if err := json.Unmarshal(w.Body.Bytes(), &got); w.Code != 200 || err != nil {
			t.Errorf("%s: %d %s", c.name, w.Code, w.Body)
			continue
		}
		if d := cmp.Diff(c.want, got); d != "" {
			t.Errorf("%s: %s (-want +got):\n%s", c.name, c.target, d)
		}
	}
}

// TestExpand: $expand of both kinds with nested options, on the memory store.
func TestExpand(t *testing.T) {
	checkExpand(t, testHandler(t), svc)
}

// TestExpandPagesThroughInLists: a page whose join values outnumber an in list (MaxIn 2
// here) is
// expanded in several lists, each paged at the Service's page size; the answer is the
// same as in one.
func TestExpandPagesThroughInLists(t *testing.T) {
	h := testHandler(t, WithMaxPageSize(1))
	w := get(h, svc+"/CUSTOMERS_entries?$select=ID&$orderby=ID&$expand=ORDERS($select=ID)&$format=application/json;odata.metadata=none")
	// One customer per page (page size 1): its orders are read one per request.
	want := `{"value":[{"ID":"C1","ORDERS":[{"ID":"O1"},{"ID":"O2"}]}],"@odata.nextLink":"http://example.com` + svc + `/CUSTOMERS_entries?$select=ID&$orderby=ID&$expand=ORDERS($select=ID)&$format=application/json;odata.metadata=none&$skip=1"}`
	if w.Code != 200 || w.Body.String() != want {
		t.Errorf("%d %s\nwant %s", w.Code, w.Body, want)
	}
	h = testHandler(t, WithLimits(query.Limits{MaxIn: 2}))
	if n := h.svc.FilterLimits().MaxIn; n != 2 {
		t.Fatalf("the Service's in lists hold %d values, want 2", n)
	}
	checkExpand(t, h, svc)
}

// nestedExpandCases are nested $expand requests on the shop fixture and their expected
// JSON values (decoded, odata.metadata=none), computed from the CSV files.
func nestedExpandCases(t testing.TB) []expandCase {
	customers, orders, events := shopCSV(t, "customers"), shopCSV(t, "orders"), shopCSV(t, "events")
	byID := func(a, b map[string]string) int { return strings.Compare(a["ID"], b["ID"]) }
	slices.SortFunc(customers, byID)
	slices.SortFunc(orders, byID)
	net := func(o map[string]string) float64 { f, _ := strconv.ParseFloat(o["NET"], 64); return f }
	// The events of an order as entities, ACTIVITY descending then position.
	eventsOf := func(order string) []any {
		var idx []int
		for i, e := range events {
			if e["ORDER_ID"] == order {
				idx = append(idx, i)
			}
		}
		slices.SortStableFunc(idx, func(a, b int) int { return -strings.Compare(events[a]["ACTIVITY"], events[b]["ACTIVITY"]) })
		out := []any{}
		for _, i := range idx {
			out = append(out, map[string]any{"ROW_NUMBER": float64(i + 1), "ACTIVITY": events[i]["ACTIVITY"]})
		}
		return out
	}
	// Customers, each with its order of the highest NET (ties: ID), each with its events
	// and their count.
	var deep []any
	for _, c := range customers {
		var mine []map[string]string
		for _, o := range orders {
			if o["CUST"] == c["ID"] && o["NET"] != "" {
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
		top := []any{}
		for _, o := range mine[:min(1, len(mine))] {
			ev := eventsOf(o["ID"])
			top = append(top, map[string]any{"ID": o["ID"], "EVENTS@odata.count": float64(len(ev)), "EVENTS": ev})
		}
		deep = append(deep, map[string]any{"ID": c["ID"], "ORDERS": top})
	}
	// Ship events, with their order, its customer, and the customer's orders that are
	// not OPEN (by ID): to-one, to-one, to-many.
	order, customer := map[string]map[string]string{}, map[string]map[string]string{}
	for _, o := range orders {
		order[o["ID"]] = o
	}
	for _, c := range customers {
		customer[c["ID"]] = c
	}
	var ships []any
	for i, e := range events {
		if e["ACTIVITY"] != "Ship" {
			continue
		}
		o := order[e["ORDER_ID"]]
		c := customer[o["CUST"]]
		notOpen := []any{}
		for _, o2 := range orders {
			if o2["CUST"] == c["ID"] && o2["STATUS"] != "" && o2["STATUS"] != "OPEN" {
				notOpen = append(notOpen, map[string]any{"ID": o2["ID"]})
			}
		}
		ships = append(ships, map[string]any{"ROW_NUMBER": float64(i + 1), "ACTIVITY": "Ship", "ORDERS": map[string]any{
			"ID": o["ID"], "STATUS": o["STATUS"], "CUSTOMERS": map[string]any{"ID": c["ID"], "COUNTRY": orNull(c["COUNTRY"]), "ORDERS": notOpen}}})
	}
	return []expandCase{
		{"to-many in to-many", "/CUSTOMERS_entries?$select=ID&$orderby=ID&$expand=ORDERS($select=ID;$orderby=NET%20desc;$top=1;$expand=EVENTS($select=ACTIVITY;$orderby=ACTIVITY%20desc;$count=true))",
			map[string]any{"value": deep}},
		{"three levels", "/EVENTS_entries?$select=ACTIVITY&$filter=ACTIVITY%20eq%20'Ship'&$expand=ORDERS($select=STATUS;$expand=CUSTOMERS($select=COUNTRY;$expand=ORDERS($select=ID;$filter=STATUS%20ne%20'OPEN')))",
			map[string]any{"value": ships}},
	}
}

// TestExpandNested: nested $expand, with nested options at every level, on the memory
// store, in one page and paged one entity and two in-list values at a time.
func TestExpandNested(t *testing.T) {
	for _, h := range []*Handler{testHandler(t), testHandler(t, WithMaxPageSize(1), WithLimits(query.Limits{MaxIn: 2}))} {
		for _, c := range nestedExpandCases(t) {
			got := getAllPages(t, h, svc+c.target+"&$format=application/json;odata.metadata=none")
			if d := cmp.Diff(c.want, map[string]any{"value": got}); d != "" {
				t.Errorf("%s: %s (-want +got):\n%s", c.name, c.target, d)
			}
		}
	}
	// The context URL lists the nested items, NAV() where nothing is selected.
	w := get(testHandler(t), svc+"/EVENTS_entries?$top=1&$select=AT&$expand=ORDERS($expand=CUSTOMERS($select=NAME),EVENTS)")
	want := `"@odata.context":"http://example.com` + svc + `/$metadata#EVENTS_entries(AT,ORDERS(CUSTOMERS(NAME),EVENTS()))"`
	if w.Code != 200 || !strings.Contains(w.Body.String(), want) {
		t.Errorf("context: %d %s\nwant %s", w.Code, w.Body, want)
	}
}

// getAllPages follows the next links of an entity set from target and returns the
// entities of all pages.
func getAllPages(t *testing.T, h http.Handler, target string) []any {
	t.Helper()
	var all []any
	for target != "" {
		w := get(h, target)
		var page struct {
			Value    []any  `json:"value"`
			NextLink string `json:"@odata.nextLink"`
		}
		if err := json.Unmarshal(w.Body.Bytes(), &page); w.Code != 200 || err != nil {
			t.Fatalf("GET %s: %d %s", target, w.Code, w.Body)
		}
		all = append(all, page.Value...)
		target = strings.TrimPrefix(page.NextLink, "http://example.com")
	}
	return all
}

// atomXEntry is an Atom entry with its expanded navigation properties.
type atomXEntry struct {
	Links []struct {
		Rel    string `xml:"rel,attr"`
		Title  string `xml:"title,attr"`
		Inline *struct {
			Feed  *atomXFeed  `xml:"feed"`
			Entry *atomXEntry `xml:"entry"`
		} `xml:"http://docs.oasis-open.org/odata/ns/metadata inline"`
	} `xml:"link"`
	Content struct {
		Properties struct {
			Props []struct {
				XMLName xml.Name
				Type    string `xml:"http://docs.oasis-open.org/odata/ns/metadata type,attr"`
				Null    string `xml:"http://docs.oasis-open.org/odata/ns/metadata null,attr"`
				Value   string `xml:",chardata"`
			} `xml:",any"`
		} `xml:"http://docs.oasis-open.org/odata/ns/metadata properties"`
	} `xml:"content"`
}

// atomXFeed is an Atom feed of atomXEntry entries.
type atomXFeed struct {
	Count   *int         `xml:"http://docs.oasis-open.org/odata/ns/metadata count"`
	Entries []atomXEntry `xml:"entry"`
}

// value returns the entry as its OData JSON value (decoded) would be: numbers as
// float64, expanded properties as objects, arrays and NAV@odata.count.
func (e *atomXEntry) value(t *testing.T) map[string]any {
	out := map[string]any{}
	for _, p := range e.Content.Properties.Props {
		var v any = p.Value
		switch {
		case p.Null == "true":
			v = nil
		case p.Type == "Int64" || p.Type == "Double":
			f, err := strconv.ParseFloat(p.Value, 64)
			if err != nil {
				t.Fatal(err)
			}
			v = f
		}
		out[p.XMLName.Local] = v
	}
	for _, l := range e.Links {
		nav, ok := strings.CutPrefix(l.Rel, "http://docs.oasis-open.org/odata/ns/related/")
		if !ok {
			continue
		}
		if l.Title != nav || l.Inline == nil {
			t.Fatalf("link %s: title %q, inline %v", l.Rel, l.Title, l.Inline)
		}
		switch {
		case l.Inline.Feed != nil:
			list := []any{}
			for i := range l.Inline.Feed.Entries {
				list = append(list, l.Inline.Feed.Entries[i].value(t))
			}
			out[nav] = list
			if c := l.Inline.Feed.Count; c != nil {
				out[nav+"@odata.count"] = float64(*c)
			}
		case l.Inline.Entry != nil:
			out[nav] = l.Inline.Entry.value(t)
		default:
			out[nav] = nil
		}
	}
	return out
}

// TestExpandAtom: $expand in Atom inlines the related entries and feeds in m:inline
// elements of the navigation links, the same entities as the CSV files say, in XML that
// xmllint reads.
func TestExpandAtom(t *testing.T) {
	h := testHandler(t)
	check := func(target string, body []byte) {
		t.Helper()
		if _, err := exec.LookPath("xmllint"); err == nil {
			f := filepath.Join(t.TempDir(), "answer.xml")
			if err := os.WriteFile(f, body, 0o600); err != nil {
				t.Fatal(err)
			}
			if out, err := exec.Command("xmllint", "--noout", "--nonet", f).CombinedOutput(); err != nil {
				t.Errorf("%s: xmllint: %v %s", target, err, out)
			}
		}
	}
	for _, c := range nestedExpandCases(t) {
		w := get(h, svc+c.target+"&$format=atom")
		if w.Code != 200 || w.Header().Get("Content-Type") != "application/atom+xml;type=feed;charset=utf-8" {
			t.Fatalf("%s: %d %s", c.target, w.Code, w.Body)
		}
		check(c.target, w.Body.Bytes())
		var f atomXFeed
		if err := xml.Unmarshal(w.Body.Bytes(), &f); err != nil {
			t.Fatal(err)
		}
		got := []any{}
		for i := range f.Entries {
			got = append(got, f.Entries[i].value(t))
		}
		if d := cmp.Diff(c.want, map[string]any{"value": got}); d != "" {
			t.Errorf("%s: %s (-want +got):\n%s", c.name, c.target, d)
		}
	}
	// An entity by key whose to-one property is null: an empty m:inline.
	w := get(h, svc+"/ORDERS_entries('O7')?$select=ID&$expand=CUSTOMERS&$format=atom")
	if w.Code != 200 || w.Header().Get("Content-Type") != "application/atom+xml;type=entry;charset=utf-8" {
		t.Fatalf("%d %s", w.Code, w.Body)
	}
	check("O7", w.Body.Bytes())
	var e atomXEntry
	if err := xml.Unmarshal(w.Body.Bytes(), &e); err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(map[string]any{"ID": "O7", "CUSTOMERS": nil}, e.value(t)); d != "" {
		t.Errorf("O7 (-want +got):\n%s", d)
	}
}

// TestExpandLevels: $levels=1 and max expand once, since no navigation property leads
// back to its own entity type; a deeper $levels is 400.
func TestExpandLevels(t *testing.T) {
	h := testHandler(t)
	plain := get(h, svc+"/CUSTOMERS_entries?$expand=ORDERS($select=ID)")
	for _, v := range []string{"1", "max"} {
		w := get(h, svc+"/CUSTOMERS_entries?$expand=ORDERS($select=ID;$levels="+v+")")
		if w.Code != 200 || w.Body.String() != plain.Body.String() {
			t.Errorf("$levels=%s: %d %s\nwant %s", v, w.Code, w.Body, plain.Body)
		}
	}
}

// TestExpandErrors: what $expand does not serve is 501 ODATA_OPTION_NOT_SUPPORTED with the
// OData and problem body; a mistake is 400.
func TestExpandErrors(t *testing.T) {
	h := testHandler(t)
	for _, c := range []struct {
		target string
		status int
		code   string
		msg    string
	}{
		{"/CUSTOMERS_entries?$expand=ORDERS($search=x)", 501, CodeOptionNotSupported, "$expand=ORDERS: the nested option $search is not supported; nested $select, $filter, $orderby, $top, $skip, $count, $expand and $levels are"},
		{"/CUSTOMERS_entries?$expand=ORDERS($expand=EVENTS($compute=1%20as%20X))", 501, CodeOptionNotSupported, "$expand=EVENTS: the nested option $compute is not supported; nested $select, $filter, $orderby, $top, $skip, $count, $expand and $levels are"},
		{"/CUSTOMERS_entries?$expand=*", 501, CodeOptionNotSupported, `$expand item "*" is not supported: name a navigation property of the entity type (nest $expand inside it for the next level)`},
		{"/ORDERS_entries?$expand=CUSTOMERS/ORDERS", 501, CodeOptionNotSupported, `$expand item "CUSTOMERS/ORDERS" is not supported: name a navigation property of the entity type (nest $expand inside it for the next level)`},
		{"/ORDERS_entries?$expand=CUSTOMERS($expand=ORDERS($expand=CUSTOMERS($expand=ORDERS($expand=CUSTOMERS))))", 400, problem.CodeConstraint, "$expand nests more than 4 levels deep"},
		{"/ORDERS_entries?$expand=CUSTOMERS($expand=NOPE)", 400, query.CodeFieldNotFound, "$expand: entity type CUSTOMERS has no navigation property NOPE; it has ORDERS"},
		{"/ORDERS_entries?$expand=CUSTOMERS($expand=ORDERS($top=x))", 400, problem.CodeParameterMismatch, "$top is \"x\": want a non-negative integer"},
		{"/ORDERS_entries?$expand=CUSTOMERS&$levels=2", 400, problem.CodeParameterIllegal, "$levels is an option of an $expand item: $expand=NAV($levels=1)"},
		{"/ORDERS_entries?$expand=CUSTOMERS($levels=2)", 400, problem.CodeParameterIllegal, "$expand=CUSTOMERS($levels=2): CUSTOMERS leads to entity type CUSTOMERS, not back to ORDERS, so it cannot recurse; $levels=1 or max expands it once"},
		{"/ORDERS_entries?$expand=CUSTOMERS($levels=0)", 400, problem.CodeParameterMismatch, `$expand=CUSTOMERS: $levels is "0": want a positive integer or max`},
		{"/ORDERS_entries?$expand=CUSTOMERS($levels=MAX)", 400, problem.CodeParameterMismatch, `$expand=CUSTOMERS: $levels is "MAX": want a positive integer or max`},
		{"/ORDERS_entries?$expand=CUSTOMERS($levels=1;$levels=1)", 400, CodeOptionRepeated, "$expand=CUSTOMERS: $levels is given more than once"},
		{"/ORDERS_entries?$expand=CUSTOMERS&$apply=groupby((STATUS))", 501, CodeOptionNotSupported, "$expand with $apply is not supported"},
		{"/ORDERS_entries?$expand=NOPE", 400, query.CodeFieldNotFound, "$expand: entity type ORDERS has no navigation property NOPE; it has CUSTOMERS, EVENTS"},
		{"/ORDERS_entries?$expand=CUSTOMERS($top=1)", 400, problem.CodeParameterIllegal, "$expand=CUSTOMERS: CUSTOMERS is single-valued; it takes nested $select, $filter and $expand only"},
	} {
		w := get(h, svc+c.target)
		var body struct {
			Status    int
			ErrorCode string
			Error     struct{ Code, Message string }
		}
		_ = json.Unmarshal(w.Body.Bytes(), &body)
		if w.Code != c.status || body.ErrorCode != c.code || body.Error.Code != c.code || body.Error.Message != c.msg || !strings.HasPrefix(w.Header().Get("Content-Type"), problem.ContentType) {
			t.Errorf("%s: %d %s %s\nwant %d %s %s", c.target, w.Code, w.Header().Get("Content-Type"), w.Body, c.status, c.code, c.msg)
		}
	}
}

// TestExpandBound: the related entities of one answer, all properties and levels
// together, are bounded by WithMaxExpandedEntities; beyond it the answer is a 400 saying
// what to ask instead.
func TestExpandBound(t *testing.T) {
	// The shop has 6 orders with a customer and 9 events: CUSTOMERS with ORDERS brings 6
	// entities, with their EVENTS 15.
	const target = "/CUSTOMERS_entries?$expand=ORDERS($expand=EVENTS)&$format=application/json;odata.metadata=none"
	if w := get(testHandler(t, WithMaxExpandedEntities(15)), svc+target); w.Code != 200 {
		t.Errorf("at the bound: %d %s", w.Code, w.Body)
	}
	for _, n := range []int{7, 14} {
		w := get(testHandler(t, WithMaxExpandedEntities(n)), svc+target)
		msg := "$expand brings more than " + strconv.Itoa(n) + " related entities into one answer; ask for fewer entities per page (Prefer: odata.maxpagesize=N or $top), narrow the nested $filter, or expand fewer properties"
		want := `{"title":"Bad Request","status":400,"detail":` + strconv.Quote(msg) + `,"errorCode":"GENERAL_CONSTRAINT_VIOLATION","type":"urn:kmkit:problem:GENERAL_CONSTRAINT_VIOLATION","error":{"code":"GENERAL_CONSTRAINT_VIOLATION","message":` + strconv.Quote(msg) + `,"target":"$expand","details":[]}}`
		if w.Code != 400 || w.Body.String() != want {
			t.Errorf("bound %d: %d %s\nwant %s", n, w.Code, w.Body, want)
		}
	}
	// Fewer entities per page fit: C1 brings 7 (2 orders, 5 events), the others fewer.
	w := get(testHandler(t, WithMaxExpandedEntities(7)), svc+target, "Prefer", "odata.maxpagesize=1")
	if w.Code != 200 {
		t.Errorf("one customer per page: %d %s", w.Code, w.Body)
	}
}

// countingStore counts the plans a store executes.
type countingStore struct {
	km.Store
	n atomic.Int32
}

func (s *countingStore) Query(ctx context.Context, p *km.Plan) (*query.Result, error) {
	s.n.Add(1)
	return s.Store.Query(ctx, p)
}

// TestExpandRequests: a page of entities costs one store query for itself and one per
// expanded navigation property per level, whatever its number of entities.
func TestExpandRequests(t *testing.T) {
	s := &countingStore{Store: testStore(t)}
	h := NewHandler(s)
	w := get(h, svc+"/ORDERS_entries?$expand=CUSTOMERS,EVENTS")
	var page struct{ Value []any }
	if err := json.Unmarshal(w.Body.Bytes(), &page); w.Code != 200 || err != nil || len(page.Value) != len(shopCSV(t, "orders")) {
		t.Fatalf("%d %s", w.Code, w.Body)
	}
	if n := s.n.Load(); n != 3 {
		t.Errorf("%d store queries for %d orders with two expanded properties, want 3", n, len(page.Value))
	}
	s.n.Store(0)
	w = get(h, svc+"/CUSTOMERS_entries?$expand=ORDERS($expand=EVENTS,CUSTOMERS($expand=ORDERS))")
	if err := json.Unmarshal(w.Body.Bytes(), &page); w.Code != 200 || err != nil || len(page.Value) != len(shopCSV(t, "customers")) {
		t.Fatalf("%d %s", w.Code, w.Body)
	}
	if n := s.n.Load(); n != 5 {
		t.Errorf("%d store queries for %d customers with four expanded properties on three levels, want 5", n, len(page.Value))
	}
}

// TestExpandInBatch: a GET with $expand in a JSON $batch answers what it answers alone.
func TestExpandInBatch(t *testing.T) {
	h := testHandler(t)
	target := "ORDERS_entries?$select=ID&$expand=CUSTOMERS($select=COUNTRY)"
	alone := get(h, svc+"/"+target)
	w := post(h, svc+"/$batch", "application/json", `{"requests":[{"id":"1","method":"GET","url":`+strconv.Quote(target)+`}]}`)
	var got struct {
		Responses []struct {
			Status int
			Body   json.RawMessage
		}
	}
	if err := json.Unmarshal(w.Body.Bytes(), &got); w.Code != 200 || err != nil || len(got.Responses) != 1 {
		t.Fatalf("%d %s", w.Code, w.Body)
	}
	if r := got.Responses[0]; r.Status != 200 || string(r.Body) != alone.Body.String() {
		t.Errorf("in $batch: %d %s\nalone: %s", r.Status, r.Body, alone.Body)
	}
}

// TestExpandOneParent: the to-many property of a single entity has its nested $skip,
// $top and $count asked of the store, so that a bound smaller than the related set
// still serves a few of its rows. C1 has the orders O1 (NET 100.5) and O2 (250).
func TestExpandOneParent(t *testing.T) {
	h := testHandler(t, WithMaxExpandedEntities(1))
	for _, c := range []struct{ target, want string }{
		{"/CUSTOMERS_entries('C1')?$select=ID&$expand=ORDERS($select=ID;$orderby=NET%20desc;$skip=1;$top=1;$count=true)",
			`{"ID":"C1","ORDERS@odata.count":2,"ORDERS":[{"ID":"O1"}]}`},
		{"/CUSTOMERS_entries('C1')?$select=ID&$expand=ORDERS($select=ID;$top=0;$count=true)",
			`{"ID":"C1","ORDERS@odata.count":2,"ORDERS":[]}`},
		{"/CUSTOMERS_entries('C1')?$select=ID&$expand=ORDERS($select=ID;$skip=1)",
			`{"ID":"C1","ORDERS":[{"ID":"O2"}]}`},
		{"/CUSTOMERS_entries?$select=ID&$top=1&$expand=ORDERS($select=ID;$orderby=NET%20desc;$top=1)",
			`{"value":[{"ID":"C1","ORDERS":[{"ID":"O2"}]}]}`},
	} {
		w := get(h, svc+c.target+"&$format=application/json;odata.metadata=none")
		if w.Code != 200 || w.Body.String() != c.want {
			t.Errorf("%s: %d %s\nwant %s", c.target, w.Code, w.Body, c.want)
		}
	}
	// Without $top, both orders are read: beyond the bound.
	if w := get(h, svc+"/CUSTOMERS_entries('C1')?$expand=ORDERS"); w.Code != 400 {
		t.Errorf("C1 with both orders under a bound of 1: %d %s", w.Code, w.Body)
	}
}

// TestExpandJoinsOnDates: a relationship on date fields joins each row with the rows of
// its own day (join values are compared by the member their type uses).
func TestExpandJoinsOnDates(t *testing.T) {
	s := memory.New().KM()
	err := s.Import(context.Background(), fstest.MapFS{
		"models/cal.yaml": {Data: []byte(`id: cal
name: Calendar
published: 2026-01-15T10:00:00Z
records:
  - id: DAYS
    name: Days
    key: DAY
    fields:
      - {id: DAY, name: Day, type: date}
      - {id: NAME, name: Name, type: string}
  - id: SHIFTS
    name: Shifts
    key: ID
    fields:
      - {id: ID, name: Shift, type: string}
      - {id: DAY, name: Day, type: date}
relationships:
  - {from: SHIFTS.DAY, to: DAYS.DAY}
`)},
		"data/DAYS.csv":   {Data: []byte("DAY,NAME\n2025-01-01,New Year\n2025-01-02,Second\n")},
		"data/SHIFTS.csv": {Data: []byte("ID,DAY\nS1,2025-01-01\nS2,2025-01-02\nS3,2025-01-02\nS4,\n")},
	})
	if err != nil {
		t.Fatal(err)
	}
	h := NewHandler(s)
	w := get(h, BasePath+"/cal.svc/DAYS_entries?$select=DAY&$expand=SHIFTS($select=ID)&$format=application/json;odata.metadata=none")
	want := `{"value":[{"DAY":"2025-01-01","SHIFTS":[{"ID":"S1"}]},{"DAY":"2025-01-02","SHIFTS":[{"ID":"S2"},{"ID":"S3"}]}]}`
	if w.Code != 200 || w.Body.String() != want {
		t.Errorf("%d %s\nwant %s", w.Code, w.Body, want)
	}
	w = get(h, BasePath+"/cal.svc/SHIFTS_entries?$select=ID&$expand=DAYS($select=NAME)&$format=application/json;odata.metadata=none")
	want = `{"value":[{"ID":"S1","DAYS":{"DAY":"2025-01-01","NAME":"New Year"}},{"ID":"S2","DAYS":{"DAY":"2025-01-02","NAME":"Second"}},{"ID":"S3","DAYS":{"DAY":"2025-01-02","NAME":"Second"}},{"ID":"S4","DAYS":null}]}`
	if w.Code != 200 || w.Body.String() != want {
		t.Errorf("%d %s\nwant %s", w.Code, w.Body, want)
	}
}
