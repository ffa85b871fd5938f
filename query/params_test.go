package query

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// wantErr checks that err is a KindParameter *Error with the code and text given; code ""
// means no error.
func wantErr(t *testing.T, name string, err error, code, msg string) {
	t.Helper()
	if code == "" {
		if err != nil {
			t.Errorf("%s: unexpected error %v", name, err)
		}
		return
	}
	var qe *Error
	if !errors.As(err, &qe) {
		t.Errorf("%s: got %v, want %s %q", name, err, code, msg)
		return
	}
	if qe.Kind != KindParameter || qe.Code != code || qe.Error() != msg || qe.Status() != 400 {
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
		{"", "5001", 0, 0, 0, CodeConstraintViolation, "pageSize: 5001 is above the maximum page size 5000"},
		{"", "101", 100, 0, 0, CodeConstraintViolation, "pageSize: 101 is above the maximum page size 100"},
		{"", "0", 0, 0, 0, CodeConstraintViolation, "pageSize: 0 is below the minimum page size 1"},
		{"-1", "", 0, 0, 0, CodeConstraintViolation, "page: -1 is not a page number: pages count from 0 to 2147483647"},
		{"2147483648", "", 0, 0, 0, CodeConstraintViolation, "page: 2147483648 is out of range"},
		{"99999999999999999999", "", 0, 0, 0, CodeConstraintViolation, "page: 99999999999999999999 is out of range"},
		{"one", "", 0, 0, 0, CodeParameterMismatch, `page: "one" is not an integer`},
		{"", "1.5", 0, 0, 0, CodeParameterMismatch, `pageSize: "1.5" is not an integer`},
		{" 1", "", 0, 0, 0, CodeParameterMismatch, `page: " 1" is not an integer`},
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
		{"0", 0, CodeConstraintViolation, "searchPrecision: 0 is not between 1 and 100"},
		{"101", 0, CodeConstraintViolation, "searchPrecision: 101 is not between 1 and 100"},
		{"high", 0, CodeParameterMismatch, `searchPrecision: "high" is not an integer`},
	}
	for _, tt := range tests {
		got, err := ParseSearchPrecision(tt.in, 70)
		wantErr(t, "ParseSearchPrecision("+tt.in+")", err, tt.code, tt.msg)
		if err == nil && got != tt.want {
			t.Errorf("ParseSearchPrecision(%q) = %d, want %d", tt.in, got, tt.want)
		}
	}
	wantErr(t, "CheckSearchPrecision(0)", CheckSearchPrecision(0), "", "")
	wantErr(t, "CheckSearchPrecision(100)", CheckSearchPrecision(100), "", "")
	wantErr(t, "CheckSearchPrecision(-1)", CheckSearchPrecision(-1), CodeConstraintViolation, "search.precision: -1 is not between 0 and 100")
	wantErr(t, "CheckSearchPrecision(101)", CheckSearchPrecision(101), CodeConstraintViolation, "search.precision: 101 is not between 0 and 100")
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
		{[]string{"distinct,unique"}, false, CodeParameterIllegal, `options: unknown option "unique": the only option is distinct`},
		{[]string{"DISTINCT"}, false, CodeParameterIllegal, `options: unknown option "DISTINCT": the only option is distinct`},
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
		want      []SortKey
		code, msg string
	}{
		{"A", []SortKey{{Field: "A"}}, "", ""},
		{"+A", []SortKey{{Field: "A"}}, "", ""},
		{"-A", []SortKey{{Field: "A", Desc: true}}, "", ""},
		{" A", []SortKey{{Field: "A"}}, "", ""}, // a "+" decoded as a space
		{"-R.A,+R.B, C", []SortKey{{Field: "R.A", Desc: true}, {Field: "R.B"}, {Field: "C"}}, "", ""},
		{"", nil, CodeSortIsEmpty, "sort: no sort field given"},
		{"  ", nil, CodeSortIsEmpty, "sort: no sort field given"},
		{"A,,B", nil, CodeSortIsEmpty, "sort: item 2 names no field"},
		{"A,-", nil, CodeSortIsEmpty, "sort: item 2 names no field"},
		{"+A,-A", nil, CodeSortHasOpposite, `sort: field "A" is sorted both ascending and descending`},
		{"A,B,-A", nil, CodeSortHasOpposite, `sort: field "A" is sorted both ascending and descending`},
		{"A,+A", nil, CodeSortHasDuplicate, `sort: field "A" is given twice`},
		{strings.Repeat("A", 2049), nil, CodeConstraintViolation, "sort: the value is 2049 bytes long; at most 2048 are allowed"},
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
		want      SortKey
		code, msg string
	}{
		{"name", SortKey{Field: "name"}, "", ""},
		{"-id", SortKey{Field: "id", Desc: true}, "", ""},
		{"", SortKey{}, CodeSortIsEmpty, "sort: no sort field given"},
		{"id,name", SortKey{}, CodeParameterIllegal, "sort: lists sort by exactly one field, not 2"},
	}
	for _, tt := range tests {
		got, err := ParseSchemaSort(tt.in)
		wantErr(t, "ParseSchemaSort("+tt.in+")", err, tt.code, tt.msg)
		if err == nil && got != tt.want {
			t.Errorf("ParseSchemaSort(%q) = %v, want %v", tt.in, got, tt.want)
		}
	}
}

func TestCheckSort(t *testing.T) {
	keys := []SortKey{{Field: "A"}, {Field: "K", Desc: true}}
	wantErr(t, "allowed", CheckSort(keys, []string{"A", "B", "K"}), "", "")
	wantErr(t, "unknown", CheckSort(keys, []string{"A", "B"}), CodeSortUnknownField, `sort: "K" is not among the fields that can be sorted: A, B`)
	wantErr(t, "none", CheckSort(keys, nil), CodeSortUnknownField, `sort: "A" is not among the fields that can be sorted`)
	wantErr(t, "case", CheckSort([]SortKey{{Field: "a"}}, []string{"A"}), CodeSortUnknownField, `sort: "a" is not among the fields that can be sorted: A`)
	if got := []string{keys[0].String(), keys[1].String()}; !cmp.Equal(got, []string{"+A", "-K"}) {
		t.Errorf("SortKey.String = %q", got)
	}
}
