package mcp

import (
	"strconv"
	"strings"
)

// JSON Schema (2020-12, Validation 6.1.1) counts a number with a zero fractional part an
// integer whatever its spelling: 2.0, 2e0 and 20e-1 are the integer 2, which an argument
// of type "integer" accepts. encoding/json reads only the plain spelling into a Go int,
// so integerArguments rewrites the others before the query tool's arguments are
// decoded. (The SDK's typed tools, summarize_record and find_field_values, read their
// arguments as float64 and write them again, which has the same effect.)

// maxIntegerDigits is the most digits integerArguments writes for a number: more could
// overflow an int64, and a number that long is refused by the decoder as it is written.
const maxIntegerDigits = 18

// integerArguments returns args, a JSON text, with every number that has a zero
// fractional part but is written with a fraction or an exponent (2.0, 1e1, 250e-2 is
// not one) written as a plain integer (2, 10), when it has at most maxIntegerDigits
// digits. Every other byte is kept, so a number that is no integer (2.5) still reaches
// the decoder as written, which refuses it naming it. args is returned itself when
// nothing is rewritten.
func integerArguments(args []byte) []byte {
	var out []byte // nil until a number is rewritten
	copied := 0    // args[:copied] is in out
	for i := 0; i < len(args); {
		c := args[i]
		switch {
		case c == '"':
			i = stringEnd(args, i)
		case c == '-' || ('0' <= c && c <= '9'):
			end := numberEnd(args, i)
			if n, ok := plainInteger(string(args[i:end])); ok {
				out = append(append(out, args[copied:i]...), n...)
				copied = end
			}
			i = end
		default:
			i++
		}
	}
	if out == nil {
		return args
	}
	return append(out, args[copied:]...)
}

// stringEnd returns the index just past the JSON string that starts at b[i] (or len(b)
// when it is not closed).
func stringEnd(b []byte, i int) int {
	for i++; i < len(b); i++ {
		switch b[i] {
		case '\\':
			i++
		case '"':
			return i + 1
		}
	}
	return len(b)
}

// numberEnd returns the index just past the run of number bytes that starts at b[i].
func numberEnd(b []byte, i int) int {
	for i < len(b) && strings.IndexByte("-+.0123456789eE", b[i]) >= 0 {
		i++
	}
	return i
}

// plainInteger returns the plain decimal spelling of the JSON number s when s has a
// fraction or an exponent, its value is an integer, and that integer has at most
// maxIntegerDigits digits; ok is false otherwise (s plain already, not an integer, too
// long, or no JSON number).
func plainInteger(s string) (n string, ok bool) {
	mant, exp, hasExp := strings.Cut(strings.ToLower(s), "e")
	whole, frac, hasFrac := strings.Cut(mant, ".")
	if !hasExp && !hasFrac {
		return "", false
	}
	neg := strings.HasPrefix(whole, "-")
	whole = strings.TrimPrefix(whole, "-")
	if !digitsOnly(whole) || (whole[0] == '0' && len(whole) > 1) || (hasFrac && !digitsOnly(frac)) || (hasExp && !digitsOnly(strings.TrimLeft(exp, "+-"))) ||
		len(exp)-len(strings.TrimLeft(exp, "+-")) > 1 {
		return "", false
	}
	// The value is 0.digits × 10^point: point counts the digits before the decimal point.
	digits := strings.TrimLeft(whole+frac, "0")
	point := len(whole) - (len(whole+frac) - len(digits))
	digits = strings.TrimRight(digits, "0")
	if digits == "" {
		return "0", true // every spelling of zero, whatever its exponent
	}
	if hasExp {
		// An exponent beyond six digits puts the value either far beyond an int64 or
		// below 1: no integer written here either way.
		if len(strings.TrimLeft(strings.TrimLeft(exp, "+-"), "0")) > 6 {
			return "", false
		}
		e, _ := strconv.Atoi(exp) // digits with at most one sign
		point += e
	}
	if point < len(digits) || point > maxIntegerDigits {
		return "", false // a fractional part, or too long
	}
	n = digits + strings.Repeat("0", point-len(digits))
	if neg {
		n = "-" + n
	}
	return n, true
}

// digitsOnly reports whether s is one or more decimal digits.
func digitsOnly(s string) bool {
	for _, c := range []byte(s) {
		if c < '0' || c > '9' {
			return false
		}
	}
	return s != ""
}
