package km

import (
	"fmt"
	"strings"

	"github.com/kmkit/kmkit/problem"
	"github.com/kmkit/kmkit/query"
)

// fillParams replaces the ${id} placeholders of a KPI expression with parameter values.
//
// Inside a quoted string a value is inserted with its quotes doubled, so it stays text.
// Outside quotes a value must be one literal token (a number, a date or date-time, true,
// false, null or a bare word of letters, digits, '_', '-', '.', ':' and '+'), so a value
// can never change the structure of the expression. It returns the filled text, or a
// *query.Error naming the placeholder or the value at fault, positioned at the placeholder
// as the KPI parser positions its errors.
func fillParams(expr string, values map[string]string) (string, error) {
	var b strings.Builder
	inQuote := false
	for i := 0; i < len(expr); i++ {
		c := expr[i]
		if c == '\'' {
			inQuote = !inQuote // '' toggles twice and stays inside
			b.WriteByte(c)
			continue
		}
		if c != '$' || i+1 >= len(expr) || expr[i+1] != '{' {
			b.WriteByte(c)
			continue
		}
		end := strings.IndexByte(expr[i+2:], '}')
		if end < 0 {
			return "", placeholderError(expr, i, query.KindSyntax, query.CodeFilterSyntax, "unterminated ${ placeholder")
		}
		id := expr[i+2 : i+2+end]
		v, ok := values[id]
		if !ok {
			return "", placeholderError(expr, i, query.KindSyntax, query.CodeFilterSyntax, fmt.Sprintf("placeholder ${%s} names no parameter of the KPI", id))
		}
		if inQuote {
			b.WriteString(strings.ReplaceAll(v, "'", "''"))
		} else {
			if !isLiteralToken(v) {
				return "", placeholderError(expr, i, query.KindParameter, problem.CodeParameterIllegal, fmt.Sprintf("value %q of parameter %s is not a single literal", v, id))
			}
			b.WriteString(v)
		}
		i += end + 2
	}
	return b.String(), nil
}

// placeholderError returns the error of the placeholder at byte offset pos of expr.
func placeholderError(expr string, pos int, kind query.ErrorKind, code, msg string) *query.Error {
	return &query.Error{Kind: kind, Code: code, Pos: query.Pos(pos), Char: query.CharPos(expr, query.Pos(pos)), Msg: msg}
}

// isLiteralToken reports whether v is a non-empty run of characters that can only form one
// literal token of the filter language.
func isLiteralToken(v string) bool {
	if v == "" {
		return false
	}
	for i := 0; i < len(v); i++ {
		c := v[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		case c == '_', c == '-', c == '.', c == ':', c == '+':
		default:
			return false
		}
	}
	// A bare word must not be a keyword that changes the structure.
	switch strings.ToLower(v) {
	case "and", "or", "not", "eq", "ne", "gt", "ge", "lt", "le", "in", "is":
		return false
	}
	return true
}
