package query

import (
	"fmt"
	"strings"
)

var opNames = [...]string{Eq: "eq", Ne: "ne", Gt: "gt", Ge: "ge", Lt: "lt", Le: "le"}

// String returns the operator's keyword ("eq", "ne" ...).
func (op CompareOp) String() string {
	if int(op) < len(opNames) && opNames[op] != "" {
		return opNames[op]
	}
	return fmt.Sprintf("CompareOp(%d)", op)
}

// String returns "and" or "or".
func (op LogicalOp) String() string {
	switch op {
	case And:
		return "and"
	case Or:
		return "or"
	}
	return fmt.Sprintf("LogicalOp(%d)", op)
}

// String returns the function's name ("contains" ...).
func (f FuncName) String() string {
	if int(f) < len(funcNames) && funcNames[f] != "" {
		return funcNames[f]
	}
	return fmt.Sprintf("FuncName(%d)", f)
}

// Format returns the canonical text of e: lowercase keywords, single spaces, parentheses
// only where the tree needs them, literals as written (texts quoted, a quote in them doubled),
// null tests as "eq null" / "ne null". Parse(Format(e)) returns e again, positions aside (a
// Quantified, which only the OData service builds, formats as RECORD/any(BODY) and parses
// to no node).
// Format of a nil Expr is "".
func Format(e Expr) string {
	if e == nil {
		return ""
	}
	var b strings.Builder
	format(&b, e)
	return b.String()
}

// prec is the binding strength of a node: or 1, and 2, everything else 3.
func prec(e Expr) int {
	if l, ok := e.(*Logical); ok {
		if l.Op == Or {
			return 1
		}
		return 2
	}
	return 3
}

func format(b *strings.Builder, e Expr) {
	switch e := e.(type) {
	case *Logical:
		p := prec(e)
		// Both operators group to the left: a right operand of the same strength needs
		// parentheses to keep the tree's shape.
		formatOperand(b, e.L, prec(e.L) < p)
		b.WriteByte(' ')
		b.WriteString(e.Op.String())
		b.WriteByte(' ')
		formatOperand(b, e.R, prec(e.R) <= p)
	case *Not:
		b.WriteString("not ")
		formatOperand(b, e.X, prec(e.X) < 3)
	case *Lambda:
		b.WriteString(e.Path)
		b.WriteByte('/')
		b.WriteString(e.Operator())
		b.WriteByte('(')
		if e.Body != nil {
			b.WriteString(e.Var)
			b.WriteString(": ")
			format(b, e.Body)
		}
		b.WriteByte(')')
	case *Quantified:
		// A bound node: RECORD/any(BODY), the body's fields named RECORD.FIELD.
		b.WriteString(e.Record)
		b.WriteByte('/')
		b.WriteString(e.Operator())
		b.WriteByte('(')
		if e.Body != nil {
			format(b, e.Body)
		}
		b.WriteByte(')')
	case *Compare:
		b.WriteString(e.Field.Name)
		b.WriteByte(' ')
		b.WriteString(e.Op.String())
		b.WriteByte(' ')
		formatLiteral(b, e.Value)
	case *In:
		b.WriteString(e.Field.Name)
		b.WriteString(" in (")
		for i, v := range e.Values {
			if i > 0 {
				b.WriteString(", ")
			}
			formatLiteral(b, v)
		}
		b.WriteByte(')')
	case *Call:
		b.WriteString(e.Func.String())
		b.WriteByte('(')
		b.WriteString(e.Field.Name)
		b.WriteString(", ")
		formatLiteral(b, e.Arg)
		b.WriteByte(')')
	case *ScalarCompare:
		_, lf := e.L.(*FieldOperand)
		_, rf := e.R.(*FieldOperand)
		if lf && rf {
			// "A lt B" would read B as a bare word: "(A) lt B" compares two fields.
			b.WriteByte('(')
			formatScalar(b, e.L)
			b.WriteByte(')')
		} else {
			formatScalar(b, e.L)
		}
		b.WriteByte(' ')
		b.WriteString(e.Op.String())
		b.WriteByte(' ')
		formatScalar(b, e.R)
	case *ScalarMatch:
		b.WriteString(e.Func.String())
		b.WriteByte('(')
		formatScalar(b, e.X)
		b.WriteString(", ")
		formatScalar(b, e.Arg)
		b.WriteByte(')')
	case *IsNull:
		b.WriteString(e.Field.Name)
		if e.Negated {
			b.WriteString(" ne null")
		} else {
			b.WriteString(" eq null")
		}
	default:
		fmt.Fprintf(b, "<%T>", e)
	}
}

func formatOperand(b *strings.Builder, e Expr, paren bool) {
	if paren {
		b.WriteByte('(')
	}
	format(b, e)
	if paren {
		b.WriteByte(')')
	}
}

func formatLiteral(b *strings.Builder, l Literal) {
	switch l.Kind {
	case LitString:
		b.WriteByte('\'')
		b.WriteString(strings.ReplaceAll(l.Raw, "'", "''"))
		b.WriteByte('\'')
	case LitNull:
		b.WriteString("null")
	default:
		b.WriteString(l.Raw)
	}
}

// FormatScalar returns the canonical text of a scalar expression, as Format writes it in
// a condition: functions in lower case, arithmetic with a parenthesis around every
// operation that is an operand of another.
func FormatScalar(s Scalar) string {
	var b strings.Builder
	formatScalar(&b, s)
	return b.String()
}

func formatScalarText(s Scalar) string { return FormatScalar(s) }

func formatScalar(b *strings.Builder, s Scalar) {
	switch s := s.(type) {
	case *FieldOperand:
		b.WriteString(s.Field.Name)
	case *Const:
		if s.Lit.Kind == LitDateTime && s.Lit.Raw == "now()" {
			b.WriteString("now()")
			return
		}
		formatLiteral(b, s.Lit)
	case *Apply:
		if s.Func == FnTimeText && len(s.Args) == 1 {
			formatScalar(b, s.Args[0])
			return
		}
		b.WriteString(s.Func.String())
		b.WriteByte('(')
		for i, a := range s.Args {
			if i > 0 {
				b.WriteString(", ")
			}
			formatScalar(b, a)
		}
		b.WriteByte(')')
	case *Arithmetic:
		formatArithOperand(b, s.L)
		b.WriteByte(' ')
		b.WriteString(s.Op.String())
		b.WriteByte(' ')
		formatArithOperand(b, s.R)
	case *matchOperand:
		format(b, s.m)
	default:
		fmt.Fprintf(b, "<%T>", s)
	}
}

func formatArithOperand(b *strings.Builder, s Scalar) {
	if _, ok := s.(*Arithmetic); ok {
		b.WriteByte('(')
		formatScalar(b, s)
		b.WriteByte(')')
		return
	}
	formatScalar(b, s)
}
