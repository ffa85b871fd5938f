package query

import (
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/kmkit/kmkit/problem"
)

// The default Limits.
const (
	DefaultMaxLength = 8 << 10
	DefaultMaxDepth  = 64
	DefaultMaxIn     = 1000
	// MaxDepthCap is the largest MaxDepth honoured.
	MaxDepthCap = 10_000
	// InValueBytes is what each value an in list may hold adds to the longest text: an in
	// list's values count toward MaxIn, not MaxLength, so that a list of MaxIn keys fits
	// (1000 quoted order ids of the demo take 14 KB).
	InValueBytes = 64
)

// Limits bound what Parse accepts; beyond them it returns a KindLimit error. A zero field
// takes its default.
type Limits struct {
	// MaxLength is the longest filter text in bytes (default 8 KiB), not counting the
	// values of its in lists; with them the text may be up to MaxIn x InValueBytes longer.
	MaxLength int
	// MaxDepth is the deepest nesting of parentheses and "not" (default 64). It bounds the
	// parser's recursion, so values above MaxDepthCap are taken as MaxDepthCap.
	MaxDepth int
	// MaxIn is the longest literal list of an "in" (default 1000).
	MaxIn int
}

func (l Limits) withDefaults() Limits {
	if l.MaxLength <= 0 {
		l.MaxLength = DefaultMaxLength
	}
	if l.MaxDepth <= 0 {
		l.MaxDepth = DefaultMaxDepth
	}
	l.MaxDepth = min(l.MaxDepth, MaxDepthCap)
	if l.MaxIn <= 0 {
		l.MaxIn = DefaultMaxIn
	}
	return l
}

// Option configures Parse and ParseAndBind, and ParseKPI and ParseAndBindKPI.
type Option func(*config)

type config struct {
	limits Limits
	param  string
	odata  bool
	now    time.Time
}

// WithNow fixes the instant now() stands for in ParseAndBind (default: the current time,
// read once per call).
func WithNow(t time.Time) Option { return func(c *config) { c.now = t } }

// WithLimits sets the limits of the filter text.
func WithLimits(l Limits) Option { return func(c *config) { c.limits = l } }

// WithParam sets the parameter name errors start with (default "filterExpr"; none for a
// KPI expression); the OData handler passes "$filter".
func WithParam(name string) Option { return func(c *config) { c.param = name } }

// ODataSyntax makes the parser read $filter as OData 4.01 clients write it: the operators
// (eq ne gt ge lt le in is has and or not), the functions (contains, startswith,
// endswith) and true, false and null in any case ("EQ", "Contains(", "True"), and numeric
// literals with the type suffixes of OData 4.0's ABNF and older clients: D or d (double),
// F or f (single), M or m (decimal) after an integer or decimal, L or l (Int64) after an
// integer ("1000D", "1.5M", "5L"), read as the number without its suffix. The Knowledge
// Model API's filterExpr stays without it: there keywords are lower case, and "5L" is a
// bare word. Under ODataSyntax a path expression (NAV/FIELD, NAV/NAV/FIELD: simple names
// joined by "/") is a FieldRef whose Name keeps the "/"s; the caller resolves it before
// binding (the OData service maps it to RECORD.FIELD through its navigation properties).
// OData has no bare text literal: under ODataSyntax a name or a path on the right of an
// operator ("ID eq CUST", "CUST eq CUSTOMERS/ID") is a property, read by the scalar
// grammar, where filterExpr reads a legacy bare word.
func ODataSyntax() Option { return func(c *config) { c.odata = true } }

func newConfig(opts []Option) config {
	if len(opts) == 0 { // the common case, without the allocation that &c costs below
		return config{param: "filterExpr", limits: Limits{}.withDefaults()}
	}
	c := &config{param: "filterExpr"}
	for _, o := range opts {
		o(c)
	}
	c.limits = c.limits.withDefaults()
	return *c
}

// Parse parses a filter expression into an unbound tree: field types are unset, and
// literals carry the value they denote as written (bare words none). See the package
// documentation for the grammar. Errors are *Error of kind KindSyntax, KindUnsupported or
// KindLimit.
func Parse(src string, opts ...Option) (Expr, error) {
	c := newConfig(opts)
	e, err := parse(src, c.limits, c.odata)
	if err != nil {
		err.Param = c.param
		err.Char = CharPos(src, err.Pos)
		return nil, err
	}
	return e, nil
}

