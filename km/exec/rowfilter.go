package exec

import (
	"context"
	"math"
	"slices"
	"strings"

	"github.com/kmkit/kmkit/query"
	"github.com/kmkit/kmkit/query/column"
)

// tri is a filter's value on one row in SQL's three-valued logic.
type tri uint8

const (
	triFalse tri = iota
	triTrue
	triUnknown
)

// rowPred evaluates a compiled filter on one frame row.
type rowPred func(r int32) tri

// compileRow compiles a bound filter into a row-by-row evaluator with the semantics of
// compileFilter's bitmaps, for pages that test only the rows a sort index walks. It
// reports false for a node it has no row form of, or an ill-typed one; the caller then
// evaluates the filter over all rows (compileFilter, which also reports the error).
func (f *Frame) compileRow(e query.Expr) (rowPred, bool) {
	if isNilNode(e) {
		return nil, false
	}
	switch e := e.(type) {
	case *query.Logical:
		l, ok := f.compileRow(e.L)
		if !ok {
			return nil, false
		}
		r, ok := f.compileRow(e.R)
		if !ok {
			return nil, false
		}
		switch e.Op {
		case query.And:
			return func(row int32) tri {
				a := l(row)
				if a == triFalse {
					return triFalse
				}
				b := r(row)
				if b == triFalse {
					return triFalse
				}
				if a == triTrue && b == triTrue {
					return triTrue
				}
				return triUnknown
			}, true
		case query.Or:
			return func(row int32) tri {
				a := l(row)
				if a == triTrue {
					return triTrue
				}
				b := r(row)
				if b == triTrue {
					return triTrue
				}
				if a == triFalse && b == triFalse {
					return triFalse
				}
				return triUnknown
			}, true
		}
		return nil, false
	case *query.Not:
		x, ok := f.compileRow(e.X)
		if !ok {
			return nil, false
		}
		return func(row int32) tri {
			switch x(row) {
			case triTrue:
				return triFalse
			case triFalse:
				return triTrue
			}
			return triUnknown
		}, true
	case *query.IsNull:
		c, ok := f.refs[e.Field.Name]
		if !ok {
			return nil, false
		}
		nulls, neg := nullsOf(c.col), e.Negated
		return func(row int32) tri {
			cr := c.row(row)
			if (cr < 0 || nulls.Get(int(cr))) != neg {
				return triTrue
			}
			return triFalse
		}, true
	case *query.Compare:
		c, ok := f.refs[e.Field.Name]
		if !ok {
			return nil, false
		}
		test, ok := compareTest(c.col, e.Op, e.Value.Value)
		if !ok {
			return nil, false
		}
		return cellPred(c, test, false), true
	case *query.In:
		c, ok := f.refs[e.Field.Name]
		if !ok {
			return nil, false
		}
		test, hasNull, ok := inTest(c.col, e.Values)
		if !ok {
			return nil, false
		}
		return cellPred(c, test, hasNull), true
	case *query.Call:
		c, ok := f.refs[e.Field.Name]
		if !ok {
			return nil, false
		}
		test, ok := callTest(c.col, e)
		if !ok {
			return nil, false
		}
		return cellPred(c, test, false), true
	}
	return nil, false
}

// cellTest tells whether the non-null cell cr of a column satisfies a predicate. A nil
// cellTest is a comparison with null: unknown on every row.
type cellTest func(cr int32) bool

// cellPred turns a test of a column's cells into a row predicate: a null cell (or no
// joined row) is unknown; a cell failing the test is false, or unknown when the "in" list
// holds null (notTrueUnknown).
func cellPred(c ref, test cellTest, notTrueUnknown bool) rowPred {
	if test == nil {
		return func(int32) tri { return triUnknown }
	}
	nulls := nullsOf(c.col)
	miss := triFalse
	if notTrueUnknown {
		miss = triUnknown
	}
	return func(row int32) tri {
		cr := c.row(row)
		switch {
		case cr < 0 || nulls.Get(int(cr)):
			return triUnknown
		case test(cr):
			return triTrue
		}
		return miss
	}
}

