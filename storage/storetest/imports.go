package storetest

import (
	"context"
	"errors"
	"io/fs"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/kmkit/kmkit/km"
	"github.com/kmkit/kmkit/problem"
)

// uniqueModel is the KM of the import suite: items refer to orders by ORDERS.ID, the
// target of the relationship; ORDERS.CUST and ITEMS.ORDER_ID are no target.
const uniqueModel = `id: unique
name: Unique targets
records:
  - id: ORDERS
    name: Orders
    source: ut_orders
    key: ID
    fields:
      - {id: ID, name: Order, type: string}
      - {id: CUST, name: Customer, type: string}
  - id: ITEMS
    name: Items
    source: ut_items
    fields:
      - {id: ID, name: Item, type: string}
      - {id: ORDER_ID, name: Order, type: string}
      - {id: QTY, name: Quantity, type: integer}
relationships:
  - {from: ITEMS.ORDER_ID, to: ORDERS.ID}
kpis:
  - {id: QTY, name: Quantity, expr: sum(ITEMS.QTY)}
`

// uniqueData returns a data directory of uniqueModel with the given CSV files.
func uniqueData(orders, items string) fs.FS {
	return fstest.MapFS{
		"models/unique.yaml": {Data: []byte(uniqueModel)},
		"data/ut_orders.csv": {Data: []byte(orders)},
		"data/ut_items.csv":  {Data: []byte(items)},
	}
}

// RunImport checks what a store's Import refuses: data whose relationship target holds a
// value in more than one row (km.ErrDuplicateTarget), with an error naming the
// relationship, the field and the value, and a cell that is no value of its field, naming
// the file, the line and the column, each leaving the data loaded before in place; while
// values repeated in a field that is no target, and nulls in a target, load. newStore
// returns a new, empty store.
func RunImport(t *testing.T, newStore func(t *testing.T) Importer) {
	ctx := context.Background()
	// Repeated values outside the target (a customer of two orders, an order of two items)
	// and a null in the target (an order without id, which joins nothing) load.
	first := uniqueData("ID,CUST\nA-1,c1\nA-2,c1\n,c2\n", "ID,ORDER_ID,QTY\nI1,A-1,10\nI2,A-1,5\nI3,A-2,7\nI4,,1\n")
	// A-2 twice in the target: an item of A-2 would join two orders (and count twice).
	duplicated := uniqueData("ID,CUST\nA-1,c1\nA-2,c1\nA-2,c3\n", "ID,ORDER_ID,QTY\nI1,A-1,10\nI2,A-1,5\nI3,A-2,7\nI5,A-2,100\n")
	fixed := uniqueData("ID,CUST\nA-1,c1\nA-2,c3\n", "ID,ORDER_ID,QTY\nI1,A-1,10\nI2,A-1,5\nI3,A-2,7\nI5,A-2,100\n")
	byCustomer := &kmCase{name: "quantity by customer", fields: []string{"ORDERS.CUST"}, kpis: []string{"QTY"}, sort: "ORDERS.CUST"}
	answers := func(t *testing.T, s km.Store, data fs.FS) {
		t.Helper()
		ref, err := LoadReference(data, "unique")
		if err != nil {
			t.Fatal(err)
		}
		m, err := s.Model(ctx, "unique")
		if err != nil {
			t.Fatal(err)
		}
		got, err := run(ctx, s, m, byCustomer.request(t, m))
		if err != nil {
			t.Fatal(err)
		}
		checkReference(t, ref, byCustomer, got)
	}

	s := newStore(t)
	if err := s.Import(ctx, first); err != nil {
		t.Fatalf("repeated values outside a relationship's target, and a null in it: %v", err)
	}
	answers(t, s, first)

	err := s.Import(ctx, duplicated)
	const want = `relationship ITEMS.ORDER_ID -> ORDERS.ID: ORDERS.ID holds "A-2" in more than one row; the target of a relationship must be unique`
	switch {
	case err == nil:
		t.Fatal("Import loaded a relationship target holding A-2 twice")
	case !errors.Is(err, km.ErrDuplicateTarget):
		t.Fatalf("Import: %v, want an error matching km.ErrDuplicateTarget", err)
	case !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "ut_orders"):
		t.Fatalf("Import: %q, want it to name the source ut_orders and say %q", err, want)
	}
	var p *problem.Problem
	if !errors.As(err, &p) || p.Status != 409 || p.ErrorCode != problem.CodeConstraint || !strings.Contains(p.Detail, want) {
		t.Errorf("the problem of %v is %+v, want 409 %s saying %q", err, p, problem.CodeConstraint, want)
	}
	// The refused import changed nothing: the first data answer.
	answers(t, s, first)

	// Changed orders with items of which one cell is no integer: the import is refused
	// with the file, the line and the column, and changes nothing either, whichever file
	// the backend reads first.
	badCell := uniqueData("ID,CUST\nA-1,c7\nA-2,c8\n", "ID,ORDER_ID,QTY\nI1,A-1,10\nI2,A-1,5\nI3,A-2,7\nI4,A-2,many\n")
	const wantCell = `data/ut_items.csv: line 5, column 3 (QTY): "many" is not an integer`
	if err := s.Import(ctx, badCell); err == nil || !strings.Contains(err.Error(), wantCell) {
		t.Fatalf("Import of an integer cell holding many: %v, want an error saying %q", err, wantCell)
	}
	answers(t, s, first)

	// Loaded again without the duplicate, the data replace the first.
	if err := s.Import(ctx, fixed); err != nil {
		t.Fatalf("the import after a refused one: %v", err)
	}
	answers(t, s, fixed)
}
