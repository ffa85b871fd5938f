package query

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/kmkit/kmkit/problem"
)

// Metric is a parsed KPI expression (ParseKPI, ParseAndBindKPI): *Aggregate, *Arith or
// *Number. It is the KPI language's syntax tree, as Expr is the filter language's; km
// compiles it into the typed, grain-placed metric of a plan (km.Metric).
type Metric interface{ metricNode() }

// AggFunc is an aggregate function of the KPI language.
type AggFunc uint8

// The aggregate functions. Aggregates skip nulls.
const (
	AggCount         AggFunc = iota + 1 // count() rows, or count(F) non-null values of F
	AggCountDistinct                    // distinct non-null values of F
	AggSum
	AggAvg
	AggMin
	AggMax
	AggMedian
	AggRatio // rows where Filter is true over all rows of the group
)

// Aggregate applies Func to Field over the rows of a group that pass Filter. Field is empty
// for count() and ratio; for ratio, Filter is the condition and is required.
type Aggregate struct {
	Func   AggFunc
	Field  string
	Filter Expr
}

// Arith is "L Op R" with Op one of + - * /. Division by zero and arithmetic with null give null.
type Arith struct {
	Op   byte
	L, R Metric
}

// Number is a numeric constant in a KPI expression.
type Number struct{ V float64 }

func (*Aggregate) metricNode() {}
func (*Arith) metricNode()     {}
func (*Number) metricNode()    {}

// condParser parses the text of a condition found at offset off of the KPI expression.
// Errors it returns carry positions relative to the whole expression.
type condParser func(text string, off int) (Expr, *Error)

var aggFuncs = map[string]AggFunc{
	"count":         AggCount,
	"countdistinct": AggCountDistinct,
	"sum":           AggSum,
	"avg":           AggAvg,
	"min":           AggMin,
	"max":           AggMax,
	"median":        AggMedian,
	"ratio":         AggRatio,
}

// String returns the name of f in the KPI language: count, countdistinct, sum, avg, min,
// max, median or ratio.
func (f AggFunc) String() string {
	for name, fn := range aggFuncs {
		if fn == f {
			return name
		}
	}
	return fmt.Sprintf("AggFunc(%d)", uint8(f))
}

// ParseKPI parses a KPI expression (with its placeholders already filled) into an unbound
// metric; see the package documentation for the grammar. Conditions (the filter argument
// of an aggregate, the argument of ratio) are parsed by the filter parser with the same
// Options; the parentheses of the expression count against Limits.MaxDepth too. Errors are
// *Error of kind KindSyntax, KindUnsupported or KindLimit, positioned (Pos, Char) in the
// whole expression, a condition's errors included. They carry no parameter name unless
// WithParam gives one.
func ParseKPI(src string, opts ...Option) (Metric, error) {
	c := newKPIConfig(opts)
	return c.parseKPI(src, func(text string, off int) (Expr, *Error) {
		e, err := parse(text, c.limits, c.odata)
		return e, shiftError(err, off)
	})
}

// ParseAndBindKPI parses a KPI expression as ParseKPI does and binds each of its
// conditions to s, reporting binding errors (KindType) with their position in the whole
// expression as well. The fields that aggregates name are not checked: they are the
// caller's (the Knowledge Model checks that they exist and can be aggregated).
func ParseAndBindKPI(src string, s Schema, opts ...Option) (Metric, error) {
	c := newKPIConfig(opts)
	return c.parseKPI(src, func(text string, off int) (Expr, *Error) {
		e, err := parse(text, c.limits, c.odata)
		if err == nil {
			var b Expr
			if b, err = bind(e, &binder{Schema: s, now: c.now}); err == nil {
				return b, nil
			}
		}
		return nil, shiftError(err, off)
	})
}

// newKPIConfig is newConfig without a default parameter name: a KPI expression is a
// definition, not a request parameter.
func newKPIConfig(opts []Option) config {
	var c config
	for _, o := range opts {
		o(&c)
	}
	c.limits = c.limits.withDefaults()
	return c
}

// shiftError moves the position of a condition's error by off bytes, so that it points
// into the whole KPI expression; an error without a position points at the condition.
func shiftError(err *Error, off int) *Error {
	if err == nil {
		return nil
	}
	if err.Pos < 0 {
		err.Pos = Pos(off)
	} else {
		err.Pos += Pos(off)
	}
	return err
}

// parseKPI parses src with cond for its conditions and completes the error with the
// parameter name and character position.
func (c config) parseKPI(src string, cond condParser) (Metric, error) {
	m, err := parseKPI(src, c.limits.MaxDepth, cond)
	if err != nil {
		err.Param = c.param
		err.Char = CharPos(src, err.Pos)
		return nil, err
	}
	return m, nil
}

