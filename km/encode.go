package km

import (
	"math"
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/kmkit/kmkit/query"
)

// The data endpoints write rows by hand rather than through encoding/json: rows keep the
// order of their columns, and a page of rows is encoded without a map per row.

// appendValue appends v as JSON in the form SPEC-NOTES gives for data values.
func appendValue(b []byte, v query.Value) []byte {
	if v.Null {
		return append(b, "null"...)
	}
	switch v.Type {
	case query.TypeString:
		return appendString(b, v.Str)
	case query.TypeInteger:
		return strconv.AppendInt(b, v.Int, 10)
	case query.TypeFloat:
		return appendFloat(b, v.Float)
	case query.TypeBoolean:
		return strconv.AppendBool(b, v.Bool)
	case query.TypeDate:
		b = append(b, '"')
		b = query.TimeOfDays(v.Int).AppendFormat(b, time.DateOnly)
		return append(b, '"')
	case query.TypeDateTime, query.TypeTimestamp:
		b = append(b, '"')
		b = time.UnixMicro(v.Int).UTC().AppendFormat(b, time.RFC3339Nano)
		return append(b, '"')
	case query.TypeTime:
		b = append(b, '"')
		b = time.UnixMicro(v.Int).UTC().AppendFormat(b, "15:04:05.999999")
		return append(b, '"')
	}
	return append(b, "null"...)
}

// appendFloat formats f as encoding/json does (shortest representation, exponent form for
// very small and very large magnitudes); NaN and infinities, which JSON cannot carry, are null.
func appendFloat(b []byte, f float64) []byte {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return append(b, "null"...)
	}
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

const hexDigits = "0123456789abcdef"

// plainByte marks the ASCII bytes a JSON string holds as they are.
var plainByte = func() (t [utf8.RuneSelf]bool) {
	for c := 0x20; c < utf8.RuneSelf; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

// appendString appends s as a JSON string; invalid UTF-8 becomes U+FFFD.
func appendString(b []byte, s string) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if plainByte[c] {
				i++
				for i < len(s) && s[i] < utf8.RuneSelf && plainByte[s[i]] {
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
			case '\b':
				b = append(b, '\\', 'b')
			case '\f':
				b = append(b, '\\', 'f')
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
			i += size
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

// appendRow appends one row as a JSON object with the given (pre-quoted) keys.
func appendRow(b []byte, keys [][]byte, row []query.Value) []byte {
	b = append(b, '{')
	for i, v := range row {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, keys[i]...)
		b = append(b, ':')
		b = appendValue(b, v)
	}
	return append(b, '}')
}
