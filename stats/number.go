package stats

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Number is one numeric statistic. pandas reports every statistic of a numeric column as a
// float64, the minimum and maximum of an integer column included, and so does this package.
//
// NaN and ±Inf are not values (Valid reports false): JSON has no form for them, and Number
// marshals them as null.
type Number float64

// nan is the Number that stands for no value.
func nan() Number { return Number(math.NaN()) }

// Valid reports whether n is a value: neither NaN nor infinite.
func (n Number) Valid() bool {
	return !math.IsNaN(float64(n)) && !math.IsInf(float64(n), 0)
}

// String formats n as its JSON form: the shortest decimal that reads back as the same float,
// or "null".
func (n Number) String() string { return string(n.appendJSON(nil)) }

// MarshalJSON encodes n as encoding/json encodes a float64 (but -0 as 0), or as null when
// n is not Valid.
func (n Number) MarshalJSON() ([]byte, error) { return n.appendJSON(nil), nil }

// appendJSON appends n in JSON, formatted as encoding/json formats a float64, except
// that -0 is written 0 (see the package doc: which zero a statistic keeps is no part of
// its value).
func (n Number) appendJSON(b []byte) []byte {
	if !n.Valid() {
		return append(b, "null"...)
	}
	if n == 0 {
		return append(b, '0')
	}
	f, format := float64(n), byte('f')
	if a := math.Abs(f); a != 0 && (a < 1e-6 || a >= 1e21) {
		format = 'e'
	}
	b = strconv.AppendFloat(b, f, format, -1, 64)
	if format == 'e' { // 1e-07 -> 1e-7, as encoding/json writes it
		if k := len(b); k >= 4 && b[k-4] == 'e' && b[k-3] == '-' && b[k-2] == '0' {
			b[k-2] = b[k-1]
			b = b[:k-1]
		}
	}
	return b
}

// UnmarshalJSON decodes a JSON number, or null as NaN. A number beyond the float64 range
// decodes as ±Inf.
func (n *Number) UnmarshalJSON(data []byte) error {
	s := strings.Trim(string(data), " \t\r\n") // the whitespace JSON allows
	if s == "null" {
		*n = nan()
		return nil
	}
	if !isJSONNumber(s) {
		return fmt.Errorf("stats: %q is not a JSON number or null", s)
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil && !math.IsInf(f, 0) { // ParseFloat's only other error is a syntax error
		return fmt.Errorf("stats: %q: %w", s, err)
	}
	*n = Number(f)
	return nil
}

// isJSONNumber reports whether s matches the number grammar of RFC 8259:
// -? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?
func isJSONNumber(s string) bool {
	i := 0
	digits := func() int {
		start := i
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
		}
		return i - start
	}
	if i < len(s) && s[i] == '-' {
		i++
	}
	switch {
	case i < len(s) && s[i] == '0':
		i++
	case digits() == 0:
		return false
	}
	if i < len(s) && s[i] == '.' {
		i++
		if digits() == 0 {
			return false
		}
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		if digits() == 0 {
			return false
		}
	}
	return i == len(s)
}
