package odata

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/kmkit/kmkit/problem"
	"github.com/kmkit/kmkit/query"
)

const svc = BasePath + "/shop.svc"

// problemBody is the error body of an OData path: the problem members and OData's error
// object with the same code and message.
func problemBody(status int, code, detail string) string {
	return problemBodyAt(status, code, detail, "")
}

// problemBodyAt is problemBody with the error's target (the option at fault).
func problemBodyAt(status int, code, detail, target string) string {
	q := func(s string) string { b, _ := json.Marshal(s); return string(b) }
	t := ""
	if target != "" {
		t = `,"target":` + q(target)
	}
	return `{"title":` + q(http.StatusText(status)) + `,"status":` + strconv.Itoa(status) + `,"detail":` + q(detail) +
		`,"errorCode":` + q(code) + `,"type":` + q(problem.TypePrefix+code) +
		`,"error":{"code":` + q(code) + `,"message":` + q(detail) + t + `,"details":[]}}`
}

type response struct {
	Status      int
	ContentType string
	Body        string
}

// checkGET sends GET target with header (name, value pairs) to h and compares the status,
// Content-Type and body with want; every answer carries OData-Version 4.0.
func checkGET(t *testing.T, h http.Handler, target string, header []string, want response) {
	t.Helper()
	w := get(h, target, header...)
	got := response{w.Code, w.Header().Get("Content-Type"), w.Body.String()}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("GET %s %q (-want +got):\n%s", target, header, diff)
	}
	if v := w.Header().Get("OData-Version"); v != "4.0" {
		t.Errorf("GET %s: OData-Version %q, want 4.0", target, v)
	}
}

