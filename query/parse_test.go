package query

import (
	"errors"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/kmkit/kmkit/problem"
)

// ignorePos compares trees without their positions.
var ignorePos = cmp.Options{
	cmpopts.IgnoreFields(Logical{}, "At"),
	cmpopts.IgnoreFields(Not{}, "At"),
	cmpopts.IgnoreFields(Compare{}, "At"),
	cmpopts.IgnoreFields(In{}, "At"),
	cmpopts.IgnoreFields(Call{}, "At"),
	cmpopts.IgnoreFields(IsNull{}, "At"),
	cmpopts.IgnoreFields(FieldRef{}, "At"),
	cmpopts.IgnoreFields(Literal{}, "At"),
	cmpopts.IgnoreFields(ScalarCompare{}, "At"),
	cmpopts.IgnoreFields(ScalarMatch{}, "At"),
	cmpopts.IgnoreFields(Apply{}, "At"),
	cmpopts.IgnoreFields(Arithmetic{}, "At"),
	cmpopts.IgnoreFields(Lambda{}, "At"),
}

func fr(name string) FieldRef { return FieldRef{Name: name} }

func litStr(s string) Literal { return Literal{Kind: LitString, Raw: s, Value: String(s)} }

func litInt(raw string, v int64) Literal { return Literal{Kind: LitInteger, Raw: raw, Value: Int(v)} }

func litDec(raw string, v float64) Literal {
	return Literal{Kind: LitDecimal, Raw: raw, Value: Float(v)}
}

func litBool(b bool) Literal {
	raw := "false"
	if b {
		raw = "true"
	}
	return Literal{Kind: LitBoolean, Raw: raw, Value: Bool(b)}
}

func litBare(raw string) Literal { return Literal{Kind: LitBare, Raw: raw} }

func days(s string) int64 {
	t, err := time.Parse(time.DateOnly, s)
	if err != nil {
		panic(err)
	}
	return DaysFromTime(t)
}

func micros(s string) int64 {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		panic(err)
	}
	return t.UnixMicro()
}

func litDate(raw string) Literal {
	return Literal{Kind: LitDate, Raw: raw, Value: Value{Type: TypeDate, Int: days(raw)}}
}

// litDT is a date-time literal written raw that denotes the instant utc.
func litDT(raw, utc string) Literal {
	return Literal{Kind: LitDateTime, Raw: raw, Value: Value{Type: TypeDateTime, Int: micros(utc)}}
}

func litTime(raw string, us int64) Literal {
	return Literal{Kind: LitTime, Raw: raw, Value: Value{Type: TypeTime, Int: us}}
}

func cmpx(field string, op CompareOp, v Literal) *Compare {
	return &Compare{Field: fr(field), Op: op, Value: v}
}

func and(l, r Expr) *Logical { return &Logical{Op: And, L: l, R: r} }
func or(l, r Expr) *Logical  { return &Logical{Op: Or, L: l, R: r} }
func not(x Expr) *Not        { return &Not{X: x} }

