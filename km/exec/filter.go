package exec

import (
	"context"
	"fmt"
	"maps"
	"math"
	"math/bits"
	"slices"
	"strings"

	"github.com/kmkit/kmkit/query"
	"github.com/kmkit/kmkit/query/column"
)

// truth is the value of a filter over all rows of a frame in SQL's three-valued logic: row r
// is true when t has r, false when f has r, and unknown when neither has it. The two sets
// never overlap. And, or and not are then word-wise: and = (t1&t2, f1|f2), or = (t1|t2,
// f1&f2), not = (f, t).
type truth struct{ t, f column.Bitmap }

// pred evaluates a compiled filter node over the frame.
type pred func() truth

// compileFilter compiles a bound filter once into closures over the frame's columns. Once
// ctx is done, the leaves skip their work (empty sets): the caller checks ctx after
// evaluating, so a canceled query stops within one leaf's pass over its column.
func (f *Frame) compileFilter(ctx context.Context, e query.Expr) (pred, error) {
	if isNilNode(e) {
		return nil, fmt.Errorf("exec: %w: nil filter node", ErrInvalidRequest)
	}
	switch e := e.(type) {
	case *query.Logical:
		l, err := f.compileFilter(ctx, e.L)
		if err != nil {
			return nil, err
		}
		r, err := f.compileFilter(ctx, e.R)
		if err != nil {
			return nil, err
		}
		if e.Op == query.And {
			return func() truth {
				a, b := l(), r()
				for i := range a.t {
					a.t[i] &= b.t[i]
					a.f[i] |= b.f[i]
				}
				return a
			}, nil
		}
		if e.Op == query.Or {
			return func() truth {
				a, b := l(), r()
				for i := range a.t {
					a.t[i] |= b.t[i]
					a.f[i] &= b.f[i]
				}
				return a
			}, nil
		}
		return nil, fmt.Errorf("exec: %w: logical operator %d", ErrInvalidRequest, e.Op)
	case *query.Not:
		x, err := f.compileFilter(ctx, e.X)
		if err != nil {
			return nil, err
		}
		return func() truth { v := x(); return truth{t: v.f, f: v.t} }, nil
	case *query.IsNull:
		c, err := f.lookup(e.Field.Name)
		if err != nil {
			return nil, err
		}
		return f.leaf(ctx, c, func(out column.Bitmap) unknownRule {
			copy(out, nullsOf(c.col))
			return allKnown
		}, e.Negated, true), nil
	case *query.Compare:
		c, err := f.lookup(e.Field.Name)
		if err != nil {
			return nil, err
		}
		fill, err := f.compareKernel(c.col, e.Op, e.Value.Value, e.Field.Name)
		if err != nil {
			return nil, err
		}
		return f.leaf(ctx, c, fill, false, false), nil
	case *query.In:
		c, err := f.lookup(e.Field.Name)
		if err != nil {
			return nil, err
		}
		fill, err := f.inKernel(c.col, e.Values, e.Field.Name)
		if err != nil {
			return nil, err
		}
		return f.leaf(ctx, c, fill, false, false), nil
	case *query.Call:
		c, err := f.lookup(e.Field.Name)
		if err != nil {
			return nil, err
		}
		fill, err := f.callKernel(c.col, e)
		if err != nil {
			return nil, err
		}
		return f.leaf(ctx, c, fill, false, false), nil
	case *query.ScalarCompare:
		return f.compileScalarCompare(ctx, e)
	case *query.ScalarMatch:
		return f.compileScalarMatch(ctx, e)
	case *query.Quantified:
		return f.compileQuantified(ctx, e)
	}
	return nil, fmt.Errorf("exec: %w: filter node %T", ErrInvalidRequest, e)
}

// isNilNode reports a nil filter node, also a typed nil pointer in the interface.
func isNilNode(e query.Expr) bool {
	switch e := e.(type) {
	case nil:
		return true
	case *query.Logical:
		return e == nil
	case *query.Not:
		return e == nil
	case *query.Compare:
		return e == nil
	case *query.In:
		return e == nil
	case *query.Call:
		return e == nil
	case *query.IsNull:
		return e == nil
	case *query.ScalarCompare:
		return e == nil
	case *query.ScalarMatch:
		return e == nil
	case *query.Quantified:
		return e == nil
	}
	return false
}