func TestErrors(t *testing.T) {
	tests := []struct {
		name, target string
		header       []string
		want         response
	}{
		{"unknown KM", BasePath + "/nope.svc/ORDERS_entries", nil,
			response{404, problem.ContentType, problemBody(404, "KM_MODEL_NOTFOUND", `no knowledge model "nope"`)}},
		{"unknown KM metadata", BasePath + "/nope.svc/$metadata", nil,
			response{404, problem.ContentType, problemBody(404, "KM_MODEL_NOTFOUND", `no knowledge model "nope"`)}},
		{"unknown entity set", svc + "/NOPE_entries", nil,
			response{404, problem.ContentType, problemBody(404, "KM_RECORD_NOTFOUND", `knowledge model shop has no entity set "NOPE_entries" (no record "NOPE")`)}},
		{"record without suffix", svc + "/ORDERS", nil,
			response{404, problem.ContentType, problemBody(404, "GENERAL_NOTFOUND_PATH", `no endpoint at /intelligence/api/odata/shop.svc/ORDERS: a service has $metadata, $batch and entity sets named {record_id}_entries`)}},
		{"no service", BasePath + "/shop", nil,
			response{404, problem.ContentType, problemBody(404, "GENERAL_NOTFOUND_PATH", `no endpoint at /intelligence/api/odata/shop: OData services live at /intelligence/api/odata/{km_id}.svc`)}},
		{"outside the base path", "/intelligence/api/other", nil,
			response{404, problem.ContentType, problemBody(404, "GENERAL_NOTFOUND_PATH", `no endpoint at /intelligence/api/other: OData services live at /intelligence/api/odata/{km_id}.svc`)}},
		{"property of an entity", svc + "/ORDERS_entries('O1')/STATUS", nil,
			response{501, problem.ContentType, problemBodyAt(501, "ODATA_OPTION_NOT_SUPPORTED", `ORDERS_entries('O1')/STATUS: a property is not addressable on its own; ask ORDERS_entries('O1')?$select=STATUS`, "STATUS")}},
		{"value of a property", svc + "/ORDERS_entries('O1')/STATUS/$value", nil,
			response{501, problem.ContentType, problemBodyAt(501, "ODATA_OPTION_NOT_SUPPORTED", `ORDERS_entries('O1')/STATUS/$value: an entity's navigation properties are addressable one step (ORDERS_entries(key)/NAVIGATION), its properties with $select; ask ORDERS_entries(key)/NAVIGATION with $filter, $select or $expand instead`, "STATUS/$value")}},
		{"navigation followed further", svc + "/ORDERS_entries('O1')/CUSTOMERS/ORDERS", nil,
			response{501, problem.ContentType, problemBodyAt(501, "ODATA_OPTION_NOT_SUPPORTED", `ORDERS_entries('O1')/CUSTOMERS/ORDERS: an entity's navigation properties are addressable one step (ORDERS_entries(key)/NAVIGATION), its properties with $select; ask ORDERS_entries(key)/NAVIGATION with $filter, $select or $expand instead`, "CUSTOMERS/ORDERS")}},
		{"navigation by key", svc + "/ORDERS_entries('O1')/EVENTS('E1')", nil,
			response{501, problem.ContentType, problemBodyAt(501, "ODATA_OPTION_NOT_SUPPORTED", `ORDERS_entries('O1')/EVENTS('E1'): an entity's navigation properties are addressable one step (ORDERS_entries(key)/NAVIGATION), its properties with $select; ask ORDERS_entries(key)/NAVIGATION with $filter, $select or $expand instead`, "EVENTS('E1')")}},
		{"no resource path after an entity", svc + "/ORDERS_entries()/)", nil,
			response{404, problem.ContentType, problemBody(404, "GENERAL_NOTFOUND_PATH", `no endpoint at /intelligence/api/odata/shop.svc/ORDERS_entries()/): an entity is addressed as ORDERS_entries(key), its navigation properties as ORDERS_entries(key)/NAVIGATION`)}},
		{"an unclosed key after an entity", svc + "/ORDERS_entries('O1')/EVENTS('E1'/x", nil,
			response{404, problem.ContentType, problemBody(404, "GENERAL_NOTFOUND_PATH", `no endpoint at /intelligence/api/odata/shop.svc/ORDERS_entries('O1')/EVENTS('E1'/x: an entity is addressed as ORDERS_entries(key), its navigation properties as ORDERS_entries(key)/NAVIGATION`)}},
		{"unknown navigation property", svc + "/ORDERS_entries('O1')/NOPE", nil,
			response{404, problem.ContentType, problemBody(404, "GENERAL_NOTFOUND_PATH", `no endpoint at /intelligence/api/odata/shop.svc/ORDERS_entries('O1')/NOPE: entity type ORDERS has no navigation property NOPE; it has CUSTOMERS, EVENTS`)}},
		{"navigation from no entity", svc + "/ORDERS_entries('O99')/EVENTS", nil,
			response{404, problem.ContentType, problemBody(404, "ODATA_ENTITY_NOTFOUND", `entity set ORDERS_entries has no entity with the key ('O99')`)}},
		{"an entity key not closed", svc + "/ORDERS_entries('O1'", nil,
			response{404, problem.ContentType, problemBody(404, "GENERAL_NOTFOUND_PATH", `no endpoint at /intelligence/api/odata/shop.svc/ORDERS_entries('O1': an entity is addressed as ORDERS_entries(key)`)}},
		{"format", svc + "/ORDERS_entries?$format=csv", nil,
			response{415, problem.ContentType, problemBody(415, "GENERAL_UNSUPPORTED_MEDIA_TYPE", `$format "csv" is not supported: use json, xml, atom, application/json, application/xml or application/atom+xml`)}},
		{"format of metadata", svc + "/$metadata?$format=text/html", nil,
			response{415, problem.ContentType, problemBody(415, "GENERAL_UNSUPPORTED_MEDIA_TYPE", `$format "text/html" is not supported: use json, xml, atom, application/json, application/xml or application/atom+xml`)}},
		{"accept", svc + "/ORDERS_entries", []string{"Accept", "text/csv, text/html;q=0.5"},
			response{415, problem.ContentType, problemBody(415, "GENERAL_UNSUPPORTED_MEDIA_TYPE", `no supported media type in Accept "text/csv, text/html;q=0.5": the service answers application/json and application/xml (or use $format)`)}},
		{"accept refuses json", svc, []string{"Accept", "application/json;q=0"},
			response{415, problem.ContentType, problemBody(415, "GENERAL_UNSUPPORTED_MEDIA_TYPE", `no supported media type in Accept "application/json;q=0": the service answers application/json and application/xml (or use $format)`)}},
		{"select unknown", svc + "/ORDERS_entries?$select=ID,NOPE,NADA", nil,
			response{400, problem.ContentType, problemBodyAt(400, "KM_FIELD_NOTFOUND", `$select: entity type ORDERS has no properties NOPE, NADA`, "$select")}},
		{"orderby unknown", svc + "/ORDERS_entries?$orderby=NOPE", nil,
			response{400, problem.ContentType, problemBodyAt(400, "SORT_UNKNOWN_FIELD", `$orderby: entity type ORDERS has no property NOPE`, "$orderby")}},
		{"filter generated key type", svc + "/EVENTS_entries?$filter=ROW_NUMBER%20eq%20'x'", nil,
			response{400, problem.ContentType, problemBodyAt(400, "FILTER_TYPE_MISMATCH", `$filter: position 15: ROW_NUMBER is an integer and cannot be compared with the text 'x'; write a number such as 42`, "$filter")}},
		{"filter type", svc + "/ORDERS_entries?$filter=NET%20eq%20'x'", nil,
			response{400, problem.ContentType, problemBodyAt(400, "FILTER_TYPE_MISMATCH", `$filter: position 8: NET is a float and cannot be compared with the text 'x'; write a number such as 4.2`, "$filter")}},
		{"filter field", svc + "/ORDERS_entries?$filter=STATUS%20eq%20'A'%20or%20NOPE%20eq%201", nil,
			response{400, problem.ContentType, problemBodyAt(400, "KM_FIELD_NOTFOUND", `$filter: position 18: unknown field "NOPE"`, "$filter")}},
		{"filter syntax", svc + "/ORDERS_entries?$filter=(NET%20gt%201", nil,
			response{400, problem.ContentType, problemBodyAt(400, "FILTER_SYNTAX_ERROR", `$filter: position 10: expected ")" to close the "(" at position 1, found the end of the expression`, "$filter")}},
		{"filter of another record", svc + "/ORDERS_entries?$filter=COUNTRY%20eq%20'DE'", nil,
			response{400, problem.ContentType, problemBodyAt(400, "KM_FIELD_NOTFOUND", `$filter: position 1: unknown field "COUNTRY"; did you mean CUSTOMERS.COUNTRY?`, "$filter")}},
		{"filterid unknown", svc + "/ORDERS_entries?filterid=PAID,NOPE", nil,
			response{400, problem.ContentType, problemBodyAt(400, "KM_FILTER_NOTFOUND", `filterid: knowledge model shop has no filter NOPE`, "filterid")}},
		{"top", svc + "/ORDERS_entries?$top=ten", nil,
			response{400, problem.ContentType, problemBody(400, "GENERAL_PARAMETER_MISSMATCH", `$top is "ten": want a non-negative integer`)}},
		{"expand", svc + "/ORDERS_entries?$expand=CUSTOMERS($levels=2)", nil,
			response{400, problem.ContentType, problemBodyAt(400, "GENERAL_PARAMETER_ILLEGAL", `$expand=CUSTOMERS($levels=2): CUSTOMERS leads to entity type CUSTOMERS, not back to ORDERS, so it cannot recurse; $levels=1 or max expands it once`, "$expand")}},
		{"metadata takes format only", svc + "/$metadata?$top=1", nil,
			response{400, problem.ContentType, problemBody(400, "GENERAL_PARAMETER_ILLEGAL", `$top applies to entity sets only; the service document and $metadata take $format`)}},
		{"service document takes format only", svc + "?$filter=A%20eq%201", nil,
			response{400, problem.ContentType, problemBody(400, "GENERAL_PARAMETER_ILLEGAL", `$filter applies to entity sets only; the service document and $metadata take $format`)}},
		{"count takes filters only", svc + "/ORDERS_entries/$count?$top=1", nil,
			response{400, problem.ContentType, problemBody(400, "GENERAL_PARAMETER_ILLEGAL", `/$count takes $filter, $search and filterid only`)}},
		{"count takes no format", svc + "/ORDERS_entries/$count?$format=json", nil,
			response{400, problem.ContentType, problemBody(400, "GENERAL_PARAMETER_ILLEGAL", `/$count takes $filter, $search and filterid only`)}},
		{"bad escape", svc + "/ORDERS_entries?$filter=%zz", nil,
			response{400, problem.ContentType, problemBodyAt(400, "GENERAL_PARAMETER_ILLEGAL", `$filter: the value has a malformed percent-escape`, "$filter")}},
	}
	h := testHandler(t)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			checkGET(t, h, tt.target, tt.header, tt.want)
		})
	}
}

