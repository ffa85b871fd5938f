package query

import (
	"fmt"
	"strings"

	"github.com/kmkit/kmkit/problem"
)

// The scalar grammar of ODataSyntax, for conditions whose sides are functions or
// arithmetic (the plain grammar reads everything else):
//
//	scalarCond = operand [ op operand | "in" "(" value { "," value } ")" ]   (no op: a boolean call)
//	operand    = term { ("add" | "sub") term }
//	term       = atom { ("mul" | "div" | "divby" | "mod") atom }
//	atom       = "(" operand ")" | name "(" [ operand { "," operand } ] ")" | field | value

// matchOperand is contains, startswith or endswith read as an operand of the scalar
// grammar; only a condition may hold it (alone, or compared with true or false).
type matchOperand struct{ m *ScalarMatch }

func (o *matchOperand) Position() Pos    { return o.m.At }
func (o *matchOperand) ResultType() Type { return TypeBoolean }
func (*matchOperand) scalarNode()        {}

// unsupportedFunctions are OData's canonical functions outside the supported set: valid
// syntax, answered as not supported (501 on the OData service).
var unsupportedFunctions = map[string]bool{
	"matchespattern": true, "fractionalseconds": true, "totaloffsetminutes": true,
	"totalseconds": true, "maxdatetime": true, "mindatetime": true, "cast": true, "isof": true,
	"case": true, "hassubset": true, "hassubsequence": true,
}

// arithmeticAhead fails with a retry when, under ODataSyntax, the current token is an
// arithmetic operator: the condition is one for the scalar grammar.
func (p *parser) arithmeticAhead() {
	if p.odata && p.tok.kind == tIdent && isArithmetic(strings.ToLower(p.tok.text)) {
		p.retry(KindUnsupported, p.tok.pos, "the arithmetic operator %s is not supported here", short(p.tok.text))
	}
}

// parseScalarCondition parses a condition with the scalar grammar and returns the plain
// node (*Compare, *IsNull, *Call) where both sides turn out plain.
func (p *parser) parseScalarCondition() Expr {
	start := p.tok.pos
	l := p.parseOperand()
	t := p.tok
	if t.kind == tIdent {
		if op, ok := compareOp(t.text); ok {
			p.next()
			r := p.parseOperand()
			return p.scalarCompare(Pos(start), l, op, r, t)
		}
		switch t.text {
		case "in":
			return p.scalarIn(Pos(start), l)
		case "has":
			p.fail(KindUnsupported, t.pos, "the has operator is not supported")
		}
	}
	if m, ok := l.(*matchOperand); ok {
		return matchExpr(m.m)
	}
	if f, ok := l.(*FieldOperand); ok && p.endsCondition(t) {
		return isTrue(f.Field) // a boolean property on its own (OData)
	}
	if f, ok := l.(*FieldOperand); ok && t.kind != tRParen && (t.kind == tEOF || p.isWord("and") || p.isWord("or")) {
		p.fail(KindUnsupported, int(f.Field.At), "a field on its own is not a condition; compare it, as in %s eq true", short(f.Field.Name))
	}
	if t.kind == tRParen {
		// "(A add 1) gt 3": the parenthesis holds an operand, not a condition; the
		// enclosing condition is read again from its "(".
		p.retry(KindSyntax, int(l.Position()), "%s is a value, not a condition; compare it, as in %s eq 1", short(formatScalarText(l)), short(formatScalarText(l)))
	}
	if t.kind == tEOF || p.isWord("and") || p.isWord("or") {
		p.fail(KindSyntax, int(l.Position()), "%s is a value, not a condition; compare it, as in %s eq 1", short(formatScalarText(l)), short(formatScalarText(l)))
	}
	p.unexpected("a comparison operator (eq, ne, gt, ge, lt, le, in)")
	return nil
}

// matchExpr returns the plain *Call for a match on a field and a literal, else m.
func matchExpr(m *ScalarMatch) Expr {
	f, fok := m.X.(*FieldOperand)
	c, cok := m.Arg.(*Const)
	if fok && cok {
		return &Call{At: m.At, Func: m.Func, Field: f.Field, Arg: c.Lit}
	}
	return m
}