func TestParse(t *testing.T) {
	a1 := cmpx("A", Eq, litInt("1", 1))
	b2 := cmpx("B", Eq, litInt("2", 2))
	c3 := cmpx("C", Eq, litInt("3", 3))
	tests := []struct {
		src  string
		want Expr
	}{
		// every comparison operator
		{"A eq 1", a1},
		{"A ne 1", cmpx("A", Ne, litInt("1", 1))},
		{"A gt 1", cmpx("A", Gt, litInt("1", 1))},
		{"A ge 1", cmpx("A", Ge, litInt("1", 1))},
		{"A lt 1", cmpx("A", Lt, litInt("1", 1))},
		{"A le 1", cmpx("A", Le, litInt("1", 1))},
		{"A in (1, 2)", &In{Field: fr("A"), Values: []Literal{litInt("1", 1), litInt("2", 2)}}},
		{"A in ('x')", &In{Field: fr("A"), Values: []Literal{litStr("x")}}},
		{"A in ()", &In{Field: fr("A")}},
		{"A in(1,2)", &In{Field: fr("A"), Values: []Literal{litInt("1", 1), litInt("2", 2)}}},
		// functions
		{"contains(A,'x')", &Call{Func: Contains, Field: fr("A"), Arg: litStr("x")}},
		{"startswith( A , 'x' )", &Call{Func: StartsWith, Field: fr("A"), Arg: litStr("x")}},
		{"endswith(R.A,'it''s')", &Call{Func: EndsWith, Field: fr("R.A"), Arg: litStr("it's")}},
		{"contains(A,DE)", &Call{Func: Contains, Field: fr("A"), Arg: litBare("DE")}},
		{"not contains(A,'x')", not(&Call{Func: Contains, Field: fr("A"), Arg: litStr("x")})},
		// a field called like a function is a field when no "(" follows at once
		{"contains eq 1", cmpx("contains", Eq, litInt("1", 1))},
		// logical operators and precedence
		{"A eq 1 and B eq 2", and(a1, b2)},
		{"A eq 1 or B eq 2", or(a1, b2)},
		{"A eq 1 or B eq 2 and C eq 3", or(a1, and(b2, c3))},
		{"A eq 1 and B eq 2 or C eq 3", or(and(a1, b2), c3)},
		{"(A eq 1 or B eq 2) and C eq 3", and(or(a1, b2), c3)},
		{"A eq 1 and B eq 2 and C eq 3", and(and(a1, b2), c3)},
		{"A eq 1 and (B eq 2 and C eq 3)", and(a1, and(b2, c3))},
		{"not A eq 1", not(a1)},
		{"not A eq 1 and B eq 2", and(not(a1), b2)},
		{"not (A eq 1 and B eq 2)", not(and(a1, b2))},
		{"not not A eq 1", not(not(a1))},
		{"((A eq 1))", a1},
		{"not(A eq 1)", not(a1)},
		// literals
		{"A eq 'text'", cmpx("A", Eq, litStr("text"))},
		{"A eq ''", cmpx("A", Eq, litStr(""))},
		{"A eq ''''", cmpx("A", Eq, litStr("'"))},
		{"A eq 'O''Neil'", cmpx("A", Eq, litStr("O'Neil"))},
		{"A eq 'a,b (c) and d'", cmpx("A", Eq, litStr("a,b (c) and d"))},
		{"A eq 'Grüße'", cmpx("A", Eq, litStr("Grüße"))},
		{"A eq -7", cmpx("A", Eq, litInt("-7", -7))},
		{"A eq +7", cmpx("A", Eq, litInt("+7", 7))},
		{"A eq 9223372036854775807", cmpx("A", Eq, litInt("9223372036854775807", math.MaxInt64))},
		{"A eq 9223372036854775808", cmpx("A", Eq, litDec("9223372036854775808", 9223372036854775808))},
		{"A eq 1.5", cmpx("A", Eq, litDec("1.5", 1.5))},
		{"A eq -2e3", cmpx("A", Eq, litDec("-2e3", -2000))},
		{"A eq 1.25E-2", cmpx("A", Eq, litDec("1.25E-2", 0.0125))},
		{"A eq true", cmpx("A", Eq, litBool(true))},
		{"A eq false", cmpx("A", Eq, litBool(false))},
		{"A eq 2015-05-07", cmpx("A", Eq, litDate("2015-05-07"))},
		{"A eq 0000-01-01", cmpx("A", Eq, Literal{Kind: LitDate, Raw: "0000-01-01", Value: Value{Type: TypeDate, Int: -719528}})},
		{"A eq 2024-02-29", cmpx("A", Eq, litDate("2024-02-29"))},
		{"A eq 2023-12-05T15:48:44Z", cmpx("A", Eq, litDT("2023-12-05T15:48:44Z", "2023-12-05T15:48:44Z"))},
		{"A eq 2023-12-05t15:48:44z", cmpx("A", Eq, litDT("2023-12-05t15:48:44z", "2023-12-05T15:48:44Z"))}, // RFC 3339, 5.6
		{"A eq 2023-12-05t15:48+03:00", cmpx("A", Eq, litDT("2023-12-05t15:48+03:00", "2023-12-05T12:48:00Z"))},
		{"A eq 2023-12-05T15:48Z", cmpx("A", Eq, litDT("2023-12-05T15:48Z", "2023-12-05T15:48:00Z"))},
		{"A eq 2023-12-05T15:48+03:00", cmpx("A", Eq, litDT("2023-12-05T15:48+03:00", "2023-12-05T12:48:00Z"))},
		{"A eq 2023-12-05T15:48:44-05:30", cmpx("A", Eq, litDT("2023-12-05T15:48:44-05:30", "2023-12-05T21:18:44Z"))},
		{"A eq 2023-12-05T23:30:00-01:00", cmpx("A", Eq, litDT("2023-12-05T23:30:00-01:00", "2023-12-06T00:30:00Z"))},
		{"A eq 2023-12-05T15:48:44.5Z", cmpx("A", Eq, litDT("2023-12-05T15:48:44.5Z", "2023-12-05T15:48:44.5Z"))},
		{"A eq 2023-12-05T15:48:44.123456789Z", cmpx("A", Eq, litDT("2023-12-05T15:48:44.123456789Z", "2023-12-05T15:48:44.123456Z"))},
		{"A eq 1972-06-30T23:59:60Z", cmpx("A", Eq, litDT("1972-06-30T23:59:60Z", "1972-07-01T00:00:00Z"))},
		{"A eq 15:48:44", cmpx("A", Eq, litTime("15:48:44", (15*3600+48*60+44)*1e6))},
		{"A eq 15:48", cmpx("A", Eq, litTime("15:48", (15*3600+48*60)*1e6))},
		{"A eq 00:00:00.25", cmpx("A", Eq, litTime("00:00:00.25", 250000))},
		// legacy forms
		{"A eq DE", cmpx("A", Eq, litBare("DE"))},
		{"A eq O2C-17", cmpx("A", Eq, litBare("O2C-17"))},
		{"A eq München", cmpx("A", Eq, litBare("München"))},
		{"A eq 2015-13-01", cmpx("A", Eq, litBare("2015-13-01"))},
		{"A eq 42.", cmpx("A", Eq, litBare("42."))},
		{"A eq TRUE", cmpx("A", Eq, litBare("TRUE"))},
		{"A in (DE, AT)", &In{Field: fr("A"), Values: []Literal{litBare("DE"), litBare("AT")}}},
		{"A is null", &IsNull{Field: fr("A")}},
		{"A is not null", &IsNull{Field: fr("A"), Negated: true}},
		{"A not eq 1", cmpx("A", Ne, litInt("1", 1))},
		{"not A is null", not(&IsNull{Field: fr("A")})},
		// null
		{"A eq null", &IsNull{Field: fr("A")}},
		{"A ne null", &IsNull{Field: fr("A"), Negated: true}},
		{"null eq A", &IsNull{Field: fr("A")}},
		{"null ne A", &IsNull{Field: fr("A"), Negated: true}},
		// literals on the left are mirrored
		{"5 lt A", cmpx("A", Gt, litInt("5", 5))},
		{"5 le A", cmpx("A", Ge, litInt("5", 5))},
		{"5 gt A", cmpx("A", Lt, litInt("5", 5))},
		{"5 ge A", cmpx("A", Le, litInt("5", 5))},
		{"5 eq A", cmpx("A", Eq, litInt("5", 5))},
		{"'x' ne A", cmpx("A", Ne, litStr("x"))},
		{"true eq A", cmpx("A", Eq, litBool(true))},
		{"2015-05-07 le D", cmpx("D", Ge, litDate("2015-05-07"))},
		// dotted names, underscores, letters beyond ASCII, white space
		{"ORDERS.NET_VALUE gt 100", cmpx("ORDERS.NET_VALUE", Gt, litInt("100", 100))},
		{"_x eq 1", cmpx("_x", Eq, litInt("1", 1))},
		{"Straße eq 'x'", cmpx("Straße", Eq, litStr("x"))},
		{"  A\teq\n1\r\n ", a1},
	}
	for _, tt := range tests {
		got, err := Parse(tt.src)
		if err != nil {
			t.Errorf("Parse(%q): %v", tt.src, err)
			continue
		}
		if diff := cmp.Diff(tt.want, got, ignorePos); diff != "" {
			t.Errorf("Parse(%q) mismatch (-want +got):\n%s", tt.src, diff)
		}
	}
}

