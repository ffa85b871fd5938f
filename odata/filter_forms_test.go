package odata

import (
	"encoding/json"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"testing"
)

// TestDateTimeLiteralAgainstDate sends the filters ag-grid-odata writes for a date column
// (a date-time literal at midnight UTC, with milliseconds) and others: a date compares as
// its midnight UTC (SPEC-NOTES). The orders' days (testdata/shop/data/orders.csv): O1
// 2025-01-05, O2 02-10, O3 02-11, O4 03-01, O5 03-02, O'6 04-01, O7 none.
func TestDateTimeLiteralAgainstDate(t *testing.T) {
	checkFilters(t, []filterCase{
		{"DAY ge 2025-03-01T00:00:00.000Z", []string{"O'6", "O4", "O5"}},
		{"DAY gt 2025-03-01T00:00:00.000Z", []string{"O'6", "O5"}},
		{"DAY ge 2025-02-28T12:00:00Z", []string{"O'6", "O4", "O5"}},
		{"DAY lt 2025-02-11T00:00:00Z", []string{"O1", "O2"}},
		{"DAY le 2025-02-11T06:00:00+03:00", []string{"O1", "O2", "O3"}},
		{"DAY eq 2025-04-01T00:00:00.000Z", []string{"O'6"}},
		{"DAY eq 2025-04-01T00:00:01Z", nil},
		{"DAY ne 2025-04-01T00:00:01Z", []string{"O'6", "O1", "O2", "O3", "O4", "O5"}},
		{"DAY ge 2025-03-01T00:00:00.000Z and DAY le 2025-03-02T00:00:00.000Z", []string{"O4", "O5"}},
		{"DAY in (2025-03-01T00:00:00Z, 2025-03-02T10:00:00Z)", []string{"O4"}},
	})
}

// TestBooleanPropertyAndNegation sends a boolean property on its own and unary minus,
// valid OData that was 501 (issue 30, item 6). EXPRESS: O2 and O5 true, O1, O3 and O4
// false, O'6 and O7 null; LATE: O2 2, O3 0, O5 5, O'6 -1, the others null.
func TestBooleanPropertyAndNegation(t *testing.T) {
	checkFilters(t, []filterCase{
		{"EXPRESS", []string{"O2", "O5"}},
		{"not EXPRESS", []string{"O1", "O3", "O4"}},
		{"EXPRESS or LATE eq 0", []string{"O2", "O3", "O5"}},
		{"(EXPRESS) and NET gt 1", []string{"O2"}},
		{"-LATE gt 0", []string{"O'6"}},
		{"-LATE le -2", []string{"O2", "O5"}},
	})
	w := get(testHandler(t), "/intelligence/api/odata/shop.svc/ORDERS_entries?$filter=STATUS")
	if w.Code != 400 || !strings.Contains(w.Body.String(), "a property on its own is a condition only when it is a boolean") {
		t.Errorf("a string property on its own: %d %s; want 400 saying why", w.Code, w.Body)
	}
}

// filterCase is a $filter and the ids of the orders it selects.
type filterCase struct {
	filter string
	want   []string
}

// checkFilters reads the orders' ids under each case's $filter and compares them, sorted,
// with the case's.
func checkFilters(t *testing.T, cases []filterCase) {
	t.Helper()
	h := testHandler(t)
	for _, c := range cases {
		w := get(h, "/intelligence/api/odata/shop.svc/ORDERS_entries?$select=ID&$orderby=ID&$filter="+url.QueryEscape(c.filter))
		if w.Code != 200 {
			t.Errorf("%s: %d %s", c.filter, w.Code, w.Body)
			continue
		}
		var page struct{ Value []struct{ ID string } }
		if err := json.Unmarshal(w.Body.Bytes(), &page); err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, v := range page.Value {
			got = append(got, v.ID)
		}
		slices.Sort(got)
		if !slices.Equal(got, c.want) {
			t.Errorf("%s: %v, want %v", c.filter, got, c.want)
		}
	}
}

// TestInListOfAThousandKeys: an in list of 1000 string keys of the demo's length (14 KB of
// $filter) is served; its values do not count toward the 8 KiB expression limit (issue 30,
// item 5).
func TestInListOfAThousandKeys(t *testing.T) {
	ids := []string{"'O1'", "'O5'"}
	for i := len(ids); i < 1000; i++ {
		ids = append(ids, fmt.Sprintf("'SO-%07d'", i))
	}
	checkFilters(t, []filterCase{{"ID in (" + strings.Join(ids, ", ") + ")", []string{"O1", "O5"}}})
}
