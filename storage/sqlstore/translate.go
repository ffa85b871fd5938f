package sqlstore

import (
	"fmt"
	"reflect"
	"strconv"
	"strings"

	"github.com/kmkit/kmkit/query"
)

// frameCol is a column expression of a statement and the type of its values.
type frameCol struct {
	expr string
	typ  query.Type
}

// resolver gives the column expression of a field named "RECORD.FIELD" in the scope
// being translated.
type resolver func(name string) (frameCol, error)

// builder accumulates SQL text and its bound arguments. Values never enter the text.
type builder struct {
	d    dialect
	args []any
	// quantified translates a query.Quantified node read through r (planner.quantified);
	// nil where a statement holds none.
	quantified func(q *query.Quantified, r resolver) (string, error)
}

// arg binds v and returns its marker.
func (b *builder) arg(v any) string {
	b.args = append(b.args, v)
	return b.d.castParam(b.d.placeholder(len(b.args)), v)
}

// col returns the expression of a column for comparisons and sorting: strings compare
// byte by byte in both dialects.
func (b *builder) col(c frameCol) string {
	if c.typ == query.TypeString {
		return b.d.bytewise(c.expr)
	}
	return c.expr
}

// unknown is a condition that is null for every row.
const unknown = "(1 = NULL)"

// notNullIs returns a condition that is k for non-null values of expr and unknown for nulls.
func notNullIs(expr string, k bool) string {
	if k {
		return "(" + expr + " = " + expr + ")"
	}
	return "(" + expr + " <> " + expr + ")"
}

var sqlOps = [...]string{query.Eq: "=", query.Ne: "<>", query.Gt: ">", query.Ge: ">=", query.Lt: "<", query.Le: "<="}

// filter translates a bound filter into a condition with SQL's three-valued logic, which
// is the filter language's.
func (b *builder) filter(r resolver, e query.Expr) (string, error) {
	switch e := e.(type) {
	case *query.Logical:
		// A chain of one operator ("a or b or c ...", as long as the filter text allows)
		// becomes a balanced tree, so that its depth is logarithmic: SQLite refuses
		// expressions deeper than 1000.
		leaves := chain(e, e.Op, nil)
		var terms []string
		if e.Op == query.Or {
			var err error
			if leaves, terms, err = b.foldEqualities(r, leaves); err != nil {
				return "", err
			}
		}
		for _, x := range leaves {
			t, err := b.filter(r, x)
			if err != nil {
				return "", err
			}
			terms = append(terms, t)
		}
		op := " AND "
		if e.Op == query.Or {
			op = " OR "
		}
		return balanced(terms, op), nil
	case *query.Not:
		x, err := b.filter(r, e.X)
		if err != nil {
			return "", err
		}
		return "(NOT " + x + ")", nil
	case *query.IsNull:
		c, err := r(e.Field.Name)
		if err != nil {
			return "", err
		}
		if e.Negated {
			return "(" + c.expr + " IS NOT NULL)", nil
		}
		return "(" + c.expr + " IS NULL)", nil
	case *query.Compare:
		c, err := r(e.Field.Name)
		if err != nil {
			return "", err
		}
		return b.compare(c, e.Field.Name, e.Op, e.Value.Value)
	case *query.In:
		c, err := r(e.Field.Name)
		if err != nil {
			return "", err
		}
		return b.in(c, e.Field.Name, e.Values)
	case *query.Call:
		c, err := r(e.Field.Name)
		if err != nil {
			return "", err
		}
		return b.call(c, e)
	case *query.ScalarCompare:
		return b.scalarCompare(r, e)
	case *query.ScalarMatch:
		return b.scalarMatch(r, e)
	case *query.Quantified:
		if b.quantified != nil {
			return b.quantified(e, r)
		}
	case nil:
	}
	return "", fmt.Errorf("%w: filter node %T", errInternal, e)
}

func typeError(name string, col query.Type, lit query.Value) error {
	return fmt.Errorf("%w: cannot compare %v field %q with a %v literal", errInternal, col, name, lit.Type)
}