func (f *Frame) lookup(name string) (ref, error) {
	c, ok := f.refs[name]
	if !ok {
		return ref{}, fmt.Errorf("exec: %w %q", ErrUnknownField, name)
	}
	return c, nil
}

// unknownRule says which rows a kernel leaves neither true nor false.
type unknownRule uint8

const (
	nullsUnknown   unknownRule = iota // null cells are unknown, all others true or false
	allUnknown                        // every row is unknown (comparison with null)
	notTrueUnknown                    // null cells and rows not set true are unknown ("in" with null)
	allKnown                          // no row is unknown (is null)
)

// kernel sets in out (sized for the column's rows) the rows of the column where the
// predicate is true, ignoring nulls, and says which rows are unknown.
type kernel func(out column.Bitmap) unknownRule

// leaf turns a kernel over a column into a node over the frame: it evaluates the kernel over
// the column's own rows (once per dictionary value for strings), derives the false rows,
// and reads both through the join index when the column is joined. negate swaps true and
// false (is not null). A frame row without a joined row reads a null cell: unknown for
// comparisons, true for is null (isNull set).
func (f *Frame) leaf(ctx context.Context, c ref, k kernel, negate, isNull bool) pred {
	return f.leafSets(ctx, c, k, negate, isNull, true)
}

// leafSets is leaf; without needFalse the false rows are not computed (truth.f is nil),
// for a node of which only the true rows are read (see compileTrue).
func (f *Frame) leafSets(ctx context.Context, c ref, k kernel, negate, isNull, needFalse bool) pred {
	return func() truth {
		if ctx.Err() != nil {
			return truth{t: column.NewBitmap(f.rows), f: column.NewBitmap(f.rows)}
		}
		n := c.col.Len()
		t := column.NewBitmap(n)
		rule := k(t)
		var fb column.Bitmap
		wantF := needFalse || negate
		switch rule {
		case allUnknown:
			clear(t)
			if wantF {
				fb = column.NewBitmap(n)
			}
		case notTrueUnknown:
			andNot(t, nullsOf(c.col))
			if wantF {
				fb = column.NewBitmap(n)
			}
		case nullsUnknown:
			andNot(t, nullsOf(c.col))
			if wantF {
				fb = complement(t, nullsOf(c.col), n)
			}
		case allKnown:
			if wantF {
				fb = complement(t, nil, n)
			}
		}
		if negate {
			t, fb = fb, t
		}
		if !needFalse {
			fb = nil
		}
		if c.index == nil {
			return truth{t: t, f: fb}
		}
		out := truth{t: column.NewBitmap(f.rows)}
		if needFalse {
			out.f = column.NewBitmap(f.rows)
		}
		for r, cr := range c.index {
			switch {
			case cr < 0:
				// No joined row: every cell reads null.
				if isNull {
					if negate {
						if needFalse {
							out.f.Set(r)
						}
					} else {
						out.t.Set(r)
					}
				}
			case t.Get(int(cr)):
				out.t.Set(r)
			case needFalse && fb.Get(int(cr)):
				out.f.Set(r)
			}
		}
		return out
	}
}

// nullsOf returns the null bitmap of c (nil when it has no nulls).
func nullsOf(c column.Column) column.Bitmap {
	switch c := c.(type) {
	case *column.Strings:
		return c.Nulls
	case *column.Int64s:
		return c.Nulls
	case *column.Float64s:
		return c.Nulls
	case *column.Bools:
		return c.Nulls
	}
	return nil
}

func andNot(t, nulls column.Bitmap) {
	for i, w := range nulls {
		t[i] &^= w
	}
}

// complement returns the rows below n in neither t nor nulls.
func complement(t, nulls column.Bitmap, n int) column.Bitmap {
	out := make(column.Bitmap, len(t))
	for i, w := range t {
		out[i] = ^w
	}
	andNot(out, nulls)
	if r := n & 63; r != 0 {
		out[len(out)-1] &= 1<<r - 1
	}
	return out
}

// setWhere sets in out the rows i where keep(vals[i]); the loop is specialised per type.
func setWhere[T any](out column.Bitmap, vals []T, keep func(T) bool) {
	for w := 0; w*64 < len(vals); w++ {
		block := vals[w*64 : min(w*64+64, len(vals))]
		var word uint64
		for j, v := range block {
			if keep(v) {
				word |= 1 << uint(j)
			}
		}
		out[w] = word
	}
}

