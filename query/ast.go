package query

// Pos is a byte offset into the filter or KPI text, counted from 0. Errors report it to users
// as a 1-based character position.
type Pos int

// Expr is a node of a filter expression: one of *Logical, *Not, *Compare, *In, *Call,
// *IsNull, the value-expression comparisons *ScalarCompare and *ScalarMatch, and OData's
// *Lambda (parsed) and *Quantified (bound). Parse returns an unbound tree (field types unset; literals carry only the value
// they denote as written, bare words none); Bind returns a bound copy that executors consume.
type Expr interface {
	// Position is where the node starts in the source text.
	Position() Pos
	exprNode()
}

// LogicalOp is "and" or "or".
type LogicalOp uint8

// The logical operators.
const (
	And LogicalOp = iota + 1
	Or
)

// CompareOp is a comparison operator.
type CompareOp uint8

// The comparison operators. The legacy form "not eq" parses as Ne.
const (
	Eq CompareOp = iota + 1
	Ne
	Gt
	Ge
	Lt
	Le
)

// FuncName is one of the three string functions of the filter language.
type FuncName uint8

// The string functions.
const (
	Contains FuncName = iota + 1
	StartsWith
	EndsWith
)

// LiteralKind says how a literal was written.
type LiteralKind uint8

// The literal kinds of the filter language.
const (
	LitString   LiteralKind = iota + 1 // 'text' ('' is a quote); Raw holds the unescaped text
	LitInteger                         // 42, -7
	LitDecimal                         // 1.5, -2e3
	LitBoolean                         // true, false
	LitNull                            // null
	LitDate                            // 2015-05-07
	LitDateTime                        // 2023-12-05T15:48:44Z, offsets and fractions allowed
	LitTime                            // 15:48:44 (only where a time field is compared)
	LitBare                            // legacy bare word: typed by the field at binding
)

// Logical is "L and R" or "L or R".
type Logical struct {
	At   Pos
	Op   LogicalOp
	L, R Expr
}

// Not negates its operand with SQL's three-valued logic: not unknown is unknown.
type Not struct {
	At Pos
	X  Expr
}

// Compare is "Field Op Value". The parser puts the field on the left (a literal on the
// left is mirrored: "5 lt A" becomes "A gt 5"). Comparisons with the literal null become
// *IsNull.
type Compare struct {
	At    Pos
	Field FieldRef
	Op    CompareOp
	Value Literal
}

// In is "Field in (v1, v2, ...)".
type In struct {
	At     Pos
	Field  FieldRef
	Values []Literal
}

// Call is "contains(Field, 'text')", "startswith(...)" or "endswith(...)".
type Call struct {
	At    Pos
	Func  FuncName
	Field FieldRef
	Arg   Literal
}

// IsNull is "Field is null" (Negated false) or "Field is not null" (Negated true); also
// the result of "Field eq null" and "Field ne null".
type IsNull struct {
	At      Pos
	Field   FieldRef
	Negated bool
}

// FieldRef names a field: "NET_VALUE" at record level, "ORDERS.NET_VALUE" at KM level.
// Type is set by Bind.
type FieldRef struct {
	At   Pos
	Name string
	Type Type
}

// Literal is a constant as written. Value is final after Bind: the literal converted to the type
// the comparison needs (for example an integer literal against a float field becomes a
// float; a date literal against a datetime field stays a date, meaning "that day").
type Literal struct {
	At    Pos
	Kind  LiteralKind
	Raw   string
	Value Value
}

// Position implements Expr.
func (e *Logical) Position() Pos { return e.At }

// Position implements Expr.
func (e *Not) Position() Pos { return e.At }

// Position implements Expr.
func (e *Compare) Position() Pos { return e.At }

// Position implements Expr.
func (e *In) Position() Pos { return e.At }

// Position implements Expr.
func (e *Call) Position() Pos { return e.At }

// Position implements Expr.
func (e *IsNull) Position() Pos { return e.At }

func (*Logical) exprNode() {}
func (*Not) exprNode()     {}
func (*Compare) exprNode() {}
func (*In) exprNode()      {}
func (*Call) exprNode()    {}
func (*IsNull) exprNode()  {}
