package query

import "time"

// bindScalar types s: fields get their type, functions and arithmetic their result type;
// constants stay as parsed (their consumer converts them, see convertConst); now() becomes
// the request's instant.
func (b *binder) bindScalar(s Scalar) (Scalar, *Error) {
	switch s := s.(type) {
	case *FieldOperand:
		f, err := bindField(s.Field, b)
		if err != nil {
			return nil, err
		}
		return &FieldOperand{Field: f}, nil
	case *Const:
		return s, nil
	case *Apply:
		return b.bindApply(s)
	case *Arithmetic:
		return b.bindArithmetic(s)
	}
	return nil, &Error{Kind: KindSyntax, Code: CodeFilterSyntax, Pos: NoPos, Msg: "the expression tree holds an invalid value node"}
}

// typeClass tells which types a function argument accepts.
type typeClass uint8

const (
	classString  typeClass = iota + 1
	classInteger           // an integer
	classNumber            // integer or float
	classDay               // date, datetime, timestamp
	classClock             // datetime, timestamp, time
	classInstant           // datetime, timestamp
)

func (c typeClass) accepts(t Type) bool {
	switch c {
	case classString:
		return t == TypeString
	case classInteger:
		return t == TypeInteger
	case classNumber:
		return t.Numeric()
	case classDay:
		return t == TypeDate || t.Temporal()
	case classClock:
		return t == TypeTime || t.Temporal()
	case classInstant:
		return t.Temporal()
	}
	return false
}

var classNouns = [...]string{
	classString:  "a string",
	classInteger: "an integer",
	classNumber:  "a number",
	classDay:     "a date, datetime or timestamp",
	classClock:   "a datetime, timestamp or time",
	classInstant: "a datetime or timestamp",
}

// signature returns the argument classes of fn and its result type given the first
// argument's type.
func signature(fn ScalarFunc) []typeClass {
	switch fn {
	case FnToLower, FnToUpper, FnLength, FnTrim:
		return []typeClass{classString}
	case FnIndexOf, FnConcat:
		return []typeClass{classString, classString}
	case FnSubstring:
		return []typeClass{classString, classInteger, classInteger}
	case FnYear, FnMonth, FnDay:
		return []typeClass{classDay}
	case FnHour, FnMinute, FnSecond:
		return []typeClass{classClock}
	case FnDate, FnTime:
		return []typeClass{classInstant}
	case FnRound, FnFloor, FnCeiling:
		return []typeClass{classNumber}
	}
	return nil
}

func resultType(fn ScalarFunc, first Type) Type {
	switch fn {
	case FnToLower, FnToUpper, FnTrim, FnConcat, FnSubstring, FnTimeText:
		return TypeString
	case FnDate:
		return TypeDate
	case FnTime:
		return TypeTime
	case FnNow:
		return TypeDateTime
	case FnRound, FnFloor, FnCeiling:
		return first
	}
	return TypeInteger
}

func (b *binder) bindApply(s *Apply) (Scalar, *Error) {
	if s.Func == FnNow {
		return &Const{Lit: Literal{At: s.At, Kind: LitDateTime, Raw: "now()", Value: b.nowValue()}}, nil
	}
	sig := signature(s.Func)
	if sig == nil {
		return nil, typeError(s.At, "unknown function %v", s.Func)
	}
	args := make([]Scalar, len(s.Args))
	for i, a := range s.Args {
		if i >= len(sig) {
			return nil, typeError(a.Position(), "%s takes at most %d arguments", s.Func, len(sig))
		}
		ba, err := b.bindScalar(a)
		if err != nil {
			return nil, err
		}
		if ba, err = b.argument(s.Func, i, ba, sig[i]); err != nil {
			return nil, err
		}
		args[i] = ba
	}
	first := TypeInvalid
	if len(args) > 0 {
		first = args[0].ResultType()
	}
	return &Apply{At: s.At, Func: s.Func, Args: args, Type: resultType(s.Func, first)}, nil
}

