package odata

import (
	"net/url"
	"slices"
	"testing"
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
	h := testHandler(t, Options{})
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
	h := testHandler(t, Options{})
	checkGET(t, h, svc+"/ORDERS_entries?$filter=NET%20eq%20'x'", nil, response{400, "application/problem+json",
		`{"title":"Bad Request","status":400,` +
			`"detail":"$filter: position 8: NET is a float and cannot be compared with the text 'x'; write a number such as 4.2",` +
			`"errorCode":"FILTER_TYPE_MISMATCH","type":"urn:kmkit:problem:FILTER_TYPE_MISMATCH",` +
			`"error":{"code":"FILTER_TYPE_MISMATCH",` +
			`"message":"$filter: position 8: NET is a float and cannot be compared with the text 'x'; write a number such as 4.2",` +
			`"target":"$filter","details":[]}}`})
	checkGET(t, h, BasePath+"/nope.svc/", nil, response{404, "application/problem+json",
		`{"title":"Not Found","status":404,"detail":"no knowledge model \"nope\"","errorCode":"KM_MODEL_NOTFOUND",` +
			`"type":"urn:kmkit:problem:KM_MODEL_NOTFOUND","error":{"code":"KM_MODEL_NOTFOUND","message":"no knowledge model \"nope\"","details":[]}}`})
}
