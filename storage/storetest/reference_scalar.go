package storetest

import (
	"fmt"
	"math"
	"math/big"
	"slices"
	"strings"
	"time"

	"github.com/kmkit/kmkit/query"
)

// The reference's value expressions (OData's canonical functions and arithmetic), computed
// one row at a time from the unbound tree, written from the rules in the query package's
// documentation: null in, null out; texts counted in characters; dates and times in UTC;
// a division or modulo by zero is null.

// scalarValue computes s for one row.
func (ev *evaluation) scalarValue(s query.Scalar, refs map[string]fieldRef, get func(fieldRef) query.Value) query.Value {
	switch x := s.(type) {
	case *query.FieldOperand:
		return get(refs[x.Field.Name])
	case *query.Const:
		return x.Lit.Value
	case *query.Arithmetic:
		return refArith(x.Op, ev.scalarValue(x.L, refs, get), ev.scalarValue(x.R, refs, get))
	case *query.Apply:
		args := make([]query.Value, len(x.Args))
		for i, a := range x.Args {
			args[i] = ev.scalarValue(a, refs, get)
		}
		return refApply(x.Func, args)
	}
	panic(fmt.Sprintf("reference: unknown value expression %T", s))
}

func isNullValue(v query.Value) bool { return v.Null || v.Type == query.TypeNull }

func refArith(op query.ArithOp, a, b query.Value) query.Value {
	isFloat := op == query.OpDivBy || a.Type == query.TypeFloat || b.Type == query.TypeFloat
	if isNullValue(a) || isNullValue(b) {
		if isFloat {
			return query.Null(query.TypeFloat)
		}
		return query.Null(query.TypeInteger)
	}
	if !isFloat {
		x, y := a.Int, b.Int
		// Exactly, then null when the result is beyond 64 bits.
		var r big.Int
		bx, by := big.NewInt(x), big.NewInt(y)
		switch op {
		case query.OpAdd:
			r.Add(bx, by)
		case query.OpSub:
			r.Sub(bx, by)
		case query.OpMul:
			r.Mul(bx, by)
		default:
			if y == 0 {
				return query.Null(query.TypeInteger)
			}
			r.Quo(bx, by) // truncated; the remainder has the dividend's sign
			if op == query.OpMod {
				r.Sub(bx, new(big.Int).Mul(&r, by))
			}
		}
		if !r.IsInt64() {
			return query.Null(query.TypeInteger)
		}
		return query.Int(r.Int64())
	}
	asFloat := func(v query.Value) float64 {
		if v.Type == query.TypeInteger {
			return float64(v.Int)
		}
		return v.Float
	}
	x, y := asFloat(a), asFloat(b)
	switch op {
	case query.OpAdd:
		return query.Float(x + y)
	case query.OpSub:
		return query.Float(x - y)
	case query.OpMul:
		return query.Float(x * y)
	}
	if y == 0 {
		return query.Null(query.TypeFloat)
	}
	if op == query.OpMod {
		return query.Float(math.Mod(x, y))
	}
	return query.Float(x / y)
}

// refTime is the UTC time of a date, datetime or timestamp value.
func refTime(v query.Value) time.Time {
	if v.Type == query.TypeDate {
		return time.Date(1970, 1, 1, 0, 0, 0, 0, time.UTC).AddDate(0, 0, int(v.Int))
	}
	if v.Type == query.TypeTime {
		return time.Date(1970, 1, 1, 0, 0, 0, 0, time.UTC).Add(time.Duration(v.Int) * time.Microsecond)
	}
	return time.UnixMicro(v.Int).UTC()
}

// refAsText returns v, or for a time its text as the API presents it (HH:MM:SS, and the
// fraction of a second without trailing zeros when there is one): a time field is
// presented as a string, and the string functions and search read that text.
func refAsText(v query.Value) query.Value {
	if v.Type != query.TypeTime || v.Null {
		return v
	}
	us := v.Int
	s := fmt.Sprintf("%02d:%02d:%02d", us/3_600_000_000, us/60_000_000%60, us/1_000_000%60)
	if f := us % 1_000_000; f != 0 {
		s += strings.TrimRight(fmt.Sprintf(".%06d", f), "0")
	}
	return query.String(s)
}