// ParseAndBind parses src and binds it to s, reporting errors of both steps with the
// parameter name and character position.
func ParseAndBind(src string, s Schema, opts ...Option) (Expr, error) {
	c := newConfig(opts)
	e, err := parse(src, c.limits, c.odata)
	if err == nil {
		var b Expr
		if b, err = bind(e, &binder{Schema: s, now: c.now}); err == nil {
			return b, nil
		}
	}
	err.Param = c.param
	err.Char = CharPos(src, err.Pos)
	return nil, err
}

func parse(src string, lim Limits, odata bool) (e Expr, err *Error) {
	if len(src) > lim.MaxLength+lim.MaxIn*InValueBytes {
		return nil, lengthError(len(src), 0, lim)
	}
	p := &parser{lx: lexer{src: src}, lim: lim, odata: odata}
	defer func() {
		if r := recover(); r != nil {
			perr, ok := r.(*Error)
			if !ok {
				panic(r)
			}
			perr.retry = false
			e, err = nil, perr
		}
	}()
	p.moveTo(0)
	if p.tok.kind == tEOF {
		p.fail(KindSyntax, p.tok.pos, "the expression is empty")
	}
	e = p.parseOr()
	if p.tok.kind != tEOF {
		if p.tok.kind == tRParen {
			p.fail(KindSyntax, p.tok.pos, `this ")" has no matching "("`)
		}
		p.unexpected(`"and", "or" or the end of the expression`)
	}
	inBytes := 0
	for _, n := range p.inLists {
		inBytes += n
	}
	if err := lengthError(len(src), inBytes, lim); err != nil {
		return nil, err
	}
	return e, nil
}

// lengthError is the error of a text of n bytes, inBytes of them the values of in lists,
// beyond lim, or nil: the text without its in lists may take MaxLength bytes, and the in
// lists up to MaxIn x InValueBytes more.
func lengthError(n, inBytes int, lim Limits) *Error {
	limit := lim.MaxLength
	switch {
	case n > lim.MaxLength+lim.MaxIn*InValueBytes:
		return &Error{Kind: KindLimit, Code: problem.CodeConstraint, Pos: NoPos, Msg: fmt.Sprintf(
			"the expression is %d bytes long; at most %d are allowed, and %d more in the values of in lists", n, limit, lim.MaxIn*InValueBytes)}
	case n-inBytes > limit && inBytes > 0:
		return &Error{Kind: KindLimit, Code: problem.CodeConstraint, Pos: NoPos, Msg: fmt.Sprintf(
			"the expression is %d bytes long without the values of its in lists; at most %d are allowed", n-inBytes, limit)}
	case n-inBytes > limit:
		return &Error{Kind: KindLimit, Code: problem.CodeConstraint, Pos: NoPos, Msg: fmt.Sprintf(
			"the expression is %d bytes long; at most %d are allowed", n, limit)}
	}
	return nil
}

// parser is a recursive-descent parser. Errors abort the parse by panicking with *Error,
// recovered in parse.
type parser struct {
	lx    lexer
	tok   token // the lookahead token, scanned with the ordinary rules
	depth int
	lim   Limits
	odata bool // ODataSyntax: keywords in any case, suffixed numbers
	// inLists holds the bytes of each in list's values by the position of its "(" (a list
	// the scalar grammar reads again counts once).
	inLists map[int]int
}

func (p *parser) fail(kind ErrorKind, pos int, format string, args ...any) {
	code := CodeFilterSyntax
	switch kind {
	case KindUnsupported:
		code = CodeFilterNotSupported
	case KindLimit:
		code = problem.CodeConstraint
	}
	panic(&Error{Kind: kind, Code: code, Pos: Pos(pos), Msg: fmt.Sprintf(format, args...)})
}

// next moves to the token after the current one.
func (p *parser) next() {
	p.moveTo(p.tok.end)
}

