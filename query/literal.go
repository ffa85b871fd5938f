package query

import (
	"math"
	"strconv"
	"strings"
	"time"
)

// isDigit reports whether c is an ASCII digit.
func isDigit(c byte) bool { return '0' <= c && c <= '9' }

// digits reads exactly n ASCII digits at s[i:] and returns their value.
func digits(s string, i, n int) (int, bool) {
	if i+n > len(s) {
		return 0, false
	}
	v := 0
	for _, c := range []byte(s[i : i+n]) {
		if !isDigit(c) {
			return 0, false
		}
		v = v*10 + int(c-'0')
	}
	return v, true
}

// classify types an unquoted value as written. It returns LitBare, with a zero Value, for
// text that has the shape of no literal; such words are typed by the field at binding.
// A malformed number, date or time is also bare, so that a string field can still take it
// as text; Bind explains the fault when the field wants a number, date or time.
func classify(s string) (LiteralKind, Value) {
	switch s {
	case "true":
		return LitBoolean, Bool(true)
	case "false":
		return LitBoolean, Bool(false)
	case "null":
		return LitNull, Null(TypeNull)
	}
	if s == "" {
		return LitBare, Value{}
	}
	if v, ok := parseNumber(s); ok {
		if v.Type == TypeInteger {
			return LitInteger, v
		}
		return LitDecimal, v
	}
	if days, reason := parseDate(s); reason == "" {
		return LitDate, Value{Type: TypeDate, Int: days}
	}
	if us, reason := parseDateTime(s); reason == "" {
		return LitDateTime, Value{Type: TypeDateTime, Int: us}
	}
	if us, reason := parseTime(s); reason == "" {
		return LitTime, Value{Type: TypeTime, Int: us}
	}
	return LitBare, Value{}
}

