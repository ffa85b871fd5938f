package odata

import (
	"bufio"
	"encoding/json"
	"encoding/xml"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// What real OData clients send (issue 16), each against the orders of testdata/shop; the
// expected ids are read off testdata/shop/data/orders.csv by hand.

// ids returns the ID of every entity of a JSON collection answer to GET target.
func ids(t *testing.T, h *Handler, target string, header ...string) []string {
	t.Helper()
	w := get(h, target, header...)
	if w.Code != 200 {
		t.Fatalf("GET %s: status %d: %s", target, w.Code, w.Body)
	}
	var out []string
	for _, e := range decodeCollection(t, w.Body.Bytes()).Value {
		out = append(out, e["ID"].(string))
	}
	return out
}

func orders(query string) string { return svc + "/ORDERS_entries?" + query }

func filter(expr string) string { return "$select=ID&$filter=" + url.QueryEscape(expr) }

func TestClientFilterSyntax(t *testing.T) {
	h := testHandler(t)
	tests := []struct {
		query string
		want  []string
	}{
		// type-suffixed literals (SAP Cloud SDK: Edm.Double, Edm.Int64, Edm.Decimal, Edm.Single)
		{filter("NET gt 1000D"), []string{"O4"}},
		{filter("LATE gt 1L"), []string{"O2", "O5"}},
		{filter("NET ge 1.5M and NET lt 100F"), []string{"O3"}},
		{filter("LATE in (0L, 5L)"), []string{"O3", "O5"}},
		// operators, functions, literals in any case (OData 4.01)
		{filter("STATUS EQ 'PAID' AND EXPRESS Eq True"), []string{"O2"}},
		{filter("Contains(STATUS,'AI')"), []string{"O2", "O3"}},
		{filter("NOT StartsWith(STATUS,'O') and LATE NE NULL and LATE Le 2"), []string{"O2", "O3", "O'6"}},
		{filter("LATE eq Null and STATUS ne null"), []string{"O1", "O4"}},
		// desc/asc in any case
		{"$select=ID&$orderby=NET%20DESC&$top=2", []string{"O4", "O2"}},
		{"$select=ID&$orderby=" + url.QueryEscape("LATE Desc,ID ASC") + "&$top=3", []string{"O5", "O2", "O3"}},
	}
	for _, tt := range tests {
		if got := ids(t, h, orders(tt.query)); !slices.Equal(got, tt.want) {
			t.Errorf("%s: %v, want %v", tt.query, got, tt.want)
		}
	}
	// The direction is still checked.
	if w := get(h, orders("$orderby=NET%20DOWN")); w.Code != 400 {
		t.Errorf("$orderby=NET DOWN: status %d, want 400", w.Code)
	}
}

// TestErrorBodyBothShapes: an OData error answer is a problem body and an OData error in
// one object, so that @odata/client, CAP and the SAP Cloud SDK (which read
// error.message) show the server's detail.
func TestErrorBodyBothShapes(t *testing.T) {
	h := testHandler(t)
	checkGET(t, h, svc+"/ORDERS_entries?$filter=NET%20eq%20'x'", nil, response{400, "application/problem+json",
		`{"title":"Bad Request","status":400,` +
			`"detail":"$filter: position 8: NET is a float and cannot be compared with the text 'x'; write a number such as 4.2",` +
			`"errorCode":"FILTER_TYPE_MISMATCH","type":"urn:kmkit:problem:FILTER_TYPE_MISMATCH",` +
			`"error":{"code":"FILTER_TYPE_MISMATCH",` +
			`"message":"$filter: position 8: NET is a float and cannot be compared with the text 'x'; write a number such as 4.2",` +
			`"target":"$filter","details":[]}}`})
	// The same body is application/json for a client that accepts only JSON (and
	// parses only that, as @odata/client does).
	for accept, want := range map[string]string{
		"application/json":                                 "application/json",
		"application/json;odata.metadata=minimal":          "application/json",
		"application/problem+json, application/json":       "application/problem+json",
		"application/json, application/problem+json;q=0.5": "application/json",
		"*/*":             "application/problem+json",
		"application/xml": "application/problem+json",
		"":                "application/problem+json",
	} {
		w := get(h, svc+"/NOPE_entries", "Accept", accept)
		if w.Code != 404 || w.Header().Get("Content-Type") != want {
			t.Errorf("Accept %q: %d %q, want 404 %q", accept, w.Code, w.Header().Get("Content-Type"), want)
		}
	}
	checkGET(t, h, BasePath+"/nope.svc/", nil, response{404, "application/problem+json",
		`{"title":"Not Found","status":404,"detail":"no knowledge model \"nope\"","errorCode":"KM_MODEL_NOTFOUND",` +
			`"type":"urn:kmkit:problem:KM_MODEL_NOTFOUND","error":{"code":"KM_MODEL_NOTFOUND","message":"no knowledge model \"nope\"","details":[]}}`})
}

func TestEntityByKey(t *testing.T) {
	h := testHandler(t)
	const ctx = `"@odata.context":"http://example.com` + svc + `/$metadata#ORDERS_entries`
	tests := []struct {
		name, target string
		header       []string
		want         response
	}{
		{"key literal", svc + "/ORDERS_entries('O2')?$select=STATUS,NET", nil, response{200, "application/json;odata.metadata=minimal",
			`{` + ctx + `(STATUS,NET)/$entity","ID":"O2","STATUS":"PAID","NET":250}`}},
		{"named key", svc + "/ORDERS_entries(ID='O2')?$select=STATUS", nil, response{200, "application/json;odata.metadata=minimal",
			`{` + ctx + `(STATUS)/$entity","ID":"O2","STATUS":"PAID"}`}},
		{"quote in the key, percent-encoded", svc + "/ORDERS_entries('O%27%276')?$select=LATE", nil, response{200, "application/json;odata.metadata=minimal",
			`{` + ctx + `(LATE)/$entity","ID":"O'6","LATE":-1}`}},
		{"every property", svc + "/ORDERS_entries('O3')", nil, response{200, "application/json;odata.metadata=minimal",
			`{` + ctx + `/$entity","ID":"O3","CUST":"C2","DAY":"2025-02-11","CREATED":"2025-02-11T12:00:00Z","SEEN":null,` +
				`"SLOT":"14:15:30.5","STATUS":"PAID","NET":80,"LATE":0,"EXPRESS":false}`}},
		{"absent", svc + "/ORDERS_entries('NOPE')", nil, response{404, "application/problem+json",
			problemBody(404, "ODATA_ENTITY_NOTFOUND", "entity set ORDERS_entries has no entity with the key ('NOPE')")}},
		{"another property named", svc + "/ORDERS_entries(STATUS='PAID')", nil, response{400, "application/problem+json",
			problemBody(400, "GENERAL_PARAMETER_ILLEGAL", "key predicate (STATUS='PAID'): entity type ORDERS has the key property ID, not STATUS")}},
		{"not one value", svc + "/ORDERS_entries('O1'%20or%20ID%20eq%20'O2')", nil, response{400, "application/problem+json",
			problemBody(400, "GENERAL_PARAMETER_MISSMATCH", "key predicate ('O1' or ID eq 'O2'): want one value of the key property ID")}},
		// a key predicate holds a literal: an unquoted word is no string, nor a property
		{"unquoted text", svc + "/ORDERS_entries(O1)", nil, response{400, "application/problem+json",
			problemBody(400, "GENERAL_PARAMETER_MISSMATCH", "key predicate (O1): O1 is no literal of the key property ID; write text in quotes, as ('O1')")}},
		{"the key property as its value", svc + "/ORDERS_entries(ID=ID)", nil, response{400, "application/problem+json",
			problemBody(400, "GENERAL_PARAMETER_MISSMATCH", "key predicate (ID=ID): want one value of the key property ID")}},
		{"collection options", svc + "/ORDERS_entries('O1')?$top=1", nil, response{400, "application/problem+json",
			problemBody(400, "GENERAL_PARAMETER_ILLEGAL", "an entity addressed by key takes $select, $expand and $format only")}},
		{"generated key", svc + "/EVENTS_entries(2)", nil, response{200, "application/json;odata.metadata=minimal",
			`{"@odata.context":"http://example.com` + svc + `/$metadata#EVENTS_entries/$entity","ROW_NUMBER":2,"ORDER_ID":"O1","ACTIVITY":"Ship","AT":"2025-01-07T10:00:00Z"}`}},
		{"generated key beyond the rows", svc + "/EVENTS_entries(ROW_NUMBER=99)", nil, response{404, "application/problem+json",
			problemBody(404, "ODATA_ENTITY_NOTFOUND", "entity set EVENTS_entries has no entity with the key (ROW_NUMBER=99)")}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { checkGET(t, h, tt.target, tt.header, tt.want) })
	}
}

// TestEntityLinksResolve: the ids and edit links of the Atom entries, and the @odata.id
// of full metadata, address the entities they came with.
func TestEntityLinksResolve(t *testing.T) {
	h := testHandler(t)
	for _, set := range []string{"ORDERS_entries", "EVENTS_entries", "CUSTOMERS_entries"} {
		w := get(h, svc+"/"+set+"?$format=atom")
		var feed struct {
			Base    string `xml:"base,attr"`
			Entries []struct {
				ID    string `xml:"id"`
				Links []struct {
					Rel  string `xml:"rel,attr"`
					Href string `xml:"href,attr"`
				} `xml:"link"`
				Props struct {
					Inner string `xml:",innerxml"`
				} `xml:"content>properties"`
			} `xml:"entry"`
		}
		if err := xml.Unmarshal(w.Body.Bytes(), &feed); err != nil || len(feed.Entries) == 0 {
			t.Fatalf("%s: %v, %d entries", set, err, len(feed.Entries))
		}
		for _, e := range feed.Entries {
			edit := ""
			for _, l := range e.Links {
				if l.Rel == "edit" {
					edit = feed.Base + l.Href
				}
			}
			if edit != e.ID {
				t.Errorf("%s: edit link %s and id %s differ", set, edit, e.ID)
			}
			u, err := url.Parse(e.ID)
			if err != nil {
				t.Fatal(err)
			}
			got := get(h, u.EscapedPath()+"?$format=atom")
			if got.Code != 200 {
				t.Errorf("GET %s: %d %s", e.ID, got.Code, got.Body)
				continue
			}
			var entry struct {
				ID    string `xml:"id"`
				Props struct {
					Inner string `xml:",innerxml"`
				} `xml:"content>properties"`
			}
			if err := xml.Unmarshal(got.Body.Bytes(), &entry); err != nil {
				t.Fatalf("GET %s: %v", e.ID, err)
			}
			if entry.ID != e.ID || entry.Props.Inner != e.Props.Inner {
				t.Errorf("GET %s: entry %s with %s, want %s", e.ID, entry.ID, entry.Props.Inner, e.Props.Inner)
			}
		}
		// JSON with full metadata: @odata.id resolves to the same entity.
		c := decodeCollection(t, get(h, svc+"/"+set, "Accept", "application/json;odata.metadata=full").Body.Bytes())
		for _, e := range c.Value {
			id, _ := e["@odata.id"].(string)
			u, err := url.Parse(id)
			if err != nil || id == "" {
				t.Fatalf("%s: @odata.id %q", set, id)
			}
			one := get(h, u.EscapedPath(), "Accept", "application/json;odata.metadata=full")
			var got map[string]any
			if err := json.Unmarshal(one.Body.Bytes(), &got); err != nil || one.Code != 200 {
				t.Fatalf("GET %s: %d %s", id, one.Code, one.Body)
			}
			delete(got, "@odata.context")
			want := map[string]any{}
			b, _ := json.Marshal(e)
			_ = json.Unmarshal(b, &want)
			if d := cmp.Diff(want, got); d != "" {
				t.Errorf("GET %s (-in the set +by key):\n%s", id, d)
			}
		}
	}
}

// FuzzKeyPredicate: any key predicate on a keyed and a keyless entity set is answered
// 200, 400 or 404 with a body, never a 500 or a panic; 501 only where the key closes and
// a resource path follows the entity (valid OData the service does not serve).
func FuzzKeyPredicate(f *testing.F) {
	for _, s := range []string{"'O1'", "ID='O1'", "'O''6'", "5", "ROW_NUMBER=2", "2L", "'a' or ID eq 'b'", "", "ID=", "=",
		"null", "ID eq 'O1'", "'", "ID='O1',X=1", "-1", "99999999999999999999", "9223372036854775807", "ROW_NUMBER=9L", "2025-01-05", "true", "'\xff'"} {
		f.Add(s)
	}
	h := testHandler(f)
	f.Fuzz(func(t *testing.T, key string) {
		for _, set := range []string{"ORDERS_entries", "EVENTS_entries"} {
			r := httptest.NewRequest(http.MethodGet, "http://example.com/", nil)
			r.URL.Path = svc + "/" + set + "(" + key + ")"
			w := httptest.NewRecorder()
			h.ServeHTTP(w, r)
			switch {
			case w.Code == 200, w.Code == 400, w.Code == 404:
			case w.Code == 501 && strings.Contains(key, ")/") && strings.Contains(w.Body.String(), `"errorCode":"ODATA_OPTION_NOT_SUPPORTED"`):
			default:
				t.Fatalf("%s(%q): status %d: %s", set, key, w.Code, w.Body)
			}
			if w.Body.Len() == 0 {
				t.Fatalf("%s(%q): empty body", set, key)
			}
		}
	})
}

func TestMetadataLevelsAndVersions(t *testing.T) {
	h := testHandler(t)
	const root = "http://example.com" + svc + "/"
	target := svc + "/ORDERS_entries?$select=DAY,LATE&$filter=ID%20eq%20'O2'&$count=true"
	tests := []struct {
		name   string
		target string
		header []string
		want   response
	}{
		{"minimal", target, nil, response{200, "application/json;odata.metadata=minimal",
			`{"@odata.context":"` + root + `$metadata#ORDERS_entries(DAY,LATE)","@odata.count":1,"value":[{"ID":"O2","DAY":"2025-02-10","LATE":2}]}`}},
		{"none", target, []string{"Accept", "application/json;odata.metadata=none"}, response{200, "application/json;odata.metadata=none",
			`{"@odata.count":1,"value":[{"ID":"O2","DAY":"2025-02-10","LATE":2}]}`}},
		{"full", target + "&$format=application/json;odata.metadata=full", nil, response{200, "application/json;odata.metadata=full",
			`{"@odata.context":"` + root + `$metadata#ORDERS_entries(DAY,LATE)","@odata.count":1,"value":[{"@odata.type":"#ODataKnowledgeModel.ORDERS",` +
				`"@odata.id":"` + root + `ORDERS_entries('O2')","@odata.editLink":"ORDERS_entries('O2')",` +
				`"ID":"O2","DAY@odata.type":"#Date","DAY":"2025-02-10","LATE@odata.type":"#Int64","LATE":2}]}`}},
		{"IEEE754Compatible: Int64 and the count as strings", target, []string{"Accept", "application/json;IEEE754Compatible=true"},
			response{200, "application/json;odata.metadata=minimal;IEEE754Compatible=true",
				`{"@odata.context":"` + root + `$metadata#ORDERS_entries(DAY,LATE)","@odata.count":"1","value":[{"ID":"O2","DAY":"2025-02-10","LATE":"2"}]}`}},
		// The error body is application/json here: the Accept header admits no other type.
		{"bogus metadata in Accept", target, []string{"Accept", "application/json;odata.metadata=bogus"}, response{415, "application/json",
			problemBody(415, "GENERAL_UNSUPPORTED_MEDIA_TYPE", "odata.metadata=bogus is not supported: want none, minimal or full")}},
		{"bogus metadata in $format", target + "&$format=application/json;odata.metadata=bogus", nil, response{415, "application/problem+json",
			problemBody(415, "GENERAL_UNSUPPORTED_MEDIA_TYPE", "odata.metadata=bogus is not supported: want none, minimal or full")}},
		{"service document without context", svc + "/", []string{"Accept", "application/json;odata.metadata=none"}, response{200, "application/json;odata.metadata=none",
			`{"value":[{"name":"CUSTOMERS_entries","kind":"EntitySet","url":"CUSTOMERS_entries"},{"name":"ORDERS_entries","kind":"EntitySet","url":"ORDERS_entries"},{"name":"EVENTS_entries","kind":"EntitySet","url":"EVENTS_entries"}]}`}},
		{"OData-MaxVersion 3.0", target, []string{"OData-MaxVersion", "3.0"}, response{400, "application/problem+json",
			problemBodyAt(400, "ODATA_VERSION_NOT_SUPPORTED", "OData-MaxVersion 3.0: this service speaks OData 4.0 only (and accepts 4.01 option names); send OData-MaxVersion 4.0 or higher", "OData-MaxVersion")}},
		{"OData-MaxVersion garbage", target, []string{"OData-MaxVersion", "four"}, response{400, "application/problem+json",
			problemBodyAt(400, "GENERAL_PARAMETER_MISSMATCH", `OData-MaxVersion "four" is not a version such as 4.0`, "OData-MaxVersion")}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { checkGET(t, h, tt.target, tt.header, tt.want) })
	}
	for _, v := range []string{"4.0", "4.01", "5.0"} {
		if w := get(h, target, "OData-MaxVersion", v); w.Code != 200 {
			t.Errorf("OData-MaxVersion %s: %d %s", v, w.Code, w.Body)
		}
	}
	if w := get(h, svc+"/", "Accept", "application/atomsvc+xml"); w.Header().Get("Content-Type") != "application/atomsvc+xml;charset=utf-8" {
		t.Errorf("AtomPub service document: Content-Type %q", w.Header().Get("Content-Type"))
	}
}

// post sends POST target with a body and Content-Type to h.
func post(h http.Handler, target, contentType, body string) *httptest.ResponseRecorder {
	r := httptest.NewRequest(http.MethodPost, "http://example.com"+target, strings.NewReader(body))
	r.Header.Set("Content-Type", contentType)
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	return w
}

// longIn is a $filter "ID in (...)" of n values, O1 to On: longer than the 1028
// characters after which CAP wraps a GET into a batch.
func longIn(n int) string {
	vals := make([]string, n)
	for i := range vals {
		vals[i] = "'O" + strconv.Itoa(i+1) + "'"
	}
	return "ID in (" + strings.Join(vals, ",") + ")"
}

func TestBatchJSON(t *testing.T) {
	h := testHandler(t)
	long := "ORDERS_entries?$select=ID&$filter=" + url.QueryEscape(longIn(120))
	if len(long) <= 1028 {
		t.Fatalf("the long GET is only %d characters", len(long))
	}
	body := `{"requests":[
		{"id":"1","method":"get","url":` + strconv.Quote(long) + `,"headers":{"accept":"application/json"}},
		{"id":"2","method":"GET","url":"/intelligence/api/odata/shop.svc/ORDERS_entries('O2')?$select=NET"},
		{"id":"3","method":"GET","url":"http://elsewhere.example/intelligence/api/odata/shop.svc/ORDERS_entries/$count"},
		{"id":"4","method":"PATCH","url":"ORDERS_entries('O2')","body":{"NET":1}},
		{"id":"5","method":"GET","url":"ORDERS_entries('NOPE')"}]}`
	w := post(h, svc+"/$batch", "application/json", body)
	if w.Code != 200 || w.Header().Get("Content-Type") != "application/json" {
		t.Fatalf("status %d %q: %s", w.Code, w.Header().Get("Content-Type"), w.Body)
	}
	var got struct {
		Responses []struct {
			ID      string
			Status  int
			Headers map[string]string
			Body    json.RawMessage
		}
	}
	if err := json.Unmarshal(w.Body.Bytes(), &got); err != nil {
		t.Fatalf("%v: %s", err, w.Body)
	}
	if len(got.Responses) != 5 {
		t.Fatalf("%d responses: %s", len(got.Responses), w.Body)
	}
	const root = "http://example.com" + svc + "/"
	wantStatus := []int{200, 200, 200, 405, 404}
	for i, rs := range got.Responses {
		if rs.ID != strconv.Itoa(i+1) || rs.Status != wantStatus[i] {
			t.Errorf("response %d: id %s status %d, want %d: %s", i, rs.ID, rs.Status, wantStatus[i], rs.Body)
		}
	}
	// 120 ids O1..O120: the orders O1-O5 and O7 exist (O'6 is not among them).
	var c collection
	if err := json.Unmarshal(got.Responses[0].Body, &c); err != nil {
		t.Fatal(err)
	}
	var gotIDs []string
	for _, e := range c.Value {
		gotIDs = append(gotIDs, e["ID"].(string))
	}
	if want := []string{"O1", "O2", "O3", "O4", "O5", "O7"}; !slices.Equal(gotIDs, want) {
		t.Errorf("long GET in a batch: %v, want %v", gotIDs, want)
	}
	if d := jsonDiffOData(`{"@odata.context":"`+root+`$metadata#ORDERS_entries(NET)/$entity","ID":"O2","NET":250}`, string(got.Responses[1].Body)); d != "" {
		t.Errorf("entity by key in a batch (-want +got):\n%s", d)
	}
	if string(got.Responses[2].Body) != `"7"` {
		t.Errorf("$count in a batch: %s", got.Responses[2].Body)
	}
	var e struct{ Error struct{ Message string } }
	_ = json.Unmarshal(got.Responses[4].Body, &e)
	if e.Error.Message != "entity set ORDERS_entries has no entity with the key ('NOPE')" {
		t.Errorf("error in a batch: %s", got.Responses[4].Body)
	}
}

// batchAnswer is one response of a JSON batch's answer.
type batchAnswer struct {
	ID      string
	Status  int
	Headers map[string]string
	Body    json.RawMessage
}

// jsonBatch posts the JSON batch body to h and returns the responses of its answer,
// failing t unless the batch is answered 200 with a JSON batch.
func jsonBatch(t *testing.T, h http.Handler, body string) []batchAnswer {
	t.Helper()
	w := post(h, svc+"/$batch", "application/json", body)
	var got struct{ Responses []batchAnswer }
	if err := json.Unmarshal(w.Body.Bytes(), &got); w.Code != 200 || err != nil {
		t.Fatalf("status %d, %v: %s", w.Code, err, w.Body)
	}
	return got.Responses
}

// TestBatchDependsOn: a request of a JSON batch that depends on a failed request (or on
// an atomicity group, which a read-only service fails) is not run and answers 424 Failed
// Dependency naming the failed request; one that depends on requests that succeeded runs.
func TestBatchDependsOn(t *testing.T) {
	h := testHandler(t)
	body := `{"requests":[
		{"id":"1","method":"GET","url":"ORDERS_entries('O1')?$select=ID"},
		{"id":"2","method":"GET","url":"ORDERS_entries('NOPE')"},
		{"id":"3","method":"GET","url":"ORDERS_entries/$count","dependsOn":["1"]},
		{"id":"4","method":"GET","url":"ORDERS_entries/$count","dependsOn":["1","2"]},
		{"id":"5","method":"GET","url":"ORDERS_entries/$count","dependsOn":["4"]},
		{"id":"6","method":"PATCH","url":"ORDERS_entries('O1')","atomicityGroup":"g","body":{"NET":1}},
		{"id":"7","method":"GET","url":"ORDERS_entries/$count","dependsOn":["g"]}]}`
	got := jsonBatch(t, h, body)
	want := []struct {
		status  int
		message string
	}{
		{200, ""}, {404, "entity set ORDERS_entries has no entity with the key ('NOPE')"}, {200, ""},
		{424, `request "4" depends on request "2", which failed: it was not run`},
		{424, `request "5" depends on request "4", which failed: it was not run`},
		{400, "atomicity groups (change sets) are not supported: the OData services are read-only"},
		{424, `request "7" depends on atomicity group "g", whose request "6" failed: it was not run`},
	}
	if len(got) != len(want) {
		t.Fatalf("%d responses: %+v", len(got), got)
	}
	for i, rs := range got {
		var e struct{ Error struct{ Message string } }
		_ = json.Unmarshal(rs.Body, &e) // a $count's body is a string
		if rs.ID != strconv.Itoa(i+1) || rs.Status != want[i].status || e.Error.Message != want[i].message {
			t.Errorf("response %d: id %s, %d %s; want %d %q", i+1, rs.ID, rs.Status, rs.Body, want[i].status, want[i].message)
		}
		// Every response carries OData-Version, those the batch answers in a request's
		// place (424, 400) as those the request's own run answers.
		if v := rs.Headers["odata-version"]; v != Version {
			t.Errorf("response %d (%d): odata-version %q, want %q", i+1, rs.Status, v, Version)
		}
	}
}

// TestBatchContinueOnError: a failed request does not stop the batch, and the answer says
// so (Preference-Applied: continue-on-error=true, in the client's spelling when it asked);
// Prefer: odata.continue-on-error=false stops the batch after the first failed request.
func TestBatchContinueOnError(t *testing.T) {
	h := testHandler(t)
	const failing = `{"requests":[
		{"id":"1","method":"GET","url":"ORDERS_entries/$count"},
		{"id":"2","method":"GET","url":"ORDERS_entries('NOPE')"},
		{"id":"3","method":"GET","url":"ORDERS_entries/$count"}]}`
	for _, c := range []struct {
		prefer, body string
		ids          []string
		applied      string
	}{
		{"", failing, []string{"1", "2", "3"}, "continue-on-error=true"},
		{"odata.continue-on-error", failing, []string{"1", "2", "3"}, "odata.continue-on-error=true"},
		{"return=minimal, continue-on-error=true", failing, []string{"1", "2", "3"}, "continue-on-error=true"},
		{"odata.continue-on-error=false", failing, []string{"1", "2"}, ""},
		{"", `{"requests":[{"id":"1","method":"GET","url":"ORDERS_entries/$count"}]}`, []string{"1"}, ""},
	} {
		r := httptest.NewRequest(http.MethodPost, "http://example.com"+svc+"/$batch", strings.NewReader(c.body))
		r.Header.Set("Content-Type", "application/json")
		if c.prefer != "" {
			r.Header.Set("Prefer", c.prefer)
		}
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		var got struct{ Responses []struct{ ID string } }
		if err := json.Unmarshal(w.Body.Bytes(), &got); w.Code != 200 || err != nil {
			t.Fatalf("Prefer %q: %d %v: %s", c.prefer, w.Code, err, w.Body)
		}
		var ids []string
		for _, rs := range got.Responses {
			ids = append(ids, rs.ID)
		}
		if !slices.Equal(ids, c.ids) || w.Header().Get("Preference-Applied") != c.applied {
			t.Errorf("Prefer %q: responses %v, Preference-Applied %q; want %v, %q", c.prefer, ids, w.Header().Get("Preference-Applied"), c.ids, c.applied)
		}
	}
}

func TestBatchMultipart(t *testing.T) {
	h := testHandler(t)
	long := "ORDERS_entries?$select=ID&$filter=" + url.QueryEscape(longIn(120))
	body := "--batch_1\r\nContent-Type: application/http\r\nContent-Transfer-Encoding: binary\r\nContent-ID: a\r\n\r\n" +
		"GET " + long + " HTTP/1.1\r\nAccept: application/json\r\n\r\n\r\n" +
		"--batch_1\r\nContent-Type: application/http\r\nContent-Transfer-Encoding: binary\r\n\r\n" +
		"GET ORDERS_entries('O3')?$format=atom HTTP/1.1\r\n\r\n\r\n" +
		"--batch_1\r\nContent-Type: multipart/mixed;boundary=changeset_1\r\n\r\n" +
		"--changeset_1\r\nContent-Type: application/http\r\n\r\nPOST ORDERS_entries HTTP/1.1\r\n\r\n{}\r\n--changeset_1--\r\n" +
		"--batch_1--\r\n"
	w := post(h, svc+"/$batch", "multipart/mixed; boundary=batch_1", body)
	if w.Code != 200 {
		t.Fatalf("status %d: %s", w.Code, w.Body)
	}
	mt, params, err := mime.ParseMediaType(w.Header().Get("Content-Type"))
	if err != nil || mt != "multipart/mixed" {
		t.Fatalf("Content-Type %q", w.Header().Get("Content-Type"))
	}
	mr := multipart.NewReader(w.Body, params["boundary"])
	var statuses []int
	var bodies []string
	var ids []string
	for {
		part, err := mr.NextPart()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if part.Header.Get("Content-Type") != "application/http" {
			t.Errorf("part Content-Type %q", part.Header.Get("Content-Type"))
		}
		ids = append(ids, part.Header.Get("Content-ID"))
		resp, err := http.ReadResponse(bufio.NewReader(part), nil)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		statuses = append(statuses, resp.StatusCode)
		bodies = append(bodies, string(b))
	}
	if !slices.Equal(statuses, []int{200, 200, 400}) || !slices.Equal(ids, []string{"a", "", ""}) {
		t.Fatalf("statuses %v, Content-IDs %q: %q", statuses, ids, bodies)
	}
	c := decodeCollection(t, []byte(bodies[0]))
	if len(c.Value) != 6 {
		t.Errorf("long GET in a multipart batch: %d entities: %s", len(c.Value), bodies[0])
	}
	if !strings.Contains(bodies[1], "<id>http://example.com"+svc+"/ORDERS_entries('O3')</id>") {
		t.Errorf("Atom entry in a batch: %s", bodies[1])
	}
	if !strings.Contains(bodies[2], "change sets are not supported") {
		t.Errorf("change set: %s", bodies[2])
	}
}

func TestBatchErrors(t *testing.T) {
	h := testHandler(t, WithMaxBatchBytes(200))
	tests := []struct {
		name, contentType, body string
		status                  int
		detail                  string
	}{
		{"media type", "text/plain", "x", 415, `$batch takes application/json or multipart/mixed;boundary=..., not "text/plain"`},
		{"not JSON", "application/json", "{", 400, "the batch is not a JSON batch {\"requests\": [...]}: unexpected end of JSON input"},
		{"no id", "application/json", `{"requests":[{"method":"GET","url":"ORDERS_entries"}]}`, 400, "request 1 of the batch has no id"},
		{"no boundary", "multipart/mixed", "--x--", 400, "the multipart batch has no boundary parameter in its Content-Type"},
		{"forward dependsOn", "application/json", `{"requests":[{"id":"1","method":"GET","url":"$metadata","dependsOn":["2"]},{"id":"2","method":"GET","url":"$metadata"}]}`,
			400, `request "1" depends on "2", which is no earlier request or atomicity group of the batch`},
		{"unknown dependsOn", "application/json", `{"requests":[{"id":"1","method":"GET","url":"$metadata","dependsOn":["x"]}]}`,
			400, `request "1" depends on "x", which is no earlier request or atomicity group of the batch`},
		{"too large", "application/json", `{"requests":[` + strings.Repeat(" ", 300) + `]}`, 413, "the batch exceeds 200 bytes"},
	}
	for _, tt := range tests {
		w := post(h, svc+"/$batch", tt.contentType, tt.body)
		var e struct {
			Detail string
			Error  struct{ Message string }
		}
		_ = json.Unmarshal(w.Body.Bytes(), &e)
		if w.Code != tt.status || e.Detail != tt.detail || e.Error.Message != tt.detail {
			t.Errorf("%s: %d %s, want %d %q", tt.name, w.Code, w.Body, tt.status, tt.detail)
		}
	}
	if w := get(h, svc+"/$batch"); w.Code != 405 || w.Header().Get("Allow") != "POST" {
		t.Errorf("GET $batch: %d, Allow %q", w.Code, w.Header().Get("Allow"))
	}
}

// FuzzBatch: any batch body, JSON or multipart, is answered 200 or 4xx, never a 500 or
// a panic.
func FuzzBatch(f *testing.F) {
	f.Add(true, `{"requests":[{"id":"1","method":"GET","url":"ORDERS_entries?$top=1"}]}`)
	f.Add(true, `{"requests":[{"id":"1","method":"GET","url":"$batch"},{"id":"2","method":"GET","url":"::"}]}`)
	f.Add(false, "--b\r\nContent-Type: application/http\r\n\r\nGET ORDERS_entries('O1') HTTP/1.1\r\n\r\n\r\n--b--\r\n")
	f.Add(false, "--b\r\nContent-Type: application/http\r\n\r\nGET  HTTP/1.1\r\n\r\n--b--")
	f.Add(false, "--b\r\n\r\n--b--")
	h := testHandler(f)
	f.Fuzz(func(t *testing.T, asJSON bool, body string) {
		ct := "multipart/mixed;boundary=b"
		if asJSON {
			ct = "application/json"
		}
		w := post(h, svc+"/$batch", ct, body)
		if w.Code >= 500 {
			t.Fatalf("%q: %d %s", body, w.Code, w.Body)
		}
	})
}

// jsonDiffOData compares two JSON texts by value.
func jsonDiffOData(want, got string) string {
	var w, g any
	if err := json.Unmarshal([]byte(want), &w); err != nil {
		return "bad expected JSON: " + err.Error()
	}
	if err := json.Unmarshal([]byte(got), &g); err != nil {
		return "not JSON: " + got
	}
	return cmp.Diff(w, g)
}
