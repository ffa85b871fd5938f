package odata

import (
	"math"
	"strconv"
	"unicode/utf8"

	"github.com/kmkit/kmkit/internal/jsonenc"
	"github.com/kmkit/kmkit/query"
)

// Answers are written by appending to byte slices rather than through encoding/json and
// encoding/xml: entities keep their property order, and a page of a few thousand rows is
// encoded without a map or a reflection walk per row. JSON strings and numbers come from
// internal/jsonenc and jsonenc.AppendJSON, the bytes encoding/json writes without HTML
// escaping.

const xmlHeader = `<?xml version="1.0" encoding="utf-8"?>`

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

// appendJSONValue appends v as an OData JSON value: jsonenc.AppendJSON's rendering, except
// that Int64 values are strings when ieee754 is set and NaN and the infinities of a
// Double are the strings "NaN", "INF" and "-INF". It calls the appenders underneath
// jsonenc.AppendJSON directly, since it runs once per property of every entity.
func appendJSONValue(b []byte, v query.Value, ieee754 bool) []byte {
	if v.Null {
		return append(b, "null"...)
	}
	switch v.Type {
	case query.TypeString:
		return jsonenc.AppendStringNoHTMLEscape(b, v.Str)
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
		return jsonenc.AppendFloat(b, v.Float)
	case query.TypeDate, query.TypeDateTime, query.TypeTimestamp, query.TypeTime:
		b = append(b, '"')
		b = jsonenc.AppendTemporal(b, v)
		return append(b, '"')
	}
	return jsonenc.AppendJSON(b, v) // booleans
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
		return jsonenc.AppendFloat(b, v.Float)
	case query.TypeBoolean:
		return strconv.AppendBool(b, v.Bool)
	case query.TypeDate, query.TypeDateTime, query.TypeTimestamp, query.TypeTime:
		return jsonenc.AppendTemporal(b, v)
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
