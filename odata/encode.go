package odata

import (
	"math"
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/kmkit/kmkit/query"
)

// Answers are written by appending to byte slices rather than through encoding/json and
// encoding/xml: entities keep their property order, and a page of a few thousand rows is
// encoded without a map or a reflection walk per row.

const xmlHeader = `<?xml version="1.0" encoding="utf-8"?>`

const hexDigits = "0123456789abcdef"

// plainJSON marks the ASCII bytes a JSON string holds as they are.
var plainJSON = func() (t [utf8.RuneSelf]bool) {
	for c := 0x20; c < utf8.RuneSelf; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

// appendJSONString appends s as a JSON string; invalid UTF-8 becomes U+FFFD.
func appendJSONString(b []byte, s string) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if plainJSON[c] {
				i++
				for i < len(s) && s[i] < utf8.RuneSelf && plainJSON[s[i]] {
					i++
				}
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
			i++
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hexDigits[r&0xf])
			i += size
			start = i
			continue
		}
		i += size
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}

// appendXMLText appends s escaped for XML character data, or for a double-quoted
// attribute value when attr is set. Characters XML 1.0 cannot carry (most C0 controls,
// U+FFFE, U+FFFF, invalid UTF-8) become U+FFFD; a carriage return is written as a
// character reference so that it survives end-of-line normalisation.
func appendXMLText(b []byte, s string, attr bool) []byte {
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			var esc string
			switch {
			case c == '<':
				esc = "&lt;"
			case c == '>':
				esc = "&gt;"
			case c == '&':
				esc = "&amp;"
			case c == '"' && attr:
				esc = "&quot;"
			case c == '\r':
				esc = "&#xD;"
			case c == '\n' && attr:
				esc = "&#xA;"
			case c == '\t' && attr:
				esc = "&#x9;"
			case c < 0x20 && c != '\n' && c != '\t':
				esc = "\uFFFD"
			default:
				i++
				continue
			}
			b = append(b, s[start:i]...)
			b = append(b, esc...)
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if (r == utf8.RuneError && size == 1) || r == 0xFFFE || r == 0xFFFF {
			b = append(b, s[start:i]...)
			b = append(b, "\uFFFD"...)
			i += size
			start = i
			continue
		}
		i += size
	}
	return append(b, s[start:]...)
}

// appendJSONValue appends v as an OData JSON value: numbers for Int64 (strings when
// ieee754 is set) and Double ("NaN", "INF", "-INF" as strings), booleans, and strings
// for text, dates, date-times and times of day.
func appendJSONValue(b []byte, v query.Value, ieee754 bool) []byte {
	if v.Null {
		return append(b, "null"...)
	}
	switch v.Type {
	case query.TypeString:
		return appendJSONString(b, v.Str)
	case query.TypeInteger:
		if ieee754 {
			b = append(b, '"')
			b = strconv.AppendInt(b, v.Int, 10)
			return append(b, '"')
		}
		return strconv.AppendInt(b, v.Int, 10)
	case query.TypeFloat:
		if special := specialFloat(v.Float); special != "" {
			b = append(b, '"')
			b = append(b, special...)
			return append(b, '"')
		}
		return appendFloat(b, v.Float)
	case query.TypeBoolean:
		return strconv.AppendBool(b, v.Bool)
	case query.TypeDate, query.TypeDateTime, query.TypeTimestamp, query.TypeTime:
		b = append(b, '"')
		b = appendTemporal(b, v)
		return append(b, '"')
	}
	return append(b, "null"...)
}

// appendXMLValue appends the text of a non-null v as an OData XML property value.
func appendXMLValue(b []byte, v query.Value) []byte {
	switch v.Type {
	case query.TypeString:
		return appendXMLText(b, v.Str, false)
	case query.TypeInteger:
		return strconv.AppendInt(b, v.Int, 10)
	case query.TypeFloat:
		if special := specialFloat(v.Float); special != "" {
			return append(b, special...)
		}
		return appendFloat(b, v.Float)
	case query.TypeBoolean:
		return strconv.AppendBool(b, v.Bool)
	case query.TypeDate, query.TypeDateTime, query.TypeTimestamp, query.TypeTime:
		return appendTemporal(b, v)
	}
	return b
}

// specialFloat returns the OData spelling of NaN and the infinities, or "".
func specialFloat(f float64) string {
	switch {
	case math.IsNaN(f):
		return "NaN"
	case math.IsInf(f, 1):
		return "INF"
	case math.IsInf(f, -1):
		return "-INF"
	}
	return ""
}

// appendFloat formats a finite f as encoding/json does: the shortest representation,
// exponent form below 1e-6 and from 1e21 on.
func appendFloat(b []byte, f float64) []byte {
	abs := math.Abs(f)
	if abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		b = strconv.AppendFloat(b, f, 'e', -1, 64)
		// Shorten e-07 to e-7 as encoding/json does.
		if n := len(b); n >= 4 && b[n-4] == 'e' && b[n-3] == '-' && b[n-2] == '0' {
			b[n-2] = b[n-1]
			b = b[:n-1]
		}
		return b
	}
	return strconv.AppendFloat(b, f, 'f', -1, 64)
}