// compare translates "field op literal" with the executor's conversions: an integer field
// against a float literal and a date field against an instant compare exactly (the literal
// becomes an integer bound), an instant field against a date literal compares the day.
func (b *builder) compare(c frameCol, name string, op query.CompareOp, lit query.Value) (string, error) {
	if op < query.Eq || op > query.Le {
		return "", fmt.Errorf("%w: comparison operator %d", errInternal, op)
	}
	if lit.Null || lit.Type == query.TypeNull {
		return unknown, nil
	}
	ct, lt := c.typ, lit.Type
	simple := func(op query.CompareOp, v any) string {
		return "(" + b.col(c) + " " + sqlOps[op] + " " + b.arg(v) + ")"
	}
	switch {
	case ct == query.TypeString:
		if lt != query.TypeString {
			return "", typeError(name, ct, lit)
		}
		return simple(op, lit.Str), nil
	case ct == query.TypeFloat:
		switch lt {
		case query.TypeFloat:
			return simple(op, lit.Float), nil
		case query.TypeInteger:
			return simple(op, float64(lit.Int)), nil
		}
		return "", typeError(name, ct, lit)
	case ct == query.TypeBoolean:
		if lt != query.TypeBoolean {
			return "", typeError(name, ct, lit)
		}
		return simple(op, lit.Bool), nil
	case ct == lt, ct.Temporal() && lt.Temporal():
		return simple(op, lit.Int), nil
	case ct == query.TypeInteger && lt == query.TypeFloat:
		ic := query.CompareIntegerWithFloat(op, lit.Float)
		if ic.Constant {
			return notNullIs(c.expr, ic.Result), nil
		}
		return simple(ic.Op, ic.X), nil
	case ct == query.TypeDate && lt.Temporal():
		// The day d compares as the instant of its midnight: d*day op x.
		ic := query.CompareDayWithInstant(op, lit.Int)
		if ic.Constant {
			return notNullIs(c.expr, ic.Result), nil
		}
		return simple(ic.Op, ic.X), nil
	case ct.Temporal() && lt == query.TypeDate:
		lo, hi := lit.Int*query.MicrosPerDay, (lit.Int+1)*query.MicrosPerDay
		switch op {
		case query.Eq:
			return "(" + c.expr + " >= " + b.arg(lo) + " AND " + c.expr + " < " + b.arg(hi) + ")", nil
		case query.Ne:
			return "(" + c.expr + " < " + b.arg(lo) + " OR " + c.expr + " >= " + b.arg(hi) + ")", nil
		case query.Gt:
			return simple(query.Ge, hi), nil
		case query.Ge:
			return simple(query.Ge, lo), nil
		case query.Lt:
			return simple(query.Lt, lo), nil
		default:
			return simple(query.Lt, hi), nil
		}
	}
	return "", typeError(name, ct, lit)
}

// chain appends to out the operands of the chain of e's operator op rooted at e, left to
// right: "a or (b or c)" and "(a or b) or c" both give a, b, c.
func chain(e query.Expr, op query.LogicalOp, out []query.Expr) []query.Expr {
	if l, ok := e.(*query.Logical); ok && l.Op == op {
		return chain(l.R, op, chain(l.L, op, out))
	}
	return append(out, e)
}

