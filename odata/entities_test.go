package odata

import (
	"encoding/json"
	"encoding/xml"
	"math"
	"net/url"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/kmkit/kmkit/query"
)

const ctxURL = "http://example.com/intelligence/api/odata/shop.svc/$metadata#"

func TestEntitySetJSON(t *testing.T) {
	const jsonCT = "application/json;odata.metadata=minimal"
	tests := []struct {
		name, target string
		header       []string
		want         response
	}{
		{"select and orderby", svc + "/ORDERS_entries?$select=NET,STATUS&$orderby=NET%20desc&$top=3", nil, response{200, jsonCT,
			`{"@odata.context":"` + ctxURL + `ORDERS_entries(NET,STATUS)","value":[` +
				`{"ID":"O4","NET":1200,"STATUS":"OPEN"},{"ID":"O2","NET":250,"STATUS":"PAID"},{"ID":"O1","NET":100.5,"STATUS":"OPEN"}]}`}},
		{"orderby a property not selected", svc + "/ORDERS_entries?$select=STATUS&$orderby=NET%20desc&$top=2", nil, response{200, jsonCT,
			`{"@odata.context":"` + ctxURL + `ORDERS_entries(STATUS)","value":[{"ID":"O4","STATUS":"OPEN"},{"ID":"O2","STATUS":"PAID"}]}`}},
		{"all properties and nulls", svc + "/ORDERS_entries?$filter=ID%20eq%20'O3'%20or%20ID%20eq%20'O7'", nil, response{200, jsonCT,
			`{"@odata.context":"` + ctxURL + `ORDERS_entries","value":[` +
				`{"ID":"O3","CUST":"C2","DAY":"2025-02-11","CREATED":"2025-02-11T12:00:00Z","SEEN":null,"SLOT":"14:15:30.5","STATUS":"PAID","NET":80,"LATE":0,"EXPRESS":false},` +
				`{"ID":"O7","CUST":null,"DAY":null,"CREATED":null,"SEEN":null,"SLOT":null,"STATUS":null,"NET":null,"LATE":null,"EXPRESS":null}]}`}},
		{"count, skip and nulls last", svc + "/ORDERS_entries?$select=LATE&$orderby=LATE&$skip=2&$count=true", nil, response{200, jsonCT,
			`{"@odata.context":"` + ctxURL + `ORDERS_entries(LATE)","@odata.count":7,"value":[` +
				`{"ID":"O2","LATE":2},{"ID":"O5","LATE":5},{"ID":"O1","LATE":null},{"ID":"O4","LATE":null},{"ID":"O7","LATE":null}]}`}},
		{"count with top 0", svc + "/ORDERS_entries?$top=0&$count=true&filterid=PAID", nil, response{200, jsonCT,
			`{"@odata.context":"` + ctxURL + `ORDERS_entries","@odata.count":2,"value":[]}`}},
		{"skip beyond the end", svc + "/ORDERS_entries?$skip=100&$count=true&$select=ID", nil, response{200, jsonCT,
			`{"@odata.context":"` + ctxURL + `ORDERS_entries(ID)","@odata.count":7,"value":[]}`}},
		// GERMANY is CUSTOMERS.COUNTRY eq 'DE': customers C1 and C4 (customers.csv), whose
		// orders are O1, O2 and O5 (orders.csv).
		{"filterid over a parent record", svc + "/ORDERS_entries?filterid=GERMANY&$select=ID", nil, response{200, jsonCT,
			`{"@odata.context":"` + ctxURL + `ORDERS_entries(ID)","value":[{"ID":"O1"},{"ID":"O2"},{"ID":"O5"}]}`}},
		{"$filter on a parent record", svc + "/ORDERS_entries?$filter=CUSTOMERS.COUNTRY%20eq%20'DE'&$select=ID", nil, response{200, jsonCT,
			`{"@odata.context":"` + ctxURL + `ORDERS_entries(ID)","value":[{"ID":"O1"},{"ID":"O2"},{"ID":"O5"}]}`}},
		{"filterid and filter", svc + "/ORDERS_entries?filterid=PAID&filterid=LATE&$filter=EXPRESS%20eq%20true&$select=ID", nil, response{200, jsonCT,
			`{"@odata.context":"` + ctxURL + `ORDERS_entries(ID)","value":[{"ID":"O2"}]}`}},
		{"offset with an unescaped plus", svc + "/ORDERS_entries?$filter=CREATED%20lt%202025-02-10T09:31:00+01:00&$select=ID&$orderby=CREATED%20desc", nil, response{200, jsonCT,
			`{"@odata.context":"` + ctxURL + `ORDERS_entries(ID)","value":[{"ID":"O2"},{"ID":"O1"}]}`}},
		{"semicolon", svc + "/CUSTOMERS_entries?$filter=NAME%20eq%20'Smith;%20Jones'", nil, response{200, jsonCT,
			`{"@odata.context":"` + ctxURL + `CUSTOMERS_entries","value":[{"ID":"C3","NAME":"Smith; Jones","COUNTRY":null}]}`}},
		{"escaping", svc + "/CUSTOMERS_entries?$filter=ID%20in%20('C1','C2')&$select=NAME", nil, response{200, jsonCT,
			`{"@odata.context":"` + ctxURL + `CUSTOMERS_entries(NAME)","value":[{"ID":"C1","NAME":"Müller & Söhne <GmbH>"},{"ID":"C2","NAME":"O'Brien \"Ltd\""}]}`}},
		{"generated key", svc + "/EVENTS_entries?$filter=ACTIVITY%20eq%20'Ship'&$select=ORDER_ID&$skip=1", nil, response{200, jsonCT,
			`{"@odata.context":"` + ctxURL + `EVENTS_entries(ORDER_ID)","value":[{"ROW_NUMBER":2,"ORDER_ID":"O2"},{"ROW_NUMBER":3,"ORDER_ID":"O5"}]}`}},
		{"only the generated key", svc + "/EVENTS_entries?$select=ROW_NUMBER&$top=2", nil, response{200, jsonCT,
			`{"@odata.context":"` + ctxURL + `EVENTS_entries(ROW_NUMBER)","value":[{"ROW_NUMBER":1},{"ROW_NUMBER":2}]}`}},
		{"IEEE754Compatible", svc + "/ORDERS_entries?$select=LATE&$filter=LATE%20ge%202&$format=application/json;IEEE754Compatible=true", nil,
			response{200, "application/json;odata.metadata=minimal;IEEE754Compatible=true",
				`{"@odata.context":"` + ctxURL + `ORDERS_entries(LATE)","value":[{"ID":"O2","LATE":"2"},{"ID":"O5","LATE":"5"}]}`}},
		{"IEEE754Compatible in Accept", svc + "/EVENTS_entries?$top=1&$select=ACTIVITY", []string{"Accept", "application/json;IEEE754Compatible=true"},
			response{200, "application/json;odata.metadata=minimal;IEEE754Compatible=true",
				`{"@odata.context":"` + ctxURL + `EVENTS_entries(ACTIVITY)","value":[{"ROW_NUMBER":"1","ACTIVITY":"Create"}]}`}},
		{"count segment", svc + "/ORDERS_entries/$count?$filter=NET%20gt%20100", nil, response{200, "text/plain;charset=utf-8", "3"}},
		{"count segment of everything", svc + "/EVENTS_entries/$count", nil, response{200, "text/plain;charset=utf-8", "9"}},
	}
	h := testHandler(t)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			checkGET(t, h, tt.target, tt.header, tt.want)
		})
	}
}

