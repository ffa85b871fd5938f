package query

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestFormat(t *testing.T) {
	tests := []struct {
		src, want string
	}{
		{"A  eq   1", "A eq 1"},
		{"A eq 'it''s'", "A eq 'it''s'"},
		{"5 lt A", "A gt 5"},
		{"A is null", "A eq null"},
		{"A is not null", "A ne null"},
		{"null ne A", "A ne null"},
		{"A not eq DE", "A ne DE"},
		{"A in(1,2 , 3)", "A in (1, 2, 3)"},
		{"A in ()", "A in ()"},
		{"contains(R.F,'x')", "contains(R.F, 'x')"},
		{"A eq 2023-12-05T15:48+03:00", "A eq 2023-12-05T15:48+03:00"},
		{"((A eq 1))", "A eq 1"},
		{"A eq 1 or B eq 2 and C eq 3", "A eq 1 or B eq 2 and C eq 3"},
		{"(A eq 1 or B eq 2) and C eq 3", "(A eq 1 or B eq 2) and C eq 3"},
		{"A eq 1 or (B eq 2 or C eq 3)", "A eq 1 or (B eq 2 or C eq 3)"},
		{"(A eq 1 or B eq 2) or C eq 3", "A eq 1 or B eq 2 or C eq 3"},
		{"A eq 1 and (B eq 2 and C eq 3)", "A eq 1 and (B eq 2 and C eq 3)"},
		{"not (A eq 1 and B eq 2)", "not (A eq 1 and B eq 2)"},
		{"not(not A eq 1)", "not not A eq 1"},
		{"not A is null", "not A eq null"},
	}
	for _, tt := range tests {
		e, err := Parse(tt.src)
		if err != nil {
			t.Errorf("Parse(%q): %v", tt.src, err)
			continue
		}
		got := Format(e)
		if got != tt.want {
			t.Errorf("Format(Parse(%q)) = %q, want %q", tt.src, got, tt.want)
		}
		back, err := Parse(got)
		if err != nil {
			t.Errorf("Parse(%q): %v", got, err)
			continue
		}
		if diff := cmp.Diff(e, back, ignorePos); diff != "" {
			t.Errorf("round trip of %q (-first +second):\n%s", tt.src, diff)
		}
	}
}

func TestFormatBuiltTrees(t *testing.T) {
	// Trees built by hand (for example by the KM handler ANDing filters) print with the
	// parentheses their shape needs.
	a, b, c := cmpx("A", Eq, litInt("1", 1)), cmpx("B", Eq, litInt("2", 2)), cmpx("C", Eq, litInt("3", 3))
	tests := []struct {
		e    Expr
		want string
	}{
		{and(or(a, b), c), "(A eq 1 or B eq 2) and C eq 3"},
		{and(a, or(b, c)), "A eq 1 and (B eq 2 or C eq 3)"},
		{or(and(a, b), and(b, c)), "A eq 1 and B eq 2 or B eq 2 and C eq 3"},
		{not(or(a, b)), "not (A eq 1 or B eq 2)"},
		{and(not(a), not(&In{Field: fr("D"), Values: []Literal{litStr("x'y")}})), "not A eq 1 and not D in ('x''y')"},
	}
	for _, tt := range tests {
		if got := Format(tt.e); got != tt.want {
			t.Errorf("Format = %q, want %q", got, tt.want)
		}
	}
}

func TestOperatorStrings(t *testing.T) {
	got := []string{Eq.String(), Le.String(), CompareOp(0).String(), And.String(), Or.String(),
		LogicalOp(9).String(), Contains.String(), EndsWith.String(), FuncName(7).String(),
		KindSyntax.String(), KindParameter.String(), ErrorKind(0).String()}
	want := []string{"eq", "le", "CompareOp(0)", "and", "or", "LogicalOp(9)", "contains", "endswith",
		"FuncName(7)", "syntax", "parameter", "ErrorKind(0)"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("mismatch (-want +got):\n%s", diff)
	}
}