// argument checks (a non-constant) or converts (a constant) argument i of fn.
func (b *binder) argument(fn ScalarFunc, i int, a Scalar, want typeClass) (Scalar, *Error) {
	if c, ok := a.(*Const); ok {
		lit := c.Lit
		if lit.Kind == LitNull {
			return nil, typeError(lit.At, "null as an argument of %s is not supported", fn)
		}
		var t Type
		switch want {
		case classString:
			// Any literal is read as its text, as the argument of contains is.
			lit.Value = String(lit.Raw)
			return &Const{Lit: lit}, nil
		case classInteger:
			t = TypeInteger
		case classNumber:
			t = TypeFloat
			if lit.Kind == LitInteger {
				t = TypeInteger
			}
		default:
			t = lit.Value.Type
			if !want.accepts(t) {
				return nil, typeError(lit.At, "the argument of %s must be %s, not %s %s", fn, classNouns[want], kindNoun[lit.Kind], short(lit.Raw))
			}
		}
		bl, err := bindLiteral(FieldRef{At: lit.At, Name: "the argument of " + fn.String(), Type: t}, lit)
		if err != nil {
			return nil, err
		}
		return &Const{Lit: bl}, nil
	}
	if want == classString {
		a = TimeAsText(a)
	}
	if t := a.ResultType(); !want.accepts(t) {
		return nil, typeError(a.Position(), "%s needs %s; %s is %s", fn, classNouns[want], short(FormatScalar(a)), article(t))
	}
	return a, nil
}

// TimeAsText returns s read as a string: a time becomes its text (FnTimeText), since the
// API presents a time field as a string; any other s is returned as it is.
func TimeAsText(s Scalar) Scalar {
	if s.ResultType() != TypeTime {
		return s
	}
	return &Apply{At: s.Position(), Func: FnTimeText, Args: []Scalar{s}, Type: TypeString}
}

func (b *binder) bindArithmetic(s *Arithmetic) (Scalar, *Error) {
	l, err := b.bindScalar(s.L)
	if err != nil {
		return nil, err
	}
	r, err := b.bindScalar(s.R)
	if err != nil {
		return nil, err
	}
	if l, err = b.argumentOf(s.Op, l); err != nil {
		return nil, err
	}
	if r, err = b.argumentOf(s.Op, r); err != nil {
		return nil, err
	}
	t := TypeInteger
	if s.Op == OpDivBy || l.ResultType() == TypeFloat || r.ResultType() == TypeFloat {
		t = TypeFloat
	}
	if t == TypeFloat {
		l, r = floatConst(l), floatConst(r)
	}
	return &Arithmetic{At: s.At, Op: s.Op, L: l, R: r, Type: t}, nil
}

// argumentOf checks an operand of an arithmetic operator: a number.
func (b *binder) argumentOf(op ArithOp, a Scalar) (Scalar, *Error) {
	if c, ok := a.(*Const); ok {
		lit := c.Lit
		switch lit.Kind {
		case LitNull:
			return nil, typeError(lit.At, "null as an operand of %s is not supported", op)
		case LitInteger, LitDecimal:
			return a, nil
		case LitBare:
			return nil, numberError(FieldRef{Name: "the operand of " + op.String(), Type: TypeFloat}, lit)
		}
		return nil, typeError(lit.At, "%s needs numbers, not %s %s (date and time arithmetic is not supported)", op, kindNoun[lit.Kind], short(lit.Raw))
	}
	if t := a.ResultType(); !t.Numeric() {
		return nil, typeError(a.Position(), "%s needs numbers; %s is %s", op, short(FormatScalar(a)), article(t))
	}
	return a, nil
}

// floatConst turns an integer constant into a float one (an operand of a float operation).
func floatConst(s Scalar) Scalar {
	if c, ok := s.(*Const); ok && !c.Lit.Value.Null && c.Lit.Value.Type == TypeInteger {
		lit := c.Lit
		lit.Value = Float(float64(lit.Value.Int))
		return &Const{Lit: lit}
	}
	return s
}

// comparable reports whether values of types a and b compare: the same type, two
// numbers, or two instants.
func comparable(a, b Type) bool {
	return a == b || a.Numeric() && b.Numeric() || a.Temporal() && b.Temporal()
}

