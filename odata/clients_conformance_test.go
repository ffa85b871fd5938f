package odata

import (
	"context"
	"encoding/csv"
	"math/big"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"testing/fstest"

	"github.com/google/go-cmp/cmp"

	"github.com/kmkit/kmkit/internal/nodetools"
	"github.com/kmkit/kmkit/storage/memory"
)

// Real clients of issue 16 against the handler on loopback: @odata/client reading an
// error message, Apache Olingo odatajs following @odata.nextLink, SAP CAP (@sap/cds)
// addressing an entity by key and sending a long GET in a $batch (SAP Cloud SDK is in
// sapsdk_conformance_test.go). Their npm packages are
// pinned in conformance/package-lock.json; the tests skip without them, unless
// KMKIT_ODATA_TOOLS is set (CI), and then fail.

func clientTools(t *testing.T) string {
	t.Helper()
	return nodetools.Dir(t, "KMKIT_ODATA_TOOLS", "conformance", []string{"@odata/client", "odatajs", "@sap/cds"})
}

// @odata/client's EntitySet.query throws the server's message (error.message of the
// OData error body) instead of returning undefined.
func TestClientReadsErrorMessage(t *testing.T) {
	tools := clientTools(t)
	srv := serveShop(t)
	var got struct{ Message *string }
	probe(t, tools, &got, "client-error", srv.URL+BasePath+"/shop.svc/", "ORDERS_entries", "NET eq 'x'")
	want := "$filter: position 8: NET is a float and cannot be compared with the text 'x'; write a number such as 4.2"
	if got.Message == nil || *got.Message != want {
		t.Errorf("@odata/client error message %v, want %q", got.Message, want)
	}
}

// odatajs follows the next links of pages of 4 (serveShop) to the end and gets every
// event of testdata/shop/data/events.csv once, in file order.
func TestOdatajsFollowsNextLinks(t *testing.T) {
	tools := clientTools(t)
	srv := serveShop(t)
	f, err := os.Open("testdata/shop/data/events.csv")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	records, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	var want []map[string]any
	for i, rec := range records[1:] {
		want = append(want, map[string]any{"ROW_NUMBER": float64(i + 1), "ORDER_ID": rec[0], "ACTIVITY": rec[1], "AT": rec[2]})
	}
	var got struct {
		Pages int
		Rows  []map[string]any
	}
	probe(t, tools, &got, "odatajs-pages", srv.URL+BasePath+"/shop.svc/EVENTS_entries")
	if wantPages := (len(want) + 3) / 4; got.Pages != wantPages {
		t.Errorf("odatajs read %d pages, want %d", got.Pages, wantPages)
	}
	if d := cmp.Diff(want, got.Rows); d != "" {
		t.Errorf("odatajs rows (-want +got):\n%s", d)
	}
}

// The CDS model of the service as `cds import` writes it for the EDMX of testdata/shop
// (the orders only).
const shopCDS = `@cds.external: true
service shop {
  @cds.external: true
  @cds.persistence.skip: true
  entity ORDERS_entries {
    key ID : LargeString not null;
    CUST : LargeString;
    DAY : Date;
    CREATED : Timestamp;
    SEEN : Timestamp;
    SLOT : Time;
    STATUS : LargeString;
    NET : Double;
    LATE : Int64;
    EXPRESS : Boolean;
    CUSTOMERS : Association to CUSTOMERS_entries on CUSTOMERS.ID = CUST;
    EVENTS : Association to many EVENTS_entries on EVENTS.ORDER_ID = ID;
  }
  @cds.external: true
  @cds.persistence.skip: true
  entity CUSTOMERS_entries {
    key ID : LargeString not null;
    NAME : LargeString;
    COUNTRY : LargeString;
  }
  @cds.external: true
  @cds.persistence.skip: true
  entity EVENTS_entries {
    key ROW_NUMBER : Int64 not null;
    ORDER_ID : LargeString;
    ACTIVITY : LargeString;
    AT : Timestamp;
  }
}
`

