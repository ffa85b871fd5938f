package kmparams

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/kmkit/kmkit/problem"
	"github.com/kmkit/kmkit/query"
)

// wantErr checks that err is a query.KindParameter *query.Error with the code and text given; code ""
// means no error.
func wantErr(t *testing.T, name string, err error, code, msg string) {
	t.Helper()
	if code == "" {
		if err != nil {
			t.Errorf("%s: unexpected error %v", name, err)
		}
		return
	}
	var qe *query.Error
	if !errors.As(err, &qe) {
		t.Errorf("%s: got %v, want %s %q", name, err, code, msg)
		return
	}
	if qe.Kind != query.KindParameter || qe.Code != code || qe.Error() != msg || qe.Status() != 400 {
		t.Errorf("%s:\n got %v %s %d %q\nwant parameter %s 400 %q", name, qe.Kind, qe.Code, qe.Status(), qe.Error(), code, msg)
	}
}

func TestParsePaging(t *testing.T) {
	tests := []struct {
		page, size string
		max        int
		wantPage   int
		wantSize   int
		code, msg  string
	}{
		{"", "", 0, 0, 50, "", ""},
		{"3", "20", 0, 3, 20, "", ""},
		{"0", "1", 0, 0, 1, "", ""},
		{"", "5000", 0, 0, 5000, "", ""},
		{"", "", 10, 0, 10, "", ""},
		{"2147483647", "", 0, 2147483647, 50, "", ""},
		{"", "5001", 0, 0, 0, problem.CodeConstraint, "pageSize: 5001 is above the maximum page size 5000"},
		{"", "101", 100, 0, 0, problem.CodeConstraint, "pageSize: 101 is above the maximum page size 100"},
		{"", "0", 0, 0, 0, problem.CodeConstraint, "pageSize: 0 is below the minimum page size 1"},
		{"-1", "", 0, 0, 0, problem.CodeConstraint, "page: -1 is not a page number: pages count from 0 to 2147483647"},
		{"2147483648", "", 0, 0, 0, problem.CodeConstraint, "page: 2147483648 is out of range"},
		{"99999999999999999999", "", 0, 0, 0, problem.CodeConstraint, "page: 99999999999999999999 is out of range"},
		{"one", "", 0, 0, 0, problem.CodeParameterMismatch, `page: "one" is not an integer`},
		{"", "1.5", 0, 0, 0, problem.CodeParameterMismatch, `pageSize: "1.5" is not an integer`},
		{" 1", "", 0, 0, 0, problem.CodeParameterMismatch, `page: " 1" is not an integer`},
	}
	for _, tt := range tests {
		p, s, err := ParsePaging(tt.page, tt.size, tt.max)
		name := "ParsePaging(" + tt.page + ", " + tt.size + ")"
		wantErr(t, name, err, tt.code, tt.msg)
		if err == nil && (p != tt.wantPage || s != tt.wantSize) {
			t.Errorf("%s = %d, %d; want %d, %d", name, p, s, tt.wantPage, tt.wantSize)
		}
	}
}

func TestSearchPrecision(t *testing.T) {
	tests := []struct {
		in        string
		want      int
		code, msg string
	}{
		{"", 70, "", ""},
		{"1", 1, "", ""},
		{"100", 100, "", ""},
		{"0", 0, problem.CodeConstraint, "searchPrecision: 0 is not between 1 and 100"},
		{"101", 0, problem.CodeConstraint, "searchPrecision: 101 is not between 1 and 100"},
		{"high", 0, problem.CodeParameterMismatch, `searchPrecision: "high" is not an integer`},
	}
	for _, tt := range tests {
		got, err := ParseSearchPrecision(tt.in, 70)
		wantErr(t, "ParseSearchPrecision("+tt.in+")", err, tt.code, tt.msg)
		if err == nil && got != tt.want {
			t.Errorf("ParseSearchPrecision(%q) = %d, want %d", tt.in, got, tt.want)
		}
	}
	wantErr(t, "query.CheckSearchPrecision(0)", query.CheckSearchPrecision(0), "", "")
	wantErr(t, "query.CheckSearchPrecision(100)", query.CheckSearchPrecision(100), "", "")
	wantErr(t, "query.CheckSearchPrecision(-1)", query.CheckSearchPrecision(-1), problem.CodeConstraint, "search.precision: -1 is not between 0 and 100")
	wantErr(t, "query.CheckSearchPrecision(101)", query.CheckSearchPrecision(101), problem.CodeConstraint, "search.precision: 101 is not between 0 and 100")
}

