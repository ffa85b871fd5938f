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
// null (unknown is not true); any counts only items where the body is true.
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
		res, err := ref.Eval(RefRequest{Record: "ORDERS", Fields: []string{"ID"}, ODataFilter: c.filter, Sort: "+ID"})
		if err != nil {
			t.Errorf("%s: %v", c.filter, err)
			continue
		}
		var got []string
		for _, r := range res.Rows {
			got = append(got, fmt.Sprint(r[0]))
		}
		if !slices.Equal(got, c.want) {
			t.Errorf("%s:\n got %v\nwant %v", c.filter, got, c.want)
		}
	}
	for _, f := range []string{"CUSTOMERS/any(c: c/ID eq 'C1')", "ITEMS/any(i: ITEMS/any())"} {
		if _, err := ref.Eval(RefRequest{Record: "ORDERS", Fields: []string{"ID"}, ODataFilter: f}); err == nil {
			t.Errorf("%s: accepted", f)
		}
	}
}