// capService checks that node can run @sap/cds, serves the test KM recording the method
// and path of each request, and writes shopCDS into a directory. It returns the tools
// directory, the model directory, the service root and the requests so far.
func capService(t *testing.T) (tools, dir, root string, requests func() []string) {
	t.Helper()
	tools = clientTools(t)
	// @sap/cds 9 needs node 20 or later (Debian 12's nodejs is 18).
	var v struct{ Major int }
	probe(t, tools, &v, "node-version")
	if v.Major < 20 {
		if os.Getenv("KMKIT_ODATA_TOOLS") != "" {
			t.Fatalf("node %d: @sap/cds 9.9.3 needs node 20 or later", v.Major)
		}
		t.Skipf("node %d: @sap/cds 9.9.3 needs node 20 or later", v.Major)
	}
	var paths []string
	var mu sync.Mutex
	h := testHandler(t)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		paths = append(paths, r.Method+" "+r.URL.Path)
		mu.Unlock()
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	dir = t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "shop.cds"), []byte(shopCDS), 0o644); err != nil {
		t.Fatal(err)
	}
	return tools, dir, srv.URL + BasePath + "/shop.svc/", func() []string {
		mu.Lock()
		defer mu.Unlock()
		return slices.Clone(paths)
	}
}

// CAP reads an entity by key (SELECT.one.from(entity, key): ORDERS_entries('O2')) and a
// query whose "in" list of 120 ids makes a GET longer than 1028 characters, which CAP
// sends inside a $batch. The expected rows are those of testdata/shop/data/orders.csv.
func TestCAPRemoteService(t *testing.T) {
	tools, dir, root, requests := capService(t)
	var got struct {
		One  map[string]any
		Rows []map[string]any
	}
	probe(t, tools, &got, "cds", dir, root, "O2", "120")
	if d := cmp.Diff(map[string]any{"ID": "O2", "STATUS": "PAID", "NET": 250.0}, got.One); d != "" {
		t.Errorf("CAP SELECT.one by key (-want +got):\n%s", d)
	}
	var ids []string
	for _, r := range got.Rows {
		id, _ := r["ID"].(string)
		ids = append(ids, id)
	}
	if d := cmp.Diff([]string{"O1", "O2", "O3", "O4", "O5", "O7"}, ids); d != "" {
		t.Errorf("CAP query with a 120-value in list (-want +got):\n%s", d)
	}
	// What CAP sent: the key path, and the long query in a batch.
	paths := requests()
	for _, want := range []string{"GET " + svc + "/ORDERS_entries('O2')", "POST " + svc + "/$batch"} {
		if !slices.Contains(paths, want) {
			t.Errorf("CAP sent %q, not %q", paths, want)
		}
	}
}

// CAP's standard functions in a where clause (CAP writes them into $filter as OData's
// tolower and year), alone and next to a 120-value "in" list (a $batch). The expected
// ids are read off testdata/shop/data/orders.csv by hand.
func TestCAPFunctions(t *testing.T) {
	tools, dir, root, requests := capService(t)
	tests := []struct {
		where string
		in    int
		want  []string
	}{
		{"tolower(STATUS) = 'open'", 0, []string{"O1", "O4"}},
		{"year(DAY) = 2025 and NET > 100", 0, []string{"O1", "O2", "O4"}},
		{"tolower(STATUS) = 'paid'", 120, []string{"O2", "O3"}},
		// Navigation: CAP writes a path through an association as
		// $filter=CUSTOMERS/COUNTRY eq 'DE' and exists as a lambda,
		// $filter=EVENTS/any(d:d/ACTIVITY eq 'Ship'). O1, O2 (C1) and O5 (C4) are the orders of
		// customers in DE; O1, O2 and O5 have a Ship event.
		{"CUSTOMERS.COUNTRY = 'DE'", 0, []string{"O1", "O2", "O5"}},
		{"exists EVENTS[ACTIVITY = 'Ship']", 0, []string{"O1", "O2", "O5"}},
		{"exists EVENTS[ACTIVITY = 'Ship' and AT >= '2025-02-01T00:00:00Z']", 0, []string{"O2", "O5"}},
		// not exists is not EVENTS/any(...), and exists may stand under or: O'6, O3, O4 and
		// O7 have no Ship event (O7 none at all); O2 alone has a Pay event, O1 and O4 are
		// OPEN (ids in byte order, as $orderby=ID sorts them).
		{"not exists EVENTS[ACTIVITY = 'Ship']", 0, []string{"O'6", "O3", "O4", "O7"}},
		{"STATUS = 'OPEN' or exists EVENTS[ACTIVITY = 'Pay']", 0, []string{"O1", "O2", "O4"}},
	}
	for _, tt := range tests {
		var got struct {
			Rows  []struct{ ID string }
			Error *string
		}
		probe(t, tools, &got, "cds-where", dir, root, tt.where, strconv.Itoa(tt.in))
		if got.Error != nil {
			t.Errorf("CAP where %s (in list of %d): %s", tt.where, tt.in, *got.Error)
			continue
		}
		var ids []string
		for _, r := range got.Rows {
			ids = append(ids, r.ID)
		}
		if d := cmp.Diff(tt.want, ids); d != "" {
			t.Errorf("CAP where %s (in list of %d) (-want +got):\n%s", tt.where, tt.in, d)
		}
	}
	if paths := requests(); !slices.Contains(paths, "POST "+svc+"/$batch") {
		t.Errorf("CAP sent %q, no $batch", paths)
	}
}

