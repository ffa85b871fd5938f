package query

import (
	"errors"
	"fmt"
	"strconv"
	"time"
)

// Schema resolves the field names a filter may use to their types.
type Schema interface {
	// FieldType returns the type of the named field, and false when there is no such field.
	FieldType(name string) (Type, bool)
}

// Suggester is a Schema that helps with unknown field names: SuggestText returns what an
// error detail adds after one, such as "; did you mean ORDER_ID?" (or "").
type Suggester interface {
	SuggestText(name string) string
}

// MapSchema is a Schema backed by a map from field name to type.
type MapSchema map[string]Type

// FieldType implements Schema.
func (m MapSchema) FieldType(name string) (Type, bool) {
	t, ok := m[name]
	return t, ok
}

// Bind type-checks e against s and returns a bound copy: every FieldRef has its Type and
// every Literal the Value the comparison needs (see the package documentation for the
// conversions). e itself is not modified. Errors are *Error of kind KindType with code
// KM_FIELD_NOTFOUND (unknown field) or FILTER_TYPE_MISMATCH; their Param and Char are
// unset (ParseAndBind sets them).
//
// Bind of a nil Expr (no filter) returns nil and no error.
func Bind(e Expr, s Schema) (Expr, error) {
	if e == nil {
		return nil, nil
	}
	return BindAt(e, s, time.Time{})
}

// BindAt is Bind with now() fixed at the instant now (the zero time: the current time,
// read once). A request binds its filter once, so now() has one value in every backend.
func BindAt(e Expr, s Schema, now time.Time) (Expr, error) {
	if e == nil {
		return nil, nil
	}
	b, err := bind(e, &binder{Schema: s, now: now})
	if err != nil {
		return nil, err
	}
	return b, nil
}

// binder is what binding needs: the schema, and the instant now() stands for (read from
// the clock on first use when zero).
type binder struct {
	Schema
	now time.Time
}

func (b *binder) nowValue() Value {
	if b.now.IsZero() {
		b.now = time.Now()
	}
	return DateTime(b.now.UTC().Truncate(time.Microsecond))
}

