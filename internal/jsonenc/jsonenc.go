// Package jsonenc appends JSON strings and numbers to byte slices, byte for byte as
// encoding/json writes them, for encoders that write their documents by hand (rows in
// column order, pages without a map or a reflection walk per item).
//
// AppendString escapes as json.Marshal does: quotes, backslashes and control characters
// (\b, \f, \n, \r and \t in their short forms, others as \u00XX), <, > and & as \u003c,
// \u003e and \u0026, U+2028 and U+2029 as \u2028 and \u2029, and each byte of invalid
// UTF-8 as \ufffd. AppendStringNoHTMLEscape does the same except for <, > and &, which it
// keeps, as an Encoder with SetEscapeHTML(false) does. AppendFloat formats a float64 as
// encoding/json does; NaN and the infinities, which encoding/json refuses and JSON cannot
// carry, are written as null.
package jsonenc

import (
	"math"
	"slices"
	"strconv"
	"unicode/utf8"
)

const hexDigits = "0123456789abcdef"

// How appendString writes a byte: as it is (plain), as a backslash and itself (quotes
// and backslashes), as an escape of escapes (control characters, and <, > and & when
// escaping HTML), or as the start of a UTF-8 sequence (every byte from 0x80 on).
const (
	plain = iota
	backslashed
	escaped
	multibyte
)

// classes and htmlClasses say how each byte is written, without and with HTML escaping;
// escapes holds the escape of each byte of the class escaped.
var classes, htmlClasses, escapes = func() (c, h [256]uint8, e [256]string) {
	for b := range 256 {
		switch {
		case b >= utf8.RuneSelf:
			c[b] = multibyte
		case b == '"' || b == '\\':
			c[b] = backslashed
		case b < 0x20 || b == '<' || b == '>' || b == '&':
			e[b] = `\u00` + string(hexDigits[b>>4]) + string(hexDigits[b&0xf])
			if b < 0x20 {
				c[b] = escaped
			}
		}
		h[b] = c[b]
		if b == '<' || b == '>' || b == '&' {
			h[b] = escaped
		}
	}
	for b, short := range map[byte]string{'\b': `\b`, '\f': `\f`, '\n': `\n`, '\r': `\r`, '\t': `\t`} {
		e[b] = short
	}
	return c, h, e
}()

// AppendString appends s as a JSON string, escaped exactly as json.Marshal escapes it.
func AppendString(b []byte, s string) []byte { return appendString(b, s, &htmlClasses) }

// AppendBytes appends the text s as a JSON string, as AppendString does, without copying
// it into a string first.
func AppendBytes(b, s []byte) []byte { return appendString(b, s, &htmlClasses) }

// AppendStringNoHTMLEscape appends s as a JSON string, escaped exactly as an
// encoding/json Encoder with SetEscapeHTML(false) escapes it: <, > and & stay as they are.
func AppendStringNoHTMLEscape(b []byte, s string) []byte { return appendString(b, s, &classes) }

// appendString writes byte by byte: runs between escapes are short in the JSON texts
// written as strings (a tool result's text), and one switch per byte is faster there
// than copying each run.
func appendString[T string | []byte](b []byte, s T, class *[256]uint8) []byte {
	b = slices.Grow(b, len(s)+len(s)/4+2)
	b = append(b, '"')
	for i := 0; i < len(s); {
		c := s[i]
		switch class[c] {
		case plain:
			b = append(b, c)
			i++
			continue
		case backslashed:
			b = append(b, '\\', c)
			i++
			continue
		case escaped:
			b = append(b, escapes[c]...)
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(string(s[i:min(i+utf8.UTFMax, len(s))]))
		switch {
		case r == utf8.RuneError && size == 1:
			b = append(b, `\ufffd`...)
		case r == '\u2028' || r == '\u2029':
			b = append(b, '\\', 'u', '2', '0', '2', hexDigits[r&0xf])
		default:
			b = append(b, s[i:i+size]...)
		}
		i += size
	}
	return append(b, '"')
}

// AppendFloat appends f as encoding/json formats a float64: the shortest representation
// that reads back as f, in exponent form (1e-7, 1e+21) below 1e-6 and from 1e21 on. NaN
// and the infinities are written as null, and -0 as 0: the sign of a zero is not part of
// a value kmkit shows, since the backends do not keep it alike (SQLite stores -0.0 as 0;
// among zeros of both signs a min or a group may show either), and pandas' to_json writes
// 0 for it too.
func AppendFloat(b []byte, f float64) []byte {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return append(b, "null"...)
	}
	if f == 0 {
		return append(b, '0')
	}
	abs := math.Abs(f)
	if abs < maxCents && abs >= 0.01 {
		if b, ok := appendCents(b, f); ok {
			return b
		}
	}
	if abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		b = strconv.AppendFloat(b, f, 'e', -1, 64)
		// Shorten e-07 to e-7, as encoding/json does.
		if n := len(b); n >= 4 && b[n-4] == 'e' && b[n-3] == '-' && b[n-2] == '0' {
			b[n-2] = b[n-1]
			b = b[:n-1]
		}
		return b
	}
	return strconv.AppendFloat(b, f, 'f', -1, 64)
}

// maxCents bounds the magnitudes appendCents writes: below it, numbers of cents are
// exact integers in a float64 (below 2^53) and every multiple of 0.01 is a distinct
// float64, far apart against the spacing of float64s there.
const maxCents = 1e12

// appendCents appends f, 0 or 0.01 <= |f| < maxCents, when it is the float64 nearest to
// a whole number of hundredths (prices, amounts, integers): the decimal n/100 then reads
// back as f (float64(n)/100 is the correctly rounded quotient, as parsing rounds), and no
// shorter decimal does (it would be another multiple of 0.01, another float64), so it is
// the shortest representation strconv.AppendFloat(b, f, 'f', -1, 64) writes, without its
// general search. ok is false for other values.
func appendCents(b []byte, f float64) (_ []byte, ok bool) {
	n := int64(math.Round(f * 100))
	if float64(n)/100 != f {
		return b, false
	}
	if n < 0 {
		b = append(b, '-')
		n = -n
	}
	b = strconv.AppendInt(b, n/100, 10)
	switch c := n % 100; {
	case c == 0:
	case c%10 == 0:
		b = append(b, '.', byte('0'+c/10))
	default:
		b = append(b, '.', byte('0'+c/10), byte('0'+c%10))
	}
	return b, true
}