// collection is an OData JSON collection answer.
type collection struct {
	Context  string           `json:"@odata.context"`
	Count    *int             `json:"@odata.count"`
	Value    []map[string]any `json:"value"`
	NextLink string           `json:"@odata.nextLink"`
}

func decodeCollection(t *testing.T, body []byte) collection {
	t.Helper()
	var c collection
	dec := json.NewDecoder(strings.NewReader(string(body)))
	dec.UseNumber()
	if err := dec.Decode(&c); err != nil {
		t.Fatalf("%v in %s", err, body)
	}
	return c
}

// Following the next links of small pages yields the rows of one big page, for queries
// with and without $top, $skip and $orderby.
func TestServerDrivenPaging(t *testing.T) {
	all := testHandler(t)
	queries := []string{
		"/ORDERS_entries",
		"/ORDERS_entries?$orderby=NET%20desc&$select=NET",
		"/ORDERS_entries?$top=5&$skip=1&$count=true",
		"/ORDERS_entries?$filter=NET%20gt%200&$top=4&$orderby=DAY",
		"/EVENTS_entries?$skip=3",
		"/EVENTS_entries?$top=7&filterid=Unused_no&$skip=1&custom=x;y",
		"/CUSTOMERS_entries?$top=2",
	}
	for _, q := range queries {
		q = strings.Replace(q, "filterid=Unused_no&", "", 1)
		want := decodeCollection(t, get(all, svc+q).Body.Bytes())
		if want.NextLink != "" {
			t.Fatalf("%s: a next link with the default page size", q)
		}
		for _, size := range []int{1, 2, 3} {
			h := testHandler(t, WithMaxPageSize(size))
			var rows []map[string]any
			target := svc + q
			pages := 0
			for target != "" {
				w := get(h, target)
				if w.Code != 200 {
					t.Fatalf("GET %s: %d %s", target, w.Code, w.Body)
				}
				c := decodeCollection(t, w.Body.Bytes())
				if len(c.Value) > size {
					t.Fatalf("GET %s: %d entities in a page of %d", target, len(c.Value), size)
				}
				if c.Context != want.Context || (c.Count == nil) != (want.Count == nil) || (c.Count != nil && *c.Count != *want.Count) {
					t.Errorf("GET %s: context %q count %v, want %q %v", target, c.Context, c.Count, want.Context, want.Count)
				}
				rows = append(rows, c.Value...)
				target = ""
				if c.NextLink != "" {
					u, err := url.Parse(c.NextLink)
					if err != nil {
						t.Fatal(err)
					}
					target = u.RequestURI()
				}
				if pages++; pages > 20 {
					t.Fatalf("%s: more than 20 pages", q)
				}
			}
			if diff := cmp.Diff(want.Value, rows); diff != "" {
				t.Errorf("%s in pages of %d (-one page +all pages):\n%s", q, size, diff)
			}
		}
	}
}

