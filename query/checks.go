package query

import (
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/kmkit/kmkit/problem"
)

// DefaultMaxPageSize is the largest page size CheckPaging accepts when it is given no
// bound.
const DefaultMaxPageSize = 5000

// CheckPaging checks a page number (0 to the int32 range) and a page size (1 to max,
// DefaultMaxPageSize when max <= 0): GENERAL_CONSTRAINT_VIOLATION naming the parameter
// (page, pageSize) otherwise.
func CheckPaging(page, size, max int) error {
	if max <= 0 {
		max = DefaultMaxPageSize
	}
	if page < 0 || page > math.MaxInt32 {
		return paramError(problem.CodeConstraint, "page", "%d is not a page number: pages count from 0 to %d", page, math.MaxInt32)
	}
	if size < 1 {
		return paramError(problem.CodeConstraint, "pageSize", "%d is below the minimum page size 1", size)
	}
	if size > max {
		return paramError(problem.CodeConstraint, "pageSize", "%d is above the maximum page size %d", size, max)
	}
	return nil
}

// CheckSearchPrecision checks a search's precision as a request body names it
// (search.precision): 0 to 100, else GENERAL_CONSTRAINT_VIOLATION.
func CheckSearchPrecision(p int) error {
	return CheckPrecisionParam("search.precision", p, 0)
}

// CheckPrecisionParam checks the search precision p that the parameter param names: lo
// to 100, where lo is 0 for a surface that admits 0 ("every value matches", the KM API's
// request body) and 1 for one whose parameter starts at 1 (the KM API's searchPrecision
// query parameter, the MCP tools' precision). Outside it the error is
// GENERAL_CONSTRAINT_VIOLATION naming param and the range, the one wording of a bad
// precision on every surface.
func CheckPrecisionParam(param string, p, lo int) error {
	if p < lo || p > 100 {
		return paramError(problem.CodeConstraint, param, "%d is not between %d and 100", p, lo)
	}
	return nil
}

// SortTerm is one sort key and its direction, as the KM API's sort parameter, OData's
// $orderby and the MCP tools write it. It lives here, not in km, because it is part of
// the query language every surface shares: CheckSort checks keys against the columns of a
// request or of a schema list, String writes them as the API echoes them, and Expr is a
// value expression of the filter language (scalar.go).
type SortTerm struct {
	Field string
	Desc  bool
	// Expr, when set, is a bound value expression to sort by (OData's $orderby
	// tolower(NAME)); Field is then its text, for messages.
	Expr Scalar
}

// String returns the key as the API echoes it: "+FIELD" or "-FIELD".
func (k SortTerm) String() string {
	if k.Desc {
		return "-" + k.Field
	}
	return "+" + k.Field
}

// CheckSort checks that every key names one of allowed (the selected fields and KPIs, or
// a schema list's headers): SORT_UNKNOWN_FIELD naming the first one that does not.
func CheckSort(keys []SortTerm, allowed []string) error {
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
