package storetest

import (
	"errors"
	"reflect"
	"strings"
	"testing"
)

// TestReferenceRules checks the consequences SEMANTICS spells out on the demo, computed
// here from the rows directly.
func TestReferenceRules(t *testing.T) {
	fsys, err := DemoData(demoOrders)
	if err != nil {
		t.Fatal(err)
	}
	ref, err := LoadReference(fsys, "o2c")
	if err != nil {
		t.Fatal(err)
	}
	net := ref.fieldIdx(t, "ORDERS", "NET_VALUE")
	sum := 0.0
	for _, row := range ref.Rows["ORDERS"] {
		if v := row[net]; !v.Null {
			sum += v.Float
		}
	}
	eval := func(req RefRequest) *RefResult {
		t.Helper()
		res, err := ref.Eval(req)
		if err != nil {
			t.Fatalf("%+v: %v", req, err)
		}
		return res
	}
	// kpis=TOTAL_NET is the sum over ORDERS, whatever else is requested.
	for _, kpis := range [][]string{{"TOTAL_NET"}, {"TOTAL_NET", "ITEM_QUANTITY"}, {"ITEM_QUANTITY", "TOTAL_NET", "ACTIVITY_COUNT"}} {
		res := eval(RefRequest{KPIs: kpis})
		for i, c := range res.Columns {
			if c == "TOTAL_NET" && !closeFloats(res.Rows[0][i].(float64), sum) {
				t.Errorf("%v: TOTAL_NET %v, want %v", kpis, res.Rows[0][i], sum)
			}
		}
	}
	// Grouped by material group, an order counts in every group of its items: the groups
	// add up to at least the total.
	res := eval(RefRequest{Fields: []string{"MATERIALS.MATERIAL_GROUP"}, KPIs: []string{"TOTAL_NET"}})
	total := 0.0
	for _, row := range res.Rows {
		if row[1] != nil {
			total += row[1].(float64)
		}
	}
	if total < sum-1e-6 {
		t.Errorf("material groups add up to %v, below the total %v", total, sum)
	}
	// D = {ORDERS, MATERIALS}: the rows are those of ORDER_ITEMS; D = {ORDERS, CUSTOMERS}:
	// those of ORDERS.
	if n := len(eval(RefRequest{Fields: []string{"ORDERS.STATUS", "MATERIALS.MATERIAL_GROUP"}}).Rows); n != len(ref.Rows["ORDER_ITEMS"]) {
		t.Errorf("ORDERS with MATERIALS: %d rows, want the %d items", n, len(ref.Rows["ORDER_ITEMS"]))
	}
	if n := len(eval(RefRequest{Fields: []string{"CUSTOMERS.COUNTRY", "ORDERS.STATUS"}}).Rows); n != len(ref.Rows["ORDERS"]) {
		t.Errorf("ORDERS with CUSTOMERS: %d rows, want the %d orders", n, len(ref.Rows["ORDERS"]))
	}
	// Refusals.
	for _, c := range []struct {
		req  RefRequest
		want string
	}{
		{RefRequest{Fields: []string{"ACTIVITIES.ACTIVITY", "ORDER_ITEMS.QUANTITY"}}, "cannot be listed together"},
		{RefRequest{Record: "ORDERS", Fields: []string{"ORDER_ID"}, FilterExprs: []string{"ACTIVITIES.ACTIVITY eq 'Ship Goods' or ORDER_ITEMS.QUANTITY gt 5"}}, "separate filter expressions"},
		{RefRequest{Record: "ORDERS", Fields: []string{"ORDER_ID"}, FilterExprs: []string{"EXPRESS eq 'yes'"}}, "EXPRESS"},
		{RefRequest{Record: "ORDERS", Fields: []string{"ORDER_ID"}, FilterExprs: []string{"NET_VALUE eq ''"}}, "''"},
	} {
		_, err := ref.Eval(c.req)
		var re *RefError
		if !errors.As(err, &re) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: %v, want a RefError saying %q", c.req, err, c.want)
		}
	}
	// Quoted literals: 'true' is true; ne '' on a non-string field is "not null".
	a := eval(RefRequest{Record: "ORDERS", Fields: []string{"ORDER_ID"}, FilterExprs: []string{"EXPRESS eq 'true'", "DAYS_LATE ne ''"}})
	b := eval(RefRequest{Record: "ORDERS", Fields: []string{"ORDER_ID"}, FilterExprs: []string{"EXPRESS eq true", "DAYS_LATE ne null"}})
	if !reflect.DeepEqual(a.Rows, b.Rows) || len(a.Rows) == 0 {
		t.Errorf("quoted literals: %v, want %v", a.Rows, b.Rows)
	}
}

func (r *Reference) fieldIdx(t *testing.T, rec, field string) int {
	for i, f := range r.KM.Record(rec).Fields {
		if f.ID == field {
			return i
		}
	}
	t.Fatalf("no field %s.%s", rec, field)
	return -1
}
