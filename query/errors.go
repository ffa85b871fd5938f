package query

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// ErrorKind tells the classes of request errors apart.
type ErrorKind uint8

// The error kinds. Every kind is answered with HTTP 400.
const (
	// KindSyntax: the filter text is not valid in the filter grammar.
	KindSyntax ErrorKind = iota + 1
	// KindUnsupported: valid OData syntax outside the supported subset (arithmetic, has,
	// lambdas, other functions, paths, JSON arrays, $it, parameter aliases ...).
	KindUnsupported
	// KindType: the filter names an unknown field or compares values of incompatible types.
	KindType
	// KindLimit: the filter exceeds a Limits bound (length, nesting depth, in-list size).
	KindLimit
	// KindParameter: a request parameter other than the filter (sort, page, pageSize,
	// options, searchPrecision, the query string) is malformed or out of range.
	KindParameter
)

var kindNames = [...]string{
	KindSyntax:      "syntax",
	KindUnsupported: "unsupported",
	KindType:        "type",
	KindLimit:       "limit",
	KindParameter:   "parameter",
}

// String returns a short lower-case name of k.
func (k ErrorKind) String() string {
	if int(k) < len(kindNames) && kindNames[k] != "" {
		return kindNames[k]
	}
	return fmt.Sprintf("ErrorKind(%d)", k)
}

// The error codes this package reports, in the style of the Knowledge Model API.
const (
	CodeFilterSyntax        = "FILTER_SYNTAX_ERROR"
	CodeFilterNotSupported  = "FILTER_NOT_SUPPORTED"
	CodeFilterTypeMismatch  = "FILTER_TYPE_MISMATCH"
	CodeFieldNotFound       = "KM_FIELD_NOTFOUND"
	CodeConstraintViolation = "GENERAL_CONSTRAINT_VIOLATION"
	CodeParameterMismatch   = "GENERAL_PARAMETER_MISSMATCH" // sic: the real service spells it so
	CodeParameterIllegal    = "GENERAL_PARAMETER_ILLEGAL"
	CodeSortUnknownField    = "SORT_UNKNOWN_FIELD"
	CodeSortHasOpposite     = "SORT_HAS_OPPOSITE"
	CodeSortHasDuplicate    = "SORT_HAS_DUPLICATE"
	CodeSortIsEmpty         = "SORT_IS_EMPTY"
)

// NoPos is the Pos of an error that has no position in a text.
const NoPos Pos = -1

// Error is a client error in a filter or another request parameter. Every Error is a 400
// Bad Request; Kind and Code tell the reasons apart.
type Error struct {
	Kind ErrorKind
	// Code is the API error code, for example FILTER_SYNTAX_ERROR.
	Code string
	// Param names the parameter at fault ("filterExpr", "$filter", "sort", "page" ...);
	// empty when the caller has not said (Bind does not know it).
	Param string
	// Pos is the byte offset of the fault in the parameter's text, or NoPos.
	Pos Pos
	// Char is the 1-based character (rune) position of Pos, 0 when unknown. Parse and
	// ParseAndBind set it; Bind alone cannot (it has no source text) and leaves it 0.
	Char int
	// Msg says what is wrong, without the parameter name and position.
	Msg string

	// retry marks, inside the parser only, a condition that the plain grammar cannot read
	// but OData's scalar grammar may: the nearest enclosing condition is parsed again.
	retry bool
}

// Error returns "param: position N: msg", leaving out the parts that are unknown. Without a
// known character position it reports the byte position Pos+1.
func (e *Error) Error() string {
	var b strings.Builder
	if e.Param != "" {
		b.WriteString(e.Param)
		b.WriteString(": ")
	}
	if e.Pos >= 0 {
		n := e.Char
		if n <= 0 {
			n = int(e.Pos) + 1
		}
		fmt.Fprintf(&b, "position %d: ", n)
	}
	b.WriteString(e.Msg)
	return b.String()
}

// Status returns the HTTP status of the error: always 400 Bad Request.
func (e *Error) Status() int { return 400 }

// CharPos returns the 1-based character position of byte offset p in src. Offsets past the
// end count as one past the last character.
func CharPos(src string, p Pos) int {
	if p < 0 {
		return 0
	}
	if int(p) > len(src) {
		p = Pos(len(src))
	}
	return utf8.RuneCountInString(src[:p]) + 1
}

// paramError returns a KindParameter error without position.
func paramError(code, param, format string, args ...any) *Error {
	return &Error{Kind: KindParameter, Code: code, Param: param, Pos: NoPos, Msg: fmt.Sprintf(format, args...)}
}
