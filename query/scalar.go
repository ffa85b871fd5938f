package query

import "strconv"

// This file holds the scalar expressions of OData's $filter: canonical functions and
// arithmetic. They appear only where a side of a condition is not a plain field or literal
// (see ScalarCompare and ScalarMatch); the plain forms keep their own nodes (*Compare,
// *In, *Call, *IsNull), which executors run on their fast paths.

// Scalar is a node of a value expression: one of *FieldOperand, *Const, *Apply and
// *Arithmetic. Parse leaves Type unset (TypeInvalid) except for constants; Bind sets it.
type Scalar interface {
	// Position is where the node starts in the source text.
	Position() Pos
	// ResultType is the type of the values the node takes: the field's, the literal's, the
	// function's or the operation's result type. TypeInvalid before Bind.
	ResultType() Type
	scalarNode()
}

// ScalarFunc is a canonical function of OData's $filter that returns a value (the
// boolean contains, startswith and endswith are FuncName).
type ScalarFunc uint8

// The value functions. Their semantics (see the package documentation, "Functions") are
// those every backend implements; a null argument gives null.
const (
	FnToLower   ScalarFunc = iota + 1 // tolower(string) string
	FnToUpper                         // toupper(string) string
	FnLength                          // length(string) integer: characters
	FnTrim                            // trim(string) string: without leading and trailing ' ', \t, \n, \r
	FnIndexOf                         // indexof(string, string) integer: 0-based character index, -1 if absent
	FnConcat                          // concat(string, string) string
	FnSubstring                       // substring(string, integer [, integer]) string: 0-based, in characters
	FnYear                            // year(date|datetime|timestamp) integer
	FnMonth                           // month(date|datetime|timestamp) integer 1..12
	FnDay                             // day(date|datetime|timestamp) integer 1..31
	FnHour                            // hour(datetime|timestamp|time) integer 0..23
	FnMinute                          // minute(datetime|timestamp|time) integer 0..59
	FnSecond                          // second(datetime|timestamp|time) integer 0..59, fraction dropped
	FnDate                            // date(datetime|timestamp) date: the UTC day
	FnTime                            // time(datetime|timestamp) time: the UTC time of day
	FnNow                             // now() datetime: fixed once per request by Bind
	FnRound                           // round(number): half away from zero
	FnFloor                           // floor(number)
	FnCeiling                         // ceiling(number)
	// FnTimeText is the text of a time of day, HH:MM:SS with the fraction of a second
	// when there is one (as the API presents it): Bind's conversion of a time where a
	// string is needed (contains(WAKE,'6:'), tolower(WAKE)), since a time field is
	// presented as a string. It has no name in the language, and Format writes only
	// its argument.
	FnTimeText
)

var scalarFuncNames = [...]string{
	FnToLower: "tolower", FnToUpper: "toupper", FnLength: "length", FnTrim: "trim",
	FnIndexOf: "indexof", FnConcat: "concat", FnSubstring: "substring",
	FnYear: "year", FnMonth: "month", FnDay: "day", FnHour: "hour", FnMinute: "minute",
	FnSecond: "second", FnDate: "date", FnTime: "time", FnNow: "now",
	FnRound: "round", FnFloor: "floor", FnCeiling: "ceiling",
}

// String returns the function's name ("tolower" ...).
func (f ScalarFunc) String() string {
	if int(f) < len(scalarFuncNames) && scalarFuncNames[f] != "" {
		return scalarFuncNames[f]
	}
	return "ScalarFunc(" + strconv.Itoa(int(f)) + ")"
}

// scalarFunc returns the value function named s.
func scalarFunc(s string) (ScalarFunc, bool) {
	for f, name := range scalarFuncNames {
		if name == s && name != "" {
			return ScalarFunc(f), true
		}
	}
	return 0, false
}

// FilterFunctions lists the names of the functions $filter supports under ODataSyntax,
// for the Capabilities.FilterFunctions annotation of $metadata.
func FilterFunctions() []string {
	out := []string{"contains", "startswith", "endswith"}
	for _, name := range scalarFuncNames {
		if name != "" {
			out = append(out, name)
		}
	}
	return out
}