func TestParseList(t *testing.T) {
	tests := []struct {
		in   []string
		want []string
	}{
		{nil, nil},
		{[]string{"A,B", "C"}, []string{"A", "B", "C"}},
		{[]string{"A", "B"}, []string{"A", "B"}},
		{[]string{" A , ,B,", ""}, []string{"A", "B"}},
		{[]string{"R.A,R.B"}, []string{"R.A", "R.B"}},
	}
	for _, tt := range tests {
		if diff := cmp.Diff(tt.want, ParseList(tt.in)); diff != "" {
			t.Errorf("ParseList(%q) mismatch (-want +got):\n%s", tt.in, diff)
		}
	}
}

func TestParseOptions(t *testing.T) {
	tests := []struct {
		in        []string
		want      bool
		code, msg string
	}{
		{nil, false, "", ""},
		{[]string{""}, false, "", ""},
		{[]string{"distinct"}, true, "", ""},
		{[]string{"distinct", "distinct"}, true, "", ""},
		{[]string{"distinct,"}, true, "", ""},
		{[]string{"distinct,unique"}, false, problem.CodeParameterIllegal, `options: unknown option "unique": the only option is distinct`},
		{[]string{"DISTINCT"}, false, problem.CodeParameterIllegal, `options: unknown option "DISTINCT": the only option is distinct`},
	}
	for _, tt := range tests {
		got, err := ParseOptions(tt.in)
		wantErr(t, "ParseOptions", err, tt.code, tt.msg)
		if err == nil && got != tt.want {
			t.Errorf("ParseOptions(%q) = %v, want %v", tt.in, got, tt.want)
		}
	}
}

func TestParseSort(t *testing.T) {
	tests := []struct {
		in        string
		want      []query.SortTerm
		code, msg string
	}{
		{"A", []query.SortTerm{{Field: "A"}}, "", ""},
		{"+A", []query.SortTerm{{Field: "A"}}, "", ""},
		{"-A", []query.SortTerm{{Field: "A", Desc: true}}, "", ""},
		{" A", []query.SortTerm{{Field: "A"}}, "", ""}, // a "+" decoded as a space
		{"-R.A,+R.B, C", []query.SortTerm{{Field: "R.A", Desc: true}, {Field: "R.B"}, {Field: "C"}}, "", ""},
		{"", nil, query.CodeSortIsEmpty, "sort: no sort field given"},
		{"  ", nil, query.CodeSortIsEmpty, "sort: no sort field given"},
		{"A,,B", nil, query.CodeSortIsEmpty, "sort: item 2 names no field"},
		{"A,-", nil, query.CodeSortIsEmpty, "sort: item 2 names no field"},
		{"+A,-A", nil, query.CodeSortHasOpposite, `sort: field "A" is sorted both ascending and descending`},
		{"A,B,-A", nil, query.CodeSortHasOpposite, `sort: field "A" is sorted both ascending and descending`},
		{"A,+A", nil, query.CodeSortHasDuplicate, `sort: field "A" is given twice`},
		{strings.Repeat("A", 2049), nil, problem.CodeConstraint, "sort: the value is 2049 bytes long; at most 2048 are allowed"},
	}
	for _, tt := range tests {
		got, err := ParseSort(tt.in)
		wantErr(t, "ParseSort("+tt.in+")", err, tt.code, tt.msg)
		if err == nil {
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("ParseSort(%q) mismatch (-want +got):\n%s", tt.in, diff)
			}
		}
	}
}

func TestParseSchemaSort(t *testing.T) {
	tests := []struct {
		in        string
		want      query.SortTerm
		code, msg string
	}{
		{"name", query.SortTerm{Field: "name"}, "", ""},
		{"-id", query.SortTerm{Field: "id", Desc: true}, "", ""},
		{"", query.SortTerm{}, query.CodeSortIsEmpty, "sort: no sort field given"},
		{"id,name", query.SortTerm{}, problem.CodeParameterIllegal, "sort: lists sort by exactly one field, not 2"},
	}
	for _, tt := range tests {
		got, err := ParseSchemaSort(tt.in)
		wantErr(t, "ParseSchemaSort("+tt.in+")", err, tt.code, tt.msg)
		if err == nil && got != tt.want {
			t.Errorf("ParseSchemaSort(%q) = %v, want %v", tt.in, got, tt.want)
		}
	}
}