// foldEqualities translates the equalities and in lists of an or chain that test one
// field together as one in list (one array parameter, whatever the length of the chain)
// and returns the other operands, in order. "f eq a or f eq b or f in (c, d)" is "f in
// (a, b, c, d)" in three-valued logic too: each is true when f is one of the values, and
// unknown when f is null.
func (b *builder) foldEqualities(r resolver, leaves []query.Expr) ([]query.Expr, []string, error) {
	lits := map[string][]query.Literal{}
	count := map[string]int{}
	var order []string
	for _, x := range leaves {
		var name string
		var ls []query.Literal
		switch x := x.(type) {
		case *query.Compare:
			if x.Op != query.Eq {
				continue
			}
			name, ls = x.Field.Name, []query.Literal{x.Value}
		case *query.In:
			name, ls = x.Field.Name, x.Values
		default:
			continue
		}
		if count[name] == 0 {
			order = append(order, name)
		}
		count[name]++
		lits[name] = append(lits[name], ls...)
	}
	var rest []query.Expr
	for _, x := range leaves {
		var name string
		switch x := x.(type) {
		case *query.Compare:
			if x.Op == query.Eq {
				name = x.Field.Name
			}
		case *query.In:
			name = x.Field.Name
		}
		if name == "" || count[name] < 2 {
			rest = append(rest, x)
		}
	}
	var terms []string
	for _, name := range order {
		if count[name] < 2 {
			continue
		}
		c, err := r(name)
		if err != nil {
			return nil, nil, err
		}
		t, err := b.in(c, name, lits[name])
		if err != nil {
			return nil, nil, err
		}
		terms = append(terms, t)
	}
	return rest, terms, nil
}

// balanced joins terms (at least one) with op as a balanced tree of parenthesized pairs.
func balanced(terms []string, op string) string {
	if len(terms) == 1 {
		return terms[0]
	}
	m := len(terms) / 2
	return "(" + balanced(terms[:m], op) + op + balanced(terms[m:], op) + ")"
}

// in translates "field in (...)" into one membership test of an array parameter (see
// dialect.inArray), whatever the length of the list, with the literals converted to the
// column's stored type as compare converts them: an integer field keeps the integral float
// literals, a date field the instants at midnight (the others match no row). An instant
// field against date literals compares days, so each is a half-open range, ored as a
// balanced tree. A null in the list adds an unknown term, so that rows matching no other
// value are unknown as in SQL.
func (b *builder) in(c frameCol, name string, lits []query.Literal) (string, error) {
	var (
		strs    []string
		ints    []int64
		floats  []float64
		bools   []bool
		ranges  []string
		hasNull bool
	)
	ct := c.typ
	for _, l := range lits {
		v := l.Value
		if v.Null || v.Type == query.TypeNull {
			hasNull = true
			continue
		}
		lt := v.Type
		switch {
		case ct == query.TypeString && lt == query.TypeString:
			strs = append(strs, v.Str)
		case ct == query.TypeFloat && lt == query.TypeFloat:
			floats = append(floats, v.Float)
		case ct == query.TypeFloat && lt == query.TypeInteger:
			floats = append(floats, float64(v.Int))
		case ct == query.TypeBoolean && lt == query.TypeBoolean:
			bools = append(bools, v.Bool)
		case ct == query.TypeString, ct == query.TypeFloat, ct == query.TypeBoolean:
			return "", typeError(name, ct, v)
		case ct == lt, ct.Temporal() && lt.Temporal():
			ints = append(ints, v.Int)
		case ct == query.TypeInteger && lt == query.TypeFloat:
			if ic := query.CompareIntegerWithFloat(query.Eq, v.Float); !ic.Constant {
				ints = append(ints, ic.X)
			}
		case ct == query.TypeDate && lt.Temporal():
			if ic := query.CompareDayWithInstant(query.Eq, v.Int); !ic.Constant {
				ints = append(ints, ic.X)
			}
		case ct.Temporal() && lt == query.TypeDate:
			p, err := b.compare(c, name, query.Eq, v)
			if err != nil {
				return "", err
			}
			ranges = append(ranges, p)
		default:
			return "", typeError(name, ct, v)
		}
	}
	var parts []string
	switch {
	case len(strs) > 0:
		parts = append(parts, b.member(b.col(c), strs))
	case len(floats) > 0:
		parts = append(parts, b.member(c.expr, floats))
	case len(bools) > 0:
		parts = append(parts, b.member(c.expr, bools))
	case len(ints) > 0:
		parts = append(parts, b.member(c.expr, ints))
	}
	parts = append(parts, ranges...)
	if hasNull {
		parts = append(parts, unknown)
	}
	if len(parts) == 0 {
		return notNullIs(c.expr, false), nil
	}
	return balanced(parts, " OR "), nil
}