// moveTo makes the token at position i current.
func (p *parser) moveTo(i int) {
	p.tok = p.lx.at(i)
	p.checkToken()
	if p.odata && p.tok.kind == tIdent {
		p.tok.text = p.foldWord(p.tok.text, p.tok.end)
	}
}

// foldWord returns, under ODataSyntax, the lower-case form of a keyword, of true, false
// and null, and of a function name followed by "(" (end is the position after the word);
// any other word as it is.
func (p *parser) foldWord(w string, end int) string {
	lower := strings.ToLower(w)
	if lower == w {
		return w
	}
	if isKeyword(lower) || lower == "true" || lower == "false" || lower == "null" {
		return lower
	}
	if end < len(p.lx.src) && p.lx.src[end] == '(' {
		if _, ok := function(lower); ok {
			return lower
		}
		if _, ok := scalarFunc(lower); ok {
			return lower
		}
	}
	return w
}

// valueText returns the text of an unquoted value as it is to be read: under ODataSyntax
// true, false and null in any case are lower-cased, and a number with an OData type
// suffix loses the suffix (D, F, M after a number; L after an integer).
func (p *parser) valueText(s string) string {
	if !p.odata {
		return s
	}
	switch lower := strings.ToLower(s); lower {
	case "true", "false", "null":
		return lower
	}
	n := len(s)
	if n < 2 {
		return s
	}
	switch s[n-1] {
	case 'd', 'D', 'f', 'F', 'm', 'M':
		if _, ok := parseNumber(s[:n-1]); ok {
			return s[:n-1]
		}
	case 'l', 'L':
		if isInteger(s[:n-1]) {
			return s[:n-1]
		}
	}
	return s
}

// isInteger reports whether s is an optionally signed run of decimal digits.
func isInteger(s string) bool {
	s = strings.TrimLeft(s, "+-")
	if len(s) == 0 || len(s) > 19 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if !isDigit(s[i]) {
			return false
		}
	}
	return true
}

func (p *parser) checkToken() {
	if p.tok.kind == tString && p.tok.end < 0 {
		p.fail(KindSyntax, p.tok.pos, "the text starting here has no closing quote")
	}
}

// describe names the current token for a message.
func (p *parser) describe() string { return describeToken(p.tok) }

func describeToken(t token) string {
	switch t.kind {
	case tEOF:
		return "the end of the expression"
	case tString:
		return "the text " + quoteShort(t.text)
	}
	return fmt.Sprintf("%q", short(t.text))
}

func short(s string) string {
	const max = 24
	if utf8.RuneCountInString(s) <= max {
		return s
	}
	r := []rune(s)
	return string(r[:max]) + "…"
}

func quoteShort(s string) string { return "'" + strings.ReplaceAll(short(s), "'", "''") + "'" }

func (p *parser) isWord(w string) bool { return p.tok.kind == tIdent && p.tok.text == w }

// nextChar returns the byte right after the current token (0 at the end).
func (p *parser) nextChar() byte {
	if p.tok.end < len(p.lx.src) {
		return p.lx.src[p.tok.end]
	}
	return 0
}

func (p *parser) enter(pos int) {
	p.depth++
	if p.depth > p.lim.MaxDepth {
		p.fail(KindLimit, pos, "the expression nests deeper than %d levels of parentheses and \"not\"", p.lim.MaxDepth)
	}
}

func (p *parser) leave() { p.depth-- }

func (p *parser) parseOr() Expr {
	l := p.parseAnd()
	for p.isWord("or") {
		p.next()
		r := p.parseAnd()
		l = &Logical{At: l.Position(), Op: Or, L: l, R: r}
	}
	return l
}

func (p *parser) parseAnd() Expr {
	l := p.parseUnary()
	for p.isWord("and") {
		p.next()
		r := p.parseUnary()
		l = &Logical{At: l.Position(), Op: And, L: l, R: r}
	}
	return l
}

func (p *parser) parseUnary() Expr {
	if p.isWord("not") {
		at := p.tok.pos
		p.enter(at)
		p.next()
		x := p.parseUnary()
		p.leave()
		return &Not{At: Pos(at), X: x}
	}
	return p.parsePrimary()
}

