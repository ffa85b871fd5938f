package km

import (
	"net/url"
	"strings"

	"github.com/kmkit/kmkit/problem"
	"github.com/kmkit/kmkit/query"
	"github.com/kmkit/kmkit/query/fuzzy"
)

// DefaultSearchPrecision is the search precision of a request that names none.
const DefaultSearchPrecision = fuzzy.DefaultPrecision

// parseQueryString parses a raw query string. Unlike url.ParseQuery it splits pairs at
// "&" only, so a ";" in a value is kept, and it keeps a "+" that stands for the sign of
// a time offset (2023-12-05T15:48:44+03:00) instead of turning it into a space; every
// other "+" is a space, as form encoding has it. A bad percent escape is a 400.
func parseQueryString(raw string) (map[string][]string, error) {
	out := map[string][]string{}
	for raw != "" {
		var pair string
		pair, raw, _ = strings.Cut(raw, "&")
		if pair == "" {
			continue
		}
		k, v, _ := strings.Cut(pair, "=")
		key, err := unescapeComponent(k)
		if err != nil {
			return nil, badRequest(problem.CodeParameterIllegal, "the query string has a bad escape in the name %q", k)
		}
		val, err := unescapeComponent(v)
		if err != nil {
			return nil, badRequest(problem.CodeParameterIllegal, "parameter %s has a bad escape in %q", key, v)
		}
		out[key] = append(out[key], val)
	}
	return out, nil
}

// unescapeComponent decodes %XX escapes, and "+" as a space except in a time offset.
func unescapeComponent(s string) (string, error) {
	if strings.IndexByte(s, '+') >= 0 {
		var b strings.Builder
		b.Grow(len(s))
		for i := 0; i < len(s); i++ {
			if s[i] == '+' && !isOffsetPlus(s, i) {
				b.WriteString("%20")
				continue
			}
			if s[i] == '+' {
				b.WriteString("%2B")
				continue
			}
			b.WriteByte(s[i])
		}
		s = b.String()
	}
	return url.PathUnescape(s)
}

// isOffsetPlus reports whether the "+" at s[i] follows a time of day "Thh:mm", "Thh:mm:ss"
// or "Thh:mm:ss.fff" and precedes the two digits of an offset hour.
func isOffsetPlus(s string, i int) bool {
	if i+2 >= len(s) || !isDigit(s[i+1]) || !isDigit(s[i+2]) {
		return false
	}
	j := i
	for j > 0 && (isDigit(s[j-1]) || s[j-1] == '.' || s[j-1] == ':') {
		j--
	}
	// s[j:i] is the clock text; it must start with hh:mm and follow a 'T'.
	clock := s[j:i]
	return j > 0 && (s[j-1] == 'T' || s[j-1] == 't') && len(clock) >= 5 &&
		isDigit(clock[0]) && isDigit(clock[1]) && clock[2] == ':' && isDigit(clock[3]) && isDigit(clock[4])
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// splitList splits comma-separated values, trims the items and drops empty ones.
func splitList(values []string) []string {
	var out []string
	for _, v := range values {
		for item := range strings.SplitSeq(v, ",") {
			if item = strings.TrimSpace(item); item != "" {
				out = append(out, item)
			}
		}
	}
	return out
}

// splitTopLevel splits one filterExpr value into its expressions (commas outside quotes
// and parentheses). An empty value gives one empty expression, which the parser reports.
func splitTopLevel(v string) []string { return query.SplitTopLevel(v) }

// last returns the last value of a parameter, or "".
func last(values []string) string {
	if len(values) == 0 {
		return ""
	}
	return strings.TrimSpace(values[len(values)-1])
}

// paging reads page and pageSize (the last value of each, when repeated).
func (h *Handler) paging(params map[string][]string) (page, size int, err error) {
	return query.ParsePaging(last(params["page"]), last(params["pageSize"]), h.opts.MaxPageSize)
}

// parseSchemaSort reads the sort of a schema endpoint: one field with an optional + or -.
func parseSchemaSort(values []string) (key query.SortKey, present bool, err error) {
	if len(values) == 0 {
		return query.SortKey{}, false, nil
	}
	key, err = query.ParseSchemaSort(strings.Join(values, ","))
	return key, err == nil, err
}