func refApply(fn query.ScalarFunc, args []query.Value) query.Value {
	switch fn {
	case query.FnToLower, query.FnToUpper, query.FnTrim, query.FnLength, query.FnIndexOf, query.FnConcat, query.FnSubstring:
		args = slices.Clone(args)
		for i := range args {
			if i == 0 || fn == query.FnIndexOf || fn == query.FnConcat {
				args[i] = refAsText(args[i])
			}
		}
	}
	var result query.Type
	switch fn {
	case query.FnToLower, query.FnToUpper, query.FnTrim, query.FnConcat, query.FnSubstring, query.FnTimeText:
		result = query.TypeString
	case query.FnDate:
		result = query.TypeDate
	case query.FnTime:
		result = query.TypeTime
	case query.FnRound, query.FnFloor, query.FnCeiling:
		result = args[0].Type
	default:
		result = query.TypeInteger
	}
	for _, a := range args {
		if isNullValue(a) {
			return query.Null(result)
		}
	}
	a := args[0]
	text := func(v query.Value) string {
		if v.Type == query.TypeString {
			return v.Str
		}
		return fmt.Sprint(v.Format())
	}
	switch fn {
	case query.FnToLower:
		return query.String(strings.ToLower(a.Str))
	case query.FnToUpper:
		return query.String(strings.ToUpper(a.Str))
	case query.FnTrim:
		r := []rune(a.Str)
		ws := func(c rune) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }
		for len(r) > 0 && ws(r[0]) {
			r = r[1:]
		}
		for len(r) > 0 && ws(r[len(r)-1]) {
			r = r[:len(r)-1]
		}
		return query.String(string(r))
	case query.FnLength:
		return query.Int(int64(len([]rune(a.Str))))
	case query.FnIndexOf:
		s, sub := []rune(a.Str), []rune(text(args[1]))
		for i := 0; i+len(sub) <= len(s); i++ {
			if string(s[i:i+len(sub)]) == string(sub) {
				return query.Int(int64(i))
			}
		}
		return query.Int(-1)
	case query.FnConcat:
		return query.String(a.Str + text(args[1]))
	case query.FnSubstring:
		s := []rune(a.Str)
		start := min(max(args[1].Int, 0), int64(len(s)))
		end := int64(len(s))
		if len(args) > 2 {
			end = min(start+max(args[2].Int, 0), end)
		}
		return query.String(string(s[start:end]))
	case query.FnYear:
		return query.Int(int64(refTime(a).Year()))
	case query.FnMonth:
		return query.Int(int64(refTime(a).Month()))
	case query.FnDay:
		return query.Int(int64(refTime(a).Day()))
	case query.FnHour:
		return query.Int(int64(refTime(a).Hour()))
	case query.FnMinute:
		return query.Int(int64(refTime(a).Minute()))
	case query.FnSecond:
		return query.Int(int64(refTime(a).Second()))
	case query.FnDate:
		t := refTime(a)
		return query.Date(t)
	case query.FnTimeText:
		return refAsText(a)
	case query.FnTime:
		t := refTime(a)
		midnight := time.Date(t.Year(), t.Month(), t.Day(), 0, 0, 0, 0, time.UTC)
		return query.Value{Type: query.TypeTime, Int: t.Sub(midnight).Microseconds()}
	case query.FnRound, query.FnFloor, query.FnCeiling:
		if a.Type != query.TypeFloat {
			return a
		}
		switch fn {
		case query.FnRound:
			if a.Float < 0 {
				return query.Float(-math.Floor(-a.Float + 0.5))
			}
			return query.Float(math.Floor(a.Float + 0.5))
		case query.FnFloor:
			return query.Float(math.Floor(a.Float))
		}
		return query.Float(math.Ceil(a.Float))
	}
	panic(fmt.Sprintf("reference: unknown function %v", fn))
}

