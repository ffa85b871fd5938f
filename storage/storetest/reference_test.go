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
	fsys, err := DemoData(DemoOrders)
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

// TestReferenceJoinPaths checks the evaluator's answers to issue 29's requests on
// JoinsData, worked out by hand from SPEC-NOTES: a filter restricts every record, so a
// listed line whose order does not pass shows nulls for the order, as the KPI form's
// groups do; among equally short paths the only lookup chain is the join, in rows and
// filters alike; two paths that still tie are refused naming both.
func TestReferenceJoinPaths(t *testing.T) {
	ref, err := LoadReference(JoinsData(), "joins")
	if err != nil {
		t.Fatal(err)
	}
	lines := []string{"LINES.LINE_ID", "ORDERS.ORDER_ID", "ORDERS.PLANT_ID"}
	invoices := []string{"INVOICES.INVOICE_NO", "PURCHASE_ORDERS.STATUS"}
	for _, c := range []struct {
		req  RefRequest
		want [][]any
	}{
		// EMEA passes plants P1 and P3: lines delivered from them (L1, L2, L5, L6, L9) and
		// orders of them (O2, O5). L1's order O1 (P2) and L6's order O4 (dangling plant)
		// do not pass: no order.
		{RefRequest{Fields: lines, Filters: []string{"EMEA"}}, [][]any{{"L1", nil, nil}, {"L2", "O2", "P1"}, {"L5", nil, nil}, {"L6", nil, nil}, {"L9", "O5", "P3"}}},
		{RefRequest{Fields: lines, Filters: []string{"EMEA"}, Sort: "-ORDERS.PLANT_ID"}, [][]any{{"L9", "O5", "P3"}, {"L2", "O2", "P1"}, {"L1", nil, nil}, {"L5", nil, nil}, {"L6", nil, nil}}},
		{RefRequest{Fields: []string{"ORDERS.ORDER_ID"}, KPIs: []string{"LINE_COUNT"}, Filters: []string{"EMEA"}}, [][]any{{nil, int64(3)}, {"O2", int64(1)}, {"O5", int64(1)}}},
		{RefRequest{Record: "ORDERS", Fields: []string{"ORDER_ID"}, Filters: []string{"EMEA"}}, [][]any{{"O2"}, {"O5"}}},
		// INVOICES reach PURCHASE_ORDERS through PO_LINES (I2: PO2, CLOSED), not through
		// their vendor or company, with or without a filter on the status.
		{RefRequest{Fields: invoices}, [][]any{{"I1", "OPEN"}, {"I2", "CLOSED"}, {"I3", "OPEN"}, {"I4", nil}, {"I5", nil}, {"I6", "OPEN"}}},
		{RefRequest{Fields: invoices, FilterExprs: []string{"PURCHASE_ORDERS.STATUS eq 'OPEN'"}}, [][]any{{"I1", "OPEN"}, {"I3", "OPEN"}, {"I6", "OPEN"}}},
		{RefRequest{Record: "INVOICES", Fields: []string{"INVOICE_NO"}, Filters: []string{"OPEN_POS"}}, [][]any{{"I1"}, {"I3"}, {"I6"}}},
		// Listed at PURCHASE_ORDERS, the record that looks up both.
		{RefRequest{Fields: []string{"VENDORS.NAME", "COMPANIES.NAME"}}, [][]any{{"Acme", "Alpha"}, {"Bolt", "Alpha"}, {"Acme", "Beta"}, {nil, "Beta"}, {"Core", nil}}},
	} {
		got, err := ref.Eval(c.req)
		if err != nil {
			t.Errorf("%+v: %v", c.req, err)
			continue
		}
		if !reflect.DeepEqual(got.Rows, c.want) {
			t.Errorf("%+v:\n  got  %v\n  want %v", c.req, got.Rows, c.want)
		}
	}
	for _, req := range []RefRequest{
		{Fields: []string{"COMPANIES.NAME"}, KPIs: []string{"VENDOR_COUNT"}},
		{Record: "VENDORS", Fields: []string{"NAME"}, Filters: []string{"COMPANY_1000"}},
		{Fields: []string{"PO_LINES.PO_LINE_ID", "VENDORS.NAME"}, Filters: []string{"COMPANY_1000"}},
	} {
		_, err := ref.Eval(req)
		var re *RefError
		if !errors.As(err, &re) || !strings.Contains(err.Error(), "VENDORS-PURCHASE_ORDERS-COMPANIES") && !strings.Contains(err.Error(), "COMPANIES-PURCHASE_ORDERS-VENDORS") ||
			!strings.Contains(err.Error(), "VENDORS-INVOICES-COMPANIES") && !strings.Contains(err.Error(), "COMPANIES-INVOICES-VENDORS") {
			t.Errorf("%+v: %v, want a RefError naming both paths", req, err)
		}
	}
}

// TestRefScore checks the reference's fuzzy score on the examples the rule documents
// (SPEC-NOTES "Fuzzy search", query/fuzzy's package doc), worked out by hand.
func TestRefScore(t *testing.T) {
	for _, c := range []struct {
		term, value string
		want        int
	}{
		{"mat", "Material", 100},
		{"STEEL", "steel bolt", 100},
		{"", "anything", 100},
		{"Munchen", "München", 95},
		{"Munchén", "München", 95},
		{"materail", "Material", 88}, // n=8, d=1: 87.5 rounds up
		{"mtrl", "Material", 70},     // span 8: 50+160/8
		{"xyz", "Material", 0},
		{"mi", "materials inc", 57},        // sahilm takes the i of "inc": span 11, 50+80/11
		{"ab", "a long text before b", 56}, // a..b(efore), the word start: span 13
		{"ΣΊΣΥΦΟΣ", "σίσυφος", 100},        // full case folding: final sigma
		{"kln", "Köln", 80},                // subsequence over 4 runes beats one deletion (67)
		{"ölk", "Kölner", 67},              // one deletion, counted in runes
		{"köln", "Kln", 75},
		{"\u0301", "x", 95}, // only a combining mark: empty once marks are removed
		{"kiwi", "", 0},
		{"sbolt", "Steel Bolt", 80}, // typo d=1 (80) over subsequence span 10 (70)
		{"stlbolt", "Steel Bolt", 78},
		{"abcdefghijklmnopqrstuvwxyz012345", "abcdefghijklmnopqrstuvwxyz01234X", 90},  // 32 runes, d=1
		{"abcdefghijklmnopqrstuvwxyz0123456", "abcdefghijklmnopqrstuvwxyz012345X", 0}, // 33: substring tiers only
	} {
		if got := refScore(c.term, c.value); got != c.want {
			t.Errorf("refScore(%q, %q) = %d, want %d", c.term, c.value, got, c.want)
		}
	}
	for _, c := range []struct {
		a, b string
		want int
	}{{"ca", "ac", 1}, {"ca", "abc", 3}, {"", "ab", 2}, {"kitten", "sitting", 3}} {
		if got := osaDistance([]rune(c.a), []rune(c.b)); got != c.want {
			t.Errorf("osaDistance(%q, %q) = %d, want %d", c.a, c.b, got, c.want)
		}
	}
}
