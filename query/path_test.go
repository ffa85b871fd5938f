package query

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// TestODataPaths: under ODataSyntax a path expression is a field reference whose name
// keeps the "/"s (the OData service resolves it against its navigation properties);
// lambdas, /$count and casts stay unsupported, and without ODataSyntax a path is too.
func TestODataPaths(t *testing.T) {
	ok := []struct {
		src  string
		want Expr
	}{
		{"CUSTOMERS/COUNTRY eq 'DE'", cmpx("CUSTOMERS/COUNTRY", Eq, litStr("DE"))},
		{"A/B/C ne null", &IsNull{Field: fr("A/B/C"), Negated: true}},
		{"contains(A/B,'x')", call(Contains, "A/B", "x")},
		{"tolower(A/B) eq 'x'", &ScalarCompare{L: apply(FnToLower, field("A/B")), Op: Eq, R: konst(litStr("x"))}},
		{"'DE' eq A/B", cmpx("A/B", Eq, litStr("DE"))},
	}
	for _, tt := range ok {
		got, err := Parse(tt.src, ODataSyntax())
		if err != nil {
			t.Errorf("Parse(%q, ODataSyntax()): %v", tt.src, err)
			continue
		}
		if d := cmp.Diff(tt.want, got, ignorePos); d != "" {
			t.Errorf("Parse(%q, ODataSyntax()) (-want +got):\n%s", tt.src, d)
		}
	}
	bad := []struct {
		src  string
		opts []Option
		msg  string
	}{
		{"A/B eq 1", nil, "filterExpr: position 1: paths with / are not supported; name a field as FIELD or RECORD.FIELD"},
		{"A/$count gt 1", []Option{ODataSyntax()}, "filterExpr: position 1: path segments such as /$count are not supported"},
		{"R.T/B eq 1", []Option{ODataSyntax()}, "filterExpr: position 1: paths with / are not supported; name a field as FIELD or RECORD.FIELD"},
		{"A/ B eq 1", []Option{ODataSyntax()}, "filterExpr: position 1: paths with / are not supported; name a field as FIELD or RECORD.FIELD"},
		{"A/f(1) eq 1", []Option{ODataSyntax()}, "filterExpr: position 1: paths with / are not supported; name a field as FIELD or RECORD.FIELD"},
	}
	for _, tt := range bad {
		_, err := Parse(tt.src, tt.opts...)
		var qe *Error
		if !errors.As(err, &qe) || qe.Kind != KindUnsupported || qe.Error() != tt.msg {
			t.Errorf("Parse(%q): %v, want the unsupported %q", tt.src, err, tt.msg)
		}
	}
}

// TestODataLambdas: under ODataSyntax PATH/any(VAR: BODY), PATH/all(VAR: BODY) and
// PATH/any() parse into a Lambda (any case for the operator), and print back.
func TestODataLambdas(t *testing.T) {
	ignore := append(ignorePos, cmpopts.IgnoreFields(Lambda{}, "At"))
	ok := []struct {
		src, format string
		want        Expr
	}{
		{"ITEMS/any(i: i/QUANTITY gt 5)", "ITEMS/any(i: i/QUANTITY gt 5)", &Lambda{Path: "ITEMS", Var: "i", Body: cmpx("i/QUANTITY", Gt, litInt("5", 5))}},
		{"A/ITEMS/ALL(x:x/Q eq null or not x/P lt 1)", "A/ITEMS/all(x: x/Q eq null or not x/P lt 1)", &Lambda{Path: "A/ITEMS", All: true, Var: "x",
			Body: or(&IsNull{Field: fr("x/Q")}, not(cmpx("x/P", Lt, litInt("1", 1))))}},
		{"ITEMS/any() and S eq 'x'", "ITEMS/any() and S eq 'x'", &Logical{Op: And, L: &Lambda{Path: "ITEMS"}, R: cmpx("S", Eq, litStr("x"))}},
	}
	for _, tt := range ok {
		got, err := Parse(tt.src, ODataSyntax())
		if err != nil {
			t.Errorf("Parse(%q, ODataSyntax()): %v", tt.src, err)
			continue
		}
		if d := cmp.Diff(tt.want, got, ignore); d != "" {
			t.Errorf("Parse(%q, ODataSyntax()) (-want +got):\n%s", tt.src, d)
		}
		if f := Format(got); f != tt.format {
			t.Errorf("Format(Parse(%q)) = %q, want %q", tt.src, f, tt.format)
		}
	}
	bad := []struct {
		src  string
		opts []Option
		kind ErrorKind
		msg  string
	}{
		{"ITEMS/any(i: i/Q gt 5)", nil, KindUnsupported, "filterExpr: position 1: the lambda operator any is not supported"},
		{"ITEMS/all()", []Option{ODataSyntax()}, KindSyntax, `filterExpr: position 11: expected the variable of ITEMS/all(...), as in ITEMS/all(x: x/FIELD eq 1), found ")"`},
		{"ITEMS/any(i i/Q gt 5)", []Option{ODataSyntax()}, KindSyntax, `filterExpr: position 13: expected ":" after the lambda variable i, found "i"`},
		{"ITEMS/any(i: i/Q gt 5", []Option{ODataSyntax()}, KindSyntax, `filterExpr: position 22: expected ")" to close the lambda, found the end of the expression`},
	}
	for _, tt := range bad {
		_, err := Parse(tt.src, tt.opts...)
		var qe *Error
		if !errors.As(err, &qe) || qe.Kind != tt.kind || qe.Error() != tt.msg {
			t.Errorf("Parse(%q): %v, want %q", tt.src, err, tt.msg)
		}
	}
	// Bind refuses a lambda: only the OData service can resolve its path.
	e, err := Parse("ITEMS/any(i: i/Q gt 5)", ODataSyntax())
	if err != nil {
		t.Fatal(err)
	}
	var qe *Error
	if _, err := Bind(e, testSchema); !errors.As(err, &qe) || qe.Kind != KindUnsupported {
		t.Errorf("Bind of a lambda: %v, want unsupported", err)
	}
}
