package query

import "testing"

// TestODataBooleansAndNegation: under ODataSyntax a boolean property on its own is the
// condition that it is true, and unary minus negates; the KM filter language keeps
// refusing both (KindUnsupported: not part of its subset).
func TestODataBooleansAndNegation(t *testing.T) {
	for _, c := range []struct{ src, want string }{
		{"B", "B eq true"},
		{"not B", "not B eq true"},
		{"B and I gt 1", "B eq true and I gt 1"},
		{"I gt 1 or B", "I gt 1 or B eq true"},
		{"(B)", "B eq true"},
		{"not (B) and (B or I eq 2)", "not B eq true and (B eq true or I eq 2)"},
		{"-I gt 3", "0 sub I gt 3"},
		{"-(I add 1) le -4", "0 sub (I add 1) le -4"},
		{"(I) eq 1", "I eq 1"},
	} {
		e, err := ParseAndBind(c.src, testSchema, ODataSyntax())
		if err != nil {
			t.Errorf("%s: %v", c.src, err)
			continue
		}
		if got := Format(e); got != c.want {
			t.Errorf("%s: bound as %s, want %s", c.src, got, c.want)
		}
	}
	for _, src := range []string{"B", "not B", "-I gt 3"} {
		_, err := ParseAndBind(src, testSchema)
		if qe, ok := err.(*Error); !ok || qe.Kind != KindUnsupported {
			t.Errorf("%s in the KM filter language: %v, want KindUnsupported", src, err)
		}
	}
	_, err := ParseAndBind("S", testSchema, ODataSyntax())
	if qe, ok := err.(*Error); !ok || qe.Code != CodeFilterTypeMismatch ||
		qe.Msg != "S is a string: a property on its own is a condition only when it is a boolean; compare it, as in S eq ..." {
		t.Errorf("a string property on its own: %v, want a type mismatch saying so", err)
	}
}

// TestParenthesisedOperandAfterAnOperator: "A eq (1 add 2)" is valid OData, and Format
// writes left-nested arithmetic that way ("A eq (0 add 0) add 0"), which must parse again
// (the OData fuzzer found "A eq 0 Add 0 Add 0" printed into a text it then refused).
func TestParenthesisedOperandAfterAnOperator(t *testing.T) {
	for _, src := range []string{"I eq (1 add 2)", "I eq 0 Add 0 Add 0", "I eq (0 add 0) add 0", "(I add 1) eq (2 mul I)"} {
		e, err := ParseAndBind(src, testSchema, ODataSyntax())
		if err != nil {
			t.Errorf("%s: %v", src, err)
			continue
		}
		again, err := ParseAndBind(Format(e), testSchema, ODataSyntax())
		if err != nil || Format(again) != Format(e) {
			t.Errorf("%s: formatted as %s, which parses as %v, %v", src, Format(e), again, err)
		}
	}
}