// compareOp returns the comparison operator named s.
func compareOp(s string) (CompareOp, bool) {
	switch s {
	case "eq":
		return Eq, true
	case "ne":
		return Ne, true
	case "gt":
		return Gt, true
	case "ge":
		return Ge, true
	case "lt":
		return Lt, true
	case "le":
		return Le, true
	}
	return 0, false
}

// isKeyword reports whether s is a reserved word of the grammar; none of them is a field
// or a bare value.
func isKeyword(s string) bool {
	switch s {
	case "and", "or", "not", "eq", "ne", "gt", "ge", "lt", "le", "in", "is", "has":
		return true
	}
	return false
}

func isArithmetic(s string) bool {
	switch s {
	case "add", "sub", "mul", "div", "divby", "mod":
		return true
	}
	return false
}

// function returns the string function named s.
func function(s string) (FuncName, bool) {
	switch s {
	case "contains":
		return Contains, true
	case "startswith":
		return StartsWith, true
	case "endswith":
		return EndsWith, true
	}
	return 0, false
}

// parsePrimary parses a parenthesised expression or a condition. Under ODataSyntax, a
// condition the plain grammar cannot read because a side is a function or arithmetic
// (the plain grammar signals it with a retry error) is parsed again from its start with
// the scalar grammar.
func (p *parser) parsePrimary() Expr {
	if !p.odata {
		return p.parsePlainPrimary()
	}
	start, depth := p.tok, p.depth
	e, retry := p.attempt(p.parsePlainPrimary)
	if retry == nil {
		return e
	}
	p.tok, p.depth = start, depth
	return p.parseScalarCondition()
}

// attempt runs f and returns the retry error it raised, if any; other errors go on.
func (p *parser) attempt(f func() Expr) (e Expr, retry *Error) {
	defer func() {
		if r := recover(); r != nil {
			if perr, ok := r.(*Error); ok && perr.retry {
				e, retry = nil, perr
				return
			}
			panic(r)
		}
	}()
	return f(), nil
}

// retry fails like fail, marking the error so that under ODataSyntax the enclosing
// condition is parsed again with the scalar grammar.
func (p *parser) retry(kind ErrorKind, pos int, format string, args ...any) {
	defer func() {
		r := recover()
		if perr, ok := r.(*Error); ok && p.odata {
			perr.retry = true
		}
		panic(r)
	}()
	p.fail(kind, pos, format, args...)
}

func (p *parser) parsePlainPrimary() Expr {
	t := p.tok
	switch t.kind {
	case tLParen:
		p.enter(t.pos)
		p.next()
		e := p.parseOr()
		if p.tok.kind != tRParen {
			p.unexpected(fmt.Sprintf(`")" to close the "(" at position %d`, CharPos(p.lx.src, Pos(t.pos))))
		}
		p.leave()
		p.next()
		return e
	case tIdent:
		switch t.text {
		case "true", "false", "null":
			return p.parseMirrored()
		}
		if isKeyword(t.text) {
			p.fail(KindSyntax, t.pos, "expected a condition, found %s", p.describe())
		}
		if fn, ok := function(t.text); ok && p.nextChar() == '(' {
			return p.parseCall(fn)
		}
		if l := p.parseLambda(t); l != nil {
			return l
		}
		f := p.parseField("a condition", "")
		return p.parseComparison(f)
	case tString, tValue:
		return p.parseMirrored()
	case tOther:
		p.unsupportedStart()
	}
	p.fail(KindSyntax, t.pos, "expected a condition, found %s", p.describe())
	return nil
}

// unsupportedStart reports an operand that starts with a character of OData syntax outside
// the subset, or a syntax error.
func (p *parser) unsupportedStart() {
	t := p.tok
	switch t.text {
	case "-":
		// OData's unary minus: the scalar grammar reads it (ODataSyntax).
		p.retry(KindUnsupported, t.pos, "negation with - is not supported")
	case "$":
		name := p.lx.at(t.end)
		if name.kind == tIdent && name.pos == t.end {
			p.fail(KindUnsupported, t.pos, "$%s is not supported", name.text)
		}
	case "@":
		p.fail(KindUnsupported, t.pos, "parameter aliases and annotations (@...) are not supported")
	case "[", "{", `"`:
		p.fail(KindUnsupported, t.pos, "JSON arrays, objects and strings are not supported; write text as 'text' and lists as in ('a', 'b')")
	}
}

