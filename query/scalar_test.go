package query

import (
	"errors"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// TestApplyFunc: the semantics of the value functions, answers worked out by hand.
func TestApplyFunc(t *testing.T) {
	day := func(s string) Value { d, _ := parseDate(s); return Value{Type: TypeDate, Int: d} }
	instant := func(s string) Value {
		tm, _ := time.Parse(time.RFC3339, s)
		return Value{Type: TypeDateTime, Int: tm.UnixMicro()}
	}
	clock := func(s string) Value { us, _ := parseTime(s); return Value{Type: TypeTime, Int: us} }
	tests := []struct {
		fn   ScalarFunc
		args []Value
		want Value
	}{
		{FnToLower, []Value{String("ÄÖÜ Straße")}, String("äöü straße")},
		{FnToUpper, []Value{String("malmö")}, String("MALMÖ")},
		{FnToLower, []Value{Null(TypeString)}, Null(TypeString)},
		{FnLength, []Value{String("Malmö")}, Int(5)},
		{FnTrim, []Value{String(" \t x y \r\n")}, String("x y")},
		{FnIndexOf, []Value{String("Malmö"), String("ö")}, Int(4)},
		{FnIndexOf, []Value{String("abc"), String("x")}, Int(-1)},
		{FnIndexOf, []Value{String("abc"), String("")}, Int(0)},
		{FnConcat, []Value{String("a"), String("ö")}, String("aö")},
		{FnConcat, []Value{String("a"), Null(TypeString)}, Null(TypeString)},
		{FnSubstring, []Value{String("Malmö"), Int(3)}, String("mö")},
		{FnSubstring, []Value{String("Malmö"), Int(1), Int(2)}, String("al")},
		{FnSubstring, []Value{String("abc"), Int(-2), Int(2)}, String("ab")},
		{FnSubstring, []Value{String("abc"), Int(5)}, String("")},
		{FnSubstring, []Value{String("abc"), Int(1), Int(-1)}, String("")},
		{FnYear, []Value{day("1969-12-31")}, Int(1969)},
		{FnMonth, []Value{day("2024-02-29")}, Int(2)},
		{FnDay, []Value{day("2024-02-29")}, Int(29)},
		{FnYear, []Value{instant("1969-12-31T23:59:59Z")}, Int(1969)},
		{FnDay, []Value{instant("2025-03-02T23:59:59+00:00")}, Int(2)},
		{FnHour, []Value{instant("1969-12-31T22:30:15Z")}, Int(22)},
		{FnMinute, []Value{clock("14:15:30.5")}, Int(15)},
		{FnSecond, []Value{clock("14:15:30.5")}, Int(30)},
		{FnDate, []Value{instant("1969-12-31T23:00:00Z")}, day("1969-12-31")},
		{FnTime, []Value{instant("1969-12-31T23:00:00Z")}, clock("23:00:00")},
		{FnRound, []Value{Float(2.5)}, Float(3)},
		{FnRound, []Value{Float(-2.5)}, Float(-3)},
		{FnFloor, []Value{Float(-2.5)}, Float(-3)},
		{FnCeiling, []Value{Float(-2.5)}, Float(-2)},
		{FnRound, []Value{Int(7)}, Int(7)},
	}
	for _, tt := range tests {
		if got := ApplyFunc(tt.fn, tt.args); !cmp.Equal(tt.want, got) {
			t.Errorf("%v%v = %+v, want %+v", tt.fn, tt.args, got, tt.want)
		}
	}
}

// TestApplyArith: integer operations truncate, a remainder has the dividend's sign, and a
// division or modulo by zero, like an integer result beyond 64 bits, is null.
func TestApplyArith(t *testing.T) {
	tests := []struct {
		op   ArithOp
		t    Type
		a, b Value
		want Value
	}{
		{OpAdd, TypeInteger, Int(2), Int(3), Int(5)},
		{OpSub, TypeInteger, Int(2), Int(3), Int(-1)},
		{OpMul, TypeInteger, Int(-2), Int(3), Int(-6)},
		{OpDiv, TypeInteger, Int(-7), Int(2), Int(-3)},
		{OpMod, TypeInteger, Int(-7), Int(2), Int(-1)},
		{OpMod, TypeInteger, Int(7), Int(-2), Int(1)},
		{OpDiv, TypeInteger, Int(7), Int(0), Null(TypeInteger)},
		{OpMod, TypeInteger, Int(7), Int(0), Null(TypeInteger)},
		{OpDivBy, TypeFloat, Int(7), Int(2), Float(3.5)},
		{OpDiv, TypeFloat, Float(1), Float(0), Null(TypeFloat)},
		{OpMod, TypeFloat, Float(-7.5), Float(2), Float(-1.5)},
		{OpAdd, TypeFloat, Int(1), Float(0.5), Float(1.5)},
		{OpAdd, TypeInteger, Null(TypeInteger), Int(1), Null(TypeInteger)},
		{OpAdd, TypeInteger, Int(math.MaxInt64), Int(1), Null(TypeInteger)},
		{OpSub, TypeInteger, Int(math.MinInt64), Int(1), Null(TypeInteger)},
		{OpSub, TypeInteger, Int(-1), Int(math.MaxInt64), Int(math.MinInt64)},
		{OpMul, TypeInteger, Int(3037000500), Int(3037000500), Null(TypeInteger)},
		{OpMul, TypeInteger, Int(math.MinInt64), Int(-1), Null(TypeInteger)},
		{OpMul, TypeInteger, Int(-1), Int(math.MinInt64), Null(TypeInteger)},
		{OpMul, TypeInteger, Int(math.MinInt64), Int(1), Int(math.MinInt64)},
		{OpDiv, TypeInteger, Int(math.MinInt64), Int(-1), Null(TypeInteger)},
		{OpMod, TypeInteger, Int(math.MinInt64), Int(-1), Int(0)},
	}
	for _, tt := range tests {
		if got := ApplyArith(tt.op, tt.t, tt.a, tt.b); !cmp.Equal(tt.want, got) {
			t.Errorf("%+v %v %+v = %+v, want %+v", tt.a, tt.op, tt.b, got, tt.want)
		}
	}
}

// TestBindScalar: Bind types functions and arithmetic and converts their literals.
func TestBindScalar(t *testing.T) {
	s := MapSchema{"A": TypeString, "N": TypeInteger, "F": TypeFloat, "D": TypeDate, "T": TypeDateTime}
	now := time.Date(2026, 1, 2, 3, 4, 5, 6000, time.UTC)
	tests := []struct {
		src, want string
		typ       Type // of the left side
	}{
		{"N add 1 gt 2", "N add 1 gt 2", TypeInteger},
		{"N div 2 eq 1.5", "N div 2 eq 1.5", TypeInteger},
		{"N divby 2 eq 1", "N divby 2 eq 1", TypeFloat},
		{"F add N gt 1", "F add N gt 1", TypeFloat},
		{"length(A) eq '3'", "length(A) eq 3", TypeInteger},
		{"substring(A,'1') eq 'x'", "substring(A, 1) eq 'x'", TypeString},
		{"date(T) eq 2025-01-01", "date(T) eq 2025-01-01", TypeDate},
		{"round(F) eq 1", "round(F) eq 1", TypeFloat},
		{"round(N) eq 1", "round(N) eq 1", TypeInteger},
	}
	for _, tt := range tests {
		e, err := ParseAndBind(tt.src, s, ODataSyntax())
		if err != nil {
			t.Errorf("%s: %v", tt.src, err)
			continue
		}
		sc, ok := e.(*ScalarCompare)
		if !ok {
			t.Errorf("%s: %T, want *ScalarCompare", tt.src, e)
			continue
		}
		if got := Format(e); got != tt.want || sc.L.ResultType() != tt.typ {
			t.Errorf("%s: %q of type %v, want %q of type %v", tt.src, got, sc.L.ResultType(), tt.want, tt.typ)
		}
	}
	// now() is fixed at binding and a field compared with it is the plain node.
	e, err := ParseAndBind("T lt now()", s, ODataSyntax(), WithNow(now))
	if err != nil {
		t.Fatal(err)
	}
	c, ok := e.(*Compare)
	if !ok || c.Value.Value != DateTime(now) {
		t.Errorf("T lt now(): %#v, want a Compare with %v", e, now)
	}
	// A comparison that names no field is valid OData outside the subset, as two
	// literals are (it was left to the planner, a 400 "the condition names no field").
	for _, src := range []string{"year(now()) eq 2026", "length('abc') add 1 gt year(now())", "2026 eq year(now())"} {
		_, err := ParseAndBind(src, s, ODataSyntax(), WithNow(now))
		var qe *Error
		if !errors.As(err, &qe) || qe.Kind != KindUnsupported || qe.Code != CodeFilterNotSupported || !strings.Contains(err.Error(), "position 1: a comparison that names no field is not supported") {
			t.Errorf("%s: %v, want a not-supported error at position 1", src, err)
		}
	}
}