// ArithOp is an arithmetic operator of OData: add, sub, mul, div, divby, mod.
type ArithOp uint8

// The arithmetic operators. On two integers Add, Sub, Mul, Div and Mod give an integer
// (Div truncates toward zero, Mod has the sign of the dividend); DivBy always divides as
// floats. A division or modulo by zero gives null.
const (
	OpAdd ArithOp = iota + 1
	OpSub
	OpMul
	OpDiv
	OpDivBy
	OpMod
)

var arithNames = [...]string{OpAdd: "add", OpSub: "sub", OpMul: "mul", OpDiv: "div", OpDivBy: "divby", OpMod: "mod"}

// String returns the operator's keyword ("add" ...).
func (op ArithOp) String() string {
	if int(op) < len(arithNames) && arithNames[op] != "" {
		return arithNames[op]
	}
	return "ArithOp(" + strconv.Itoa(int(op)) + ")"
}

func arithOp(s string) (ArithOp, bool) {
	for op, name := range arithNames {
		if name == s && name != "" {
			return ArithOp(op), true
		}
	}
	return 0, false
}

// FieldOperand is a field read as a value inside a scalar expression.
type FieldOperand struct{ Field FieldRef }

// Const is a literal inside a scalar expression. After Bind its Value has the type its
// place needs (as Bind converts the literal of a *Compare); now() becomes a Const.
type Const struct{ Lit Literal }

// Apply is a value function applied to its arguments. Type is set by Bind.
type Apply struct {
	At   Pos
	Func ScalarFunc
	Args []Scalar
	Type Type
}

// Arithmetic is "L Op R" over numbers. Type is set by Bind: integer when both operands are
// integers and Op is not DivBy, float otherwise.
type Arithmetic struct {
	At   Pos
	Op   ArithOp
	L, R Scalar
	Type Type
}

// ScalarCompare is "L Op R" where a side is a function or arithmetic (anything else is a
// *Compare or *IsNull). R may be the literal null with Op Eq ("L is null") or Ne ("L is
// not null"); a literal is never on the left after parsing. Both sides have compatible
// types after Bind: numbers with numbers, strings with strings, date-times and timestamps
// with each other, others with their own type.
type ScalarCompare struct {
	At Pos
	L  Scalar
	Op CompareOp
	R  Scalar
}

// ScalarMatch is contains, startswith or endswith where an argument is a function or
// arithmetic, as in contains(tolower(NAME), 'x'). Both arguments are strings after Bind.
type ScalarMatch struct {
	At   Pos
	Func FuncName
	X    Scalar
	Arg  Scalar
}

// Position implements Scalar.
func (s *FieldOperand) Position() Pos { return s.Field.At }

// Position implements Scalar.
func (s *Const) Position() Pos { return s.Lit.At }

// Position implements Scalar.
func (s *Apply) Position() Pos { return s.At }

// Position implements Scalar.
func (s *Arithmetic) Position() Pos { return s.At }

// ResultType implements Scalar.
func (s *FieldOperand) ResultType() Type { return s.Field.Type }

// ResultType implements Scalar: the type of the value (TypeNull for null).
func (s *Const) ResultType() Type { return s.Lit.Value.Type }

// ResultType implements Scalar.
func (s *Apply) ResultType() Type { return s.Type }

// ResultType implements Scalar.
func (s *Arithmetic) ResultType() Type { return s.Type }

func (*FieldOperand) scalarNode() {}
func (*Const) scalarNode()        {}
func (*Apply) scalarNode()        {}
func (*Arithmetic) scalarNode()   {}

// Position implements Expr.
func (e *ScalarCompare) Position() Pos { return e.At }

// Position implements Expr.
func (e *ScalarMatch) Position() Pos { return e.At }

func (*ScalarCompare) exprNode() {}
func (*ScalarMatch) exprNode()   {}

// ScalarFields calls add with each field s reads, in order.
func ScalarFields(s Scalar, add func(FieldRef)) {
	switch s := s.(type) {
	case *FieldOperand:
		add(s.Field)
	case *Apply:
		for _, a := range s.Args {
			ScalarFields(a, add)
		}
	case *Arithmetic:
		ScalarFields(s.L, add)
		ScalarFields(s.R, add)
	}
}