// parseNumber parses an OData integer or decimal: [sign] digits [ "." digits ]
// [ ("e"|"E") [sign] digits ]. Integers that do not fit int64 become floats.
func parseNumber(s string) (Value, bool) {
	i := 0
	if i < len(s) && (s[i] == '+' || s[i] == '-') {
		i++
	}
	start := i
	for i < len(s) && isDigit(s[i]) {
		i++
	}
	if i == start {
		return Value{}, false
	}
	integer := true
	if i < len(s) && s[i] == '.' {
		i++
		d := i
		for i < len(s) && isDigit(s[i]) {
			i++
		}
		if i == d {
			return Value{}, false
		}
		integer = false
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		d := i
		for i < len(s) && isDigit(s[i]) {
			i++
		}
		if i == d {
			return Value{}, false
		}
		integer = false
	}
	if i != len(s) {
		return Value{}, false
	}
	if integer {
		if n, err := strconv.ParseInt(s, 10, 64); err == nil {
			return Int(n), true
		}
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsInf(f, 0) {
		return Value{}, false
	}
	return Float(f), true
}

var daysIn = [13]int{0, 31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31}

func leap(y int) bool { return y%4 == 0 && (y%100 != 0 || y%400 == 0) }

// parseYMD reads YYYY-MM-DD at the start of s. It returns the number of bytes read, or a
// reason why s is not a date.
func parseYMD(s string) (y, m, d, n int, reason string) {
	var ok1, ok2, ok3 bool
	y, ok1 = digits(s, 0, 4)
	m, ok2 = digits(s, 5, 2)
	d, ok3 = digits(s, 8, 2)
	if !ok1 || !ok2 || !ok3 || s[4] != '-' || s[7] != '-' {
		return 0, 0, 0, 0, "a date is written YYYY-MM-DD"
	}
	if m < 1 || m > 12 {
		return 0, 0, 0, 0, "month " + s[5:7] + " is not between 01 and 12"
	}
	if d < 1 || d > daysIn[m] || (m == 2 && d == 29 && !leap(y)) {
		return 0, 0, 0, 0, "day " + s[8:10] + " does not exist in " + s[:7]
	}
	return y, m, d, 10, ""
}

// parseDate parses YYYY-MM-DD to days since 1970-01-01, or returns why it cannot.
func parseDate(s string) (int64, string) {
	y, m, d, n, reason := parseYMD(s)
	if reason != "" {
		return 0, reason
	}
	if n != len(s) {
		return 0, "a date is written YYYY-MM-DD"
	}
	return DaysFromTime(time.Date(y, time.Month(m), d, 0, 0, 0, 0, time.UTC)), ""
}

// parseClock reads HH:MM[:SS[.fraction]] at the start of s (fraction of 1 to 12 digits,
// kept to the microsecond). It returns microseconds since midnight and bytes read.
func parseClock(s string) (us int64, n int, reason string) {
	h, ok1 := digits(s, 0, 2)
	mi, ok2 := digits(s, 3, 2)
	if !ok1 || !ok2 || s[2] != ':' {
		return 0, 0, "a time is written HH:MM, HH:MM:SS or HH:MM:SS.ffffff"
	}
	if h > 23 {
		return 0, 0, "hour " + s[:2] + " is not between 00 and 23"
	}
	if mi > 59 {
		return 0, 0, "minute " + s[3:5] + " is not between 00 and 59"
	}
	n = 5
	sec := 0
	if n < len(s) && s[n] == ':' {
		v, ok := digits(s, n+1, 2)
		if !ok {
			return 0, 0, "seconds are written with two digits"
		}
		if v > 60 { // 60 is a leap second
			return 0, 0, "second " + s[n+1:n+3] + " is not between 00 and 60"
		}
		sec = v
		n += 3
		if n < len(s) && s[n] == '.' {
			n++
			start := n
			var frac int64
			for n < len(s) && isDigit(s[n]) {
				if n-start < 6 {
					frac = frac*10 + int64(s[n]-'0')
				}
				n++
			}
			k := n - start
			if k == 0 || k > 12 {
				return 0, 0, "fractional seconds take 1 to 12 digits"
			}
			for ; k < 6; k++ {
				frac *= 10
			}
			us = frac
		}
	}
	us += (int64(h)*3600 + int64(mi)*60 + int64(sec)) * 1_000_000
	return us, n, ""
}

// pastMicros reports whether the date-time or time text s has a digit other than 0
// after the sixth of its fraction of a second, which parseClock drops.
func pastMicros(s string) bool {
	_, frac, ok := strings.Cut(s, ".")
	if !ok {
		return false
	}
	for i := 0; i < len(frac) && isDigit(frac[i]); i++ {
		if i >= 6 && frac[i] != '0' {
			return true
		}
	}
	return false
}

// parseTime parses a time of day to microseconds since midnight, or returns why it cannot.
func parseTime(s string) (int64, string) {
	us, n, reason := parseClock(s)
	if reason != "" {
		return 0, reason
	}
	if n != len(s) {
		return 0, "a time is written HH:MM, HH:MM:SS or HH:MM:SS.ffffff"
	}
	return us, ""
}

// parseDateTime parses YYYY-MM-DDTHH:MM[:SS[.f]](Z|+hh:mm|-hh:mm) to microseconds since
// the Unix epoch in UTC, or returns why it cannot. T and Z may be written t and z, as
// RFC 3339 and OData's ABNF (whose quoted strings ignore case) allow.
func parseDateTime(s string) (int64, string) {
	y, m, d, n, reason := parseYMD(s)
	if reason != "" {
		return 0, reason
	}
	if n >= len(s) || s[n] != 'T' && s[n] != 't' {
		return 0, "a date-time is written YYYY-MM-DDTHH:MM[:SS[.ffffff]] followed by Z or an offset ±hh:mm"
	}
	clock, k, reason := parseClock(s[n+1:])
	if reason != "" {
		return 0, reason
	}
	rest := s[n+1+k:]
	var offset int64 // seconds east of UTC
	switch {
	case rest == "Z" || rest == "z":
	case len(rest) == 6 && (rest[0] == '+' || rest[0] == '-') && rest[3] == ':':
		oh, ok1 := digits(rest, 1, 2)
		om, ok2 := digits(rest, 4, 2)
		if !ok1 || !ok2 || oh > 23 || om > 59 {
			return 0, "the offset " + rest + " is not ±hh:mm with hh up to 23 and mm up to 59"
		}
		offset = int64(oh)*3600 + int64(om)*60
		if rest[0] == '-' {
			offset = -offset
		}
	case rest == "":
		return 0, "the date-time " + s + " needs a time zone: Z or an offset ±hh:mm " +
			"(a + sent unencoded in a URL may arrive as a space: send %2B)"
	default:
		return 0, "the time zone " + rest + " is not Z or an offset ±hh:mm"
	}
	days := DaysFromTime(time.Date(y, time.Month(m), d, 0, 0, 0, 0, time.UTC))
	return days*MicrosPerDay + clock - offset*1_000_000, ""
}