// parseField reads the current identifier as a field name, reporting paths, function calls
// and typed literals that OData allows there but the subset does not. what and detail
// name the expected construct for messages ("a field after", "eq").
func (p *parser) parseField(what, detail string) FieldRef {
	t := p.tok
	if t.kind != tIdent || isKeyword(t.text) {
		p.unsupportedStart()
		if detail != "" {
			what += " " + detail
		}
		p.fail(KindSyntax, t.pos, "expected %s, found %s", what, p.describe())
	}
	switch p.nextChar() {
	case '(':
		p.retry(KindUnsupported, t.pos, "the function %s is not supported; the functions are contains, startswith and endswith", short(t.text))
	case '/':
		if p.odata {
			if f, ok := p.parsePath(t); ok {
				return f
			}
		}
		seg := p.lx.at(t.end + 1)
		switch {
		case seg.kind == tIdent && (seg.text == "any" || seg.text == "all"):
			p.fail(KindUnsupported, t.pos, "the lambda operator %s is not supported", seg.text)
		case seg.kind == tOther && seg.text == "$":
			p.fail(KindUnsupported, t.pos, "path segments such as /$count are not supported")
		}
		p.fail(KindUnsupported, t.pos, "paths with / are not supported; name a field as FIELD or RECORD.FIELD")
	case '\'':
		p.fail(KindUnsupported, t.pos, "typed literals such as %s'...' are not supported", short(t.text))
	}
	if strings.HasSuffix(t.text, ".") || strings.Contains(t.text, "..") {
		p.fail(KindSyntax, t.pos, "%q is not a field name: a dot must separate two names", short(t.text))
	}
	p.next()
	return FieldRef{At: Pos(t.pos), Name: t.text}
}

// unexpected fails at the current token, which is not what the parser expected: with
// KindUnsupported when it is OData outside the subset, else with KindSyntax.
func (p *parser) unexpected(expected string) {
	t := p.tok
	if t.kind == tIdent {
		lower := strings.ToLower(t.text)
		switch {
		case isArithmetic(lower):
			p.retry(KindUnsupported, t.pos, "the arithmetic operator %s is not supported", short(t.text))
		case lower == "has":
			p.fail(KindUnsupported, t.pos, "the has operator is not supported")
		case (isKeyword(lower) || lower == "true" || lower == "false" || lower == "null") && t.text != lower:
			p.fail(KindUnsupported, t.pos, "keywords are lower case: write %q, not %q", lower, t.text)
		}
	}
	if t.kind == tOther {
		p.unsupportedStart()
	}
	p.fail(KindSyntax, t.pos, "expected %s, found %s", expected, p.describe())
}

// parseComparison parses what follows a field: an operator and its operand.
func (p *parser) parseComparison(f FieldRef) Expr {
	t := p.tok
	at := f.At
	if t.kind == tIdent {
		if op, ok := compareOp(t.text); ok {
			return p.compare(f, op, t.text)
		}
		switch t.text {
		case "in":
			return p.parseIn(f)
		case "is":
			p.next()
			negated := false
			if p.isWord("not") {
				negated = true
				p.next()
			}
			if !p.isWord("null") {
				p.fail(KindSyntax, p.tok.pos, `expected "null" after "is", found %s`, p.describe())
			}
			p.next()
			return &IsNull{At: at, Field: f, Negated: negated}
		case "not":
			p.next()
			if !p.isWord("eq") {
				p.fail(KindSyntax, p.tok.pos, `expected "eq" after "not", found %s`, p.describe())
			}
			return p.compare(f, Ne, "not eq")
		}
	}
	if lower := strings.ToLower(f.Name); lower == "not" && f.Name != lower {
		p.fail(KindUnsupported, int(f.At), "keywords are lower case: write %q, not %q", lower, f.Name)
	}
	if p.odata && p.endsCondition(t) {
		// OData: a boolean property on its own is the condition that it is true.
		return isTrue(f)
	}
	if t.kind == tRParen {
		// Under ODataSyntax "(A) eq 1" may follow: the scalar grammar reads it.
		p.retry(KindUnsupported, int(f.At), "a field on its own is not a condition; compare it, as in %s eq true", short(f.Name))
	}
	if t.kind == tEOF || p.isWord("and") || p.isWord("or") {
		p.fail(KindUnsupported, int(f.At), "a field on its own is not a condition; compare it, as in %s eq true", short(f.Name))
	}
	p.unexpected(fmt.Sprintf("an operator (eq, ne, gt, ge, lt, le, in, is) after the field %s", short(f.Name)))
	return nil
}

