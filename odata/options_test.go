package odata

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/kmkit/kmkit/problem"
	"github.com/kmkit/kmkit/query"
)

func TestParseQueryOptions(t *testing.T) {
	tests := []struct {
		raw  string
		want QueryOptions
	}{
		{"", QueryOptions{Top: -1}},
		{"$top=5&$skip=10", QueryOptions{Top: 5, Skip: 10}},
		{"$top=0", QueryOptions{Top: 0}},
		{"$count=true", QueryOptions{Top: -1, Count: true}},
		{"$count=false", QueryOptions{Top: -1}},
		{"$count=True", QueryOptions{Top: -1, Count: true}},
		{"$count=FALSE", QueryOptions{Top: -1}},
		{"$select=A,B,%20C%20,A", QueryOptions{Top: -1, Select: []string{"A", "B", "C"}}},
		{"$select=*", QueryOptions{Top: -1}},
		{"$select=A,*", QueryOptions{Top: -1}},
		{"$orderby=A%20desc,B,C+asc", QueryOptions{Top: -1, OrderBy: []query.SortTerm{{Field: "A", Desc: true}, {Field: "B"}, {Field: "C"}}}},
		{"$format=json", QueryOptions{Top: -1, Format: FormatJSON}},
		{"$format=application/json;odata.metadata=minimal;IEEE754Compatible=true", QueryOptions{Top: -1, Format: FormatJSON, IEEE754Compatible: true, Metadata: "minimal"}},
		{"$format=XML", QueryOptions{Top: -1, Format: FormatXML}},
		{"$format=atom", QueryOptions{Top: -1, Format: FormatXML}},
		{"$format=application%2Fatom%2Bxml", QueryOptions{Top: -1, Format: FormatXML}},
		{"$format=application/atom+xml", QueryOptions{Top: -1, Format: FormatXML}},
		// "+" is a space (form encoding) except as an offset's sign; %2B is a plus.
		{"$filter=A+eq+1&$orderby=A+desc", QueryOptions{Top: -1, FilterText: "A eq 1", OrderBy: []query.SortTerm{{Field: "A", Desc: true}}}},
		{"$filter=T+ge+2023-12-05T15:48+03:00", QueryOptions{Top: -1, FilterText: "T ge 2023-12-05T15:48+03:00"}},
		{"$filter=S%20eq%20'a%2Bb'", QueryOptions{Top: -1, FilterText: "S eq 'a+b'"}},
		{"filterid=A,B&filterid=A&FilterId=C", QueryOptions{Top: -1, FilterIDs: []string{"A", "B", "C"}}},
		// OData 4.01: names without regard to case, "$" optional.
		{"$TOP=1&skip=2&Count=true", QueryOptions{Top: 1, Skip: 2, Count: true}},
		// Custom options are ignored; "expand" without "$" is a custom option.
		{"sap-client=100&expand=x", QueryOptions{Top: -1}},
		// ";" and "+" survive in $filter.
		{"$filter=T%20ge%202023-12-05T15:48:44+03:00%20and%20S%20eq%20'a;b'", QueryOptions{Top: -1,
			FilterText: "T ge 2023-12-05T15:48:44+03:00 and S eq 'a;b'"}},
	}
	for _, tt := range tests {
		t.Run(tt.raw, func(t *testing.T) {
			got, err := ParseQueryOptions(tt.raw)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, *got, cmpopts.IgnoreFields(QueryOptions{}, "Filter")); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
			if (got.Filter != nil) != (tt.want.FilterText != "") {
				t.Errorf("Filter = %v for text %q", got.Filter, tt.want.FilterText)
			}
		})
	}
}

func TestParseQueryOptionsFilterKeepsPlusAndSemicolon(t *testing.T) {
	o, err := ParseQueryOptions("$filter=T%20ge%202023-12-05T15:48:44+03:00%20and%20S%20eq%20'a;b'")
	if err != nil {
		t.Fatal(err)
	}
	got := query.Format(o.Filter)
	want := "T ge 2023-12-05T15:48:44+03:00 and S eq 'a;b'"
	if got != want {
		t.Errorf("filter %q, want %q", got, want)
	}
}

