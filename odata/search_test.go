package odata

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/kmkit/kmkit/km/kmhttp"
)

// $search: rows whose values contain the term exactly (testdata/shop/data) come back, the
// forms the fuzzy search cannot express are 501, and broken syntax is 400.
func TestSearch(t *testing.T) {
	const jsonCT = "application/json;odata.metadata=minimal"
	tests := []struct {
		name, target string
		want         response
	}{
		// STATUS is PAID in orders O2 and O3 (orders.csv); no other string or time value
		// of ORDERS resembles it.
		{"a word", svc + "/ORDERS_entries?$search=PAID&$select=STATUS", response{200, jsonCT,
			`{"@odata.context":"` + ctxURL + `ORDERS_entries(STATUS)","value":[{"ID":"O2","STATUS":"PAID"},{"ID":"O3","STATUS":"PAID"}]}`}},
		{"any case, with $orderby and $count", svc + "/ORDERS_entries?$search=paid&$select=STATUS&$orderby=ID%20desc&$count=true", response{200, jsonCT,
			`{"@odata.context":"` + ctxURL + `ORDERS_entries(STATUS)","@odata.count":2,"value":[{"ID":"O3","STATUS":"PAID"},{"ID":"O2","STATUS":"PAID"}]}`}},
		{"with $filter", svc + "/ORDERS_entries?$search=PAID&$filter=NET%20gt%20100&$select=NET", response{200, jsonCT,
			`{"@odata.context":"` + ctxURL + `ORDERS_entries(NET)","value":[]}`}},
		// customers.csv: only C3 is "Smith; Jones".
		{"a phrase", svc + "/CUSTOMERS_entries?$search=%22Smith;%20Jones%22", response{200, jsonCT,
			`{"@odata.context":"` + ctxURL + `CUSTOMERS_entries","value":[{"ID":"C3","NAME":"Smith; Jones","COUNTRY":null}]}`}},
		{"an escaped quote in a phrase", svc + "/CUSTOMERS_entries?$search=%22O'Brien%20\\%22Ltd\\%22%22&$select=NAME", response{200, jsonCT,
			`{"@odata.context":"` + ctxURL + `CUSTOMERS_entries(NAME)","value":[{"ID":"C2","NAME":"O'Brien \"Ltd\""}]}`}},
		{"nothing alike", svc + "/CUSTOMERS_entries?$search=xyz", response{200, jsonCT,
			`{"@odata.context":"` + ctxURL + `CUSTOMERS_entries","value":[]}`}},
		{"OR", svc + "/ORDERS_entries?$search=PAID%20OR%20OPEN", response{501, "application/problem+json",
			problemBody(501, "ODATA_OPTION_NOT_SUPPORTED", "$search PAID OR OPEN: only one word or one phrase in double quotes is supported (the fuzzy search of the Knowledge Model API); AND, OR, NOT, several words and parentheses are not")}},
		{"two words", svc + "/ORDERS_entries?$search=PAID%20OPEN", response{501, "application/problem+json",
			problemBody(501, "ODATA_OPTION_NOT_SUPPORTED", "$search PAID OPEN: only one word or one phrase in double quotes is supported (the fuzzy search of the Knowledge Model API); AND, OR, NOT, several words and parentheses are not")}},
		{"NOT", svc + "/ORDERS_entries?$search=NOT%20PAID", response{501, "application/problem+json",
			problemBody(501, "ODATA_OPTION_NOT_SUPPORTED", "$search NOT PAID: only one word or one phrase in double quotes is supported (the fuzzy search of the Knowledge Model API); AND, OR, NOT, several words and parentheses are not")}},
		{"empty", svc + "/ORDERS_entries?$search=", response{400, "application/problem+json",
			problemBody(400, "GENERAL_PARAMETER_ILLEGAL", "$search is empty: want a word or a phrase in double quotes")}},
		{"unclosed phrase", svc + "/ORDERS_entries?$search=%22PAID", response{400, "application/problem+json",
			problemBody(400, "GENERAL_PARAMETER_ILLEGAL", `$search phrase "PAID has no closing double quote`)}},
		// Text no searchExpr of OData's ABNF produces is 400 like the unclosed phrase,
		// however many terms it has: a double quote inside a word, a phrase glued to a
		// word, parentheses that do not pair.
		{"a quote inside a word", svc + "/ORDERS_entries?$search=PA%22ID", response{400, "application/problem+json",
			problemBodyAt(400, "GENERAL_PARAMETER_ILLEGAL", `$search PA"ID: a double quote inside a word; a phrase is in double quotes, apart from other terms`, "$search")}},
		{"a phrase glued to a word", svc + "/ORDERS_entries?$search=%22PAID%22OPEN", response{400, "application/problem+json",
			problemBodyAt(400, "GENERAL_PARAMETER_ILLEGAL", `$search "PAID"OPEN: a double quote inside a word; a phrase is in double quotes, apart from other terms`, "$search")}},
		{"an unclosed phrase after a word", svc + "/ORDERS_entries?$search=PAID%20%22OPEN", response{400, "application/problem+json",
			problemBody(400, "GENERAL_PARAMETER_ILLEGAL", `$search phrase "OPEN has no closing double quote`)}},
		{"an unclosed parenthesis", svc + "/ORDERS_entries?$search=(PAID%20OR%20OPEN", response{400, "application/problem+json",
			problemBodyAt(400, "GENERAL_PARAMETER_ILLEGAL", `$search (PAID OR OPEN: the parentheses do not pair`, "$search")}},
		{"a closing parenthesis first", svc + "/ORDERS_entries?$search=PAID)", response{400, "application/problem+json",
			problemBodyAt(400, "GENERAL_PARAMETER_ILLEGAL", `$search PAID): the parentheses do not pair`, "$search")}},
		{"parentheses", svc + "/ORDERS_entries?$search=(PAID)", response{501, "application/problem+json",
			problemBody(501, "ODATA_OPTION_NOT_SUPPORTED", "$search (PAID): only one word or one phrase in double quotes is supported (the fuzzy search of the Knowledge Model API); AND, OR, NOT, several words and parentheses are not")}},
		{"operator alone", svc + "/ORDERS_entries?$search=AND", response{400, "application/problem+json",
			problemBody(400, "GENERAL_PARAMETER_ILLEGAL", "$search is the operator AND alone: want a word or a phrase in double quotes")}},
		{"repeated", svc + "/ORDERS_entries?$search=A&search=B", response{400, "application/problem+json",
			problemBody(400, "ODATA_OPTION_REPEATED", "$search is given more than once")}},
	}
	h := testHandler(t)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			checkGET(t, h, tt.target, nil, tt.want)
		})
	}
}