func bind(e Expr, s *binder) (Expr, *Error) {
	switch e := e.(type) {
	case *Logical:
		l, err := bind(e.L, s)
		if err != nil {
			return nil, err
		}
		r, err := bind(e.R, s)
		if err != nil {
			return nil, err
		}
		return &Logical{At: e.At, Op: e.Op, L: l, R: r}, nil
	case *Not:
		x, err := bind(e.X, s)
		if err != nil {
			return nil, err
		}
		return &Not{At: e.At, X: x}, nil
	case *Compare:
		f, err := bindField(e.Field, s)
		if err != nil {
			return nil, err
		}
		if f.Type != TypeString && e.Value.Kind == LitString && e.Value.Raw == "" && e.Op == Ne {
			// "F ne ''" (the connector's "F not eq ''") on a field that has no empty
			// value means "F is not empty": F is not null.
			return &IsNull{At: e.At, Field: f, Negated: true}, nil
		}
		if e.Value.At == e.Field.At && f.Type != TypeBoolean {
			return nil, typeError(f.At, "%s is %s: a property on its own is a condition only when it is a boolean; compare it, as in %s eq ...", f.Name, article(f.Type), f.Name)
		}
		if us, ok := instantLiteral(f, e.Value); ok {
			return dateAgainstInstant(e.At, f, e.Op, e.Value, us), nil
		}
		v, err := bindLiteral(f, e.Value)
		if err != nil {
			return nil, err
		}
		cmp := comparing(e.At, f)
		if finerThanMicros(v) {
			return between(e.At, cmp, e.Op, v), nil
		}
		return cmp(e.Op, v), nil
	case *In:
		f, err := bindField(e.Field, s)
		if err != nil {
			return nil, err
		}
		vals := make([]Literal, 0, len(e.Values))
		var none Literal // a value of f's type that no value equals, when vals is empty
		for _, l := range e.Values {
			if us, ok := instantLiteral(f, l); ok {
				// Only a midnight equals a date; another instant matches no row.
				day, midnight := dayOf(us)
				if none = dateLiteral(l, day); midnight && !pastMicros(l.Raw) {
					vals = append(vals, none)
				}
				continue
			}
			v, err := bindLiteral(f, l)
			if err != nil {
				return nil, err
			}
			if finerThanMicros(v) {
				none = v // no value equals it
				continue
			}
			vals = append(vals, v)
		}
		if len(vals) == 0 && len(e.Values) > 0 {
			// Instants between dates or microseconds only: no row matches.
			return never(comparing(e.At, f), e.At, none), nil
		}
		return &In{At: e.At, Field: f, Values: vals}, nil
	case *Call:
		f, err := bindField(e.Field, s)
		if err != nil {
			return nil, err
		}
		if f.Type != TypeString && f.Type != TypeTime {
			return nil, typeError(f.At, "%s needs a string field; %s is %s", funcNames[e.Func], f.Name, article(f.Type))
		}
		if e.Arg.Kind == LitNull {
			return nil, typeError(e.Arg.At, "%s needs a text to look for, not null", funcNames[e.Func])
		}
		arg := e.Arg
		arg.Value = String(arg.Raw)
		if f.Type == TypeTime {
			// A time is presented as a string: the function reads its text.
			return &ScalarMatch{At: e.At, Func: e.Func, X: TimeAsText(&FieldOperand{Field: f}), Arg: &Const{Lit: arg}}, nil
		}
		return &Call{At: e.At, Func: e.Func, Field: f, Arg: arg}, nil
	case *IsNull:
		f, err := bindField(e.Field, s)
		if err != nil {
			return nil, err
		}
		return &IsNull{At: e.At, Field: f, Negated: e.Negated}, nil
	case *ScalarCompare:
		return s.bindScalarCompare(e)
	case *ScalarMatch:
		return s.bindScalarMatch(e)
	case *Quantified:
		c := *e
		if e.Body != nil {
			body, err := bind(e.Body, s)
			if err != nil {
				return nil, err
			}
			c.Body = body
		}
		return &c, nil
	case *Lambda:
		// Only a caller that knows the navigation properties can read it (package odata).
		return nil, &Error{Kind: KindUnsupported, Code: CodeFilterNotSupported, Pos: e.At, Msg: fmt.Sprintf("the lambda operator %s is not supported here", e.Operator())}
	}
	return nil, &Error{Kind: KindSyntax, Code: CodeFilterSyntax, Pos: NoPos, Msg: fmt.Sprintf("the expression tree holds an invalid node %T", e)}
}

var funcNames = [...]string{Contains: "contains", StartsWith: "startswith", EndsWith: "endswith"}

func typeError(at Pos, format string, args ...any) *Error {
	return &Error{Kind: KindType, Code: CodeFilterTypeMismatch, Pos: at, Msg: fmt.Sprintf(format, args...)}
}

func bindField(f FieldRef, s Schema) (FieldRef, *Error) {
	t, ok := s.FieldType(f.Name)
	if !ok || t == TypeInvalid || t == TypeNull {
		msg := fmt.Sprintf("unknown field %q", f.Name)
		if b, ok := s.(*binder); ok {
			s = b.Schema
		}
		if sg, ok := s.(Suggester); ok {
			msg += sg.SuggestText(f.Name)
		}
		return f, &Error{Kind: KindType, Code: CodeFieldNotFound, Pos: f.At, Msg: msg}
	}
	f.Type = t
	return f, nil
}

// article returns "a string", "an integer" ...
func article(t Type) string {
	switch t {
	case TypeInteger:
		return "an integer"
	}
	return "a " + t.String()
}

var kindNoun = [...]string{
	LitString:   "the text",
	LitInteger:  "the integer",
	LitDecimal:  "the number",
	LitBoolean:  "the boolean",
	LitNull:     "null",
	LitDate:     "the date",
	LitDateTime: "the date-time",
	LitTime:     "the time",
	LitBare:     "the word",
}

