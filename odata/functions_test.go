package odata

import (
	"encoding/json"
	"net/url"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/kmkit/kmkit/problem"
)

// TestFilterFunctions: what SAP Cloud SDK, CAP and BI tools write in $filter, answered
// with the orders of testdata/shop the conditions hold for (worked out by hand from
// orders.csv; O7 has nulls only, so every comparison on it is unknown).
func TestFilterFunctions(t *testing.T) {
	all := []string{"O1", "O2", "O3", "O4", "O5", "O'6"}
	tests := []struct {
		filter string
		want   []string
	}{
		// a boolean function compared with true or false: the call or its negation
		{"contains(STATUS,'AI') eq true", []string{"O2", "O3"}},
		{"(contains(STATUS,'AI') eq true)", []string{"O2", "O3"}},
		{"contains(STATUS,'AI') eq false", []string{"O1", "O4", "O5", "O'6"}},
		{"contains(STATUS,'AI') ne true", []string{"O1", "O4", "O5", "O'6"}},
		{"contains(STATUS,'AI') ne false", []string{"O2", "O3"}},
		{"Contains(STATUS,'AI') EQ TRUE", []string{"O2", "O3"}},
		{"true eq startswith(STATUS,'O')", []string{"O1", "O4"}},
		{"endswith(STATUS,'ED') eq false", []string{"O1", "O2", "O3", "O4"}},
		{"contains(tolower(STATUS),'ai') eq true", []string{"O2", "O3"}},
		// canonical functions and arithmetic
		{"tolower(STATUS) eq 'paid'", []string{"O2", "O3"}},
		{"toupper(tolower(STATUS)) eq 'OPEN'", []string{"O1", "O4"}},
		{"year(DAY) eq 2025 and month(DAY) eq 2", []string{"O2", "O3"}},
		{"year(DAY) add 1 eq 2026", all},
		{"day(DAY) le 2", []string{"O4", "O5", "O'6"}},
		{"length(concat(STATUS,CUST)) gt 8", []string{"O5", "O'6"}},
		{"length(STATUS) eq 4", []string{"O1", "O2", "O3", "O4"}},
		{"indexof(STATUS,'P') eq 1", []string{"O1", "O4"}},
		{"indexof(STATUS,'P') eq 3", []string{"O5"}},
		{"substring(ID,1) eq '5'", []string{"O5"}},
		{"substring(STATUS,0,2) eq 'PA'", []string{"O2", "O3"}},
		{"trim(concat(' ',STATUS)) eq 'OPEN'", []string{"O1", "O4"}},
		{"hour(SLOT) ge 10", []string{"O2", "O3", "O'6"}},
		{"minute(SLOT) eq 15 and second(SLOT) eq 30", []string{"O3"}},
		{"hour(CREATED) eq 23 and minute(SEEN) eq 59", []string{"O5"}},
		{"date(CREATED) eq DAY", all},
		{"time(CREATED) lt 09:00:00", []string{"O2", "O'6"}},
		{"LATE div 0 eq null", append(slices.Clone(all), "O7")},
		{"LATE mod 2 eq 1", []string{"O5"}},
		{"LATE mul 2 sub 1 ge 3", []string{"O2", "O5"}},
		{"NET divby 4 gt 60", []string{"O2", "O4"}},
		{"round(NET) eq 101 or floor(NET) eq 0 or ceiling(NET) eq -325", []string{"O1", "O5", "O'6"}},
		{"tolower(STATUS) in ('open','shipped')", []string{"O1", "O4", "O5"}},
		{"now() gt CREATED", all}, // now() is the handler's clock, 2026-03-04
	}
	h := testHandler(t)
	for _, tt := range tests {
		t.Run(tt.filter, func(t *testing.T) {
			target := svc + "/ORDERS_entries?$select=ID&$filter=" + url.QueryEscape(tt.filter)
			w := get(h, target)
			if w.Code != 200 {
				t.Fatalf("GET %s: %d %s", target, w.Code, w.Body)
			}
			var body struct{ Value []struct{ ID string } }
			if err := json.Unmarshal(w.Body.Bytes(), &body); err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, e := range body.Value {
				got = append(got, e.ID)
			}
			if d := cmp.Diff(tt.want, got); d != "" {
				t.Errorf("GET %s (-want +got):\n%s", target, d)
			}
		})
	}
}

