// Package rawquery decodes the query string of a request into its key=value pairs, in
// order, the way the KM API and the OData service read them: split at "&" only, "+" a space
// except as the sign of a time offset. Its errors are *query.Error parameter errors
// (GENERAL_PARAMETER_ILLEGAL), answered with 400.
package rawquery

import (
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/kmkit/kmkit/query"
)

// Param is one key=value pair of a query string.
type Param struct {
	Key, Value string
}

// Params is a decoded query string in its original order.
type Params []Param

// Get returns the first value of key, or "".
func (ps Params) Get(key string) string {
	for _, p := range ps {
		if p.Key == key {
			return p.Value
		}
	}
	return ""
}

// Has reports whether key occurs.
func (ps Params) Has(key string) bool {
	return slices.ContainsFunc(ps, func(p Param) bool { return p.Key == key })
}

// Values returns every value of key, in order.
func (ps Params) Values(key string) []string {
	var out []string
	for _, p := range ps {
		if p.Key == key {
			out = append(out, p.Value)
		}
	}
	return out
}

// Parse decodes a raw query string (the part of a URL after "?") into its pairs.
// Unlike url.ParseQuery it splits only at "&", so a ";" inside a value is kept. A "+" is a
// space, as form encoding has it, except where it is the sign of a time offset: after a
// time of day "Thh:mm", "Thh:mm:ss" or "Thh:mm:ss.fff" and before two digits
// (2023-12-05T15:48:44+03:00), so offsets survive unencoded; %2B is always a plus. Empty
// pairs are skipped; a pair without "=" has an empty value. A malformed percent-escape is
// GENERAL_PARAMETER_ILLEGAL.
func Parse(raw string) (Params, error) {
	var ps Params
	if raw != "" {
		ps = make(Params, 0, strings.Count(raw, "&")+1)
	}
	for pair := range strings.SplitSeq(raw, "&") {
		if pair == "" {
			continue
		}
		k, v, _ := strings.Cut(pair, "=")
		key, ok := unescape(k)
		if !ok {
			return nil, paramError(query.CodeParameterIllegal, "query", "parameter name %q has a malformed percent-escape", short(k))
		}
		val, ok := unescape(v)
		if !ok {
			return nil, paramError(query.CodeParameterIllegal, key, "the value has a malformed percent-escape")
		}
		ps = append(ps, Param{Key: key, Value: val})
	}
	return ps, nil
}

// unescape decodes the %XX escapes of s, and each "+" as a space unless it is the sign of
// a time offset. ok is false for a "%" not followed by two hexadecimal digits.
func unescape(s string) (_ string, ok bool) {
	i := strings.IndexAny(s, "%+")
	if i < 0 {
		return s, true
	}
	b := make([]byte, i, len(s))
	copy(b, s[:i])
	for ; i < len(s); i++ {
		switch c := s[i]; c {
		case '%':
			if i+2 >= len(s) || !isHex(s[i+1]) || !isHex(s[i+2]) {
				return "", false
			}
			b = append(b, unhex(s[i+1])<<4|unhex(s[i+2]))
			i += 2
		case '+':
			if isOffsetPlus(s, i) {
				b = append(b, '+')
			} else {
				b = append(b, ' ')
			}
		default:
			b = append(b, c)
		}
	}
	return string(b), true
}

// isOffsetPlus reports whether the "+" at s[i] follows a time of day "Thh:mm", "Thh:mm:ss"
// or "Thh:mm:ss.fff" (T in either case) and precedes the two digits of an offset hour. The
// test looks at the text as sent, before decoding.
func isOffsetPlus(s string, i int) bool {
	if i+2 >= len(s) || !isDigit(s[i+1]) || !isDigit(s[i+2]) {
		return false
	}
	j := i
	for j > 0 && (isDigit(s[j-1]) || s[j-1] == '.' || s[j-1] == ':') {
		j--
	}
	clock := s[j:i] // must start with hh:mm and follow a 'T'
	return j > 0 && (s[j-1] == 'T' || s[j-1] == 't') && len(clock) >= 5 &&
		isDigit(clock[0]) && isDigit(clock[1]) && clock[2] == ':' && isDigit(clock[3]) && isDigit(clock[4])
}

func isHex(c byte) bool { return isDigit(c) || 'a' <= c|0x20 && c|0x20 <= 'f' }

// unhex returns the value of the hexadecimal digit c.
func unhex(c byte) byte {
	if c <= '9' {
		return c - '0'
	}
	return (c | 0x20) - 'a' + 10
}

// paramError returns a parameter error of package query: a 400 with code about param.
func paramError(code, param, format string, args ...any) *query.Error {
	return &query.Error{Kind: query.KindParameter, Code: code, Param: param, Pos: query.NoPos, Msg: fmt.Sprintf(format, args...)}
}

// short returns s, cut to 24 characters and an ellipsis when it is longer.
func short(s string) string {
	const max = 24
	if utf8.RuneCountInString(s) <= max {
		return s
	}
	r := []rune(s)
	return string(r[:max]) + "…"
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }
