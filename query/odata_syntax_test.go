package query

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestODataSyntax: what OData clients write (SAP Cloud SDK, CAP, odatajs, @odata/client)
// parses under ODataSyntax to the trees of the canonical lower-case forms, written out
// here by hand.
func TestODataSyntax(t *testing.T) {
	tests := []struct {
		src  string
		want Expr
	}{
		// type-suffixed numeric literals (OData 4.0 ABNF, SAP Cloud SDK)
		{"NET_VALUE gt 1000D", cmpx("NET_VALUE", Gt, litInt("1000", 1000))},
		{"NET_VALUE gt 1000d", cmpx("NET_VALUE", Gt, litInt("1000", 1000))},
		{"DAYS_LATE gt 5L", cmpx("DAYS_LATE", Gt, litInt("5", 5))},
		{"DAYS_LATE gt -5l", cmpx("DAYS_LATE", Gt, litInt("-5", -5))},
		{"NET_VALUE ge 1.5M", cmpx("NET_VALUE", Ge, litDec("1.5", 1.5))},
		{"NET_VALUE lt 2F", cmpx("NET_VALUE", Lt, litInt("2", 2))},
		{"NET_VALUE lt 2.5e3D", cmpx("NET_VALUE", Lt, litDec("2.5e3", 2500))},
		{"NET_VALUE in (1D, 2.5M, 3L)", &In{Field: fr("NET_VALUE"), Values: []Literal{litInt("1", 1), litDec("2.5", 2.5), litInt("3", 3)}}},
		{"1000D lt NET_VALUE", cmpx("NET_VALUE", Gt, litInt("1000", 1000))},
		// L only after an integer: 1.5L stays a bare word
		{"A eq 1.5L", cmpx("A", Eq, litBare("1.5L"))},
		// keywords, functions, true/false/null in any case (OData 4.01)
		{"STATUS EQ 'PAID'", cmpx("STATUS", Eq, litStr("PAID"))},
		{"A Ne 1 AND B Gt 2 Or NOT C Le 3", or(and(cmpx("A", Ne, litInt("1", 1)), cmpx("B", Gt, litInt("2", 2))), not(cmpx("C", Le, litInt("3", 3))))},
		{"Contains(STATUS,'AI')", &Call{Func: Contains, Field: fr("STATUS"), Arg: litStr("AI")}},
		{"STARTSWITH(STATUS,'A') and EndsWith(STATUS,'I')", and(&Call{Func: StartsWith, Field: fr("STATUS"), Arg: litStr("A")}, &Call{Func: EndsWith, Field: fr("STATUS"), Arg: litStr("I")})},
		{"EXPRESS eq True", cmpx("EXPRESS", Eq, litBool(true))},
		{"EXPRESS eq FALSE", cmpx("EXPRESS", Eq, litBool(false))},
		{"TRUE eq EXPRESS", cmpx("EXPRESS", Eq, litBool(true))},
		{"LATE eq Null", &IsNull{Field: fr("LATE")}},
		{"LATE NE NULL", &IsNull{Field: fr("LATE"), Negated: true}},
		{"LATE Is Not Null", &IsNull{Field: fr("LATE"), Negated: true}},
		{"STATUS IN ('A','B')", &In{Field: fr("STATUS"), Values: []Literal{litStr("A"), litStr("B")}}},
		// field names keep their case; a word that only looks like a function name
		// without "(" is a field
		{"Status eq 'x'", cmpx("Status", Eq, litStr("x"))},
		{"Contains eq 1", cmpx("Contains", Eq, litInt("1", 1))},
	}
	for _, tt := range tests {
		got, err := Parse(tt.src, ODataSyntax())
		if err != nil {
			t.Errorf("Parse(%q, ODataSyntax()): %v", tt.src, err)
			continue
		}
		if d := cmp.Diff(tt.want, got, ignorePos); d != "" {
			t.Errorf("Parse(%q, ODataSyntax()) (-want +got):\n%s", tt.src, d)
		}
	}
}

// TestODataSyntaxIsAnOption: the KM API's filterExpr keeps lower-case keywords, and a
// suffixed number stays a bare word there.
func TestODataSyntaxIsAnOption(t *testing.T) {
	for _, src := range []string{"STATUS EQ 'PAID'", "Contains(STATUS,'AI')", "A eq 1 AND B eq 2"} {
		_, err := Parse(src)
		var qe *Error
		if !errors.As(err, &qe) || qe.Kind != KindUnsupported {
			t.Errorf("Parse(%q) without ODataSyntax: %v, want a not-supported error", src, err)
		}
	}
	e, err := Parse("NET gt 1000D")
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(cmpx("NET", Gt, litBare("1000D")), e, ignorePos); d != "" {
		t.Errorf("without ODataSyntax (-want +got):\n%s", d)
	}
}

// FuzzParseOData checks the parser under ODataSyntax as FuzzParse checks the default
// one: no panic, errors are *Error inside the text, and accepted trees
// print to text that parses to the same tree.
func FuzzParseOData(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add(s)
	}
	for _, s := range []string{"A GT 1000D", "A eq 5L", "A eq -1.5m", "Contains(A,'x') Or B Eq TRUE", "NULL Ne A",
		"A eq 1e5D", "A eq 1.5L", "A In (1D,2F)", "NOT A eq 1", "A eq 2d", "A eq D", "A eq 9223372036854775808L"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, src string) {
		e, err := Parse(src, ODataSyntax())
		if err != nil {
			var qe *Error
			if !errors.As(err, &qe) || qe.Code == "" || qe.Msg == "" {
				t.Fatalf("Parse(%q): error %v is not a complete *Error", src, err)
			}
			if qe.Pos != NoPos && (qe.Pos < 0 || int(qe.Pos) > len(src)) {
				t.Fatalf("Parse(%q): position %d outside the text", src, qe.Pos)
			}
			return
		}
		text := Format(e)
		back, err := Parse(text, ODataSyntax())
		if err != nil {
			t.Fatalf("Parse(%q) accepted, but its Format %q fails: %v", src, text, err)
		}
		if diff := cmp.Diff(e, back, ignorePos); diff != "" {
			t.Fatalf("Parse(%q) and Parse(Format) = Parse(%q) differ:\n%s", src, text, diff)
		}
	})
}
