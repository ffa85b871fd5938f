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
