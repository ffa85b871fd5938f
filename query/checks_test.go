package query

import (
	"errors"
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

func TestCheckSort(t *testing.T) {
	keys := []SortTerm{{Field: "A"}, {Field: "K", Desc: true}}
	wantErr(t, "allowed", CheckSort(keys, []string{"A", "B", "K"}), "", "")
	wantErr(t, "unknown", CheckSort(keys, []string{"A", "B"}), CodeSortUnknownField, `sort: "K" is not among the fields that can be sorted: A, B`)
	wantErr(t, "none", CheckSort(keys, nil), CodeSortUnknownField, `sort: "A" is not among the fields that can be sorted`)
	wantErr(t, "case", CheckSort([]SortTerm{{Field: "a"}}, []string{"A"}), CodeSortUnknownField, `sort: "a" is not among the fields that can be sorted: A`)
	if got := []string{keys[0].String(), keys[1].String()}; !cmp.Equal(got, []string{"+A", "-K"}) {
		t.Errorf("SortTerm.String = %q", got)
	}
}