func TestNextLink(t *testing.T) {
	h := testHandler(t, WithMaxPageSize(2))
	tests := []struct{ target, next string }{
		{svc + "/ORDERS_entries?$select=ID", "http://example.com" + svc + "/ORDERS_entries?$select=ID&$skip=2"},
		{svc + "/ORDERS_entries?$top=5&$skip=1&$filter=NET%20gt%200&x=1", "http://example.com" + svc + "/ORDERS_entries?$filter=NET%20gt%200&x=1&$skip=3&$top=3"},
		{svc + "/ORDERS_entries?$top=3", "http://example.com" + svc + "/ORDERS_entries?$skip=2&$top=1"},
		{svc + "/ORDERS_entries?$top=2", ""},
		{svc + "/ORDERS_entries?$skip=5", ""},
	}
	for _, tt := range tests {
		c := decodeCollection(t, get(h, tt.target).Body.Bytes())
		if c.NextLink != tt.next {
			t.Errorf("GET %s: next link %q, want %q", tt.target, c.NextLink, tt.next)
		}
	}
}

func TestPreferMaxPageSize(t *testing.T) {
	h := testHandler(t, WithMaxPageSize(4))
	tests := []struct {
		prefer, applied string
		n               int
	}{
		{"odata.maxpagesize=2", "odata.maxpagesize=2", 2},
		{"return=minimal, odata.maxpagesize=1", "odata.maxpagesize=1", 1},
		{"maxpagesize=3", "odata.maxpagesize=3", 3},
		{"odata.maxpagesize=10", "", 4}, // above the server's bound
		{"odata.maxpagesize=x", "", 4},
		{"", "", 4},
	}
	for _, tt := range tests {
		w := get(h, svc+"/ORDERS_entries?$select=ID", "Prefer", tt.prefer)
		c := decodeCollection(t, w.Body.Bytes())
		if len(c.Value) != tt.n || c.NextLink == "" || w.Header().Get("Preference-Applied") != tt.applied {
			t.Errorf("Prefer %q: %d entities, next %q, Preference-Applied %q; want %d, a next link, %q",
				tt.prefer, len(c.Value), c.NextLink, w.Header().Get("Preference-Applied"), tt.n, tt.applied)
		}
	}
}