func TestParsePositions(t *testing.T) {
	tests := []struct {
		src  string
		want Expr
	}{
		{"A eq 1", &Compare{At: 0, Field: FieldRef{At: 0, Name: "A"}, Op: Eq,
			Value: Literal{At: 5, Kind: LitInteger, Raw: "1", Value: Int(1)}}},
		{"5 lt  B", &Compare{At: 0, Field: FieldRef{At: 6, Name: "B"}, Op: Gt,
			Value: Literal{At: 0, Kind: LitInteger, Raw: "5", Value: Int(5)}}},
		{"not (A is null) or contains(B, 'x')", &Logical{At: 0, Op: Or,
			L: &Not{At: 0, X: &IsNull{At: 5, Field: FieldRef{At: 5, Name: "A"}}},
			R: &Call{At: 19, Func: Contains, Field: FieldRef{At: 28, Name: "B"},
				Arg: Literal{At: 31, Kind: LitString, Raw: "x", Value: String("x")}}}},
		{" X in ('a', b)", &In{At: 1, Field: FieldRef{At: 1, Name: "X"}, Values: []Literal{
			{At: 7, Kind: LitString, Raw: "a", Value: String("a")},
			{At: 12, Kind: LitBare, Raw: "b"}}}},
	}
	for _, tt := range tests {
		got, err := Parse(tt.src)
		if err != nil {
			t.Errorf("Parse(%q): %v", tt.src, err)
			continue
		}
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("Parse(%q) mismatch (-want +got):\n%s", tt.src, diff)
		}
	}
}