// appendTemporal appends a date (2006-01-02), a date-time (RFC 3339 in UTC, fractional
// seconds when present) or a time of day (15:04:05, fraction when present). Years 0000
// to 9999 are written digit by digit; others, which OData cannot carry in four digits,
// as package time writes them.
func appendTemporal(b []byte, v query.Value) []byte {
	switch v.Type {
	case query.TypeDate:
		if y, m, d := civil(v.Int); 0 <= y && y <= 9999 {
			return appendYMD(b, y, m, d)
		}
		return query.TimeOfDays(v.Int).AppendFormat(b, time.DateOnly)
	case query.TypeTime:
		if 0 <= v.Int && v.Int < query.MicrosPerDay {
			return appendClock(b, v.Int)
		}
		return time.UnixMicro(v.Int).UTC().AppendFormat(b, "15:04:05.999999")
	}
	day := query.DayOfMicros(v.Int)
	if y, m, d := civil(day); 0 <= y && y <= 9999 {
		b = appendYMD(b, y, m, d)
		b = append(b, 'T')
		b = appendClock(b, v.Int-day*query.MicrosPerDay)
		return append(b, 'Z')
	}
	return time.UnixMicro(v.Int).UTC().AppendFormat(b, time.RFC3339Nano)
}

// civil returns the proleptic Gregorian date of day d (days since 1970-01-01), by Howard
// Hinnant's days-to-civil algorithm.
func civil(d int64) (y, m, day int64) {
	d += 719468
	era := d / 146097
	if d < 0 && d%146097 != 0 {
		era--
	}
	doe := d - era*146097                                  // [0, 146096]
	yoe := (doe - doe/1460 + doe/36524 - doe/146096) / 365 // [0, 399]
	doy := doe - (365*yoe + yoe/4 - yoe/100)               // [0, 365]
	mp := (5*doy + 2) / 153                                // [0, 11]
	day = doy - (153*mp+2)/5 + 1
	m = mp + 3
	if m > 12 {
		m -= 12
	}
	y = yoe + era*400
	if m <= 2 {
		y++
	}
	return y, m, day
}

func appendYMD(b []byte, y, m, d int64) []byte {
	return append(b, byte('0'+y/1000), byte('0'+y/100%10), byte('0'+y/10%10), byte('0'+y%10), '-',
		byte('0'+m/10), byte('0'+m%10), '-', byte('0'+d/10), byte('0'+d%10))
}

// appendClock appends hh:mm:ss of us microseconds since midnight (0 <= us < a day), with
// the fraction of a second when there is one, trailing zeros cut.
func appendClock(b []byte, us int64) []byte {
	s := us / 1_000_000
	h, mi, sec := s/3600, s/60%60, s%60
	b = append(b, byte('0'+h/10), byte('0'+h%10), ':', byte('0'+mi/10), byte('0'+mi%10), ':', byte('0'+sec/10), byte('0'+sec%10))
	frac := us % 1_000_000
	if frac == 0 {
		return b
	}
	var digits [7]byte
	digits[0] = '.'
	for i := 6; i >= 1; i-- {
		digits[i] = byte('0' + frac%10)
		frac /= 10
	}
	n := 7
	for digits[n-1] == '0' {
		n--
	}
	return append(b, digits[:n]...)
}

// appendKeyLiteral appends v as a key in an OData URL: 'text' with quotes doubled and
// the text percent-encoded where a URL needs it, numbers and booleans as they are, dates
// and times unquoted.
func appendKeyLiteral(b []byte, v query.Value) []byte {
	if v.Null {
		return append(b, "null"...)
	}
	if v.Type != query.TypeString {
		return appendURLComponent(b, string(appendXMLValue(nil, v)))
	}
	b = append(b, '\'')
	for i := 0; i < len(v.Str); i++ {
		if v.Str[i] == '\'' {
			b = append(b, "''"...)
			continue
		}
		b = appendURLByte(b, v.Str[i])
	}
	return append(b, '\'')
}

func appendURLComponent(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		b = appendURLByte(b, s[i])
	}
	return b
}

// appendURLByte appends c, percent-encoded unless it is unreserved or one of the
// sub-delimiters and ":" / "@" that a path segment may hold.
func appendURLByte(b []byte, c byte) []byte {
	switch {
	case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		return append(b, c)
	}
	switch c {
	case '-', '.', '_', '~', '!', '$', '&', '\'', '(', ')', '*', ',', ';', '=', ':', '@':
		return append(b, c)
	}
	const upperHex = "0123456789ABCDEF"
	return append(b, '%', upperHex[c>>4], upperHex[c&0xf])
}