// endsCondition reports whether t, the token after an operand, ends the condition the
// operand is: the end, and, or, or a ")" that is not followed by an operator (in "(A) eq
// 1" the parenthesis holds an operand).
func (p *parser) endsCondition(t token) bool {
	for t.kind == tRParen {
		t = p.lx.at(t.end)
	}
	return t.kind == tEOF || t.kind == tRParen ||
		t.kind == tIdent && (strings.EqualFold(t.text, "and") || strings.EqualFold(t.text, "or"))
}

// isTrue is the condition "f eq true", what a boolean property on its own means in OData.
// Its literal stands at the field's position, where no literal of the source can be: Bind
// refuses it for a field that is not a boolean.
func isTrue(f FieldRef) *Compare {
	return &Compare{At: f.At, Field: f, Op: Eq, Value: Literal{At: f.At, Kind: LitBoolean, Raw: "true", Value: Bool(true)}}
}

// compare parses the value after the comparison operator (the current token) of f.
func (p *parser) compare(f FieldRef, op CompareOp, opText string) Expr {
	opPos := p.tok.pos
	p.next()
	v := p.parseValue(opText)
	p.arithmeticAhead()
	if v.Kind == LitNull {
		switch op {
		case Eq:
			return &IsNull{At: f.At, Field: f}
		case Ne:
			return &IsNull{At: f.At, Field: f, Negated: true}
		}
		p.fail(KindUnsupported, opPos, "%s null is not supported: only eq null and ne null compare with null", opText)
	}
	return &Compare{At: f.At, Field: f, Op: op, Value: v}
}

// parseValue parses the operand after an operator: a quoted text or an unquoted value
// (number, date, date-time, time, true, false, null, or a legacy bare word).
func (p *parser) parseValue(after string) Literal {
	t := p.tok
	switch t.kind {
	case tString:
		p.next()
		return Literal{At: Pos(t.pos), Kind: LitString, Raw: t.text, Value: String(t.text)}
	case tIdent, tValue:
		v := p.lx.value(t.pos)
		v.text = p.valueText(v.text)
		if isKeyword(v.text) || p.odata && isKeyword(strings.ToLower(v.text)) {
			p.fail(KindSyntax, v.pos, "expected a value after %q, found %q", after, v.text)
		}
		if v.end < len(p.lx.src) {
			switch p.lx.src[v.end] {
			case '(':
				p.retry(KindUnsupported, v.pos, "the function %s is not supported; the functions are contains, startswith and endswith", short(v.text))
			case '\'':
				p.fail(KindUnsupported, v.pos, "typed literals such as %s'...' are not supported", short(v.text))
			case '/':
				// Under ODataSyntax a path on the right (CUST eq CUSTOMERS/ID) is a
				// property: the scalar grammar reads it.
				p.retry(KindUnsupported, v.pos, "paths with / are not supported")
			}
		}
		kind, val := classify(v.text)
		if kind == LitBare && p.odata && isIdentStart(rune(v.text[0])) {
			// OData has no bare text literal: a name on the right of an operator is a
			// property (ID eq CUST compares two properties), which the scalar grammar
			// reads; the legacy bare word is the Knowledge Model API's filterExpr's.
			p.retry(KindSyntax, v.pos, "expected a value after %q, found the name %s", after, short(v.text))
		}
		p.moveTo(v.end)
		if kind == LitBare && p.tok.kind == tValue && p.tok.pos > v.end {
			// "2023-12-05T15:48 03:00": a "+" that a URL decoder turned into a space.
			if _, reason := parseDateTime(v.text + "+" + p.tok.text); reason == "" {
				_, reason = parseDateTime(v.text)
				p.fail(KindSyntax, v.pos, "%s", reason)
			}
		}
		return Literal{At: Pos(v.pos), Kind: kind, Raw: v.text, Value: val}
	case tLParen:
		// Under ODataSyntax "A eq (1 add 2)" holds a parenthesised operand: the scalar
		// grammar reads it.
		p.retry(KindSyntax, t.pos, "a parenthesised list may only follow \"in\"")
	case tOther:
		p.unsupportedStart()
	}
	p.fail(KindSyntax, t.pos, "expected a value after %q, found %s", after, p.describe())
	return Literal{}
}