func parseKPI(src string, maxDepth int, cond condParser) (Metric, *Error) {
	p := &kpiParser{src: src, cond: cond, maxDepth: maxDepth}
	p.skipSpace()
	if p.pos == len(p.src) {
		return nil, kpiError(KindSyntax, 0, "empty KPI expression")
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

// kpiError returns an error of the KPI grammar, with the code of its kind as the filter
// parser gives it.
func kpiError(kind ErrorKind, pos int, format string, args ...any) *Error {
	code := CodeFilterSyntax
	if kind == KindLimit {
		code = problem.CodeConstraint
	}
	return &Error{Kind: kind, Code: code, Pos: Pos(pos), Msg: fmt.Sprintf(format, args...)}
}

type kpiParser struct {
	src      string
	pos      int
	cond     condParser
	maxDepth int
}

// errf returns a syntax error at the current position.
func (p *kpiParser) errf(format string, args ...any) *Error {
	return kpiError(KindSyntax, p.pos, format, args...)
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

func (p *kpiParser) peek() byte {
	p.skipSpace()
	if p.pos < len(p.src) {
		return p.src[p.pos]
	}
	return 0
}

func (p *kpiParser) expr(depth int) (Metric, *Error) {
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
		l = &Arith{Op: c, L: l, R: r}
	}
}

func (p *kpiParser) term(depth int) (Metric, *Error) {
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
		l = &Arith{Op: c, L: l, R: r}
	}
}

func (p *kpiParser) factor(depth int) (Metric, *Error) {
	if depth >= p.maxDepth {
		return nil, kpiError(KindLimit, p.pos, "expression nested deeper than %d", p.maxDepth)
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
		if n, ok := x.(*Number); ok {
			return &Number{V: -n.V}, nil
		}
		return &Arith{Op: '*', L: &Number{V: -1}, R: x}, nil
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
	case kpiIdentStart(c):
		return p.call()
	}
	return nil, p.errf("unexpected %q", p.rest())
}

func (p *kpiParser) number() (Metric, *Error) {
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
	return &Number{V: v}, nil
}

func kpiIdentStart(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '_'
}

// IsIdentifierChar reports whether c may follow the first character of an identifier: an
// ASCII letter, digit or '_'.
func IsIdentifierChar(c byte) bool { return kpiIdentStart(c) || c >= '0' && c <= '9' }

func (p *kpiParser) call() (Metric, *Error) {
	start := p.pos
	for p.pos < len(p.src) && IsIdentifierChar(p.src[p.pos]) {
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
	args, end, err := splitKPIArgs(p.src, p.pos, p.maxDepth)
	if err != nil {
		return nil, err
	}
	p.pos = end + 1 // past ")"
	agg := &Aggregate{Func: fn}
	switch {
	case fn == AggRatio:
		if len(args) != 1 || args[0].text == "" {
			return nil, kpiError(KindSyntax, start, "ratio takes exactly one condition")
		}
		agg.Filter, err = p.cond(args[0].text, args[0].off)
		if err != nil {
			return nil, err
		}
		return agg, nil
	case fn == AggCount && len(args) == 1 && args[0].text == "":
		return agg, nil // count()
	case len(args) > 2:
		return nil, kpiError(KindSyntax, args[2].off, "%s takes a field and an optional condition", name)
	}
	if args[0].text == "" {
		return nil, kpiError(KindSyntax, args[0].off, "%s needs a field", name)
	}
	if !isFieldPath(args[0].text) {
		return nil, kpiError(KindSyntax, args[0].off, "%q is not a field (want RECORD.FIELD)", args[0].text)
	}
	agg.Field = args[0].text
	if len(args) == 2 {
		if args[1].text == "" {
			return nil, kpiError(KindSyntax, args[1].off, "empty condition")
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
	return ok && IsIdentifier(rec) && IsIdentifier(field)
}

// IsIdentifier reports whether s is an identifier of the KPI language: an ASCII letter or
// '_', then letters, digits and '_'. Knowledge Model record and field ids follow it, so that
// each can be named as RECORD.FIELD in a KPI expression.
func IsIdentifier(s string) bool {
	if s == "" || !kpiIdentStart(s[0]) {
		return false
	}
	for i := 1; i < len(s); i++ {
		if !IsIdentifierChar(s[i]) {
			return false
		}
	}
	return true
}

type kpiArg struct {
	text string // trimmed
	off  int    // offset of text in the source
}

// splitKPIArgs splits the arguments of a call that start at src[start] (just past "(") at
// top-level commas, outside quotes and parentheses. It returns the arguments (trimmed) and
// the offset of the closing parenthesis.
func splitKPIArgs(src string, start, maxDepth int) ([]kpiArg, int, *Error) {
	var args []kpiArg
	depth := 0
	from := start
	add := func(end int) {
		s := src[from:end]
		lead := len(s) - len(strings.TrimLeft(s, " \t\r\n"))
		args = append(args, kpiArg{text: strings.TrimSpace(s), off: from + lead})
	}
	for i := start; i < len(src); i++ {
		switch src[i] {
		case '\'':
			// Skip the quoted text; '' is an escaped quote and simply reopens.
			j := strings.IndexByte(src[i+1:], '\'')
			if j < 0 {
				return nil, 0, kpiError(KindSyntax, i, "unterminated string")
			}
			i += j + 1
		case '(':
			depth++
			if depth > maxDepth {
				return nil, 0, kpiError(KindLimit, i, "expression nested deeper than %d", maxDepth)
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
	return nil, 0, kpiError(KindSyntax, start-1, "missing )")
}