func TestParseErrors(t *testing.T) {
	tests := []struct {
		src  string
		kind ErrorKind
		code string
		msg  string // the whole Error()
	}{
		// syntax
		{"", KindSyntax, CodeFilterSyntax, "filterExpr: position 1: the expression is empty"},
		{"   ", KindSyntax, CodeFilterSyntax, "filterExpr: position 4: the expression is empty"},
		{"A eq", KindSyntax, CodeFilterSyntax, `filterExpr: position 5: expected a value after "eq", found the end of the expression`},
		{"(A eq 1) and B eq )", KindSyntax, CodeFilterSyntax, `filterExpr: position 19: expected a value after "eq", found ")"`},
		{"(A eq 1", KindSyntax, CodeFilterSyntax, `filterExpr: position 8: expected ")" to close the "(" at position 1, found the end of the expression`},
		{"A eq 1)", KindSyntax, CodeFilterSyntax, `filterExpr: position 7: this ")" has no matching "("`},
		{"A eq 'abc", KindSyntax, CodeFilterSyntax, "filterExpr: position 6: the text starting here has no closing quote"},
		{"A eq 'it''s", KindSyntax, CodeFilterSyntax, "filterExpr: position 6: the text starting here has no closing quote"},
		{"A eq 1 B eq 2", KindSyntax, CodeFilterSyntax, `filterExpr: position 8: expected "and", "or" or the end of the expression, found "B"`},
		{"A 1", KindSyntax, CodeFilterSyntax, `filterExpr: position 3: expected an operator (eq, ne, gt, ge, lt, le, in, is) after the field A, found "1"`},
		{"A eq 1 and", KindSyntax, CodeFilterSyntax, "filterExpr: position 11: expected a condition, found the end of the expression"},
		{"and A eq 1", KindSyntax, CodeFilterSyntax, `filterExpr: position 1: expected a condition, found "and"`},
		{"A eq and", KindSyntax, CodeFilterSyntax, `filterExpr: position 6: expected a value after "eq", found "and"`},
		{"A is nothing", KindSyntax, CodeFilterSyntax, `filterExpr: position 6: expected "null" after "is", found "nothing"`},
		{"A not gt 1", KindSyntax, CodeFilterSyntax, `filterExpr: position 7: expected "eq" after "not", found "gt"`},
		{"A in 1", KindSyntax, CodeFilterSyntax, `filterExpr: position 6: expected "(" after "in", found "1"`},
		{"A in (1 2)", KindSyntax, CodeFilterSyntax, `filterExpr: position 9: expected "," or ")" in the in list, found "2"`},
		{"A in (1,)", KindSyntax, CodeFilterSyntax, `filterExpr: position 9: expected a value after "in", found ")"`},
		{"A eq (1, 2)", KindSyntax, CodeFilterSyntax, `filterExpr: position 6: a parenthesised list may only follow "in"`},
		{"5 lt", KindSyntax, CodeFilterSyntax, "filterExpr: position 5: expected a field after the operator lt, found the end of the expression"},
		{"contains(1, 'x')", KindUnsupported, CodeFilterNotSupported, "filterExpr: position 10: the first argument of contains must be a field"},
		{"contains(,", KindSyntax, CodeFilterSyntax, `filterExpr: position 10: expected a field as the first argument of contains, found ","`},
		{"contains(A,", KindSyntax, CodeFilterSyntax, `filterExpr: position 12: expected a value after "contains(", found the end of the expression`},
		{"contains(A)", KindSyntax, CodeFilterSyntax, `filterExpr: position 11: expected "," after the field in contains, found ")"`},
		{"contains(A, 'x', 'y')", KindSyntax, CodeFilterSyntax, "filterExpr: position 16: contains takes two arguments: a field and a text"},
		{"contains(A 'x')", KindSyntax, CodeFilterSyntax, `filterExpr: position 12: expected "," after the field in contains, found the text 'x'`},
		{"A.. eq 1", KindSyntax, CodeFilterSyntax, `filterExpr: position 1: "A.." is not a field name: a dot must separate two names`},
		{"R. eq 1", KindSyntax, CodeFilterSyntax, `filterExpr: position 1: "R." is not a field name: a dot must separate two names`},
		{"12ab eq A", KindSyntax, CodeFilterSyntax, `filterExpr: position 1: expected a condition, found "12ab", which is neither a field nor a literal`},
		{"A eq 1 # 2", KindSyntax, CodeFilterSyntax, `filterExpr: position 8: expected "and", "or" or the end of the expression, found "#"`},
		{"A eq 1 eq 2", KindSyntax, CodeFilterSyntax, `filterExpr: position 8: expected "and", "or" or the end of the expression, found "eq"`},
		{"A eq 2023-12-05T15:48 03:00", KindSyntax, CodeFilterSyntax, "filterExpr: position 6: the date-time 2023-12-05T15:48 needs a time zone: Z or an offset ±hh:mm (a + sent unencoded in a URL may arrive as a space: send %2B)"},
		{"Ä eq 'ü' and B eq )", KindSyntax, CodeFilterSyntax, `filterExpr: position 19: expected a value after "eq", found ")"`},
		// unsupported
		{"Price add 2.45 eq 5", KindUnsupported, CodeFilterNotSupported, "filterExpr: position 7: the arithmetic operator add is not supported"},
		{"A eq 1 mod 2", KindUnsupported, CodeFilterNotSupported, "filterExpr: position 8: the arithmetic operator mod is not supported"},
		{"-A eq 1", KindUnsupported, CodeFilterNotSupported, "filterExpr: position 1: negation with - is not supported"},
		{"A eq -B", KindUnsupported, CodeFilterNotSupported, "filterExpr: position 6: negation with - is not supported"},
		{"style has Sales.Pattern'Yellow'", KindUnsupported, CodeFilterNotSupported, "filterExpr: position 7: the has operator is not supported"},
		{"style eq Sales.Pattern'Yellow'", KindUnsupported, CodeFilterNotSupported, "filterExpr: position 10: typed literals such as Sales.Pattern'...' are not supported"},
		{"D eq duration'P1D'", KindUnsupported, CodeFilterNotSupported, "filterExpr: position 6: typed literals such as duration'...' are not supported"},
		{"Products/any(p:p eq 1)", KindUnsupported, CodeFilterNotSupported, "filterExpr: position 1: the lambda operator any is not supported"},
		{"Products/$count gt 0", KindUnsupported, CodeFilterNotSupported, "filterExpr: position 1: path segments such as /$count are not supported"},
		{"Address/Street eq 'x'", KindUnsupported, CodeFilterNotSupported, "filterExpr: position 1: paths with / are not supported; name a field as FIELD or RECORD.FIELD"},
		{"tolower(A) eq 'x'", KindUnsupported, CodeFilterNotSupported, "filterExpr: position 1: the function tolower is not supported; the functions are contains, startswith and endswith"},
		{"A eq now()", KindUnsupported, CodeFilterNotSupported, "filterExpr: position 6: the function now is not supported; the functions are contains, startswith and endswith"},
		{"A in ['x']", KindUnsupported, CodeFilterNotSupported, "filterExpr: position 6: JSON arrays are not supported; write the list as in ('a', 'b')"},
		{`A eq "x"`, KindUnsupported, CodeFilterNotSupported, "filterExpr: position 6: JSON arrays, objects and strings are not supported; write text as 'text' and lists as in ('a', 'b')"},
		{"$it eq 'x'", KindUnsupported, CodeFilterNotSupported, "filterExpr: position 1: $it is not supported"},
		{"A eq @p", KindUnsupported, CodeFilterNotSupported, "filterExpr: position 6: parameter aliases and annotations (@...) are not supported"},
		{"A EQ 1", KindUnsupported, CodeFilterNotSupported, `filterExpr: position 3: keywords are lower case: write "eq", not "EQ"`},
		{"NOT A eq 1", KindUnsupported, CodeFilterNotSupported, `filterExpr: position 1: keywords are lower case: write "not", not "NOT"`},
		{"A eq 1 AND B eq 2", KindUnsupported, CodeFilterNotSupported, `filterExpr: position 8: keywords are lower case: write "and", not "AND"`},
		{"Completed", KindUnsupported, CodeFilterNotSupported, "filterExpr: position 1: a field on its own is not a condition; compare it, as in Completed eq true"},
		{"true", KindUnsupported, CodeFilterNotSupported, "filterExpr: position 1: a literal on its own is not a condition; compare a field with it"},
		{"1 eq 1", KindUnsupported, CodeFilterNotSupported, "filterExpr: position 1: comparing two literals is not supported; compare a field with a literal"},
		{"'x' in ('x')", KindUnsupported, CodeFilterNotSupported, "filterExpr: position 5: the left side of in must be a field"},
		{"contains('abc', A)", KindUnsupported, CodeFilterNotSupported, "filterExpr: position 10: the first argument of contains must be a field"},
		{"contains(A,'x') eq 1", KindUnsupported, CodeFilterNotSupported, "filterExpr: position 17: comparing the result of contains is supported only with eq or ne and true or false; write contains(...), contains(...) eq true or not contains(...)"},
		{"contains(A,'x') gt true", KindUnsupported, CodeFilterNotSupported, "filterExpr: position 17: comparing the result of contains is supported only with eq or ne and true or false; write contains(...), contains(...) eq true or not contains(...)"},
		{"tolower(A) eq 'x'", KindUnsupported, CodeFilterNotSupported, "filterExpr: position 1: the function tolower is not supported; the functions are contains, startswith and endswith"},
		{"A add 1 eq 2", KindUnsupported, CodeFilterNotSupported, "filterExpr: position 3: the arithmetic operator add is not supported"},
		{"A gt null", KindUnsupported, CodeFilterNotSupported, "filterExpr: position 3: gt null is not supported: only eq null and ne null compare with null"},
		{"null lt A", KindUnsupported, CodeFilterNotSupported, "filterExpr: position 6: null lt is not supported: only eq null and ne null compare with null"},
		{"A in ('x', null)", KindUnsupported, CodeFilterNotSupported, `filterExpr: position 12: null in an in list is not supported; add "or A eq null"`},
	}
	for _, tt := range tests {
		_, err := Parse(tt.src)
		var qe *Error
		if !errors.As(err, &qe) {
			t.Errorf("Parse(%q) = %v, want an *Error", tt.src, err)
			continue
		}
		if qe.Kind != tt.kind || qe.Code != tt.code || qe.Error() != tt.msg || qe.Status() != 400 {
			t.Errorf("Parse(%q):\n got %v %s %d %q\nwant %v %s 400 %q", tt.src, qe.Kind, qe.Code, qe.Status(), qe.Error(), tt.kind, tt.code, tt.msg)
		}
	}
}