// bindLiteral converts l to the value a comparison with field f needs.
func bindLiteral(f FieldRef, l Literal) (Literal, *Error) {
	mismatch := func(hint string) (Literal, *Error) {
		lit := l.Raw
		if l.Kind == LitString {
			lit = quoteShort(l.Raw)
		} else {
			lit = short(lit)
		}
		return l, typeError(l.At, "%s is %s and cannot be compared with %s %s; %s", f.Name, article(f.Type), kindNoun[l.Kind], lit, hint)
	}
	if l.Kind == LitString && f.Type != TypeString && f.Type != TypeInvalid && f.Type != TypeNull {
		l = quotedAs(f, l)
	}
	switch f.Type {
	case TypeString:
		// Any unquoted value is taken as its text (legacy bare values): C eq DE, ZIP eq 01234.
		if l.Kind == LitNull {
			return mismatch("compare with null using eq null or ne null")
		}
		l.Value = String(l.Raw)
	case TypeInteger:
		switch l.Kind {
		case LitInteger:
		case LitDecimal:
			// A decimal against an integer field compares numerically.
		case LitBare:
			return l, numberError(f, l)
		default:
			return mismatch("write a number such as 42")
		}
	case TypeFloat:
		switch l.Kind {
		case LitInteger:
			l.Value = Float(float64(l.Value.Int))
		case LitDecimal:
		case LitBare:
			return l, numberError(f, l)
		default:
			return mismatch("write a number such as 4.2")
		}
	case TypeBoolean:
		if l.Kind != LitBoolean {
			return mismatch("write true or false")
		}
	case TypeDate:
		switch l.Kind {
		case LitDate:
		case LitBare:
			return l, typeError(l.At, "%s is a date and %s is not a date: %s", f.Name, short(l.Raw), dateReason(l.Raw))
		default:
			return mismatch("write a date such as 2015-05-07")
		}
	case TypeDateTime, TypeTimestamp:
		switch l.Kind {
		case LitDateTime:
			l.Value.Type = f.Type
		case LitDate:
			// A date against an instant means that whole day (UTC); it stays a date.
		case LitBare:
			return l, typeError(l.At, "%s is %s and %s is not a date-time: %s", f.Name, article(f.Type), short(l.Raw), dateTimeReason(l.Raw))
		default:
			return mismatch("write a date-time such as 2023-12-05T15:48:44Z or a date such as 2023-12-05")
		}
	case TypeTime:
		switch l.Kind {
		case LitTime:
		case LitBare:
			_, reason := parseTime(l.Raw)
			return l, typeError(l.At, "%s is a time and %s is not a time: %s", f.Name, short(l.Raw), reason)
		default:
			return mismatch("write a time such as 15:48:44")
		}
	default:
		return mismatch("the field type cannot be filtered")
	}
	return l, nil
}

// quotedAs reads the quoted literal l compared with the non-string field f as a value of
// f's type when its text is one: 'true' for a boolean, '42' for an integer, '4.5' (or
// '42') for a float, '2025-03-01' for a date, '2025-03-01T10:00:00Z' (or a date: that
// day) for a date-time, '10:30:00' for a time. Otherwise it returns l unchanged, and the
// caller reports the mismatch naming the field, its type and the text.
func quotedAs(f FieldRef, l Literal) Literal {
	k, v := classify(l.Raw)
	ok := false
	switch f.Type {
	case TypeBoolean:
		ok = k == LitBoolean
	case TypeInteger:
		ok = k == LitInteger
	case TypeFloat:
		ok = k == LitInteger || k == LitDecimal
	case TypeDate:
		ok = k == LitDate
	case TypeDateTime, TypeTimestamp:
		ok = k == LitDateTime || k == LitDate
	case TypeTime:
		ok = k == LitTime
	}
	if ok {
		l.Kind, l.Value = k, v
	}
	return l
}

func dateReason(s string) string {
	if _, reason := parseDate(s); reason != "" && len(s) > 10 && s[10] == 'T' {
		return "a date is written YYYY-MM-DD, without a time"
	} else if reason != "" {
		return reason
	}
	return "a date is written YYYY-MM-DD"
}

func dateTimeReason(s string) string {
	if len(s) > 10 && s[10] == 'T' {
		_, reason := parseDateTime(s)
		return reason
	}
	_, reason := parseDate(s)
	if reason == "" {
		reason = "a date-time is written YYYY-MM-DDTHH:MM[:SS[.ffffff]] followed by Z or an offset ±hh:mm"
	}
	return reason
}