func TestFilterLimits(t *testing.T) {
	h := testHandler(t, WithLimits(query.Limits{MaxLength: 20, MaxIn: 2}))
	tests := []struct{ target, want string }{
		{svc + "/ORDERS_entries?$filter=STATUS%20eq%20'PAID'%20or%20LATE%20gt%201", problemBodyAt(400, "GENERAL_CONSTRAINT_VIOLATION",
			"$filter: the expression is 29 bytes long; at most 20 are allowed", "$filter")},
		{svc + "/ORDERS_entries?$filter=LATE%20in%20(1,2,3)", problemBodyAt(400, "GENERAL_CONSTRAINT_VIOLATION",
			"$filter: position 14: the in list has more than 2 values", "$filter")},
	}
	for _, tt := range tests {
		w := get(h, tt.target)
		if w.Code != 400 || w.Body.String() != tt.want {
			t.Errorf("GET %s: %d %s, want 400 %s", tt.target, w.Code, w.Body, tt.want)
		}
	}
}

func TestMethodNotAllowed(t *testing.T) {
	h := testHandler(t)
	for _, method := range []string{http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete} {
		r := httptest.NewRequest(method, "http://example.com"+svc+"/ORDERS_entries", strings.NewReader("{}"))
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		want := response{405, problem.ContentType, problemBody(405, "GENERAL_METHOD_NOT_ALLOWED",
			"method "+method+" is not allowed on "+svc+"/ORDERS_entries; allowed: GET, HEAD")}
		got := response{w.Code, w.Header().Get("Content-Type"), w.Body.String()}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("%s (-want +got):\n%s", method, diff)
		}
		if w.Header().Get("Allow") != "GET, HEAD" || w.Header().Get("OData-Version") != "4.0" {
			t.Errorf("%s: headers %v", method, w.Header())
		}
	}
}