// member returns the condition that expr is one of vals ([]string, []int64, []float64 or
// []bool), bound as one array parameter, or as an IN list of parameters when it is no
// longer than the dialect's shortList (SQLite's planner estimates those, and picks an
// index for them where it would scan the rows in order for a json_each of unknown size).
func (b *builder) member(expr string, vals any) string {
	v := reflect.ValueOf(vals)
	if n := v.Len(); n <= b.d.shortList() {
		marks := make([]string, n)
		for i := range marks {
			marks[i] = b.arg(v.Index(i).Interface())
		}
		return "(" + expr + " IN (" + strings.Join(marks, ", ") + "))"
	}
	return "(" + b.d.inArray(expr, b.arg(b.d.arrayArg(vals)), vals) + ")"
}

// call translates contains, startswith and endswith, case-sensitive in both dialects
// (never LIKE, which SQLite folds for ASCII).
func (b *builder) call(c frameCol, e *query.Call) (string, error) {
	if c.typ != query.TypeString {
		return "", fmt.Errorf("%w: function on %v field %q", errInternal, c.typ, e.Field.Name)
	}
	lit := e.Arg.Value
	if lit.Null || lit.Type == query.TypeNull {
		return unknown, nil
	}
	if lit.Type != query.TypeString {
		return "", typeError(e.Field.Name, c.typ, lit)
	}
	switch e.Func {
	case query.Contains:
		return b.d.contains(c.expr, b.arg(lit.Str)), nil
	case query.StartsWith:
		return b.d.startsWith(c.expr, b.arg(lit.Str)), nil
	case query.EndsWith:
		// length counts characters in both dialects, and so does substr.
		p := b.arg(lit.Str)
		return "(length(" + c.expr + ") >= length(" + p + ") AND substr(" + c.expr + ", length(" + c.expr +
			") - length(" + p + ") + 1) = " + p + ")", nil
	}
	return "", fmt.Errorf("%w: function %d", errInternal, e.Func)
}

// statement is a translated request: the page query, the count query, and how to read
// the rows.
type statement struct {
	page      string
	pageArgs  []any
	count     string
	countArgs []any
	cols      []query.ColumnHeader
	empty     bool // the page is known to be empty (beyond the end of any result)
	// pageCounts says that the page's rows end with the total number of rows.
	pageCounts bool
	// pad says that the page's rows start with a constant that is not a column (a
	// statement selects at least one value).
	pad bool
	// firstSeen, when set, returns the page of a distinct without sort keys computed
	// from the first rows passing the filter, in row order (see planner.firstSeen): its
	// rows end with the number of distinct rows among those. It takes the pageArgs;
	// count is then the count of all the distinct rows.
	firstSeen func(rows int64) string
}

// searchScore is the score expression of a search: per searched column, a CASE over the
// buckets of distinct values with the same score, the best over the columns.
type searchScore struct {
	cols    []frameCol
	buckets [][]scoreBucket // per column
}

type scoreBucket struct {
	score  int
	values []string
}

func (b *builder) scoreExpr(s *searchScore) string {
	if len(s.cols) == 0 {
		return "0" // nothing searched: every row scores 0, as in the executor
	}
	var exprs []string
	for i, c := range s.cols {
		if len(s.buckets[i]) == 0 {
			exprs = append(exprs, "0")
			continue
		}
		var e strings.Builder
		e.WriteString("(CASE")
		for _, bk := range s.buckets[i] {
			e.WriteString(" WHEN " + b.member(c.expr, bk.values) + " THEN " + strconv.Itoa(bk.score))
		}
		e.WriteString(" ELSE 0 END)")
		exprs = append(exprs, e.String())
	}
	return b.d.greatest(exprs)
}

// rowShift combines a search score and a row key into one order key,
// (100-score)*rowShift + row, for row keys below 2^44.
const rowShift = 1 << 44