// scalarCompare builds the comparison "l op r": a boolean call compared with true or
// false is the call or its negation; a literal on the left is mirrored; a field and a
// literal give the plain *Compare or *IsNull.
func (p *parser) scalarCompare(at Pos, l Scalar, op CompareOp, r Scalar, opTok token) Expr {
	lm, lIsMatch := l.(*matchOperand)
	rm, rIsMatch := r.(*matchOperand)
	if lIsMatch || rIsMatch {
		m, other := lm, r
		if !lIsMatch {
			m, other = rm, l
		}
		c, ok := other.(*Const)
		if ok && c.Lit.Kind == LitBoolean && (op == Eq || op == Ne) && !(lIsMatch && rIsMatch) {
			e := matchExpr(m.m)
			if c.Lit.Value.Bool == (op == Eq) {
				return e
			}
			return &Not{At: at, X: e}
		}
		p.fail(KindUnsupported, opTok.pos, "comparing the result of %s is supported only with eq or ne and true or false", m.m.Func)
	}
	lc, lConst := l.(*Const)
	_, rConst := r.(*Const)
	if lConst && rConst {
		p.fail(KindUnsupported, int(at), "comparing two literals is not supported; compare a field or a function with a literal")
	}
	if lConst {
		l, r, op = r, lc, mirrored[op]
	}
	if c, ok := r.(*Const); ok && c.Lit.Kind == LitNull {
		if op != Eq && op != Ne {
			p.fail(KindUnsupported, opTok.pos, "%s null is not supported: only eq null and ne null compare with null", opTok.text)
		}
		if f, ok := l.(*FieldOperand); ok {
			return &IsNull{At: at, Field: f.Field, Negated: op == Ne}
		}
		return &ScalarCompare{At: at, L: l, Op: op, R: r}
	}
	if f, ok := l.(*FieldOperand); ok {
		if c, ok := r.(*Const); ok {
			return &Compare{At: at, Field: f.Field, Op: op, Value: c.Lit}
		}
	}
	return &ScalarCompare{At: at, L: l, Op: op, R: r}
}

// scalarIn reads "operand in (v1, v2 ...)" as the disjunction of equalities, which it
// equals in three-valued logic (the list holds no null).
func (p *parser) scalarIn(at Pos, l Scalar) Expr {
	if _, ok := l.(*matchOperand); ok {
		p.fail(KindUnsupported, int(at), "the left side of in must be a field or a value expression")
	}
	if f, ok := l.(*FieldOperand); ok {
		return p.parseIn(f.Field)
	}
	in := p.parseIn(FieldRef{At: at, Name: "_"}).(*In)
	if len(in.Values) == 0 {
		p.fail(KindUnsupported, int(at), "an empty in list after a function or arithmetic is not supported")
	}
	var e Expr
	for _, v := range in.Values {
		c := &ScalarCompare{At: at, L: l, Op: Eq, R: &Const{Lit: v}}
		if e == nil {
			e = c
		} else {
			e = &Logical{At: at, Op: Or, L: e, R: c}
		}
	}
	return e
}

// parseOperand parses a sum: term { add|sub term }.
func (p *parser) parseOperand() Scalar {
	l := p.parseTerm()
	for {
		op, ok := p.arithAt("add", "sub")
		if !ok {
			return l
		}
		p.next()
		r := p.parseTerm()
		p.noMatch(l, op)
		p.noMatch(r, op)
		l = &Arithmetic{At: l.Position(), Op: op, L: l, R: r}
	}
}

// parseTerm parses a product: atom { mul|div|divby|mod atom }.
func (p *parser) parseTerm() Scalar {
	l := p.parseAtom()
	for {
		op, ok := p.arithAt("mul", "div", "divby", "mod")
		if !ok {
			return l
		}
		p.next()
		r := p.parseAtom()
		p.noMatch(l, op)
		p.noMatch(r, op)
		l = &Arithmetic{At: l.Position(), Op: op, L: l, R: r}
	}
}

// arithAt returns the arithmetic operator of the current token when it is one of names.
func (p *parser) arithAt(names ...string) (ArithOp, bool) {
	if p.tok.kind != tIdent {
		return 0, false
	}
	w := strings.ToLower(p.tok.text)
	for _, n := range names {
		if w == n {
			return arithOp(w)
		}
	}
	return 0, false
}

// parseAtom parses a parenthesised operand, a function call, a field or a literal.
func (p *parser) parseAtom() Scalar {
	t := p.tok
	switch t.kind {
	case tLParen:
		p.enter(t.pos)
		p.next()
		s := p.parseOperand()
		if p.tok.kind != tRParen {
			p.unexpected(fmt.Sprintf(`")" to close the "(" at position %d`, CharPos(p.lx.src, Pos(t.pos))))
		}
		p.leave()
		p.next()
		return s
	case tString, tValue:
		return &Const{Lit: p.parseValue("the operator")}
	case tIdent:
		switch t.text {
		case "true", "false", "null":
			return &Const{Lit: p.parseValue("the operator")}
		}
		if isKeyword(t.text) || isArithmetic(strings.ToLower(t.text)) {
			p.fail(KindSyntax, t.pos, "expected a field, a literal or a function, found %s", p.describe())
		}
		if t.text == "INF" || t.text == "NaN" {
			// OData's special doubles (INF, -INF, NaN), not names.
			p.fail(KindUnsupported, t.pos, "the floating-point value %s is not supported", t.text)
		}
		if p.nextChar() == '(' {
			return p.parseApply()
		}
		return &FieldOperand{Field: p.parseField("a field", "")}
	case tOther:
		if t.text == "-" {
			// OData's unary minus: -x is 0 sub x, of x's type.
			p.next()
			x := p.parseAtom()
			zero := &Const{Lit: Literal{At: Pos(t.pos), Kind: LitInteger, Raw: "0", Value: Int(0)}}
			return &Arithmetic{At: Pos(t.pos), Op: OpSub, L: zero, R: x}
		}
		p.unsupportedStart()
	}
	p.fail(KindSyntax, t.pos, "expected a field, a literal or a function, found %s", p.describe())
	return nil
}