// compareValues compares two computed values of comparable types.
func cmpComputed(a, b query.Value) int {
	switch {
	case a.Type == query.TypeString:
		return strings.Compare(a.Str, b.Str)
	case a.Type == query.TypeFloat || b.Type == query.TypeFloat:
		x, y := a.Float, b.Float
		if a.Type == query.TypeInteger {
			x = float64(a.Int)
		}
		if b.Type == query.TypeInteger {
			y = float64(b.Int)
		}
		switch {
		case x < y:
			return -1
		case x > y:
			return 1
		}
		return 0
	}
	return cmpInt(a.Int, b.Int)
}

// evalScalarCompare decides "L op R" for one row.
func (ev *evaluation) evalScalarCompare(x *query.ScalarCompare, refs map[string]fieldRef, get func(fieldRef) query.Value) truth {
	left, op, right := x.L, x.Op, x.R
	// now() is the literal of the instant the suite binds at: on the left, the
	// comparison is turned around.
	if now, ok := nowLiteral(left); ok {
		left, right = right, now
		if m, ok := mirror[op]; ok {
			op = m
		}
	} else if now, ok := nowLiteral(right); ok {
		right = now
	}
	x = &query.ScalarCompare{At: x.At, L: left, Op: op, R: right}
	l := ev.scalarValue(x.L, refs, get)
	if c, ok := x.R.(*query.Const); ok {
		if c.Lit.Kind == query.LitNull {
			if isNullValue(l) == (x.Op == query.Eq) {
				return yes
			}
			return no
		}
		if isNullValue(l) {
			return unknown
		}
		return opHolds(x.Op, compareLiteral(l, c.Lit))
	}
	r := ev.scalarValue(x.R, refs, get)
	if isNullValue(l) || isNullValue(r) {
		return unknown
	}
	return opHolds(x.Op, cmpComputed(l, r))
}

// mirror turns a comparison around: a lt b is b gt a.
var mirror = map[query.CompareOp]query.CompareOp{query.Lt: query.Gt, query.Le: query.Ge, query.Gt: query.Lt, query.Ge: query.Le}

// nowLiteral returns, when s is now(), the literal of suiteNow.
func nowLiteral(s query.Scalar) (*query.Const, bool) {
	if a, ok := s.(*query.Apply); !ok || a.Func != query.FnNow {
		return nil, false
	}
	return &query.Const{Lit: query.Literal{Kind: query.LitDateTime, Raw: suiteNow.Format(time.RFC3339Nano), Value: query.DateTime(suiteNow)}}, true
}

// opHolds is whether comparison op holds for the result c of a three-way comparison.
func opHolds(op query.CompareOp, c int) truth {
	var ok bool
	switch op {
	case query.Eq:
		ok = c == 0
	case query.Ne:
		ok = c != 0
	case query.Gt:
		ok = c > 0
	case query.Ge:
		ok = c >= 0
	case query.Lt:
		ok = c < 0
	case query.Le:
		ok = c <= 0
	}
	if ok {
		return yes
	}
	return no
}

// evalScalarMatch decides contains, startswith or endswith for one row.
func (ev *evaluation) evalScalarMatch(x *query.ScalarMatch, refs map[string]fieldRef, get func(fieldRef) query.Value) truth {
	s := refAsText(ev.scalarValue(x.X, refs, get))
	var arg string
	if c, ok := x.Arg.(*query.Const); ok {
		arg = c.Lit.Raw
	} else {
		v := refAsText(ev.scalarValue(x.Arg, refs, get))
		if isNullValue(v) {
			return unknown
		}
		arg = v.Str
	}
	if isNullValue(s) {
		return unknown
	}
	var ok bool
	switch x.Func {
	case query.Contains:
		ok = strings.Contains(s.Str, arg)
	case query.StartsWith:
		ok = strings.HasPrefix(s.Str, arg)
	case query.EndsWith:
		ok = strings.HasSuffix(s.Str, arg)
	}
	if ok {
		return yes
	}
	return no
}
