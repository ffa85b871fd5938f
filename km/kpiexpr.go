package km

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/kmkit/kmkit/query"
)

// ExprError is an error in a KPI expression: Pos is the byte offset (from 0) in the
// expression text where the problem is.
type ExprError struct {
	Pos    int
	Reason string
}

// Error returns the reason with the 1-based character position.
func (e *ExprError) Error() string {
	return fmt.Sprintf("at position %d: %s", e.Pos+1, e.Reason)
}

// maxKPIDepth bounds the nesting of parentheses in a KPI expression.
const maxKPIDepth = 64

// condParser parses the text of a condition found at offset off of the KPI expression.
// Errors it returns carry positions relative to the whole expression.
type condParser func(text string, off int) (query.Expr, error)

var aggFuncs = map[string]query.AggFunc{
	"count":         query.AggCount,
	"countdistinct": query.AggCountDistinct,
	"sum":           query.AggSum,
	"avg":           query.AggAvg,
	"min":           query.AggMin,
	"max":           query.AggMax,
	"median":        query.AggMedian,
	"ratio":         query.AggRatio,
}

// ParseKPIExpr parses a KPI expression (with its placeholders already filled) into a
// metric. Conditions (the filter argument of an aggregate, the argument of ratio) are
// parsed by the filter parser; the result is unbound. Grammar:
//
//	expr    = term { ("+" | "-") term }
//	term    = factor { ("*" | "/") factor }
//	factor  = number | "-" factor | "(" expr ")" | call
//	call    = count "(" [field ["," cond]] ")" | ratio "(" cond ")"
//	        | agg "(" field ["," cond] ")"
//	agg     = countdistinct | sum | avg | min | max | median
//
// Function names are case-insensitive; fields are RECORD.FIELD.
func ParseKPIExpr(src string) (query.Metric, error) {
	return parseKPI(src, parseCondition)
}

func parseKPI(src string, cond condParser) (query.Metric, error) {
	p := &kpiParser{src: src, cond: cond}
	p.skipSpace()
	if p.pos == len(p.src) {
		return nil, &ExprError{Pos: 0, Reason: "empty KPI expression"}
	}
	m, err := p.expr(0)
	if err != nil {
		return nil, err
	}
	p.skipSpace()
	if p.pos < len(p.src) {
		return nil, p.errf("unexpected %q", p.rest())
	}
	return m, nil
}

type kpiParser struct {
	src  string
	pos  int
	cond condParser
}

func (p *kpiParser) errf(format string, args ...any) error {
	return &ExprError{Pos: p.pos, Reason: fmt.Sprintf(format, args...)}
}

func (p *kpiParser) rest() string {
	r := p.src[p.pos:]
	if len(r) > 20 {
		r = r[:20] + "..."
	}
	return r
}