// $search answers what searchTerm of the Knowledge Model API's record /data answers for
// the same fields: the same fuzzy search, precision and order (best score first).
func TestSearchParity(t *testing.T) {
	tests := []struct{ record, fields, term, orderby string }{
		{"ORDERS", "ID,STATUS", "paed", ""},  // a typo
		{"ORDERS", "ID,STATUS", "SHPD", ""},  // a subsequence
		{"ORDERS", "ID,STATUS,NET", "O", ""}, // many matches, ranked
		{"CUSTOMERS", "ID,NAME", "mueller", ""},
		{"CUSTOMERS", "ID,NAME,COUNTRY", "Berg", "NAME desc"},
		{"EVENTS", "ORDER_ID,ACTIVITY", "shp", ""},
	}
	kmh := kmhttp.NewHandler(testStore(t))
	odh := testHandler(t)
	for _, tt := range tests {
		t.Run(tt.record+" "+tt.term, func(t *testing.T) {
			od := svc + "/" + tt.record + "_entries?$select=" + tt.fields + "&$search=" + esc(tt.term)
			data := kmhttp.BasePath + "/knowledge-models/shop/records/" + tt.record + "/data?pageSize=1000&fields=" + tt.fields + "&searchTerm=" + esc(tt.term)
			if tt.orderby != "" {
				od += "&$orderby=" + esc(tt.orderby)
				f, _, _ := strings.Cut(tt.orderby, " ")
				data += "&sort=-" + f
			}
			wd := get(kmh, data)
			if wd.Code != 200 {
				t.Fatalf("GET %s: %d %s", data, wd.Code, wd.Body)
			}
			var page struct {
				Content struct{ Data []map[string]any }
			}
			if err := json.Unmarshal(wd.Body.Bytes(), &page); err != nil {
				t.Fatal(err)
			}
			wo := get(odh, od)
			if wo.Code != 200 {
				t.Fatalf("GET %s: %d %s", od, wo.Code, wo.Body)
			}
			var coll struct{ Value []map[string]any }
			if err := json.Unmarshal(wo.Body.Bytes(), &coll); err != nil {
				t.Fatal(err)
			}
			for _, row := range coll.Value {
				delete(row, RowNumberKey)
			}
			if len(coll.Value) == 0 {
				t.Fatalf("%s matches no row: the case proves nothing", tt.term)
			}
			if diff := cmp.Diff(page.Content.Data, coll.Value); diff != "" {
				t.Errorf("/data (-) and the entity set (+) differ:\n%s", diff)
			}
		})
	}
}

// $metadata says $search is served, without AND, OR, NOT and groups, in both CSDL forms.
func TestSearchRestrictions(t *testing.T) {
	h := testHandler(t)
	x := get(h, svc+"/$metadata").Body.String()
	const wantX = `<Annotation Term="Capabilities.SearchRestrictions"><Record><PropertyValue Property="Searchable" Bool="true"/><PropertyValue Property="UnsupportedExpressions" EnumMember="Capabilities.SearchExpressions/AND Capabilities.SearchExpressions/OR Capabilities.SearchExpressions/NOT Capabilities.SearchExpressions/group"/></Record></Annotation>`
	if n := strings.Count(x, wantX); n != 3 {
		t.Errorf("CSDL XML holds the search restrictions %d times, want once per entity set (3):\n%s", n, x)
	}
	j := get(h, svc+"/$metadata?$format=json").Body.String()
	const wantJ = `"@Capabilities.SearchRestrictions":{"Searchable":true,"UnsupportedExpressions":"AND,OR,NOT,group"}`
	if n := strings.Count(j, wantJ); n != 3 {
		t.Errorf("CSDL JSON holds the search restrictions %d times, want 3:\n%s", n, j)
	}
}