// FuzzParseSort checks that ParseSort never panics and that accepted keys, printed with
// query.SortTerm.String and joined, parse to the same keys.
func FuzzParseSort(f *testing.F) {
	for _, s := range []string{"A", "+A", "-A", "-R.A,+R.B, C", "", ",", "A,,B", "+A,-A", "A,A", " A", "-", "+-A", "ä,-ö"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		keys, err := ParseSort(s)
		if err != nil {
			var qe *query.Error
			if !errors.As(err, &qe) || qe.Kind != query.KindParameter || qe.Code == "" {
				t.Fatalf("ParseSort(%q): %v", s, err)
			}
			return
		}
		parts := make([]string, len(keys))
		for i, k := range keys {
			if k.Field == "" {
				t.Fatalf("ParseSort(%q) gave an empty field", s)
			}
			parts[i] = k.String()
		}
		again, err := ParseSort(strings.Join(parts, ","))
		if err != nil && len(strings.Join(parts, ",")) <= MaxSortLength {
			t.Fatalf("ParseSort(%q) = %v, but its text fails: %v", s, keys, err)
		}
		if err == nil && !cmp.Equal(keys, again) {
			t.Fatalf("ParseSort(%q) = %v, again %v", s, keys, again)
		}
	})
}

// FuzzParsePaging checks that ParsePaging never panics and never returns values outside
// its bounds.
func FuzzParsePaging(f *testing.F) {
	f.Add("", "", 0)
	f.Add("1", "5000", 0)
	f.Add("-1", "x", 10)
	f.Add("2147483648", "0", 1)
	f.Fuzz(func(t *testing.T, page, size string, max int) {
		p, s, err := ParsePaging(page, size, max)
		if err != nil {
			var qe *query.Error
			if !errors.As(err, &qe) || qe.Kind != query.KindParameter {
				t.Fatalf("ParsePaging: %v", err)
			}
			return
		}
		limit := max
		if limit <= 0 {
			limit = query.DefaultMaxPageSize
		}
		if p < 0 || s < 1 || s > limit {
			t.Fatalf("ParsePaging(%q, %q, %d) = %d, %d out of bounds", page, size, max, p, s)
		}
	})
}

// FuzzSplitTopLevel checks that no part of a split splits again.
func FuzzSplitTopLevel(f *testing.F) {
	for _, s := range []string{"A eq 1, B eq 2", "A in (1,2),B eq 'x,y'", "'a'',b', c", "(,", ")),", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		parts := SplitTopLevel(s)
		if len(parts) == 0 {
			t.Fatalf("SplitTopLevel(%q) returned nothing", s)
		}
		for _, p := range parts {
			if again := SplitTopLevel(p); len(again) != 1 {
				t.Fatalf("SplitTopLevel(%q): part %q splits again into %q", s, p, again)
			}
		}
	})
}

func TestSplitTopLevel(t *testing.T) {
	tests := []struct {
		in   string
		want []string
	}{
		{"A eq 1", []string{"A eq 1"}},
		{"A eq 1, B eq 2", []string{"A eq 1", "B eq 2"}},
		{"A in (1, 2),B eq 'x,y'", []string{"A in (1, 2)", "B eq 'x,y'"}},
		{"A eq 'it''s, ok', contains(B, ',')", []string{"A eq 'it''s, ok'", "contains(B, ',')"}},
		{"((A in (1,2))), B eq 1", []string{"((A in (1,2)))", "B eq 1"}},
		{"A eq 1,", []string{"A eq 1", ""}},
		{"", []string{""}},
		{"A eq 'x, B eq 2", []string{"A eq 'x, B eq 2"}},
		{"(A eq 1, B eq 2", []string{"(A eq 1, B eq 2"}},
		{"A eq 1), B eq 2", []string{"A eq 1)", "B eq 2"}},
	}
	for _, tt := range tests {
		if diff := cmp.Diff(tt.want, SplitTopLevel(tt.in)); diff != "" {
			t.Errorf("SplitTopLevel(%q) mismatch (-want +got):\n%s", tt.in, diff)
		}
	}
}