func (p *kpiParser) skipSpace() {
	for p.pos < len(p.src) && isSpace(p.src[p.pos]) {
		p.pos++
	}
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

func (p *kpiParser) peek() byte {
	p.skipSpace()
	if p.pos < len(p.src) {
		return p.src[p.pos]
	}
	return 0
}

func (p *kpiParser) expr(depth int) (query.Metric, error) {
	l, err := p.term(depth)
	if err != nil {
		return nil, err
	}
	for {
		c := p.peek()
		if c != '+' && c != '-' {
			return l, nil
		}
		p.pos++
		r, err := p.term(depth)
		if err != nil {
			return nil, err
		}
		l = &query.Arith{Op: c, L: l, R: r}
	}
}

func (p *kpiParser) term(depth int) (query.Metric, error) {
	l, err := p.factor(depth)
	if err != nil {
		return nil, err
	}
	for {
		c := p.peek()
		if c != '*' && c != '/' {
			return l, nil
		}
		p.pos++
		r, err := p.factor(depth)
		if err != nil {
			return nil, err
		}
		l = &query.Arith{Op: c, L: l, R: r}
	}
}

func (p *kpiParser) factor(depth int) (query.Metric, error) {
	if depth >= maxKPIDepth {
		return nil, p.errf("expression nested deeper than %d", maxKPIDepth)
	}
	c := p.peek()
	switch {
	case c == 0:
		return nil, p.errf("unexpected end of expression")
	case c == '-':
		p.pos++
		x, err := p.factor(depth + 1)
		if err != nil {
			return nil, err
		}
		if n, ok := x.(*query.Number); ok {
			return &query.Number{V: -n.V}, nil
		}
		return &query.Arith{Op: '*', L: &query.Number{V: -1}, R: x}, nil
	case c == '(':
		p.pos++
		x, err := p.expr(depth + 1)
		if err != nil {
			return nil, err
		}
		if p.peek() != ')' {
			return nil, p.errf("missing )")
		}
		p.pos++
		return x, nil
	case c >= '0' && c <= '9' || c == '.':
		return p.number()
	case isIdentStart(c):
		return p.call()
	}
	return nil, p.errf("unexpected %q", p.rest())
}

func (p *kpiParser) number() (query.Metric, error) {
	start := p.pos
	for p.pos < len(p.src) {
		c := p.src[p.pos]
		if c >= '0' && c <= '9' || c == '.' {
			p.pos++
			continue
		}
		if (c == 'e' || c == 'E') && p.pos+1 < len(p.src) {
			p.pos++
			if s := p.src[p.pos]; s == '+' || s == '-' {
				p.pos++
			}
			continue
		}
		break
	}
	text := p.src[start:p.pos]
	v, err := strconv.ParseFloat(text, 64)
	if err != nil {
		p.pos = start
		return nil, p.errf("bad number %q", text)
	}
	return &query.Number{V: v}, nil
}

func isIdentStart(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '_'
}

func isIdentChar(c byte) bool { return isIdentStart(c) || c >= '0' && c <= '9' }

func (p *kpiParser) call() (query.Metric, error) {
	start := p.pos
	for p.pos < len(p.src) && isIdentChar(p.src[p.pos]) {
		p.pos++
	}
	name := p.src[start:p.pos]
	fn, ok := aggFuncs[strings.ToLower(name)]
	if !ok {
		p.pos = start
		return nil, p.errf("unknown function %q (want count, countdistinct, sum, avg, min, max, median or ratio)", name)
	}
	if p.peek() != '(' {
		return nil, p.errf("missing ( after %s", name)
	}
	p.pos++
	args, end, err := splitArgs(p.src, p.pos)
	if err != nil {
		return nil, err
	}
	p.pos = end + 1 // past ")"
	agg := &query.Aggregate{Func: fn}
	switch {
	case fn == query.AggRatio:
		if len(args) != 1 || args[0].text == "" {
			return nil, &ExprError{Pos: start, Reason: "ratio takes exactly one condition"}
		}
		agg.Filter, err = p.cond(args[0].text, args[0].off)
		if err != nil {
			return nil, err
		}
		return agg, nil
	case fn == query.AggCount && len(args) == 1 && args[0].text == "":
		return agg, nil // count()
	case len(args) > 2:
		return nil, &ExprError{Pos: args[2].off, Reason: fmt.Sprintf("%s takes a field and an optional condition", name)}
	}
	if args[0].text == "" {
		return nil, &ExprError{Pos: args[0].off, Reason: fmt.Sprintf("%s needs a field", name)}
	}
	if !isFieldPath(args[0].text) {
		return nil, &ExprError{Pos: args[0].off, Reason: fmt.Sprintf("%q is not a field (want RECORD.FIELD)", args[0].text)}
	}
	agg.Field = args[0].text
	if len(args) == 2 {
		if args[1].text == "" {
			return nil, &ExprError{Pos: args[1].off, Reason: "empty condition"}
		}
		agg.Filter, err = p.cond(args[1].text, args[1].off)
		if err != nil {
			return nil, err
		}
	}
	return agg, nil
}

// isFieldPath reports whether s is RECORD.FIELD with identifier parts.
func isFieldPath(s string) bool {
	rec, field, ok := strings.Cut(s, ".")
	return ok && isIdent(rec) && isIdent(field)
}

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

type arg struct {
	text string // trimmed
	off  int    // offset of text in the source
}

// splitArgs splits the arguments of a call that start at src[start] (just past "(") at
// top-level commas, outside quotes and parentheses. It returns the arguments (trimmed) and
// the offset of the closing parenthesis.
func splitArgs(src string, start int) ([]arg, int, error) {
	var args []arg
	depth := 0
	from := start
	add := func(end int) {
		s := src[from:end]
		lead := len(s) - len(strings.TrimLeft(s, " \t\r\n"))
		args = append(args, arg{text: strings.TrimSpace(s), off: from + lead})
	}
	for i := start; i < len(src); i++ {
		switch src[i] {
		case '\'':
			// Skip the quoted text; '' is an escaped quote and simply reopens.
			j := strings.IndexByte(src[i+1:], '\'')
			if j < 0 {
				return nil, 0, &ExprError{Pos: i, Reason: "unterminated string"}
			}
			i += j + 1
		case '(':
			depth++
			if depth > maxKPIDepth {
				return nil, 0, &ExprError{Pos: i, Reason: fmt.Sprintf("expression nested deeper than %d", maxKPIDepth)}
			}
		case ')':
			if depth == 0 {
				add(i)
				return args, i, nil
			}
			depth--
		case ',':
			if depth == 0 {
				add(i)
				from = i + 1
			}
		}
	}
	return nil, 0, &ExprError{Pos: start - 1, Reason: "missing )"}
}