func TestServiceDocument(t *testing.T) {
	const jsonDoc = `{"@odata.context":"http://example.com/intelligence/api/odata/shop.svc/$metadata","value":[` +
		`{"name":"CUSTOMERS_entries","kind":"EntitySet","url":"CUSTOMERS_entries"},` +
		`{"name":"ORDERS_entries","kind":"EntitySet","url":"ORDERS_entries"},` +
		`{"name":"EVENTS_entries","kind":"EntitySet","url":"EVENTS_entries"}]}`
	const xmlDoc = `<?xml version="1.0" encoding="utf-8"?><app:service xmlns:app="http://www.w3.org/2007/app" xmlns:atom="http://www.w3.org/2005/Atom" xmlns:m="http://docs.oasis-open.org/odata/ns/metadata"` +
		` xml:base="http://example.com/intelligence/api/odata/shop.svc/" m:context="http://example.com/intelligence/api/odata/shop.svc/$metadata">` +
		`<app:workspace><atom:title type="text">ODataKnowledgeModel.Container</atom:title>` +
		`<app:collection href="CUSTOMERS_entries" name="CUSTOMERS_entries"><atom:title type="text">CUSTOMERS_entries</atom:title></app:collection>` +
		`<app:collection href="ORDERS_entries" name="ORDERS_entries"><atom:title type="text">ORDERS_entries</atom:title></app:collection>` +
		`<app:collection href="EVENTS_entries" name="EVENTS_entries"><atom:title type="text">EVENTS_entries</atom:title></app:collection>` +
		`</app:workspace></app:service>`
	jsonResp := response{200, "application/json;odata.metadata=minimal", jsonDoc}
	xmlResp := response{200, "application/atomsvc+xml;charset=utf-8", xmlDoc}
	tests := []struct {
		target string
		header []string
		want   response
	}{
		{svc, nil, jsonResp},
		{svc + "/", nil, jsonResp},
		{svc + "?$format=json", nil, jsonResp},
		{svc + "?$format=xml", nil, xmlResp},
		{svc + "?$format=application/xml", nil, xmlResp},
		{svc, []string{"Accept", "application/xml"}, xmlResp},
		{svc, []string{"Accept", "application/atomsvc+xml"}, xmlResp},
		{svc, []string{"Accept", "*/*"}, jsonResp},
		{svc, []string{"Accept", "application/xml;q=0.5, application/json"}, jsonResp},
		{svc, []string{"Accept", "application/json;q=0.5, application/xml;q=0.9"}, xmlResp},
		{svc, []string{"Accept", "text/html, application/*;q=0.1"}, jsonResp},
		// $format wins over Accept.
		{svc + "?$format=json", []string{"Accept", "application/xml"}, jsonResp},
		// Custom options are ignored.
		{svc + "?sap-client=100", nil, jsonResp},
	}
	h := testHandler(t)
	for _, tt := range tests {
		t.Run(tt.target+strings.Join(tt.header, ":"), func(t *testing.T) {
			checkGET(t, h, tt.target, tt.header, tt.want)
		})
	}
}

