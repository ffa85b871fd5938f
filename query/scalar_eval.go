package query

import (
	"math"
	"strings"
	"time"
	"unicode/utf8"
)

// TrimSpace is what trim removes at both ends of a text: space, tab, line feed and
// carriage return (not every Unicode space, so that SQL backends agree).
const TrimSpace = " \t\n\r"

// TimeText returns the text of a time of day given in microseconds since midnight, as the
// API presents it: HH:MM:SS, followed by the fraction of a second without trailing zeros
// when there is one (06:15:00, 07:00:00.5).
func TimeText(us int64) string {
	return time.UnixMicro(us).UTC().Format("15:04:05.999999")
}

// ApplyFunc computes the value function fn on one row's arguments, already typed as Bind
// types them (the semantics every backend implements; executors may compute faster paths
// with the same results). A null argument gives null. FnNow is never applied: Bind
// replaces it with its instant.
func ApplyFunc(fn ScalarFunc, args []Value) Value {
	rt := resultType(fn, TypeInvalid)
	if fn == FnRound || fn == FnFloor || fn == FnCeiling {
		rt = args[0].Type
	}
	for _, a := range args {
		if a.Null || a.Type == TypeNull {
			return Null(rt)
		}
	}
	a := args[0]
	switch fn {
	case FnToLower:
		return String(strings.ToLower(a.Str))
	case FnToUpper:
		return String(strings.ToUpper(a.Str))
	case FnTrim:
		return String(strings.Trim(a.Str, TrimSpace))
	case FnLength:
		return Int(int64(utf8.RuneCountInString(a.Str)))
	case FnIndexOf:
		i := strings.Index(a.Str, args[1].Str)
		if i < 0 {
			return Int(-1)
		}
		return Int(int64(utf8.RuneCountInString(a.Str[:i])))
	case FnConcat:
		return String(a.Str + args[1].Str)
	case FnSubstring:
		n := int64(-1)
		if len(args) > 2 {
			n = max(args[2].Int, 0) // a negative length takes nothing
		}
		return String(Substring(a.Str, args[1].Int, n))
	case FnYear, FnMonth, FnDay, FnHour, FnMinute, FnSecond:
		return Int(DatePart(fn, a))
	case FnDate:
		return Value{Type: TypeDate, Int: DayOfMicros(a.Int)}
	case FnTime:
		return Value{Type: TypeTime, Int: a.Int - DayOfMicros(a.Int)*MicrosPerDay}
	case FnTimeText:
		return String(TimeText(a.Int))
	case FnRound, FnFloor, FnCeiling:
		if a.Type != TypeFloat {
			return a
		}
		switch fn {
		case FnRound:
			return Float(math.Round(a.Float))
		case FnFloor:
			return Float(math.Floor(a.Float))
		}
		return Float(math.Ceil(a.Float))
	}
	return Null(rt)
}

// Substring returns the characters of s from the 0-based character start on, n of them
// (n < 0: to the end). A negative start counts as 0, a start beyond the end gives "".
func Substring(s string, start, n int64) string {
	start = max(start, 0)
	i := 0
	for k := int64(0); k < start; k++ {
		if i >= len(s) {
			return ""
		}
		_, w := utf8.DecodeRuneInString(s[i:])
		i += w
	}
	s = s[i:]
	if n < 0 {
		return s
	}
	j := 0
	for k := int64(0); k < n && j < len(s); k++ {
		_, w := utf8.DecodeRuneInString(s[j:])
		j += w
	}
	return s[:j]
}

// DatePart returns year, month, day (of a date or an instant, in UTC), hour, minute or
// second (of a time or an instant; the second without its fraction) of the non-null v.
func DatePart(fn ScalarFunc, v Value) int64 {
	switch fn {
	case FnYear, FnMonth, FnDay:
		d := v.Int
		if v.Type != TypeDate {
			d = DayOfMicros(v.Int)
		}
		y, m, day := CivilDate(d)
		switch fn {
		case FnYear:
			return y
		case FnMonth:
			return m
		}
		return day
	}
	us := v.Int
	if v.Type != TypeTime {
		us -= DayOfMicros(us) * MicrosPerDay
	}
	switch fn {
	case FnHour:
		return us / 3_600_000_000
	case FnMinute:
		return us / 60_000_000 % 60
	}
	return us / 1_000_000 % 60
}