// compareTest is compareKernel for one cell.
func compareTest(c column.Column, op query.CompareOp, lit query.Value) (cellTest, bool) {
	if !validOp(op) {
		return nil, false
	}
	if lit.Null || lit.Type == query.TypeNull {
		return nil, true
	}
	switch c := c.(type) {
	case *column.Strings:
		if lit.Type != query.TypeString {
			return nil, false
		}
		x := lit.Str
		return func(cr int32) bool { return compareOrdered(c.Dict[c.Codes.At(int(cr))], x, op) }, true
	case *column.Float64s:
		var x float64
		switch lit.Type {
		case query.TypeFloat:
			x = lit.Float
		case query.TypeInteger:
			x = float64(lit.Int)
		default:
			return nil, false
		}
		return func(cr int32) bool { return compareOrdered(c.Vals[cr], x, op) }, true
	case *column.Bools:
		if lit.Type != query.TypeBoolean {
			return nil, false
		}
		x := int64(b2u(lit.Bool))
		return func(cr int32) bool { return compareOrdered(int64(b2u(c.Vals[cr])), x, op) }, true
	case *column.Int64s:
		return int64Test(c, op, lit)
	}
	return nil, false
}

// int64Test is int64Kernel for one cell: the same exact conversions of float and date
// literals.
func int64Test(c *column.Int64s, op query.CompareOp, lit query.Value) (cellTest, bool) {
	ct, lt := c.T, lit.Type
	set := func(op query.CompareOp, x int64) cellTest {
		return func(cr int32) bool { return compareOrdered(c.Vals[cr], x, op) }
	}
	constant := func(v bool) cellTest { return func(int32) bool { return v } }
	switch {
	case ct == lt, ct.Temporal() && lt.Temporal():
		return set(op, lit.Int), true
	case ct == query.TypeInteger && lt == query.TypeFloat:
		ic := query.CompareIntegerWithFloat(op, lit.Float)
		if ic.Constant {
			return constant(ic.Result), true
		}
		return set(ic.Op, ic.X), true
	case ct == query.TypeDate && lt.Temporal():
		ic := query.CompareDayWithInstant(op, lit.Int)
		if ic.Constant {
			return constant(ic.Result), true
		}
		return set(ic.Op, ic.X), true
	case ct.Temporal() && lt == query.TypeDate:
		day := lit.Int
		return func(cr int32) bool { return compareOrdered(query.DayOfMicros(c.Vals[cr]), day, op) }, true
	}
	return nil, false
}

// inTest is inKernel for one cell; hasNull reports null in the list.
func inTest(c column.Column, lits []query.Literal) (test cellTest, hasNull, ok bool) {
	var vals []query.Value
	for _, l := range lits {
		if l.Value.Null || l.Value.Type == query.TypeNull {
			hasNull = true
			continue
		}
		vals = append(vals, l.Value)
	}
	switch c := c.(type) {
	case *column.Strings:
		set := make(map[string]bool, len(vals))
		for _, v := range vals {
			if v.Type != query.TypeString {
				return nil, false, false
			}
			set[v.Str] = true
		}
		return func(cr int32) bool { return set[c.Dict[c.Codes.At(int(cr))]] }, hasNull, true
	case *column.Bools:
		var want [2]bool
		for _, v := range vals {
			if v.Type != query.TypeBoolean {
				return nil, false, false
			}
			want[b2u(v.Bool)] = true
		}
		return func(cr int32) bool { return want[b2u(c.Vals[cr])] }, hasNull, true
	case *column.Float64s:
		var xs []float64
		for _, v := range vals {
			switch v.Type {
			case query.TypeFloat:
				xs = append(xs, v.Float)
			case query.TypeInteger:
				xs = append(xs, float64(v.Int))
			default:
				return nil, false, false
			}
		}
		slices.Sort(xs)
		xs = slices.Compact(xs)
		if len(xs) <= 8 { // as setKernel: == for short lists (NaN matches nothing)
			return func(cr int32) bool { return slices.Contains(xs, c.Vals[cr]) }, hasNull, true
		}
		return func(cr int32) bool { _, ok := slices.BinarySearch(xs, c.Vals[cr]); return ok }, hasNull, true
	case *column.Int64s:
		var xs, days []int64
		for _, v := range vals {
			switch {
			case v.Type == c.T, c.T.Temporal() && v.Type.Temporal():
				xs = append(xs, v.Int)
			case c.T == query.TypeInteger && v.Type == query.TypeFloat:
				if v.Float == math.Trunc(v.Float) && v.Float >= math.MinInt64 && v.Float < math.MaxInt64 {
					xs = append(xs, int64(v.Float))
				}
			case c.T == query.TypeDate && v.Type.Temporal():
				if d := query.DayOfMicros(v.Int); d*query.MicrosPerDay == v.Int { // midnight only
					xs = append(xs, d)
				}
			case c.T.Temporal() && v.Type == query.TypeDate:
				days = append(days, v.Int)
			default:
				return nil, false, false
			}
		}
		slices.Sort(xs)
		slices.Sort(days)
		return func(cr int32) bool {
			v := c.Vals[cr]
			if _, ok := slices.BinarySearch(xs, v); ok {
				return true
			}
			if len(days) == 0 {
				return false
			}
			_, ok := slices.BinarySearch(days, query.DayOfMicros(v))
			return ok
		}, hasNull, true
	}
	return nil, false, false
}