func (b *binder) bindScalarCompare(e *ScalarCompare) (Expr, *Error) {
	l, err := b.bindScalar(e.L)
	if err != nil {
		return nil, err
	}
	r, err := b.bindScalar(e.R)
	if err != nil {
		return nil, err
	}
	op := e.Op
	lc, lConst := l.(*Const)
	rc, rConst := r.(*Const)
	if lConst && rConst {
		return nil, &Error{Kind: KindUnsupported, Code: CodeFilterNotSupported, Pos: e.At, Msg: "comparing two literals is not supported; compare a field or a function with a literal"}
	}
	if !namesField(l) && !namesField(r) {
		return nil, &Error{Kind: KindUnsupported, Code: CodeFilterNotSupported, Pos: e.At, Msg: "a comparison that names no field is not supported; compare a field or a function of one"}
	}
	if lConst { // now() on the left
		l, r, op, rc, rConst = r, l, mirrored[op], lc, true
	}
	if rConst {
		if rc.Lit.Kind == LitNull {
			if f, ok := l.(*FieldOperand); ok {
				return &IsNull{At: e.At, Field: f.Field, Negated: op == Ne}, nil
			}
			lit := rc.Lit
			lit.Value = Null(TypeNull)
			return &ScalarCompare{At: e.At, L: l, Op: op, R: &Const{Lit: lit}}, nil
		}
		if f, ok := l.(*FieldOperand); ok { // a field and now()
			if f.Field.Type == TypeDate && rc.Lit.Kind == LitDateTime {
				// The date stands for its midnight UTC, as against a date-time literal.
				return dateAgainstInstant(e.At, f.Field, op, rc.Lit, rc.Lit.Value.Int), nil
			}
			v, err := bindLiteral(f.Field, rc.Lit)
			if err != nil {
				return nil, err
			}
			return &Compare{At: e.At, Field: f.Field, Op: op, Value: v}, nil
		}
		t := l.ResultType()
		v, err := bindLiteral(FieldRef{At: l.Position(), Name: FormatScalar(l), Type: t}, rc.Lit)
		if err != nil {
			return nil, err
		}
		if v.Value.Type == TypeDate && t.Temporal() {
			return nil, typeError(v.At, "%s is %s; compare it with a date-time, or compare date(...) with a date", short(FormatScalar(l)), article(t))
		}
		cmp := func(op CompareOp, v Literal) Expr { return &ScalarCompare{At: e.At, L: l, Op: op, R: &Const{Lit: v}} }
		if finerThanMicros(v) {
			return between(e.At, cmp, op, v), nil
		}
		return cmp(op, v), nil
	}
	if lt, rt := l.ResultType(), r.ResultType(); !comparable(lt, rt) {
		return nil, typeError(e.At, "%s is %s and %s is %s: they cannot be compared", short(FormatScalar(l)), article(lt), short(FormatScalar(r)), article(rt))
	}
	return &ScalarCompare{At: e.At, L: l, Op: op, R: r}, nil
}

// namesField reports whether the value expression s reads a field.
func namesField(s Scalar) bool {
	named := false
	ScalarFields(s, func(FieldRef) { named = true })
	return named
}

func (b *binder) bindScalarMatch(e *ScalarMatch) (Expr, *Error) {
	x, err := b.bindScalar(e.X)
	if err != nil {
		return nil, err
	}
	arg, err := b.bindScalar(e.Arg)
	if err != nil {
		return nil, err
	}
	fn := funcNames[e.Func]
	if c, ok := x.(*Const); ok {
		return nil, typeError(c.Lit.At, "the first argument of %s must be a field or a function, not a literal", fn)
	}
	x = TimeAsText(x)
	if _, ok := arg.(*Const); !ok {
		arg = TimeAsText(arg)
	}
	if t := x.ResultType(); t != TypeString {
		return nil, typeError(x.Position(), "%s needs a string; %s is %s", fn, short(FormatScalar(x)), article(t))
	}
	if c, ok := arg.(*Const); ok {
		if c.Lit.Kind == LitNull {
			return nil, typeError(c.Lit.At, "%s needs a text to look for, not null", fn)
		}
		lit := c.Lit
		lit.Value = String(lit.Raw)
		arg = &Const{Lit: lit}
	} else if t := arg.ResultType(); t != TypeString {
		return nil, typeError(arg.Position(), "%s needs a string to look for; %s is %s", fn, short(FormatScalar(arg)), article(t))
	}
	return &ScalarMatch{At: e.At, Func: e.Func, X: x, Arg: arg}, nil
}

// BindScalar types a value expression as Bind types the sides of a condition: fields get
// their types from sch, functions and arithmetic their result types, now() the instant
// now (the current time when zero). A constant alone has no type to sort by and is an
// error. Errors are *Error of kind KindType.
func BindScalar(s Scalar, sch Schema, now time.Time) (Scalar, error) {
	b := &binder{Schema: sch, now: now}
	out, err := b.bindScalar(s)
	if err != nil {
		return nil, err
	}
	if c, ok := out.(*Const); ok {
		return nil, typeError(c.Lit.At, "a literal is not a value to sort by")
	}
	return out, nil
}