func TestBaseURL(t *testing.T) {
	h := testHandler(t, WithBaseURL("https://api.example.org/"))
	w := get(h, svc)
	const want = `{"@odata.context":"https://api.example.org/intelligence/api/odata/shop.svc/$metadata","value":[`
	if !strings.HasPrefix(w.Body.String(), want) {
		t.Errorf("body %s, want the prefix %s", w.Body.String(), want)
	}
	r := httptest.NewRequest(http.MethodGet, "https://secure.example.com"+svc, nil)
	rec := httptest.NewRecorder()
	testHandler(t).ServeHTTP(rec, r)
	const wantTLS = `{"@odata.context":"https://secure.example.com/intelligence/api/odata/shop.svc/$metadata","value":[`
	if !strings.HasPrefix(rec.Body.String(), wantTLS) {
		t.Errorf("body %s, want the prefix %s", rec.Body.String(), wantTLS)
	}
}

// The metadata documents are compared with reviewed copies in testdata; the conformance
// tests check them against the OASIS schemas and real parsers.
func TestMetadata(t *testing.T) {
	xmlDoc, err := os.ReadFile("testdata/metadata.xml")
	if err != nil {
		t.Fatal(err)
	}
	jsonDoc, err := os.ReadFile("testdata/metadata.json")
	if err != nil {
		t.Fatal(err)
	}
	xmlResp := response{200, "application/xml", strings.TrimSpace(string(xmlDoc))}
	jsonResp := response{200, "application/json", strings.TrimSpace(string(jsonDoc))}
	tests := []struct {
		target string
		header []string
		want   response
	}{
		{svc + "/$metadata", nil, xmlResp},
		{svc + "/$metadata", []string{"Accept", "*/*"}, xmlResp},
		{svc + "/$metadata", []string{"Accept", "application/xml"}, xmlResp},
		{svc + "/$metadata?$format=xml", nil, xmlResp},
		{svc + "/$metadata?$format=json", nil, jsonResp},
		{svc + "/$metadata?$format=application/json", nil, jsonResp},
		{svc + "/$metadata", []string{"Accept", "application/json"}, jsonResp},
		{svc + "/$metadata", []string{"Accept", "application/json;odata.metadata=minimal, application/xml;q=0"}, jsonResp},
		// XML wins whenever it is admitted, as 4.0 clients expect.
		{svc + "/$metadata", []string{"Accept", "application/json;odata.metadata=minimal;q=1.0,application/atomsvc+xml;q=0.8,application/xml;q=0.7,text/plain;q=0.7"}, xmlResp},
		{svc + "/$metadata", []string{"Accept", "application/json, */*;q=0.1"}, xmlResp},
		{svc + "/$metadata?$format=json", []string{"Accept", "application/xml"}, jsonResp},
	}
	h := testHandler(t)
	for _, tt := range tests {
		t.Run(tt.target+strings.Join(tt.header, ":"), func(t *testing.T) {
			checkGET(t, h, tt.target, tt.header, tt.want)
		})
	}
	// The JSON document is valid JSON.
	var v map[string]any
	if err := json.Unmarshal(jsonDoc, &v); err != nil {
		t.Fatal(err)
	}
}