// atomFeed is the part of an Atom feed the tests read.
type atomFeed struct {
	XMLName xml.Name `xml:"http://www.w3.org/2005/Atom feed"`
	Context string   `xml:"http://docs.oasis-open.org/odata/ns/metadata context,attr"`
	ID      string   `xml:"id"`
	Count   *int     `xml:"http://docs.oasis-open.org/odata/ns/metadata count"`
	Links   []struct {
		Rel  string `xml:"rel,attr"`
		Href string `xml:"href,attr"`
	} `xml:"link"`
	Entries []struct {
		ID       string `xml:"id"`
		Updated  string `xml:"updated"`
		Category struct {
			Term   string `xml:"term,attr"`
			Scheme string `xml:"scheme,attr"`
		} `xml:"category"`
		Content struct {
			Type       string `xml:"type,attr"`
			Properties struct {
				Props []struct {
					XMLName xml.Name
					Type    string `xml:"http://docs.oasis-open.org/odata/ns/metadata type,attr"`
					Null    string `xml:"http://docs.oasis-open.org/odata/ns/metadata null,attr"`
					Value   string `xml:",chardata"`
				} `xml:",any"`
			} `xml:"http://docs.oasis-open.org/odata/ns/metadata properties"`
		} `xml:"content"`
	} `xml:"entry"`
}

type atomProp struct{ Name, Type, Null, Value string }

type atomEntry struct {
	ID, Updated, Term, ContentType string
	Props                          []atomProp
}

func readAtom(t *testing.T, body []byte) (atomFeed, []atomEntry) {
	t.Helper()
	var f atomFeed
	if err := xml.Unmarshal(body, &f); err != nil {
		t.Fatalf("%v in %s", err, body)
	}
	var out []atomEntry
	for _, e := range f.Entries {
		if e.Category.Scheme != "http://docs.oasis-open.org/odata/ns/scheme" {
			t.Errorf("category scheme %q", e.Category.Scheme)
		}
		ae := atomEntry{ID: e.ID, Updated: e.Updated, Term: e.Category.Term, ContentType: e.Content.Type}
		for _, p := range e.Content.Properties.Props {
			if p.XMLName.Space != "http://docs.oasis-open.org/odata/ns/data" {
				t.Errorf("property %s in namespace %q", p.XMLName.Local, p.XMLName.Space)
			}
			ae.Props = append(ae.Props, atomProp{p.XMLName.Local, p.Type, p.Null, p.Value})
		}
		out = append(out, ae)
	}
	return f, out
}

