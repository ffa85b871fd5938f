package benchdata

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestOrders(t *testing.T) {
	a, err := Orders(2000)
	if err != nil {
		t.Fatal(err)
	}
	if a.Rows() != 2000 {
		t.Fatalf("rows = %d, want 2000", a.Rows())
	}
	want := []string{"ORDER_ID", "COUNTRY", "NET_VALUE", "QUANTITY", "CREATED", "CHANGED_AT", "STATUS", "MATERIAL", "LATE", "SHIP_TIME"}
	if diff := cmp.Diff(want, a.Names()); diff != "" {
		t.Fatalf("names (-want +got):\n%s", diff)
	}
	b, err := Orders(2000)
	if err != nil {
		t.Fatal(err)
	}
	for i := range a.Rows() {
		for c := range a.Columns() {
			if x, y := a.Columns()[c].Value(i), b.Columns()[c].Value(i); x != y {
				t.Fatalf("row %d column %s: %v then %v: the table is not deterministic", i, want[c], x, y)
			}
		}
	}
}