// TestFilterFunctionErrors: a function or operator OData defines that the service does
// not implement is 501 (OData's Minimal conformance level); type errors stay 400.
func TestFilterFunctionErrors(t *testing.T) {
	tests := []struct {
		filter string
		want   response
	}{
		{"matchesPattern(STATUS,'^P')", response{501, problem.ContentType, problemBodyAt(501, "FILTER_NOT_SUPPORTED", `$filter: position 1: the function matchesPattern is not supported`, "$filter")}},
		{"fractionalseconds(SEEN) gt 0", response{501, problem.ContentType, problemBodyAt(501, "FILTER_NOT_SUPPORTED", `$filter: position 1: the function fractionalseconds is not supported`, "$filter")}},
		{"geo.distance(ID,CUST) lt 1", response{501, problem.ContentType, problemBodyAt(501, "FILTER_NOT_SUPPORTED", `$filter: position 1: the function geo.distance is not supported`, "$filter")}},
		{"STATUS has 'x'", response{501, problem.ContentType, problemBodyAt(501, "FILTER_NOT_SUPPORTED", `$filter: position 8: the has operator is not supported`, "$filter")}},
		{"contains(STATUS,'x') eq 1", response{501, problem.ContentType, problemBodyAt(501, "FILTER_NOT_SUPPORTED", `$filter: position 22: comparing the result of contains is supported only with eq or ne and true or false`, "$filter")}},
		{"STATUS", response{400, problem.ContentType, problemBodyAt(400, "FILTER_TYPE_MISMATCH", `$filter: position 1: STATUS is a string: a property on its own is a condition only when it is a boolean; compare it, as in STATUS eq ...`, "$filter")}},
		{"year(STATUS) eq 2025", response{400, problem.ContentType, problemBodyAt(400, "FILTER_TYPE_MISMATCH", `$filter: position 6: year needs a date, datetime or timestamp; STATUS is a string`, "$filter")}},
		{"tolower(NET) eq 'x'", response{400, problem.ContentType, problemBodyAt(400, "FILTER_TYPE_MISMATCH", `$filter: position 9: tolower needs a string; NET is a float`, "$filter")}},
		{"year(DAY) eq 'x'", response{400, problem.ContentType, problemBodyAt(400, "FILTER_TYPE_MISMATCH", `$filter: position 14: year(DAY) is an integer and cannot be compared with the text 'x'; write a number such as 42`, "$filter")}},
		{"STATUS add 1 eq 2", response{400, problem.ContentType, problemBodyAt(400, "FILTER_TYPE_MISMATCH", `$filter: position 1: add needs numbers; STATUS is a string`, "$filter")}},
		{"hour(DAY) eq 1", response{400, problem.ContentType, problemBodyAt(400, "FILTER_TYPE_MISMATCH", `$filter: position 6: hour needs a datetime, timestamp or time; DAY is a date`, "$filter")}},
		{"tolower(STATUS,ID) eq 'x'", response{400, problem.ContentType, problemBodyAt(400, "FILTER_SYNTAX_ERROR", `$filter: position 1: tolower takes 1 argument, not 2`, "$filter")}},
		{"foo(STATUS) eq 1", response{400, problem.ContentType, problemBodyAt(400, "FILTER_SYNTAX_ERROR", `$filter: position 1: foo is not a function of $filter`, "$filter")}},
		{"tolower(STATUS) eq NAME", response{400, problem.ContentType, problemBodyAt(400, "KM_FIELD_NOTFOUND", `$filter: position 20: unknown field "NAME"; did you mean CUSTOMERS.NAME?`, "$filter")}},
	}
	h := testHandler(t)
	for _, tt := range tests {
		t.Run(tt.filter, func(t *testing.T) {
			checkGET(t, h, svc+"/ORDERS_entries?$filter="+url.QueryEscape(tt.filter), nil, tt.want)
		})
	}
}

// TestOrderByExpressions: $orderby items that are expressions, nulls last in both
// directions, ties in row order (orders worked out by hand from orders.csv).
func TestOrderByExpressions(t *testing.T) {
	tests := []struct {
		orderby string
		want    []string
	}{
		// tolower(STATUS): cancelled O'6, open O1 O4, paid O2 O3, shipped O5, null O7
		{"tolower(STATUS)", []string{"O'6", "O1", "O4", "O2", "O3", "O5", "O7"}},
		{"tolower(STATUS) desc", []string{"O5", "O2", "O3", "O1", "O4", "O'6", "O7"}},
		{"tolower(STATUS) DESC,ID desc", []string{"O5", "O3", "O2", "O4", "O1", "O'6", "O7"}},
		// month(DAY): 1 O1, 2 O2 O3, 3 O4 O5, 4 O'6, null O7
		{"month(DAY) desc,length(ID)", []string{"O'6", "O4", "O5", "O2", "O3", "O1", "O7"}},
		// LATE mod 2: O2 0, O3 0, O5 1, O'6 -1, nulls O1 O4 O7
		{"LATE mod 2", []string{"O'6", "O2", "O3", "O5", "O1", "O4", "O7"}},
		{"NET mul -1", []string{"O4", "O2", "O1", "O3", "O5", "O'6", "O7"}},
		{"(ID) desc", []string{"O7", "O5", "O4", "O3", "O2", "O1", "O'6"}},
	}
	h := testHandler(t)
	for _, tt := range tests {
		t.Run(tt.orderby, func(t *testing.T) {
			target := svc + "/ORDERS_entries?$select=ID&$orderby=" + url.QueryEscape(tt.orderby)
			w := get(h, target)
			if w.Code != 200 {
				t.Fatalf("GET %s: %d %s", target, w.Code, w.Body)
			}
			var body struct{ Value []struct{ ID string } }
			if err := json.Unmarshal(w.Body.Bytes(), &body); err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, e := range body.Value {
				got = append(got, e.ID)
			}
			if d := cmp.Diff(tt.want, got); d != "" {
				t.Errorf("GET %s (-want +got):\n%s", target, d)
			}
		})
	}
	for _, tt := range []struct {
		orderby string
		want    response
	}{
		{"year(STATUS)", response{400, problem.ContentType, problemBodyAt(400, "FILTER_TYPE_MISMATCH", `$orderby: year(STATUS): year needs a date, datetime or timestamp; STATUS is a string`, "$orderby")}},
		{"matchesPattern(STATUS,'x')", response{501, problem.ContentType, problemBodyAt(501, "FILTER_NOT_SUPPORTED", `$orderby: position 1: the function matchesPattern is not supported`, "$orderby")}},
	} {
		checkGET(t, h, svc+"/ORDERS_entries?$orderby="+url.QueryEscape(tt.orderby), nil, tt.want)
	}
}