func TestEntitySetAtom(t *testing.T) {
	h := testHandler(t, WithMaxPageSize(2))
	const base = "http://example.com" + svc + "/"
	const updated = "2026-03-04T05:06:07Z"
	const term = "#ODataKnowledgeModel.ORDERS"
	for _, target := range []string{
		svc + "/ORDERS_entries?$format=xml&$orderby=NET%20desc&$count=true&$filter=EXPRESS%20eq%20true%20or%20ID%20eq%20'O''6'%20or%20ID%20eq%20'O3'",
		svc + "/ORDERS_entries?$format=atom&$orderby=NET%20desc&$count=true&$filter=EXPRESS%20eq%20true%20or%20ID%20eq%20'O''6'%20or%20ID%20eq%20'O3'",
	} {
		w := get(h, target)
		if w.Code != 200 || w.Header().Get("Content-Type") != "application/atom+xml;type=feed;charset=utf-8" {
			t.Fatalf("GET %s: %d %s %s", target, w.Code, w.Header(), w.Body)
		}
		f, entries := readAtom(t, w.Body.Bytes())
		if f.Context != ctxURL+"ORDERS_entries" || f.ID != base+"ORDERS_entries" || f.Count == nil || *f.Count != 4 {
			t.Errorf("feed context %q id %q count %v", f.Context, f.ID, f.Count)
		}
		var next string
		for _, l := range f.Links {
			if l.Rel == "next" {
				next = l.Href
			}
		}
		wantNext := "http://example.com" + svc + "/ORDERS_entries?" + target[strings.Index(target, "?")+1:] + "&$skip=2"
		if next != wantNext {
			t.Errorf("next link %q, want %q", next, wantNext)
		}
		want := []atomEntry{
			{base + "ORDERS_entries('O2')", updated, term, "application/xml", []atomProp{
				{"ID", "", "", "O2"}, {"CUST", "", "", "C1"}, {"DAY", "Date", "", "2025-02-10"},
				{"CREATED", "DateTimeOffset", "", "2025-02-10T08:30:00Z"}, {"SEEN", "DateTimeOffset", "", "2025-02-10T08:30:00Z"},
				{"SLOT", "TimeOfDay", "", "12:00:00"}, {"STATUS", "", "", "PAID"}, {"NET", "Double", "", "250"},
				{"LATE", "Int64", "", "2"}, {"EXPRESS", "Boolean", "", "true"}}},
			{base + "ORDERS_entries('O3')", updated, term, "application/xml", []atomProp{
				{"ID", "", "", "O3"}, {"CUST", "", "", "C2"}, {"DAY", "Date", "", "2025-02-11"},
				{"CREATED", "DateTimeOffset", "", "2025-02-11T12:00:00Z"}, {"SEEN", "DateTimeOffset", "true", ""},
				{"SLOT", "TimeOfDay", "", "14:15:30.5"}, {"STATUS", "", "", "PAID"}, {"NET", "Double", "", "80"},
				{"LATE", "Int64", "", "0"}, {"EXPRESS", "Boolean", "", "false"}}},
		}
		if diff := cmp.Diff(want, entries); diff != "" {
			t.Errorf("GET %s (-want +got):\n%s", target, diff)
		}
	}
	// The last page, with the quote in a key and a negative number in exponent form.
	w := get(h, svc+"/ORDERS_entries?$format=xml&$orderby=NET%20desc&$skip=4&$select=NET,STATUS")
	f, entries := readAtom(t, w.Body.Bytes())
	if len(entries) != 2 || f.Count != nil || f.Context != ctxURL+"ORDERS_entries(NET,STATUS)" {
		t.Fatalf("entries %v count %v context %q", entries, f.Count, f.Context)
	}
	last := entries[1]
	wantLast := atomEntry{base + "ORDERS_entries('O''6')", updated, term, "application/xml", []atomProp{
		{"ID", "", "", "O'6"}, {"NET", "Double", "", "-325"}, {"STATUS", "", "", "CANCELLED"}}}
	if diff := cmp.Diff(wantLast, last); diff != "" {
		t.Errorf("last entry (-want +got):\n%s", diff)
	}
}

func TestAtomEscaping(t *testing.T) {
	h := testHandler(t)
	w := get(h, svc+"/CUSTOMERS_entries?$format=xml&$filter=ID%20ne%20'C3'", "Accept", "application/json")
	_, entries := readAtom(t, w.Body.Bytes())
	const base = "http://example.com" + svc + "/"
	const term = "#ODataKnowledgeModel.CUSTOMERS"
	want := []atomEntry{
		{base + "CUSTOMERS_entries('C1')", "2026-03-04T05:06:07Z", term, "application/xml", []atomProp{
			{"ID", "", "", "C1"}, {"NAME", "", "", "Müller & Söhne <GmbH>"}, {"COUNTRY", "", "", "DE"}}},
		{base + "CUSTOMERS_entries('C2')", "2026-03-04T05:06:07Z", term, "application/xml", []atomProp{
			{"ID", "", "", "C2"}, {"NAME", "", "", `O'Brien "Ltd"`}, {"COUNTRY", "", "", "IE"}}},
		{base + "CUSTOMERS_entries('C4')", "2026-03-04T05:06:07Z", term, "application/xml", []atomProp{
			{"ID", "", "", "C4"}, {"NAME", "", "", "Berg+Co"}, {"COUNTRY", "", "", "DE"}}},
	}
	if diff := cmp.Diff(want, entries); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	// Keyless entities are identified by their row number.
	w = get(h, svc+"/EVENTS_entries?$format=xml&$skip=7&$select=ACTIVITY")
	_, entries = readAtom(t, w.Body.Bytes())
	wantEvents := []atomEntry{
		{base + "EVENTS_entries(8)", "2026-03-04T05:06:07Z", "#ODataKnowledgeModel.EVENTS", "application/xml", []atomProp{
			{"ROW_NUMBER", "Int64", "", "8"}, {"ACTIVITY", "", "", "Create"}}},
		{base + "EVENTS_entries(9)", "2026-03-04T05:06:07Z", "#ODataKnowledgeModel.EVENTS", "application/xml", []atomProp{
			{"ROW_NUMBER", "Int64", "", "9"}, {"ACTIVITY", "", "", "Ship"}}},
	}
	if diff := cmp.Diff(wantEvents, entries); diff != "" {
		t.Errorf("keyless (-want +got):\n%s", diff)
	}
	// Accept chooses Atom too.
	w = get(h, svc+"/CUSTOMERS_entries", "Accept", "application/atom+xml")
	if _, entries := readAtom(t, w.Body.Bytes()); len(entries) != 4 {
		t.Errorf("Accept application/atom+xml: %d entries, want 4", len(entries))
	}
}