func (p *parser) parseIn(f FieldRef) Expr {
	p.next()
	if p.tok.kind != tLParen {
		if p.tok.kind == tOther && p.tok.text == "[" {
			p.fail(KindUnsupported, p.tok.pos, "JSON arrays are not supported; write the list as in ('a', 'b')")
		}
		p.fail(KindSyntax, p.tok.pos, `expected "(" after "in", found %s`, p.describe())
	}
	open := p.tok.pos
	p.next()
	in := &In{At: f.At, Field: f}
	if p.tok.kind == tRParen {
		p.next()
		return in
	}
	for {
		v := p.parseValue("in")
		if v.Kind == LitNull {
			p.fail(KindUnsupported, int(v.At), "null in an in list is not supported; add \"or %s eq null\"", short(f.Name))
		}
		if len(in.Values) == p.lim.MaxIn {
			p.fail(KindLimit, int(v.At), "the in list has more than %d values", p.lim.MaxIn)
		}
		in.Values = append(in.Values, v)
		switch p.tok.kind {
		case tComma:
			p.next()
			continue
		case tRParen:
			if p.inLists == nil {
				p.inLists = map[int]int{}
			}
			p.inLists[open] = p.tok.pos - open - 1
			p.next()
			return in
		}
		p.unexpected(`"," or ")" in the in list`)
	}
}

// funcOpen is each function's name with its parenthesis, for messages.
var funcOpen = [...]string{Contains: "contains(", StartsWith: "startswith(", EndsWith: "endswith("}

func (p *parser) parseCall(fn FuncName) Expr {
	name := p.tok
	p.next() // the name
	p.next() // (
	if p.tok.kind == tString || p.tok.kind == tValue || p.isWord("true") || p.isWord("false") || p.isWord("null") {
		p.retry(KindUnsupported, p.tok.pos, "the first argument of %s must be a field", name.text)
	}
	f := p.parseField("a field as the first argument of", name.text)
	if p.tok.kind != tComma {
		p.unexpected(fmt.Sprintf(`"," after the field in %s`, name.text))
	}
	p.next()
	arg := p.parseValue(funcOpen[fn])
	if p.tok.kind != tRParen {
		if p.tok.kind == tComma {
			p.fail(KindSyntax, p.tok.pos, "%s takes two arguments: a field and a text", name.text)
		}
		p.unexpected(fmt.Sprintf(`")" to close %s(`, name.text))
	}
	p.next()
	var call Expr = &Call{At: Pos(name.pos), Func: fn, Field: f, Arg: arg}
	return p.comparedBoolean(call, name.text)
}

// comparedBoolean reads what may follow a boolean function call: "eq true", "eq false",
// "ne true" or "ne false" (SAP Cloud SDK writes contains(F,'x') eq true), and returns the
// call or its negation. With SQL's three-valued logic these are exact: a call that is
// unknown (a null field) stays unknown compared with true or false, and so does its
// negation, so the row is left out in all four forms.
func (p *parser) comparedBoolean(call Expr, name string) Expr {
	if p.tok.kind != tIdent {
		return call
	}
	op, ok := compareOp(p.tok.text)
	if !ok {
		return call
	}
	opTok := p.tok
	v := p.lx.at(opTok.end)
	if v.kind == tIdent {
		if p.odata {
			v.text = strings.ToLower(v.text)
		}
		if (v.text == "true" || v.text == "false") && (op == Eq || op == Ne) {
			p.moveTo(v.end)
			if (v.text == "true") == (op == Eq) {
				return call
			}
			return &Not{At: call.Position(), X: call}
		}
	}
	p.retry(KindUnsupported, opTok.pos, "comparing the result of %s is supported only with eq or ne and true or false; write %s(...), %s(...) eq true or not %s(...)", name, name, name, name)
	return nil
}