// TestWriteProblemVersion checks that the answers of the auth middleware, which
// WriteProblem writes, carry OData-Version like the handler's.
func TestWriteProblemVersion(t *testing.T) {
	for _, status := range []int{http.StatusUnauthorized, http.StatusForbidden, http.StatusTooManyRequests} {
		w := httptest.NewRecorder()
		WriteProblem(w, problem.New(status, "X", "refused"))
		if w.Code != status || w.Header().Get("OData-Version") != "4.0" {
			t.Errorf("%d: status %d, headers %v", status, w.Code, w.Header())
		}
	}
}

func TestQueryTimeLimit(t *testing.T) {
	h := testHandler(t, WithQueryTimeout(time.Nanosecond))
	detail := "the query ran longer than the time limit of 1ns and was stopped; narrow it (a simpler $filter, fewer rows)"
	w := get(h, svc+"/ORDERS"+EntitySetSuffix+"?$filter=NET%20gt%201")
	if w.Code != http.StatusServiceUnavailable {
		t.Fatalf("status %d, want 503: %s", w.Code, w.Body.String())
	}
	if diff := cmp.Diff(problemBody(http.StatusServiceUnavailable, problem.CodeUnavailable, detail), w.Body.String()); diff != "" {
		t.Errorf("body (-want +got):\n%s", diff)
	}
}

// TestQueryCostBudget checks that OData queries are held to the KM API's cost budget
// (km.CheckCost): testdata/shop has 7 orders, so 5 predicates and 1 selected field cost
// 7 x 5 + 7 x 1 = 42 row operations.
func TestQueryCostBudget(t *testing.T) {
	five := url.QueryEscape("NET gt 1 or NET gt 2 or NET gt 3 or LATE eq 4 or STATUS eq 'X'")
	target := svc + "/ORDERS" + EntitySetSuffix + "?$select=ID&$filter=" + five
	if w := get(testHandler(t, WithMaxQueryCost(42)), target); w.Code != http.StatusOK {
		t.Fatalf("at the budget: status %d, want 200: %s", w.Code, w.Body.String())
	}
	detail := "the query is estimated at 42 row operations, beyond the budget of 41: the filters are too large: 5 predicates over 7 rows; " +
		"use fewer comparisons (an in list counts once, or'ed eq comparisons each) or fewer filterExpr entries"
	w := get(testHandler(t, WithMaxQueryCost(41)), target)
	if w.Code != http.StatusBadRequest {
		t.Fatalf("beyond the budget: status %d, want 400: %s", w.Code, w.Body.String())
	}
	if diff := cmp.Diff(problemBody(http.StatusBadRequest, problem.CodeConstraint, detail), w.Body.String()); diff != "" {
		t.Errorf("body (-want +got):\n%s", diff)
	}
	if w := get(testHandler(t, WithMaxQueryCost(-1)), target); w.Code != http.StatusOK {
		t.Fatalf("no budget: status %d, want 200: %s", w.Code, w.Body.String())
	}
}