// cmpSet sets the rows whose value compares to x as op says.
func cmpSet[T int64 | float64 | string | uint8 | uint16 | uint32](out column.Bitmap, vals []T, op query.CompareOp, x T) {
	for w := 0; w*64 < len(vals); w++ {
		block := vals[w*64 : min(w*64+64, len(vals))]
		var word uint64
		switch op {
		case query.Eq:
			for j, v := range block {
				word |= b2u(v == x) << uint(j)
			}
		case query.Ne:
			for j, v := range block {
				word |= b2u(v != x) << uint(j)
			}
		case query.Gt:
			for j, v := range block {
				word |= b2u(v > x) << uint(j)
			}
		case query.Ge:
			for j, v := range block {
				word |= b2u(v >= x) << uint(j)
			}
		case query.Lt:
			for j, v := range block {
				word |= b2u(v < x) << uint(j)
			}
		case query.Le:
			for j, v := range block {
				word |= b2u(v <= x) << uint(j)
			}
		}
		out[w] = word
	}
}

func b2u(b bool) uint64 {
	if b {
		return 1
	}
	return 0
}

// codeSet sets the rows of a string column whose code is in match. A column of few
// values has the rows of each code as a bitmap (see codeRows): their union is the answer.
// Otherwise, when one code matches (an equality) or all but one do, it compares codes
// instead of looking each one up.
func (f *Frame) codeSet(out column.Bitmap, col *column.Strings, match []bool) {
	in, last, lastOut := 0, 0, 0
	for code, m := range match {
		if m {
			in, last = in+1, code
		} else {
			lastOut = code
		}
	}
	if in == 0 {
		clear(out) // also an empty dictionary: every cell is null
		return
	}
	if byCode := f.codeRows(col); byCode != nil {
		clear(out)
		for code, m := range match {
			if m {
				for i, w := range byCode[code] {
					out[i] |= w
				}
			}
		}
		return
	}
	switch c := col.Codes; {
	case c.U8 != nil:
		matchCodes(out, c.U8, match, in, last, lastOut)
	case c.U16 != nil:
		matchCodes(out, c.U16, match, in, last, lastOut)
	default:
		matchCodes(out, c.U32, match, in, last, lastOut)
	}
}

// matchCodes sets in out the rows whose code match holds, of which there are in: one
// code, last, is an equality; all but one, lastOut, an inequality.
func matchCodes[T uint8 | uint16 | uint32](out column.Bitmap, codes []T, match []bool, in, last, lastOut int) {
	switch {
	case in == 1:
		cmpSet(out, codes, query.Eq, T(last))
	case in == len(match)-1:
		cmpSet(out, codes, query.Ne, T(lastOut))
	default:
		setWhere(out, codes, func(c T) bool { return match[c] })
	}
}

func validOp(op query.CompareOp) bool { return op >= query.Eq && op <= query.Le }

func compareOrdered[T int64 | float64 | string](a, b T, op query.CompareOp) bool {
	switch op {
	case query.Eq:
		return a == b
	case query.Ne:
		return a != b
	case query.Gt:
		return a > b
	case query.Ge:
		return a >= b
	case query.Lt:
		return a < b
	}
	return a <= b
}

func typeError(name string, col query.Type, lit query.Value) error {
	return fmt.Errorf("exec: %w: cannot compare %v field %q with a %v literal", ErrInvalidRequest, col, name, lit.Type)
}