// ApplyArith computes "a op b" for an operation of result type t (integer or float; the
// operands are numbers, a float operation reads integers as floats). A null operand, a
// division or modulo by zero, and an integer result beyond 64 bits give null.
func ApplyArith(op ArithOp, t Type, a, b Value) Value {
	if a.Null || b.Null || a.Type == TypeNull || b.Type == TypeNull {
		return Null(t)
	}
	if t == TypeInteger {
		x, y := a.Int, b.Int
		switch op {
		case OpAdd, OpSub, OpMul:
			if r, ok := IntArith(op, x, y); ok {
				return Int(r)
			}
			return Null(t)
		case OpDiv:
			if y == 0 || y == -1 && x == math.MinInt64 {
				return Null(t)
			}
			return Int(x / y)
		case OpMod:
			if y == 0 {
				return Null(t)
			}
			if y == -1 {
				return Int(0) // also for MinInt64, whose % -1 traps
			}
			return Int(x % y)
		}
		return Null(t)
	}
	x, y := a.Float, b.Float
	if a.Type == TypeInteger {
		x = float64(a.Int)
	}
	if b.Type == TypeInteger {
		y = float64(b.Int)
	}
	switch op {
	case OpAdd:
		return Float(x + y)
	case OpSub:
		return Float(x - y)
	case OpMul:
		return Float(x * y)
	case OpDiv, OpDivBy:
		if y == 0 {
			return Null(t)
		}
		return Float(x / y)
	case OpMod:
		if y == 0 {
			return Null(t)
		}
		return Float(math.Mod(x, y))
	}
	return Null(t)
}

// CompareValues compares two non-null values of comparable types (see Bind): strings byte
// by byte, numbers numerically (an integer with a float as floats), dates, times and
// instants by their integer encoding.
func CompareValues(a, b Value, op CompareOp) bool {
	c := 0
	switch {
	case a.Type == TypeString:
		c = strings.Compare(a.Str, b.Str)
	case a.Type == TypeFloat || b.Type == TypeFloat:
		x, y := a.Float, b.Float
		if a.Type == TypeInteger {
			x = float64(a.Int)
		}
		if b.Type == TypeInteger {
			y = float64(b.Int)
		}
		switch {
		case x < y:
			c = -1
		case x > y:
			c = 1
		case x != y: // NaN
			return op == Ne
		}
	case a.Type == TypeBoolean:
		c = cmpInt(b2i(a.Bool), b2i(b.Bool))
	default:
		c = cmpInt(a.Int, b.Int)
	}
	switch op {
	case Eq:
		return c == 0
	case Ne:
		return c != 0
	case Gt:
		return c > 0
	case Ge:
		return c >= 0
	case Lt:
		return c < 0
	}
	return c <= 0
}

// MatchText computes contains, startswith or endswith on two texts.
func MatchText(fn FuncName, s, arg string) bool {
	switch fn {
	case Contains:
		return strings.Contains(s, arg)
	case StartsWith:
		return strings.HasPrefix(s, arg)
	}
	return strings.HasSuffix(s, arg)
}

func cmpInt(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

func b2i(b bool) int64 {
	if b {
		return 1
	}
	return 0
}

// IntArith computes x add, sub or mul y, and reports false when the result does not fit
// 64 bits.
func IntArith(op ArithOp, x, y int64) (int64, bool) {
	switch op {
	case OpAdd:
		r := x + y
		return r, (x >= 0) != (y >= 0) || (r >= 0) == (x >= 0)
	case OpSub:
		r := x - y
		return r, (x >= 0) == (y >= 0) || (r >= 0) == (x >= 0)
	case OpMul:
		if x == 0 || y == 0 {
			return 0, true
		}
		r := x * y
		if r/y != x || x == -1 && y == math.MinInt64 || y == -1 && x == math.MinInt64 {
			return 0, false
		}
		return r, true
	}
	return 0, false
}