func TestEncodeValues(t *testing.T) {
	tests := []struct {
		v             query.Value
		json, jsonStr string // jsonStr: with IEEE754Compatible
		xml           string
	}{
		{query.Float(math.NaN()), `"NaN"`, `"NaN"`, "NaN"},
		{query.Float(math.Inf(1)), `"INF"`, `"INF"`, "INF"},
		{query.Float(math.Inf(-1)), `"-INF"`, `"-INF"`, "-INF"},
		{query.Float(1e21), `1e+21`, `1e+21`, "1e+21"},
		{query.Float(1e-7), `1e-7`, `1e-7`, "1e-7"},
		{query.Float(-0.5), `-0.5`, `-0.5`, "-0.5"},
		{query.Int(math.MaxInt64), `9223372036854775807`, `"9223372036854775807"`, "9223372036854775807"},
		{query.Null(query.TypeInteger), `null`, `null`, ""},
		{query.String("a\x01b\r\n\t\"\\\u2028<&>\xff"), `"a\u0001b\r\n\t\"\\\u2028<&>\ufffd"`, `"a\u0001b\r\n\t\"\\\u2028<&>\ufffd"`, "a\uFFFDb&#xD;\n\t\"\\\u2028&lt;&amp;&gt;\uFFFD"},
		{query.Value{Type: query.TypeDate, Int: -1}, `"1969-12-31"`, `"1969-12-31"`, "1969-12-31"},
		{query.Value{Type: query.TypeTimestamp, Int: 1_500_000}, `"1970-01-01T00:00:01.5Z"`, `"1970-01-01T00:00:01.5Z"`, "1970-01-01T00:00:01.5Z"},
		{query.Value{Type: query.TypeTime, Int: 3_600_000_001}, `"01:00:00.000001"`, `"01:00:00.000001"`, "01:00:00.000001"},
		{query.Bool(true), `true`, `true`, "true"},
	}
	for _, tt := range tests {
		if got := string(appendJSONValue(nil, tt.v, false)); got != tt.json {
			t.Errorf("JSON of %+v: %s, want %s", tt.v, got, tt.json)
		}
		if got := string(appendJSONValue(nil, tt.v, true)); got != tt.jsonStr {
			t.Errorf("IEEE754 JSON of %+v: %s, want %s", tt.v, got, tt.jsonStr)
		}
		if tt.v.Null {
			continue
		}
		if got := string(appendXMLValue(nil, tt.v)); got != tt.xml {
			t.Errorf("XML of %+v: %q, want %q", tt.v, got, tt.xml)
		}
		// What we write is valid JSON.
		var x any
		if err := json.Unmarshal(appendJSONValue(nil, tt.v, false), &x); err != nil {
			t.Errorf("JSON of %+v: %v", tt.v, err)
		}
	}
	// Attribute values escape quotes and white space that attribute normalisation would change.
	if got, want := string(appendXMLText(nil, "a\"b\n\tc", true)), "a&quot;b&#xA;&#x9;c"; got != want {
		t.Errorf("attribute %q, want %q", got, want)
	}
	// Keys in URLs.
	for _, c := range []struct {
		v    query.Value
		want string
	}{
		{query.String("O'6 a/b?#%"), "'O''6%20a%2Fb%3F%23%25'"},
		{query.Int(-4), "-4"},
		{query.Value{Type: query.TypeDateTime, Int: 0}, "1970-01-01T00:00:00Z"},
		{query.Null(query.TypeString), "null"},
	} {
		if got := string(appendKeyLiteral(nil, c.v)); got != c.want {
			t.Errorf("key of %+v: %s, want %s", c.v, got, c.want)
		}
	}
}