// compareKernel compiles "field op literal" against column c.
func (f *Frame) compareKernel(c column.Column, op query.CompareOp, lit query.Value, name string) (kernel, error) {
	if !validOp(op) {
		return nil, fmt.Errorf("exec: %w: comparison operator %d", ErrInvalidRequest, op)
	}
	if lit.Null || lit.Type == query.TypeNull {
		return func(column.Bitmap) unknownRule { return allUnknown }, nil
	}
	switch c := c.(type) {
	case *column.Strings:
		if lit.Type != query.TypeString {
			return nil, typeError(name, c.Type(), lit)
		}
		scan := func(out column.Bitmap) unknownRule {
			match := make([]bool, len(c.Dict))
			for code, s := range c.Dict {
				match[code] = compareOrdered(s, lit.Str, op)
			}
			f.codeSet(out, c, match)
			return nullsUnknown
		}
		if op != query.Eq {
			return scan, nil
		}
		return f.viaIndex(c, 1, seekStrings([]string{lit.Str}), nullsUnknown, scan), nil
	case *column.Float64s:
		var x float64
		switch lit.Type {
		case query.TypeFloat:
			x = lit.Float
		case query.TypeInteger:
			x = float64(lit.Int)
		default:
			return nil, typeError(name, c.Type(), lit)
		}
		return func(out column.Bitmap) unknownRule {
			cmpSet(out, c.Vals, op, x)
			return nullsUnknown
		}, nil
	case *column.Bools:
		if lit.Type != query.TypeBoolean {
			return nil, typeError(name, c.Type(), lit)
		}
		x := int64(b2u(lit.Bool))
		return func(out column.Bitmap) unknownRule {
			setWhere(out, c.Vals, func(v bool) bool { return compareOrdered(int64(b2u(v)), x, op) })
			return nullsUnknown
		}, nil
	case *column.Int64s:
		k, err := int64Kernel(c, op, lit, name)
		if err != nil || op != query.Eq || (c.T != lit.Type && !(c.T.Temporal() && lit.Type.Temporal())) {
			return k, err
		}
		return f.viaIndex(c, 1, seekInts([]int64{lit.Int}), nullsUnknown, k), nil
	}
	return nil, fmt.Errorf("exec: %w: column type %T", ErrInvalidRequest, c)
}

// int64Kernel compiles a comparison against an integer, date, instant or time column. An
// integer column against a float literal, and a date column against an instant, compare
// exactly: the literal is turned into an integer bound (floor or ceiling) of the column's
// unit. An instant column against a date literal compares the day of the instant.
func int64Kernel(c *column.Int64s, op query.CompareOp, lit query.Value, name string) (kernel, error) {
	ct, lt := c.T, lit.Type
	set := func(op query.CompareOp, x int64) kernel {
		return func(out column.Bitmap) unknownRule {
			cmpSet(out, c.Vals, op, x)
			return nullsUnknown
		}
	}
	constant := func(v bool) kernel {
		return func(out column.Bitmap) unknownRule {
			if v {
				for i := range out {
					out[i] = ^uint64(0)
				}
				if r := c.Len() & 63; r != 0 {
					out[len(out)-1] = 1<<r - 1
				}
			}
			return nullsUnknown
		}
	}
	switch {
	case ct == lt, ct.Temporal() && lt.Temporal():
		return set(op, lit.Int), nil
	case ct == query.TypeInteger && lt == query.TypeFloat:
		ic := query.CompareIntegerWithFloat(op, lit.Float)
		if ic.Constant {
			return constant(ic.Result), nil
		}
		return set(ic.Op, ic.X), nil
	case ct == query.TypeDate && lt.Temporal():
		// The day d compares as the instant of its midnight: d*day op x.
		ic := query.CompareDayWithInstant(op, lit.Int)
		if ic.Constant {
			return constant(ic.Result), nil
		}
		return set(ic.Op, ic.X), nil
	case ct.Temporal() && lt == query.TypeDate:
		day := lit.Int
		return func(out column.Bitmap) unknownRule {
			setWhere(out, c.Vals, func(v int64) bool { return compareOrdered(query.DayOfMicros(v), day, op) })
			return nullsUnknown
		}, nil
	}
	return nil, typeError(name, ct, lit)
}