func TestParseQueryOptionsErrors(t *testing.T) {
	type wantErr struct {
		Status int
		Code   string
		Msg    string
	}
	tests := []struct {
		raw  string
		want wantErr
	}{
		{"$top=-1", wantErr{400, "GENERAL_PARAMETER_MISSMATCH", `$top is "-1": want a non-negative integer`}},
		{"$top=x", wantErr{400, "GENERAL_PARAMETER_MISSMATCH", `$top is "x": want a non-negative integer`}},
		{"$skip=1.5", wantErr{400, "GENERAL_PARAMETER_MISSMATCH", `$skip is "1.5": want a non-negative integer`}},
		{"$skip=99999999999", wantErr{400, "GENERAL_CONSTRAINT_VIOLATION", `$skip is 99999999999: at most 2147483647 is allowed`}},
		{"$count=yes", wantErr{400, "GENERAL_PARAMETER_MISSMATCH", `$count is "yes": want true or false`}},
		{"$top=1&$top=2", wantErr{400, "ODATA_OPTION_REPEATED", `$top is given more than once`}},
		{"$top=1&top=2", wantErr{400, "ODATA_OPTION_REPEATED", `$top is given more than once`}},
		{"$format=csv", wantErr{415, "GENERAL_UNSUPPORTED_MEDIA_TYPE", `$format "csv" is not supported: use json, xml, atom, application/json, application/xml or application/atom+xml`}},
		{"$expand=*", wantErr{501, "ODATA_OPTION_NOT_SUPPORTED", `$expand item "*" is not supported: name a navigation property of the entity type (nest $expand inside it for the next level)`}},
		{"$search=x", wantErr{}},
		{"$search=x%20y", wantErr{501, "ODATA_OPTION_NOT_SUPPORTED", ""}},
		{"$apply=aggregate(A)", wantErr{}},
		{"$apply=concat(identity,identity)", wantErr{501, "ODATA_OPTION_NOT_SUPPORTED", ""}},
		{"$nope=1", wantErr{400, "GENERAL_PARAMETER_ILLEGAL", `unknown system query option $nope (supported: $select, $filter, $orderby, $top, $skip, $count, $search, $apply, $expand, $format)`}},
		{"@p=1", wantErr{400, "ODATA_OPTION_NOT_SUPPORTED", `parameter aliases such as @p are not supported; write the value into the expression`}},
		{"$select=", wantErr{400, "GENERAL_PARAMETER_ILLEGAL", `$select has an empty item: ""`}},
		{"$select=A,,B", wantErr{400, "GENERAL_PARAMETER_ILLEGAL", `$select has an empty item: "A,,B"`}},
		{"$select=A/B", wantErr{400, "ODATA_OPTION_NOT_SUPPORTED", `$select item "A/B": paths and options in $select are not supported; name properties`}},
		{"$select=1A", wantErr{400, "GENERAL_PARAMETER_ILLEGAL", `$select item "1A" is not a property name`}},
		{"$orderby=", wantErr{400, "SORT_IS_EMPTY", `$orderby: an item names no property: ""`}},
		{"$orderby=A%20up", wantErr{400, "GENERAL_PARAMETER_ILLEGAL", `$orderby item "A up": the direction is asc or desc, not "up"`}},
		{"$orderby=A%20asc%20x", wantErr{400, "GENERAL_PARAMETER_ILLEGAL", `$orderby item "A asc x": want a property name or an expression, and optionally asc or desc`}},
		{"$orderby=length(A),year(D)%20add%201%20desc", wantErr{}},
		{"$orderby=matchesPattern(A,'x')", wantErr{400, "FILTER_NOT_SUPPORTED", `$orderby: position 1: the function matchesPattern is not supported`}}, // the handler answers 501
		{"$orderby=A/B", wantErr{}}, // a path: the handler resolves it against the navigation properties
		{"$orderby=tolower(A)%20eq%20'x'", wantErr{400, "FILTER_SYNTAX_ERROR", `$orderby: position 12: expected the end of the expression, found "eq"`}},
		{"$orderby=A,A%20desc", wantErr{400, "SORT_HAS_OPPOSITE", `$orderby: property A is sorted both ascending and descending`}},
		{"$orderby=A,A", wantErr{400, "SORT_HAS_DUPLICATE", `$orderby: property A is given twice`}},
		{"$filter=A%20eq", wantErr{400, "FILTER_SYNTAX_ERROR", `$filter: position 5: expected a value after "eq", found the end of the expression`}},
		{"$filter=A%2Beq%2B1", wantErr{400, "FILTER_SYNTAX_ERROR", `$filter: position 2: expected an operator (eq, ne, gt, ge, lt, le, in, is) after the field A, found "+"`}},
		{"$format=application/atom+xml+x", wantErr{415, "GENERAL_UNSUPPORTED_MEDIA_TYPE", `$format "application/atom xml x" is not supported: use json, xml, atom, application/json, application/xml or application/atom+xml`}},
		{"$filter=matchesPattern(A,'x')", wantErr{400, "FILTER_NOT_SUPPORTED", ""}}, // the handler answers 501
		{"$filter=A%20add%201%20eq%202%20and%20contains(tolower(B),'x')%20eq%20true", wantErr{}},
		{"$filter=A%zz", wantErr{400, "GENERAL_PARAMETER_ILLEGAL", `$filter: the value has a malformed percent-escape`}},
	}
	for _, tt := range tests {
		t.Run(tt.raw, func(t *testing.T) {
			_, err := ParseQueryOptions(tt.raw)
			var got wantErr
			var p *problem.Problem
			var qe *query.Error
			switch {
			case err == nil && tt.want == wantErr{}:
				return
			case errors.As(err, &p):
				got = wantErr{p.Status, p.ErrorCode, p.Detail}
			case errors.As(err, &qe):
				got = wantErr{qe.Status(), qe.Code, qe.Error()}
			default:
				t.Fatalf("error %v (%T), want a problem or a query error", err, err)
			}
			if tt.want.Msg == "" { // only the class matters
				got.Msg = ""
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}