// @odata/client queries the keyless EVENTS with a filter and a sort, then retrieves each
// entity by its generated key (EVENTS_entries(5) and EVENTS_entries(ROW_NUMBER=5)) and
// gets the same entity; the key is the row's position in testdata/shop/data/events.csv.
func TestClientRetrievesKeylessEntity(t *testing.T) {
	tools := clientTools(t)
	srv := serveShop(t)
	root := srv.URL + BasePath + "/shop.svc/"
	var page struct {
		Count int
		Rows  []map[string]any
	}
	probe(t, tools, &page, "client", root, "EVENTS_entries", "ACTIVITY ne 'Create'", "AT desc", "3")
	rows := eventsCSV(t)
	var keys []string
	for _, r := range page.Rows {
		k, _ := r["ROW_NUMBER"].(float64)
		if k < 1 || int(k) > len(rows) || rows[int(k)-1][1] != r["ACTIVITY"] || rows[int(k)-1][0] != r["ORDER_ID"] {
			t.Errorf("entity %v: not row %v of events.csv", r, k)
		}
		keys = append(keys, strconv.Itoa(int(k)))
	}
	if page.Count != 4 || !slices.Equal(keys, []string{"9", "5", "4"}) {
		t.Fatalf("@odata/client query: count %d keys %v, want 4 and [9 5 4]", page.Count, keys)
	}
	var got struct {
		ByKey, ByName []map[string]any
		Missing       *string
	}
	probe(t, tools, &got, append([]string{"client-key", root, "EVENTS_entries", "ROW_NUMBER"}, keys...)...)
	for i, want := range page.Rows {
		for _, one := range []map[string]any{got.ByKey[i], got.ByName[i]} {
			for _, p := range []string{"ROW_NUMBER", "ORDER_ID", "ACTIVITY", "AT"} {
				if one[p] != want[p] {
					t.Errorf("retrieve(%s): %s %v, the query's entity has %v", keys[i], p, one[p], want[p])
				}
			}
		}
	}
	if want := "entity set EVENTS_entries has no entity with the key (1000000)"; got.Missing == nil || *got.Missing != want {
		t.Errorf("retrieve(1000000) threw %v, want %q", got.Missing, want)
	}
}

// @odata/client sends $expand (ORDERS_entries?$expand=CUSTOMERS&$orderby=ID desc) and
// reads each order of the first page with its customer, or null (O7 has none), as
// testdata/shop/data says.
func TestClientExpands(t *testing.T) {
	tools := clientTools(t)
	srv := serveShop(t)
	var got struct{ Rows []map[string]any }
	probe(t, tools, &got, "client-expand", srv.URL+BasePath+"/shop.svc/", "ORDERS_entries", "CUSTOMERS")
	customers := map[string]map[string]any{}
	for _, c := range shopCSV(t, "customers") {
		customers[c["ID"]] = map[string]any{"ID": c["ID"], "NAME": c["NAME"], "COUNTRY": orNull(c["COUNTRY"])}
	}
	orders := shopCSV(t, "orders")
	slices.SortFunc(orders, func(a, b map[string]string) int { return strings.Compare(b["ID"], a["ID"]) })
	var want, have []any
	for _, o := range orders {
		var c any
		if cu, ok := customers[o["CUST"]]; ok {
			c = cu
		}
		want = append(want, []any{o["ID"], c})
	}
	for _, r := range got.Rows {
		have = append(have, []any{r["ID"], r["CUSTOMERS"]})
	}
	if len(have) < 2 {
		t.Fatalf("@odata/client $expand=CUSTOMERS: %d rows, want a page holding O7 (no customer) and O5", len(have))
	}
	want = want[:min(len(want), len(have))]
	if d := cmp.Diff(want, have); d != "" {
		t.Errorf("@odata/client $expand=CUSTOMERS (-want +got):\n%s", d)
	}
}