func TestParseParamOption(t *testing.T) {
	_, err := Parse("A eq", WithParam("$filter"))
	want := `$filter: position 5: expected a value after "eq", found the end of the expression`
	if err == nil || err.Error() != want {
		t.Errorf("Parse = %v, want %s", err, want)
	}
}

func TestLimits(t *testing.T) {
	nested := func(n int) string {
		return strings.Repeat("(", n) + "A eq 1" + strings.Repeat(")", n)
	}
	nots := func(n int) string { return strings.Repeat("not ", n) + "A eq 1" }
	inList := func(n int) string {
		return "A in (" + strings.TrimSuffix(strings.Repeat("1,", n), ",") + ")"
	}
	long := "A eq '" + strings.Repeat("x", DefaultMaxLength-7) + "'"
	tests := []struct {
		name string
		src  string
		lim  Limits
		msg  string // "" when the text is accepted
	}{
		{"depth at the limit", nested(64), Limits{}, ""},
		{"depth above the limit", nested(65), Limits{}, `filterExpr: position 65: the expression nests deeper than 64 levels of parentheses and "not"`},
		{"nots above the limit", nots(65), Limits{}, `filterExpr: position 257: the expression nests deeper than 64 levels of parentheses and "not"`},
		{"deep nesting does not blow the stack", nested(4000), Limits{MaxLength: 1 << 20}, `filterExpr: position 65: the expression nests deeper than 64 levels of parentheses and "not"`},
		{"unclosed nesting", strings.Repeat("(", 8000), Limits{}, `filterExpr: position 65: the expression nests deeper than 64 levels of parentheses and "not"`},
		{"depth is capped", nested(20000), Limits{MaxDepth: 1 << 30, MaxLength: 1 << 20}, `filterExpr: position 10001: the expression nests deeper than 10000 levels of parentheses and "not"`},
		{"custom depth", nested(3), Limits{MaxDepth: 2}, `filterExpr: position 3: the expression nests deeper than 2 levels of parentheses and "not"`},
		{"length at the limit", long, Limits{}, ""},
		{"length above the limit", long + " ", Limits{}, "filterExpr: the expression is 8193 bytes long; at most 8192 are allowed"},
		{"in at the limit", inList(1000), Limits{MaxLength: 1 << 20}, ""},
		{"in above the limit", inList(1001), Limits{MaxLength: 1 << 20}, "filterExpr: position 2007: the in list has more than 1000 values"},
		{"custom in", inList(3), Limits{MaxIn: 2}, "filterExpr: position 11: the in list has more than 2 values"},
		{"long and chain", strings.Repeat("A eq 1 and ", 700) + "A eq 1", Limits{}, ""},
	}
	for _, tt := range tests {
		_, err := Parse(tt.src, WithLimits(tt.lim))
		if tt.msg == "" {
			if err != nil {
				t.Errorf("%s: %v", tt.name, err)
			}
			continue
		}
		var qe *Error
		if !errors.As(err, &qe) || qe.Kind != KindLimit || qe.Code != problem.CodeConstraint || qe.Error() != tt.msg {
			t.Errorf("%s: got %v, want limit error %q", tt.name, err, tt.msg)
		}
	}
}

func TestCharPos(t *testing.T) {
	tests := []struct {
		src  string
		pos  Pos
		want int
	}{
		{"abc", 0, 1},
		{"abc", 2, 3},
		{"äbc", 2, 2},
		{"äbc", 99, 4},
		{"abc", NoPos, 0},
	}
	for _, tt := range tests {
		if got := CharPos(tt.src, tt.pos); got != tt.want {
			t.Errorf("CharPos(%q, %d) = %d, want %d", tt.src, tt.pos, got, tt.want)
		}
	}
}

// TestConcurrentUse parses and binds from many goroutines at once (run with -race).
func TestConcurrentUse(t *testing.T) {
	exprs := benchExpressions(t)
	done := make(chan error)
	for g := 0; g < 8; g++ {
		go func() {
			var err error
			for i := 0; i < 50 && err == nil; i++ {
				for _, s := range exprs {
					var e Expr
					if e, err = ParseAndBind(s, anySchemaStringsFirst{}); err != nil {
						break
					}
					_ = Format(e)
				}
			}
			done <- err
		}()
	}
	for g := 0; g < 8; g++ {
		if err := <-done; err != nil {
			t.Error(err)
		}
	}
}