// inKernel compiles "field in (...)". A null in the list makes rows that match no other
// value unknown, as in SQL.
func (f *Frame) inKernel(c column.Column, lits []query.Literal, name string) (kernel, error) {
	hasNull := false
	var vals []query.Value
	for _, l := range lits {
		if l.Value.Null || l.Value.Type == query.TypeNull {
			hasNull = true
			continue
		}
		vals = append(vals, l.Value)
	}
	rule := nullsUnknown
	if hasNull {
		rule = notTrueUnknown
	}
	switch c := c.(type) {
	case *column.Strings:
		set := make(map[string]bool, len(vals))
		for _, v := range vals {
			if v.Type != query.TypeString {
				return nil, typeError(name, c.Type(), v)
			}
			set[v.Str] = true
		}
		scan := func(out column.Bitmap) unknownRule {
			match := make([]bool, len(c.Dict))
			for code, s := range c.Dict {
				match[code] = set[s]
			}
			f.codeSet(out, c, match)
			return rule
		}
		sought := slices.Collect(maps.Keys(set))
		return f.viaIndex(c, len(sought), seekStrings(sought), rule, scan), nil
	case *column.Bools:
		var want [2]bool
		for _, v := range vals {
			if v.Type != query.TypeBoolean {
				return nil, typeError(name, c.Type(), v)
			}
			want[b2u(v.Bool)] = true
		}
		return func(out column.Bitmap) unknownRule {
			setWhere(out, c.Vals, func(v bool) bool { return want[b2u(v)] })
			return rule
		}, nil
	case *column.Float64s:
		var xs []float64
		for _, v := range vals {
			switch v.Type {
			case query.TypeFloat:
				xs = append(xs, v.Float)
			case query.TypeInteger:
				xs = append(xs, float64(v.Int))
			default:
				return nil, typeError(name, c.Type(), v)
			}
		}
		return setKernel(c.Vals, xs, rule), nil
	case *column.Int64s:
		var xs []int64
		var days []int64
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
				return nil, typeError(name, c.T, v)
			}
		}
		if len(days) == 0 {
			slices.Sort(xs)
			xs = slices.Compact(xs)
			scan := setKernel(c.Vals, xs, rule)
			return f.viaIndex(c, len(xs), seekInts(xs), rule, scan), nil
		}
		slices.Sort(xs)
		slices.Sort(days)
		return func(out column.Bitmap) unknownRule {
			setWhere(out, c.Vals, func(v int64) bool {
				_, a := slices.BinarySearch(xs, v)
				_, b := slices.BinarySearch(days, query.DayOfMicros(v))
				return a || b
			})
			return rule
		}, nil
	}
	return nil, fmt.Errorf("exec: %w: column type %T", ErrInvalidRequest, c)
}

// setKernel tests membership by a linear scan for short lists and binary search otherwise.
func setKernel[T int64 | float64](vals, xs []T, rule unknownRule) kernel {
	slices.Sort(xs)
	xs = slices.Compact(xs)
	return func(out column.Bitmap) unknownRule {
		if len(xs) <= 8 {
			setWhere(out, vals, func(v T) bool { return slices.Contains(xs, v) })
		} else {
			setWhere(out, vals, func(v T) bool { _, ok := slices.BinarySearch(xs, v); return ok })
		}
		return rule
	}
}

// callKernel compiles contains, startswith and endswith: once per dictionary value.
func (f *Frame) callKernel(c column.Column, e *query.Call) (kernel, error) {
	sc, ok := c.(*column.Strings)
	if !ok {
		return nil, fmt.Errorf("exec: %w: function on %v field %q", ErrInvalidRequest, c.Type(), e.Field.Name)
	}
	lit := e.Arg.Value
	if lit.Null || lit.Type == query.TypeNull {
		return func(column.Bitmap) unknownRule { return allUnknown }, nil
	}
	if lit.Type != query.TypeString {
		return nil, typeError(e.Field.Name, c.Type(), lit)
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
		return nil, fmt.Errorf("exec: %w: function %d", ErrInvalidRequest, e.Func)
	}
	return func(out column.Bitmap) unknownRule {
		match := make([]bool, len(sc.Dict))
		for code, s := range sc.Dict {
			match[code] = fn(s, lit.Str)
		}
		f.codeSet(out, sc, match)
		return nullsUnknown
	}, nil
}

// selection returns the rows set in b, ascending.
func selection(b column.Bitmap) []int32 { return selectionIn(nil, b) }

// selectionIn is selection in a buffer of the arena a.
func selectionIn(a *arena, b column.Bitmap) []int32 {
	n := 0
	for _, w := range b {
		n += bits.OnesCount64(w)
	}
	sel := a.int32s(n)[:0]
	for i, w := range b {
		for w != 0 {
			sel = append(sel, int32(i*64+bits.TrailingZeros64(w)))
			w &= w - 1
		}
	}
	return sel
}
