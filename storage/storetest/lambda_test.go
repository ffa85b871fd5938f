package storetest

import (
	"fmt"
	"os"
	"slices"
	"testing"
)

// TestReferenceLambdas: the reference's OData lambdas on testdata/km, the expected order
// ids read off st_items.csv by hand. O1 has items of quantity 10 and 5, O2 20 and 20, O3
// 1, O4 100, O5 2, O6 3, O8 4, O9 one of no quantity, O12 7; O7, O10 and O11 have none.
// all is true for an order without items (OData's rule) and false where a quantity is
// null (unknown is not true); any counts only items where the body is true. A lambda
// nests on a path from the enclosing lambda's variable.
func TestReferenceLambdas(t *testing.T) {
	ref, err := LoadReference(os.DirFS("testdata/km"), "suite")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		filter string
		want   []string
	}{
		{"ITEMS/any(i: i/QTY ge 5)", []string{"O1", "O12", "O2", "O4"}},
		{"ITEMS/all(i: i/QTY ge 5)", []string{"O1", "O10", "O11", "O12", "O2", "O4", "O7"}},
		{"ITEMS/any(i: not (i/QTY ge 5))", []string{"O3", "O5", "O6", "O8"}},
		{"ITEMS/any()", []string{"O1", "O12", "O2", "O3", "O4", "O5", "O6", "O8", "O9"}},
		{"ITEMS/any(i: i/QTY ge 5 and i/QTY lt 10)", []string{"O1", "O12"}},
		{"ITEMS/all(i: i/QTY ge 5) and CUST eq 'C1'", []string{"O1", "O2"}},
		// anywhere in the filter: under or and not; any and all are never unknown, so
		// not of them is their complement, while "and LATE gt 0" stays unknown where
		// LATE is null (O1, O4), and not unknown is unknown
		{"ITEMS/any(i: i/QTY gt 1) or CUST eq 'C1'", []string{"O1", "O12", "O2", "O4", "O5", "O6", "O8"}},
		{"not ITEMS/any(i: i/QTY ge 5)", []string{"O10", "O11", "O3", "O5", "O6", "O7", "O8", "O9"}},
		{"not ITEMS/all(i: i/QTY ge 5)", []string{"O3", "O5", "O6", "O8", "O9"}},
		{"ITEMS/all(i: i/QTY ge 5) or STATUS eq 'PAID'", []string{"O1", "O10", "O11", "O12", "O2", "O3", "O4", "O6", "O7"}},
		{"not (ITEMS/any() and LATE gt 0)", []string{"O10", "O11", "O3", "O6", "O7"}},
	} {
		checkRefIDs(t, ref, "ORDERS", c.filter, c.want)
	}
	// Nested lambdas on customers, from the same files: C1 has orders O1, O2 and O8, C2
	// O3 and O5, C3 O4 and O12, C4 O6 and O11 (no items), C5 O9, C6 O10 (no items).
	for _, c := range []struct {
		filter string
		want   []string
	}{
		{"ORDERS/any(o: o/ITEMS/any(i: i/QTY ge 20))", []string{"C1", "C3"}},
		// any is false for O10 and O11, which have no items, so C4 and C6 fail all
		{"ORDERS/all(o: o/ITEMS/any(i: i/QTY ge 5))", []string{"C3"}},
		// the enclosing variable: items under 5 are on O3, O5, O6 and O8; O5 alone is
		// express (O8's EXPRESS is null)
		{"ORDERS/any(o: o/ITEMS/any(i: i/QTY lt 5 and o/EXPRESS eq true))", []string{"C2"}},
		// the outer entity: of those orders' customers (C2, C4, C1) C1 and C4 are German
		{"ORDERS/any(o: o/ITEMS/any(i: i/QTY lt 5 and COUNTRY eq 'DE'))", []string{"C1", "C4"}},
		{"not ORDERS/any(o: o/ITEMS/any())", []string{"C6"}},
	} {
		checkRefIDs(t, ref, "CUSTOMERS", c.filter, c.want)
	}
	for _, f := range []string{"CUSTOMERS/any(c: c/ID eq 'C1')", "ITEMS/any(i: ITEMS/any())"} {
		if _, err := ref.Eval(RefRequest{Record: "ORDERS", Fields: []string{"ID"}, ODataFilter: f}); err == nil {
			t.Errorf("%s: accepted", f)
		}
	}
}

// checkRefIDs checks the ids of the rows of record rec that the reference selects with
// the OData filter, in id order.
func checkRefIDs(t *testing.T, ref *Reference, rec, filter string, want []string) {
	t.Helper()
	res, err := ref.Eval(RefRequest{Record: rec, Fields: []string{"ID"}, ODataFilter: filter, Sort: "+ID"})
	if err != nil {
		t.Errorf("%s: %v", filter, err)
		return
	}
	var got []string
	for _, r := range res.Rows {
		got = append(got, fmt.Sprint(r[0]))
	}
	if !slices.Equal(got, want) {
		t.Errorf("%s:\n got %v\nwant %v", filter, got, want)
	}
}