// numberError explains why the bare word l is no number for the numeric field f.
func numberError(f FieldRef, l Literal) *Error {
	reason := "a number is written like 42, -7, 1.5 or 2e3"
	if _, err := strconv.ParseFloat(l.Raw, 64); errors.Is(err, strconv.ErrRange) {
		reason = "it is beyond the range of a 64-bit float"
	}
	return typeError(l.At, "%s is %s and %s is not a number: %s", f.Name, article(f.Type), short(l.Raw), reason)
}

// instantLiteral reports whether l, compared with the date field f, is a date-time (written
// bare or quoted, as grids send it: ORDER_DATE ge 2025-06-01T00:00:00.000Z), and returns
// its instant in microseconds.
func instantLiteral(f FieldRef, l Literal) (int64, bool) {
	if f.Type != TypeDate || (l.Kind != LitDateTime && l.Kind != LitString) {
		return 0, false
	}
	k, v := classify(l.Raw)
	return v.Int, k == LitDateTime
}

// microsPerDay is the length of a day in microseconds, the unit of date-time values.
const microsPerDay = 86_400_000_000

// dayOf returns the day (days since 1970-01-01) of the instant us and whether us is that
// day's midnight (UTC).
func dayOf(us int64) (day int64, midnight bool) {
	day = us / microsPerDay
	if us%microsPerDay < 0 {
		day--
	}
	return day, us == day*microsPerDay
}

// dateLiteral is l turned into the date day, written as a date.
func dateLiteral(l Literal, day int64) Literal {
	y, m, d := CivilDate(day)
	return Literal{At: l.At, Kind: LitDate, Raw: fmt.Sprintf("%04d-%02d-%02d", y, m, d), Value: Value{Type: TypeDate, Int: day}}
}

// dateAgainstInstant binds "f op instant" for a date field f: the date stands for its
// midnight UTC (SPEC-NOTES), so the comparison becomes one between dates. An instant at
// midnight is that day; any other instant lies inside its day d, after d's midnight and
// before d+1's (see between).
func dateAgainstInstant(at Pos, f FieldRef, op CompareOp, l Literal, us int64) Expr {
	day, midnight := dayOf(us)
	cmp := comparing(at, f)
	if midnight && !pastMicros(l.Raw) {
		return cmp(op, dateLiteral(l, day))
	}
	return between(at, cmp, op, dateLiteral(l, day))
}

// comparing returns the builder of the comparisons "f op v" at position at.
func comparing(at Pos, f FieldRef) func(CompareOp, Literal) Expr {
	return func(op CompareOp, v Literal) Expr { return &Compare{At: at, Field: f, Op: op, Value: v} }
}

// finerThanMicros reports whether the bound date-time or time literal l has digits past
// the microsecond (OData writes up to 12), which its value drops: the literal lies after
// its value, and before the next microsecond.
func finerThanMicros(l Literal) bool {
	return (l.Kind == LitDateTime || l.Kind == LitTime) && pastMicros(l.Raw)
}

// between binds "x op v" (cmp(op, w) builds "x op w") for a literal v that lies after
// the value lo of x's type and before the next one: x gt/ge v means x gt lo, x lt/le v
// means x le lo, eq never holds and ne always does (for an x that is not null: a null
// stays unknown).
func between(at Pos, cmp func(CompareOp, Literal) Expr, op CompareOp, lo Literal) Expr {
	switch op {
	case Gt, Ge:
		return cmp(Gt, lo)
	case Lt, Le:
		return cmp(Le, lo)
	case Ne:
		return &Logical{At: at, Op: Or, L: cmp(Le, lo), R: cmp(Gt, lo)}
	}
	return never(cmp, at, lo)
}

// never is a condition that no value of x meets and a null x leaves unknown, as a
// comparison with a value x cannot hold: not (x le v or x ge v), cmp(op, v) building
// "x op v". It is one condition, not a conjunction: a plan splits a filter at its
// top-level ANDs, and across records each part may pass on a different related row
// (x lt v on one, x gt v on another), which would let a parent through that no row of
// x's record lets through.
func never(cmp func(CompareOp, Literal) Expr, at Pos, v Literal) Expr {
	return &Not{At: at, X: &Logical{At: at, Op: Or, L: cmp(Le, v), R: cmp(Ge, v)}}
}