// arity is the number of arguments of each value function: min and max.
var arity = [...][2]int{
	FnToLower: {1, 1}, FnToUpper: {1, 1}, FnLength: {1, 1}, FnTrim: {1, 1},
	FnIndexOf: {2, 2}, FnConcat: {2, 2}, FnSubstring: {2, 3},
	FnYear: {1, 1}, FnMonth: {1, 1}, FnDay: {1, 1}, FnHour: {1, 1}, FnMinute: {1, 1},
	FnSecond: {1, 1}, FnDate: {1, 1}, FnTime: {1, 1}, FnNow: {0, 0},
	FnRound: {1, 1}, FnFloor: {1, 1}, FnCeiling: {1, 1},
}

// parseApply parses a function call at the current name (followed by "(").
func (p *parser) parseApply() Scalar {
	name := p.tok
	lower := strings.ToLower(name.text)
	fn, isValue := scalarFunc(lower)
	match, isMatch := function(lower)
	switch {
	case isValue, isMatch:
	case unsupportedFunctions[lower] || strings.HasPrefix(lower, "geo.") || strings.HasPrefix(lower, "odata."):
		p.fail(KindUnsupported, name.pos, "the function %s is not supported", short(name.text))
	default:
		p.fail(KindSyntax, name.pos, "%s is not a function of $filter", short(name.text))
	}
	p.enter(name.pos)
	p.next() // the name
	p.next() // (
	var args []Scalar
	if p.tok.kind != tRParen {
		for {
			args = append(args, p.parseOperand())
			if p.tok.kind == tComma {
				p.next()
				continue
			}
			if p.tok.kind != tRParen {
				p.unexpected(fmt.Sprintf(`"," or ")" in the arguments of %s`, lower))
			}
			break
		}
	}
	p.leave()
	p.next() // )
	for _, a := range args {
		if m, ok := a.(*matchOperand); ok {
			p.fail(KindUnsupported, int(m.Position()), "%s as an argument of a function is not supported", m.m.Func)
		}
	}
	if isMatch {
		if len(args) != 2 {
			p.fail(KindSyntax, name.pos, "%s takes two arguments: a text and the text to look for", lower)
		}
		return &matchOperand{&ScalarMatch{At: Pos(name.pos), Func: match, X: args[0], Arg: args[1]}}
	}
	if a := arity[fn]; len(args) < a[0] || len(args) > a[1] {
		want := fmt.Sprintf("%d argument", a[0])
		if a[0] != 1 {
			want += "s"
		}
		if a[1] != a[0] {
			want = fmt.Sprintf("%d or %d arguments", a[0], a[1])
		}
		p.fail(KindSyntax, name.pos, "%s takes %s, not %d", lower, want, len(args))
	}
	return &Apply{At: Pos(name.pos), Func: fn, Args: args}
}

// noMatch fails when s, an operand of op, is a boolean function.
func (p *parser) noMatch(s Scalar, op ArithOp) {
	if m, ok := s.(*matchOperand); ok {
		p.fail(KindUnsupported, int(m.Position()), "%s as an operand of %s is not supported", m.m.Func, op)
	}
}

// ParseScalar parses a value expression alone (an operand of the scalar grammar, see
// Functions in the package documentation), as OData's $orderby items are written:
// tolower(NAME), year(ORDER_DATE), NET mul 2. It is read with ODataSyntax's rules; a bare
// field is a *FieldOperand. Errors are *Error as Parse returns them.
func ParseScalar(src string, opts ...Option) (s Scalar, err error) {
	c := newConfig(opts)
	if len(src) > c.limits.MaxLength {
		return nil, &Error{Kind: KindLimit, Code: problem.CodeConstraint, Param: c.param, Pos: NoPos,
			Msg: fmt.Sprintf("the expression is %d bytes long; at most %d are allowed", len(src), c.limits.MaxLength)}
	}
	p := &parser{lx: lexer{src: src}, lim: c.limits, odata: true}
	defer func() {
		if r := recover(); r != nil {
			perr, ok := r.(*Error)
			if !ok {
				panic(r)
			}
			perr.retry = false
			perr.Param = c.param
			perr.Char = CharPos(src, perr.Pos)
			s, err = nil, perr
		}
	}()
	p.moveTo(0)
	if p.tok.kind == tEOF {
		p.fail(KindSyntax, p.tok.pos, "the expression is empty")
	}
	s = p.parseOperand()
	if m, ok := s.(*matchOperand); ok {
		p.fail(KindUnsupported, int(m.Position()), "a condition is not a value to sort by")
	}
	if p.tok.kind != tEOF {
		p.unexpected("the end of the expression")
	}
	return s, nil
}
