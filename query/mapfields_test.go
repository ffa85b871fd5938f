package query

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestMapFields(t *testing.T) {
	strip := func(f FieldRef) (FieldRef, error) {
		name, ok := strings.CutPrefix(f.Name, "R.")
		if !ok {
			return f, errors.New("field " + f.Name + " is not of R")
		}
		f.Name = name
		return f, nil
	}
	tests := []struct {
		in, want, err string
	}{
		{"R.A eq 1", "A eq 1", ""},
		{"not (R.A in (1, 2) or contains(R.B, 'x')) and R.C is not null", "not (A in (1, 2) or contains(B, 'x')) and C ne null", ""},
		{"R.A eq 1 and S.B eq 2 or T.C eq 3", "", "field S.B is not of R"},
	}
	for _, tt := range tests {
		e, err := Parse(tt.in)
		if err != nil {
			t.Fatal(err)
		}
		before := Format(e)
		got, err := MapFields(e, strip)
		switch {
		case tt.err != "":
			if err == nil || err.Error() != tt.err || got != nil {
				t.Errorf("MapFields(%s) = %v, %v; want nil, %q", tt.in, got, err, tt.err)
			}
		case err != nil:
			t.Errorf("MapFields(%s): %v", tt.in, err)
		default:
			if diff := cmp.Diff(tt.want, Format(got)); diff != "" {
				t.Errorf("MapFields(%s) (-want +got):\n%s", tt.in, diff)
			}
		}
		if after := Format(e); after != before {
			t.Errorf("MapFields changed its input %s to %s", before, after)
		}
	}
	if got, err := MapFields(nil, strip); got != nil || err != nil {
		t.Errorf("MapFields(nil) = %v, %v", got, err)
	}
	// Positions and types survive; f sees the field as it is.
	e, err := ParseAndBind("R.A gt 2", MapSchema{"R.A": TypeInteger})
	if err != nil {
		t.Fatal(err)
	}
	got, _ := MapFields(e, strip)
	want := &Compare{At: 0, Field: FieldRef{At: 0, Name: "A", Type: TypeInteger}, Op: Gt, Value: e.(*Compare).Value}
	if diff := cmp.Diff(Expr(want), got); diff != "" {
		t.Errorf("MapFields of a bound tree (-want +got):\n%s", diff)
	}
}