var mirrored = [...]CompareOp{Eq: Eq, Ne: Ne, Gt: Lt, Ge: Le, Lt: Gt, Le: Ge}

// parseMirrored parses a comparison written with the literal on the left, "5 lt A", and
// returns it with the field on the left, "A gt 5".
func (p *parser) parseMirrored() Expr {
	t := p.tok
	var lit Literal
	if t.kind == tString {
		lit = Literal{At: Pos(t.pos), Kind: LitString, Raw: t.text, Value: String(t.text)}
		p.next()
	} else {
		v := p.lx.value(t.pos)
		v.text = p.valueText(v.text)
		kind, val := classify(v.text)
		if kind == LitBare {
			p.fail(KindSyntax, t.pos, "expected a condition, found %q, which is neither a field nor a literal", short(v.text))
		}
		lit = Literal{At: Pos(v.pos), Kind: kind, Raw: v.text, Value: val}
		p.moveTo(v.end)
	}
	p.arithmeticAhead()
	opTok := p.tok
	op, ok := compareOp(opTok.text)
	if opTok.kind != tIdent || !ok {
		switch {
		case p.isWord("in"):
			p.fail(KindUnsupported, opTok.pos, "the left side of in must be a field")
		case opTok.kind == tEOF || opTok.kind == tRParen || p.isWord("and") || p.isWord("or"):
			p.fail(KindUnsupported, t.pos, "a literal on its own is not a condition; compare a field with it")
		}
		p.unexpected("a comparison operator (eq, ne, gt, ge, lt, le) after the literal")
	}
	p.next()
	if p.tok.kind == tString || p.tok.kind == tValue || p.isWord("true") || p.isWord("false") || p.isWord("null") {
		p.fail(KindUnsupported, t.pos, "comparing two literals is not supported; compare a field with a literal")
	}
	if p.odata && p.tok.kind == tIdent {
		if _, ok := function(p.tok.text); ok && p.nextChar() == '(' {
			p.retry(KindUnsupported, p.tok.pos, "comparing the result of %s is supported only with true or false", p.tok.text)
		}
	}
	f := p.parseField("a field after the operator", opTok.text)
	p.arithmeticAhead()
	if lit.Kind == LitNull {
		switch op {
		case Eq:
			return &IsNull{At: lit.At, Field: f}
		case Ne:
			return &IsNull{At: lit.At, Field: f, Negated: true}
		}
		p.fail(KindUnsupported, opTok.pos, "null %s is not supported: only eq null and ne null compare with null", opTok.text)
	}
	return &Compare{At: lit.At, Field: f, Op: mirrored[op], Value: lit}
}

// parsePath reads, under ODataSyntax, a path expression that starts at t: names joined by
// "/" with nothing between them (NAV/FIELD, NAV/NAV/FIELD). The FieldRef's name keeps
// the "/"s; the caller that knows the navigation properties resolves it (the OData
// service maps NAV/FIELD to RECORD.FIELD before binding). ok is false for what is not
// such a path (a lambda, /$count, a cast), which parseField reports.
func (p *parser) parsePath(t token) (f FieldRef, ok bool) {
	if strings.Contains(t.text, ".") {
		return FieldRef{}, false // a qualified name: a cast, which is not supported
	}
	end := t.end
	for end < len(p.lx.src) && p.lx.src[end] == '/' {
		seg := p.lx.at(end + 1)
		if seg.kind != tIdent || seg.pos != end+1 || strings.Contains(seg.text, ".") || seg.text == "any" || seg.text == "all" {
			return FieldRef{}, false
		}
		end = seg.end
	}
	if end < len(p.lx.src) && p.lx.src[end] == '(' {
		return FieldRef{}, false // a function or lambda after the last "/"
	}
	p.moveTo(end)
	return FieldRef{At: Pos(t.pos), Name: p.lx.src[t.pos:end]}, true
}
