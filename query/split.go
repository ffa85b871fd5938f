package query

import "strings"

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