// @odata/client sends a nested $expand
// (CUSTOMERS_entries?$expand=ORDERS($select=ID;$expand=EVENTS($select=ACTIVITY))&$orderby=ID
// desc) and reads each customer with its orders, each with its events, as
// testdata/shop/data says.
func TestClientExpandsNested(t *testing.T) {
	tools := clientTools(t)
	srv := serveShop(t)
	var got struct{ Rows []map[string]any }
	probe(t, tools, &got, "client-expand", srv.URL+BasePath+"/shop.svc/", "CUSTOMERS_entries", "ORDERS($select=ID;$expand=EVENTS($select=ACTIVITY))")
	customers, orders, events := shopCSV(t, "customers"), shopCSV(t, "orders"), shopCSV(t, "events")
	slices.SortFunc(customers, func(a, b map[string]string) int { return strings.Compare(b["ID"], a["ID"]) })
	slices.SortFunc(orders, func(a, b map[string]string) int { return strings.Compare(a["ID"], b["ID"]) })
	var want []any
	for _, c := range customers {
		list := []any{}
		for _, o := range orders {
			if o["CUST"] != c["ID"] {
				continue
			}
			evs := []any{}
			for i, e := range events {
				if e["ORDER_ID"] == o["ID"] {
					evs = append(evs, map[string]any{"ROW_NUMBER": float64(i + 1), "ACTIVITY": e["ACTIVITY"]})
				}
			}
			list = append(list, map[string]any{"ID": o["ID"], "EVENTS": evs})
		}
		want = append(want, map[string]any{"ID": c["ID"], "NAME": c["NAME"], "COUNTRY": orNull(c["COUNTRY"]), "ORDERS": list})
	}
	have := make([]any, len(got.Rows))
	for i, r := range got.Rows {
		have[i] = r
	}
	if len(have) < 2 {
		t.Fatalf("@odata/client nested $expand: %d rows, want a page of customers", len(have))
	}
	want = want[:min(len(want), len(have))]
	if d := cmp.Diff(want, have); d != "" {
		t.Errorf("@odata/client nested $expand (-want +got):\n%s", d)
	}
}

// bigIntData is a KM whose key and integer field hold values that a JavaScript number
// cannot: 2^53 + 1 and the ends of int64.
var bigIntData = fstest.MapFS{
	"models/big.yaml": {Data: []byte(`id: big
name: Big
records:
  - id: B
    name: B
    source: b
    key: K
    fields:
      - {id: K, name: K, type: integer}
      - {id: N, name: N, type: integer}
kpis:
  - {id: S, name: Sum of N, expr: sum(B.N)}
`)},
	"data/b.csv": {Data: []byte("K,N\n9007199254740993,9007199254740992\n-9223372036854775808,1\n9223372036854775807,-9223372036854775807\n")},
}

// Apache Olingo odatajs reads Int64 values beyond 2^53 exactly when it asks for them as
// strings (IEEE754Compatible=true in Accept, OData JSON Format 4.01, section 3.2): keys,
// integer properties, an exact sum and @odata.count, across pages of 2 (the next link
// keeps the Accept header's choice, as the client resends it). Without the parameter a
// JavaScript client reads 2^53 + 1 as the number 2^53: its JSON.parse rounds.
func TestOdatajsReadsInt64Exactly(t *testing.T) {
	tools := clientTools(t)
	s := memory.New().KM()
	if err := s.Import(context.Background(), bigIntData); err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.Handle(BasePath+"/", NewHandler(s, WithMaxPageSize(2)))
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	root := srv.URL + BasePath + "/big.svc/"
	type answer struct {
		Pages int
		Rows  []map[string]any
		Count any
	}
	var got answer
	probe(t, tools, &got, "odatajs-pages", root+"B_entries?$count=true", "application/json;IEEE754Compatible=true")
	want := answer{Pages: 2, Count: "3", Rows: []map[string]any{
		{"K": "9007199254740993", "N": "9007199254740992"},
		{"K": "-9223372036854775808", "N": "1"},
		{"K": "9223372036854775807", "N": "-9223372036854775807"},
	}}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("odatajs with IEEE754Compatible=true (-want +got):\n%s", d)
	}
	// The sum of N, exact (math/big over the CSV's N column): an Int64 string too.
	sum := new(big.Int)
	for _, line := range strings.Split(strings.TrimSpace(string(bigIntData["data/b.csv"].Data)), "\n")[1:] {
		n, ok := new(big.Int).SetString(strings.Split(line, ",")[1], 10)
		if !ok {
			t.Fatalf("N in %q", line)
		}
		sum.Add(sum, n)
	}
	got = answer{}
	probe(t, tools, &got, "odatajs-pages", root+"B_entries?$apply="+url.PathEscape("aggregate(S)"), "application/json;IEEE754Compatible=true")
	if want := []map[string]any{{"S": sum.String()}}; !cmp.Equal(got.Rows, want) {
		t.Errorf("odatajs with IEEE754Compatible=true reads the sum %v, want %v", got.Rows, want)
	}
}
