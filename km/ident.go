package km

// isIdent reports whether s is an identifier of a definition: an ASCII letter or '_', then
// letters, digits and '_'. Record and field ids follow it, so that each can be named as
// RECORD.FIELD in a KPI expression (query.ParseKPI reads fields by the same rule).
func isIdent(s string) bool {
	if s == "" || !isIdentStart(s[0]) {
		return false
	}
	for i := 1; i < len(s); i++ {
		if !isIdentChar(s[i]) {
			return false
		}
	}
	return true
}

func isIdentStart(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '_'
}

func isIdentChar(c byte) bool { return isIdentStart(c) || c >= '0' && c <= '9' }
