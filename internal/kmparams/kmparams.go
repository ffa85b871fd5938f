// Package kmparams reads the query-string grammar of the KM API, which the MCP tools
// share: paging (page, pageSize), the search precision, comma-separated and repeated
// lists (fields, filters, kpis, options), sort keys ("+A,-B") and filterExpr values that
// carry several expressions joined by top-level commas. The rules a request must meet
// whatever its surface (page bounds, the precision's range, sort keys that are selected)
// are package query's checks (CheckPaging, CheckSearchPrecision, CheckSort), which the
// request layer (km.Service) applies. Errors are *query.Error parameter errors, answered
// with 400.
package kmparams

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/kmkit/kmkit/problem"
	"github.com/kmkit/kmkit/query"
)

// Paging defaults and bounds.
const (
	// DefaultPageSize is the page size of a request that names none.
	DefaultPageSize = 50
	// MaxSortLength is the longest sort value accepted, in bytes (the API's projection bound).
	MaxSortLength = 2048
)

// ParsePaging reads the page and pageSize query parameters. Empty values take the
// defaults: page 0 and pageSize 50 (or max, when max is below 50). max is the largest
// page size (query.DefaultMaxPageSize when max <= 0). A value that is not an integer is
// GENERAL_PARAMETER_MISSMATCH; a page below 0 or above the int32 range, or a page size
// below 1 or above max, is GENERAL_CONSTRAINT_VIOLATION. Values are never clamped.
func ParsePaging(page, pageSize string, max int) (int, int, error) {
	if max <= 0 {
		max = query.DefaultMaxPageSize
	}
	p, err := parseInt("page", page, 0)
	if err != nil {
		return 0, 0, err
	}
	s, err := parseInt("pageSize", pageSize, min(DefaultPageSize, max))
	if err != nil {
		return 0, 0, err
	}
	if err := query.CheckPaging(p, s, max); err != nil {
		return 0, 0, err
	}
	return p, s, nil
}

// parseInt reads a decimal integer parameter; "" gives def.
func parseInt(param, s string, def int) (int, error) {
	if s == "" {
		return def, nil
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		if errors.Is(err, strconv.ErrRange) {
			return 0, paramError(problem.CodeConstraint, param, "%s is out of range", short(s))
		}
		return 0, paramError(problem.CodeParameterMismatch, param, "%q is not an integer", short(s))
	}
	if n > math.MaxInt32 || n < math.MinInt32 {
		return 0, paramError(problem.CodeConstraint, param, "%s is out of range", short(s))
	}
	return int(n), nil
}

// ParseSearchPrecision reads the searchPrecision query parameter: an integer from 1 to 100,
// def when s is empty. Not an integer: GENERAL_PARAMETER_MISSMATCH; out of range:
// GENERAL_CONSTRAINT_VIOLATION.
func ParseSearchPrecision(s string, def int) (int, error) {
	p, err := parseInt("searchPrecision", s, def)
	if err != nil {
		return 0, err
	}
	if s != "" {
		if err := query.CheckPrecisionParam("searchPrecision", p, 1); err != nil {
			return 0, err
		}
	}
	return p, nil
}

// ParseList splits comma-separated and repeated parameter values (fields, filters, kpis,
// options) into one list, in order, trimming white space and dropping empty items:
// ["A,B", "C"] gives [A B C].
func ParseList(values []string) []string {
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

// ParseOptions reads the options parameter (comma-separated and/or repeated). The only
// option is "distinct" (lower case); any other is GENERAL_PARAMETER_ILLEGAL.
func ParseOptions(values []string) (distinct bool, err error) {
	for _, o := range ParseList(values) {
		if o != "distinct" {
			return false, paramError(problem.CodeParameterIllegal, "options", "unknown option %q: the only option is distinct", short(o))
		}
		distinct = true
	}
	return distinct, nil
}

// ParseSort reads the sort parameter of the data endpoints: a comma-separated list of
// fields, each with an optional + (ascending, the default) or - (descending). White space
// around items is ignored, so a "+" that a form decoder turned into a space still means
// ascending. Errors: SORT_IS_EMPTY for an empty value or item, SORT_HAS_OPPOSITE for a
// field sorted both ways, SORT_HAS_DUPLICATE for a field given twice,
// GENERAL_CONSTRAINT_VIOLATION beyond MaxSortLength bytes.
func ParseSort(s string) ([]query.SortTerm, error) {
	if len(s) > MaxSortLength {
		return nil, paramError(problem.CodeConstraint, "sort", "the value is %d bytes long; at most %d are allowed", len(s), MaxSortLength)
	}
	if strings.TrimSpace(s) == "" {
		return nil, paramError(query.CodeSortIsEmpty, "sort", "no sort field given")
	}
	var keys []query.SortTerm
	for i, item := range strings.Split(s, ",") {
		k := query.SortTerm{Field: strings.TrimSpace(item)}
		if rest, ok := strings.CutPrefix(k.Field, "-"); ok {
			k.Field, k.Desc = strings.TrimSpace(rest), true
		} else if rest, ok := strings.CutPrefix(k.Field, "+"); ok {
			k.Field = strings.TrimSpace(rest)
		}
		if k.Field == "" {
			return nil, paramError(query.CodeSortIsEmpty, "sort", "item %d names no field", i+1)
		}
		for _, prev := range keys {
			if prev.Field != k.Field {
				continue
			}
			if prev.Desc != k.Desc {
				return nil, paramError(query.CodeSortHasOpposite, "sort", "field %q is sorted both ascending and descending", short(k.Field))
			}
			return nil, paramError(query.CodeSortHasDuplicate, "sort", "field %q is given twice", short(k.Field))
		}
		keys = append(keys, k)
	}
	return keys, nil
}

// ParseSchemaSort reads the sort parameter of the schema list endpoints: exactly one field
// with an optional + or - (GENERAL_PARAMETER_ILLEGAL for a list), else the errors of
// ParseSort.
func ParseSchemaSort(s string) (query.SortTerm, error) {
	keys, err := ParseSort(s)
	if err != nil {
		return query.SortTerm{}, err
	}
	if len(keys) != 1 {
		return query.SortTerm{}, paramError(problem.CodeParameterIllegal, "sort", "lists sort by exactly one field, not %d", len(keys))
	}
	return keys[0], nil
}

// paramError is the *query.Error of a parameter's value.
func paramError(code, param, format string, args ...any) *query.Error {
	return &query.Error{Kind: query.KindParameter, Code: code, Param: param, Pos: query.NoPos, Msg: fmt.Sprintf(format, args...)}
}

// short cuts s to 24 characters for a message.
func short(s string) string {
	const max = 24
	if utf8.RuneCountInString(s) <= max {
		return s
	}
	r := []rune(s)
	return string(r[:max]) + "…"
}

// SplitTopLevel splits a filterExpr value at the commas that stand outside quotes and
// parentheses, so one value may carry several expressions (the Power Platform connector
// joins them so). Each part is trimmed of surrounding white space; empty parts are kept,
// so that Parse reports them. After an unclosed quote or parenthesis the rest of s is one
// part; a ")" without its "(" does not split; Parse then reports the fault.
func SplitTopLevel(s string) []string {
	var parts []string
	depth, start := 0, 0
	quoted := false
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '\'':
			quoted = !quoted // '' inside a text toggles twice
		case quoted:
		case c == '(':
			depth++
		case c == ')':
			if depth > 0 {
				depth--
			}
		case c == ',' && depth == 0:
			parts = append(parts, strings.TrimSpace(s[start:i]))
			start = i + 1
		}
	}
	return append(parts, strings.TrimSpace(s[start:]))
}
