package query

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
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