// callTest is callKernel for one cell.
func callTest(c column.Column, e *query.Call) (cellTest, bool) {
	sc, ok := c.(*column.Strings)
	if !ok {
		return nil, false
	}
	lit := e.Arg.Value
	if lit.Null || lit.Type == query.TypeNull {
		return nil, true
	}
	if lit.Type != query.TypeString {
		return nil, false
	}
	var fn func(s, arg string) bool
	switch e.Func {
	case query.Contains:
		fn = strings.Contains
	case query.StartsWith:
		fn = strings.HasPrefix
	case query.EndsWith:
		fn = strings.HasSuffix
	default:
		return nil, false
	}
	arg := lit.Str
	return func(cr int32) bool { return fn(sc.Dict[sc.Codes.At(int(cr))], arg) }, true
}

// compileTrue compiles a filter of which only the true rows are read (the top of a
// request's filter, a conjunct): below its ANDs and ORs the comparisons skip the false
// bitmap that only NOT needs. Other nodes compile as compileFilter's.
func (f *Frame) compileTrue(ctx context.Context, e query.Expr) (pred, error) {
	switch e := e.(type) {
	case *query.Logical:
		if e == nil || (e.Op != query.And && e.Op != query.Or) {
			break
		}
		l, err := f.compileTrue(ctx, e.L)
		if err != nil {
			return nil, err
		}
		r, err := f.compileTrue(ctx, e.R)
		if err != nil {
			return nil, err
		}
		if e.Op == query.And {
			return func() truth {
				a, b := l().t, r().t
				for i := range a {
					a[i] &= b[i]
				}
				return truth{t: a}
			}, nil
		}
		return func() truth {
			a, b := l().t, r().t
			for i := range a {
				a[i] |= b[i]
			}
			return truth{t: a}
		}, nil
	case *query.Compare:
		if e == nil {
			break
		}
		c, err := f.lookup(e.Field.Name)
		if err != nil {
			return nil, err
		}
		fill, err := f.compareKernel(c.col, e.Op, e.Value.Value, e.Field.Name)
		if err != nil {
			return nil, err
		}
		return f.leafSets(ctx, c, fill, false, false, false), nil
	case *query.In:
		if e == nil {
			break
		}
		c, err := f.lookup(e.Field.Name)
		if err != nil {
			return nil, err
		}
		fill, err := f.inKernel(c.col, e.Values, e.Field.Name)
		if err != nil {
			return nil, err
		}
		return f.leafSets(ctx, c, fill, false, false, false), nil
	case *query.Call:
		if e == nil {
			break
		}
		c, err := f.lookup(e.Field.Name)
		if err != nil {
			return nil, err
		}
		fill, err := f.callKernel(c.col, e)
		if err != nil {
			return nil, err
		}
		return f.leafSets(ctx, c, fill, false, false, false), nil
	}
	return f.compileFilter(ctx, e)
}
