package query

import (
	"errors"
	"math"
	"slices"
	"strconv"
	"strings"
)

// Paging defaults and bounds.
const (
	DefaultPageSize    = 50
	DefaultMaxPageSize = 5000
	// MaxSortLength is the longest sort value accepted, in bytes (the API's projection bound).
	MaxSortLength = 2048
)

// ParsePaging reads the page and pageSize query parameters. Empty values take the
// defaults: page 0 and pageSize 50 (or max, when max is below 50). max is the largest
// page size (DefaultMaxPageSize when max <= 0). A value that is not an integer is
// GENERAL_PARAMETER_MISSMATCH; a page below 0 or above the int32 range, or a page size
// below 1 or above max, is GENERAL_CONSTRAINT_VIOLATION. Values are never clamped.
func ParsePaging(page, pageSize string, max int) (int, int, error) {
	if max <= 0 {
		max = DefaultMaxPageSize
	}
	p, err := parseInt("page", page, 0)
	if err != nil {
		return 0, 0, err
	}
	s, err := parseInt("pageSize", pageSize, min(DefaultPageSize, max))
	if err != nil {
		return 0, 0, err
	}
	if err := CheckPaging(p, s, max); err != nil {
		return 0, 0, err
	}
	return p, s, nil
}

// CheckPaging checks a page number and size, as given in a POST projection, against the
// bounds of ParsePaging.
func CheckPaging(page, size, max int) error {
	if max <= 0 {
		max = DefaultMaxPageSize
	}
	if page < 0 || page > math.MaxInt32 {
		return paramError(CodeConstraintViolation, "page", "%d is not a page number: pages count from 0 to %d", page, math.MaxInt32)
	}
	if size < 1 {
		return paramError(CodeConstraintViolation, "pageSize", "%d is below the minimum page size 1", size)
	}
	if size > max {
		return paramError(CodeConstraintViolation, "pageSize", "%d is above the maximum page size %d", size, max)
	}
	return nil
}

// parseInt reads a decimal integer parameter; "" gives def.
func parseInt(param, s string, def int) (int, error) {
	if s == "" {
		return def, nil
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		if errors.Is(err, strconv.ErrRange) {
			return 0, paramError(CodeConstraintViolation, param, "%s is out of range", short(s))
		}
		return 0, paramError(CodeParameterMismatch, param, "%q is not an integer", short(s))
	}
	if n > math.MaxInt32 || n < math.MinInt32 {
		return 0, paramError(CodeConstraintViolation, param, "%s is out of range", short(s))
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
	if s != "" && (p < 1 || p > 100) {
		return 0, paramError(CodeConstraintViolation, "searchPrecision", "%d is not between 1 and 100", p)
	}
	return p, nil
}

// CheckSearchPrecision checks search.precision of a POST projection: 0 to 100, else
// GENERAL_CONSTRAINT_VIOLATION.
func CheckSearchPrecision(p int) error {
	if p < 0 || p > 100 {
		return paramError(CodeConstraintViolation, "search.precision", "%d is not between 0 and 100", p)
	}
	return nil
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
			return false, paramError(CodeParameterIllegal, "options", "unknown option %q: the only option is distinct", short(o))
		}
		distinct = true
	}
	return distinct, nil
}

// String returns the key as the API echoes it: "+FIELD" or "-FIELD".
func (k SortKey) String() string {
	if k.Desc {
		return "-" + k.Field
	}
	return "+" + k.Field
}

// ParseSort reads the sort parameter of the data endpoints: a comma-separated list of
// fields, each with an optional + (ascending, the default) or - (descending). White space
// around items is ignored, so a "+" that a form decoder turned into a space still means
// ascending. Errors: SORT_IS_EMPTY for an empty value or item, SORT_HAS_OPPOSITE for a
// field sorted both ways, SORT_HAS_DUPLICATE for a field given twice,
// GENERAL_CONSTRAINT_VIOLATION beyond MaxSortLength bytes.
func ParseSort(s string) ([]SortKey, error) {
	if len(s) > MaxSortLength {
		return nil, paramError(CodeConstraintViolation, "sort", "the value is %d bytes long; at most %d are allowed", len(s), MaxSortLength)
	}
	if strings.TrimSpace(s) == "" {
		return nil, paramError(CodeSortIsEmpty, "sort", "no sort field given")
	}
	var keys []SortKey
	for i, item := range strings.Split(s, ",") {
		k := SortKey{Field: strings.TrimSpace(item)}
		if rest, ok := strings.CutPrefix(k.Field, "-"); ok {
			k.Field, k.Desc = strings.TrimSpace(rest), true
		} else if rest, ok := strings.CutPrefix(k.Field, "+"); ok {
			k.Field = strings.TrimSpace(rest)
		}
		if k.Field == "" {
			return nil, paramError(CodeSortIsEmpty, "sort", "item %d names no field", i+1)
		}
		for _, prev := range keys {
			if prev.Field != k.Field {
				continue
			}
			if prev.Desc != k.Desc {
				return nil, paramError(CodeSortHasOpposite, "sort", "field %q is sorted both ascending and descending", short(k.Field))
			}
			return nil, paramError(CodeSortHasDuplicate, "sort", "field %q is given twice", short(k.Field))
		}
		keys = append(keys, k)
	}
	return keys, nil
}

// ParseSchemaSort reads the sort parameter of the schema list endpoints: exactly one field
// with an optional + or - (GENERAL_PARAMETER_ILLEGAL for a list), else the errors of
// ParseSort.
func ParseSchemaSort(s string) (SortKey, error) {
	keys, err := ParseSort(s)
	if err != nil {
		return SortKey{}, err
	}
	if len(keys) != 1 {
		return SortKey{}, paramError(CodeParameterIllegal, "sort", "lists sort by exactly one field, not %d", len(keys))
	}
	return keys[0], nil
}

// CheckSort checks that every key names one of allowed (the selected fields and KPIs, or
// a schema list's headers): SORT_UNKNOWN_FIELD naming the first one that does not.
func CheckSort(keys []SortKey, allowed []string) error {
	for _, k := range keys {
		if slices.Contains(allowed, k.Field) {
			continue
		}
		msg := strconv.Quote(short(k.Field)) + " is not among the fields that can be sorted"
		if len(allowed) > 0 && len(allowed) <= 20 {
			msg += ": " + strings.Join(allowed, ", ")
		}
		return paramError(CodeSortUnknownField, "sort", "%s", msg)
	}
	return nil
}
