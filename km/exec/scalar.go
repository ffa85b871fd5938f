package exec

import (
	"context"
	"fmt"
	"slices"
	"unsafe"

	"github.com/kmkit/kmkit/query"
	"github.com/kmkit/kmkit/query/column"
)

// Scalar expressions (functions and arithmetic of OData's $filter) are computed column at
// a time into a vec. A function of one string column is computed once per dictionary value
// (tolower over a column of a thousand distinct values costs a thousand calls, whatever
// the rows); date parts and arithmetic on one column run as loops over its values; values
// of columns read through different join indexes are first gathered to frame rows.

// vec is a scalar's values: per element, typed (ints for integers, dates, times and
// instants; flts for floats; strs for strings), null where null is set.
//
// Elements are dictionary codes when src is set: row r of the underlying table reads
// element src.Codes.At(r), or null where src.Nulls has r. Otherwise elements are rows. Frame
// row r reads table row index[r] (r itself when index is nil; -1 reads null). A constant
// has konst set and no elements.
type vec struct {
	t     query.Type
	n     int
	ints  []int64
	flts  []float64
	strs  []string
	null  column.Bitmap
	src   *column.Strings
	index []int32
	konst *query.Value
}

func newVec(t query.Type, n int) *vec {
	v := &vec{t: t, n: n}
	switch t {
	case query.TypeString:
		v.strs = make([]string, n)
	case query.TypeFloat:
		v.flts = make([]float64, n)
	default:
		v.ints = make([]int64, n)
	}
	return v
}

// get returns element i.
func (v *vec) get(i int) query.Value {
	if v.konst != nil {
		return *v.konst
	}
	if v.null != nil && v.null.Get(i) {
		return query.Null(v.t)
	}
	switch {
	case v.strs != nil:
		return query.String(v.strs[i])
	case v.flts != nil:
		return query.Float(v.flts[i])
	case v.t == query.TypeBoolean:
		return query.Bool(v.ints[i] != 0)
	}
	return query.Value{Type: v.t, Int: v.ints[i]}
}

// set stores x as element i.
func (v *vec) set(i int, x query.Value) {
	if x.Null || x.Type == query.TypeNull {
		if v.null == nil {
			v.null = column.NewBitmap(v.n)
		}
		v.null.Set(i)
		return
	}
	switch {
	case v.strs != nil:
		v.strs[i] = x.Str
	case v.flts != nil:
		v.flts[i] = x.Float
	default:
		v.ints[i] = x.Int
	}
}

// elem returns the element of table row r, or -1 where the row reads null.
func (v *vec) elem(r int) int {
	if v.src != nil {
		if v.src.Nulls.Get(r) {
			return -1
		}
		return int(v.src.Codes.At(r))
	}
	return r
}

// sameIndex reports whether a and b read frame rows through the same index.
func sameIndex(a, b []int32) bool {
	return len(a) == len(b) && unsafe.SliceData(a) == unsafe.SliceData(b)
}

// fieldVec reads a column as a vec without copying it.
func (f *Frame) fieldVec(name string) (*vec, error) {
	c, err := f.lookup(name)
	if err != nil {
		return nil, err
	}
	switch col := c.col.(type) {
	case *column.Strings:
		return &vec{t: query.TypeString, n: len(col.Dict), strs: col.Dict, src: col, index: c.index}, nil
	case *column.Int64s:
		return &vec{t: col.T, n: len(col.Vals), ints: col.Vals, null: col.Nulls, index: c.index}, nil
	case *column.Float64s:
		return &vec{t: query.TypeFloat, n: len(col.Vals), flts: col.Vals, null: col.Nulls, index: c.index}, nil
	case *column.Bools:
		v := newVec(query.TypeBoolean, len(col.Vals))
		for i, b := range col.Vals {
			v.ints[i] = int64(b2u(b))
		}
		v.null, v.index = col.Nulls, c.index
		return v, nil
	}
	return nil, fmt.Errorf("exec: %w: column type %T", ErrInvalidRequest, c.col)
}

// flat returns v with one element per table row (a dictionary vec expanded).
func flat(v *vec) *vec {
	if v.src == nil || v.konst != nil {
		return v
	}
	n := v.src.Codes.Len()
	out := newVec(v.t, n)
	out.index = v.index
	for r := range n {
		e := v.elem(r)
		if e < 0 {
			out.set(r, query.Null(v.t))
			continue
		}
		out.set(r, v.get(e))
	}
	return out
}

// toFrame returns v with one element per frame row.
func (f *Frame) toFrame(v *vec) *vec {
	if v.konst != nil || v.index == nil && v.src == nil {
		return v
	}
	v = flat(v)
	if v.index == nil {
		return v
	}
	out := newVec(v.t, f.rows)
	for r, cr := range v.index {
		if cr < 0 {
			out.set(r, query.Null(v.t))
		} else {
			out.set(r, v.get(int(cr)))
		}
	}
	return out
}

// align brings the non-constant vecs of vs into one element space and returns it (a vec
// whose n, src and index describe it), or nil when all are constant.
func (f *Frame) align(vs []*vec) *vec {
	var first *vec
	same := true
	for _, v := range vs {
		if v.konst != nil {
			continue
		}
		if first == nil {
			first = v
			continue
		}
		if v.src != first.src || !sameIndex(v.index, first.index) {
			same = false
		}
	}
	if first == nil || same {
		return first
	}
	// Different dictionaries over the same table rows: expand to rows; different tables:
	// gather to frame rows.
	sameRows := true
	for _, v := range vs {
		if v.konst == nil && !sameIndex(v.index, first.index) {
			sameRows = false
		}
	}
	for i, v := range vs {
		if v.konst != nil {
			continue
		}
		if sameRows {
			vs[i] = flat(v)
		} else {
			vs[i] = f.toFrame(v)
		}
	}
	for _, v := range vs {
		if v.konst == nil {
			return v
		}
	}
	return nil
}

// evalScalar computes s over the frame.
func (f *Frame) evalScalar(s query.Scalar) (*vec, error) {
	switch s := s.(type) {
	case *query.FieldOperand:
		return f.fieldVec(s.Field.Name)
	case *query.Const:
		v := s.Lit.Value
		return &vec{t: v.Type, konst: &v}, nil
	case *query.Apply:
		args := make([]*vec, len(s.Args))
		for i, a := range s.Args {
			v, err := f.evalScalar(a)
			if err != nil {
				return nil, err
			}
			args[i] = v
		}
		if out := datePartFast(s, args); out != nil {
			return out, nil
		}
		return f.elementwise(s.Type, args, func(vals []query.Value) query.Value { return query.ApplyFunc(s.Func, vals) }), nil
	case *query.Arithmetic:
		l, err := f.evalScalar(s.L)
		if err != nil {
			return nil, err
		}
		r, err := f.evalScalar(s.R)
		if err != nil {
			return nil, err
		}
		if out := arithFast(s, l, r); out != nil {
			return out, nil
		}
		return f.elementwise(s.Type, []*vec{l, r}, func(vals []query.Value) query.Value {
			return query.ApplyArith(s.Op, s.Type, vals[0], vals[1])
		}), nil
	}
	return nil, fmt.Errorf("exec: %w: scalar node %T", ErrInvalidRequest, s)
}

// elementwise computes fn over the aligned elements of args (once per dictionary value
// when they share one).
func (f *Frame) elementwise(t query.Type, args []*vec, fn func([]query.Value) query.Value) *vec {
	space := f.align(args)
	vals := make([]query.Value, len(args))
	if space == nil {
		for i, a := range args {
			vals[i] = a.get(0)
		}
		x := fn(vals)
		return &vec{t: t, konst: &x}
	}
	out := newVec(t, space.n)
	out.src, out.index = space.src, space.index
	for e := range space.n {
		for i, a := range args {
			vals[i] = a.get(e)
		}
		out.set(e, fn(vals))
	}
	return out
}

// datePartFast computes year ... second, date and time of one flat column in a loop.
func datePartFast(s *query.Apply, args []*vec) *vec {
	if len(args) != 1 || args[0].konst != nil || args[0].ints == nil || args[0].src != nil {
		return nil
	}
	a := args[0]
	switch s.Func {
	case query.FnYear, query.FnMonth, query.FnDay, query.FnHour, query.FnMinute, query.FnSecond, query.FnDate, query.FnTime:
	default:
		return nil
	}
	out := &vec{t: s.Type, n: a.n, ints: make([]int64, a.n), null: a.null, index: a.index}
	in := query.Value{Type: a.t}
	switch s.Func {
	case query.FnDate:
		for i, x := range a.ints {
			out.ints[i] = query.DayOfMicros(x)
		}
	case query.FnTime:
		for i, x := range a.ints {
			out.ints[i] = x - query.DayOfMicros(x)*query.MicrosPerDay
		}
	case query.FnYear, query.FnMonth, query.FnDay:
		// One calendar computation per day of the column's span, then a lookup per row.
		days := a.ints
		if a.t != query.TypeDate {
			days = make([]int64, len(a.ints))
			for i, x := range a.ints {
				days[i] = query.DayOfMicros(x)
			}
		}
		if !dayTable(s.Func, days, out.ints) {
			for i, d := range days {
				out.ints[i] = query.DatePart(s.Func, query.Value{Type: query.TypeDate, Int: d})
			}
		}
	default:
		for i, x := range a.ints {
			in.Int = x
			out.ints[i] = query.DatePart(s.Func, in)
		}
	}
	return out
}

// maxDayTable is the longest span of days dayTable tabulates (about 180 years).
const maxDayTable = 1 << 16

// dayTable sets out[i] to the year, month or day of days[i] through a table of the span of
// days, and reports false (doing nothing) when the span is too long for one.
func dayTable(fn query.ScalarFunc, days, out []int64) bool {
	if len(days) == 0 {
		return true
	}
	lo, hi := slices.Min(days), slices.Max(days)
	if hi-lo >= maxDayTable || hi-lo < 0 {
		return false
	}
	table := make([]int64, hi-lo+1)
	for d := range table {
		table[d] = query.DatePart(fn, query.Value{Type: query.TypeDate, Int: lo + int64(d)})
	}
	for i, d := range days {
		out[i] = table[d-lo]
	}
	return true
}

// arithFast computes add, sub and mul of a flat column and a constant in a loop.
func arithFast(s *query.Arithmetic, l, r *vec) *vec {
	if l.konst != nil || r.konst == nil || r.konst.Null || l.src != nil || s.Op > query.OpMul {
		return nil
	}
	k := *r.konst
	switch {
	case s.Type == query.TypeInteger && l.ints != nil:
		out := &vec{t: s.Type, n: l.n, ints: make([]int64, l.n), null: l.null, index: l.index}
		copied := false
		for i, x := range l.ints {
			r, ok := query.IntArith(s.Op, x, k.Int)
			if !ok { // beyond 64 bits: null (the column's own null bitmap stays as it is)
				if !copied {
					out.null = column.NewBitmap(l.n)
					copy(out.null, l.null)
					copied = true
				}
				out.null.Set(i)
			}
			out.ints[i] = r
		}
		return out
	case s.Type == query.TypeFloat && l.flts != nil && k.Type == query.TypeFloat:
		out := &vec{t: s.Type, n: l.n, flts: make([]float64, l.n), null: l.null, index: l.index}
		for i, x := range l.flts {
			switch s.Op {
			case query.OpAdd:
				out.flts[i] = x + k.Float
			case query.OpSub:
				out.flts[i] = x - k.Float
			default:
				out.flts[i] = x * k.Float
			}
		}
		return out
	}
	return nil
}

// scalarLeaf evaluates a condition on scalars: test says, for the aligned elements of
// args (all non-null), whether the condition holds. A null element is unknown, unless
// nullIs is set: then the condition is whether the first argument is null (is null; ne:
// is not null), never unknown. fast, when not nil, computes the true elements of a flat
// first argument against a constant second one in a loop (nulls ignored); it reports
// false when it does not apply.
func (f *Frame) scalarLeaf(ctx context.Context, args []query.Scalar, test func([]query.Value) bool, fast func(out column.Bitmap, vs []*vec) bool, nullIs, negated bool) pred {
	return func() truth {
		if ctx.Err() != nil {
			return truth{t: column.NewBitmap(f.rows), f: column.NewBitmap(f.rows)}
		}
		vs := make([]*vec, len(args))
		for i, a := range args {
			v, err := f.evalScalar(a)
			if err != nil { // compile checked every node and field: an executor bug
				panic(err)
			}
			vs[i] = v
		}
		space := f.align(vs)
		n := 1
		if space != nil {
			n = space.n
		}
		// The true and false elements.
		te, fe := column.NewBitmap(n), column.NewBitmap(n)
		nulls := column.NewBitmap(n) // elements with a null argument
		for _, v := range vs {
			if v.konst != nil {
				if v.konst.Null || v.konst.Type == query.TypeNull {
					for i := range nulls {
						nulls[i] = ^uint64(0)
					}
				}
			} else if v.null != nil {
				for i, w := range v.null {
					nulls[i] |= w
				}
			}
		}
		if r := n & 63; r != 0 {
			nulls[len(nulls)-1] &= 1<<r - 1
		}
		switch {
		case nullIs:
			if negated {
				copy(fe, nulls)
				te = complement(nulls, nil, n)
			} else {
				copy(te, nulls)
				fe = complement(nulls, nil, n)
			}
		case fast != nil && space != nil && fast(te, vs):
			andNot(te, nulls)
			fe = complement(te, nulls, n)
		default:
			vals := make([]query.Value, len(vs))
			for e := range n {
				if nulls.Get(e) {
					continue
				}
				for i, v := range vs {
					vals[i] = v.get(e)
				}
				if test(vals) {
					te.Set(e)
				} else {
					fe.Set(e)
				}
			}
		}
		// A row that reads no element (no joined row, a null code) is null.
		nullT, nullF := false, false
		if nullIs {
			nullT, nullF = !negated, negated
		}
		out := truth{t: column.NewBitmap(f.rows), f: column.NewBitmap(f.rows)}
		switch {
		case space == nil:
			if te.Get(0) {
				out.t = complement(column.NewBitmap(f.rows), nil, f.rows)
			} else if fe.Get(0) {
				out.f = complement(column.NewBitmap(f.rows), nil, f.rows)
			}
		case space.src != nil && space.index == nil:
			// Codes of a column of the frame's own table: the codes' rows, as the plain
			// comparisons read them.
			src := space.src
			matchT, matchF := make([]bool, n), make([]bool, n)
			for e := range n {
				matchT[e], matchF[e] = te.Get(e), fe.Get(e)
			}
			f.codeSet(out.t, src, matchT)
			f.codeSet(out.f, src, matchF)
			andNot(out.t, src.Nulls)
			andNot(out.f, src.Nulls)
			if nullT || nullF {
				b := out.t
				if nullF {
					b = out.f
				}
				for i, w := range src.Nulls {
					b[i] |= w
				}
			}
		case space.src == nil && space.index == nil:
			out.t, out.f = te, fe
		default:
			for r := range f.rows {
				tr := r
				if space.index != nil {
					tr = int(space.index[r])
				}
				e := -1
				if tr >= 0 {
					e = space.elem(tr)
				}
				switch {
				case e < 0:
					if nullT {
						out.t.Set(r)
					} else if nullF {
						out.f.Set(r)
					}
				case te.Get(e):
					out.t.Set(r)
				case fe.Get(e):
					out.f.Set(r)
				}
			}
		}
		return out
	}
}

// compareFast returns the loop kernel of "L op constant" over flat integer-like or float
// elements (dates, times and instants compare as their integers).
func compareFast(op query.CompareOp) func(out column.Bitmap, vs []*vec) bool {
	return func(out column.Bitmap, vs []*vec) bool {
		l, r := vs[0], vs[1]
		if l.konst != nil || l.src != nil || r.konst == nil || r.konst.Null {
			return false
		}
		k := *r.konst
		switch {
		case l.ints != nil && l.t != query.TypeBoolean && k.Type != query.TypeFloat && k.Type != query.TypeString:
			cmpSet(out, l.ints, op, k.Int)
			return true
		case l.flts != nil && k.Type == query.TypeFloat:
			cmpSet(out, l.flts, op, k.Float)
			return true
		}
		return false
	}
}

// compileScalarCompare compiles "L op R" on scalars.
func (f *Frame) compileScalarCompare(ctx context.Context, e *query.ScalarCompare) (pred, error) {
	if !validOp(e.Op) {
		return nil, fmt.Errorf("exec: %w: comparison operator %d", ErrInvalidRequest, e.Op)
	}
	if err := f.checkScalar(e.L); err != nil {
		return nil, err
	}
	if c, ok := e.R.(*query.Const); ok && (c.Lit.Value.Null || c.Lit.Value.Type == query.TypeNull) {
		if e.Op != query.Eq && e.Op != query.Ne {
			return func() truth { return truth{t: column.NewBitmap(f.rows), f: column.NewBitmap(f.rows)} }, nil
		}
		return f.scalarLeaf(ctx, []query.Scalar{e.L}, nil, nil, true, e.Op == query.Ne), nil
	}
	if err := f.checkScalar(e.R); err != nil {
		return nil, err
	}
	op := e.Op
	return f.scalarLeaf(ctx, []query.Scalar{e.L, e.R}, func(v []query.Value) bool { return query.CompareValues(v[0], v[1], op) }, compareFast(op), false, false), nil
}

// compileScalarMatch compiles contains, startswith or endswith on scalars.
func (f *Frame) compileScalarMatch(ctx context.Context, e *query.ScalarMatch) (pred, error) {
	if err := f.checkScalar(e.X); err != nil {
		return nil, err
	}
	if err := f.checkScalar(e.Arg); err != nil {
		return nil, err
	}
	fn := e.Func
	if fn < query.Contains || fn > query.EndsWith {
		return nil, fmt.Errorf("exec: %w: function %d", ErrInvalidRequest, fn)
	}
	return f.scalarLeaf(ctx, []query.Scalar{e.X, e.Arg}, func(v []query.Value) bool { return query.MatchText(fn, v[0].Str, v[1].Str) }, nil, false, false), nil
}

// checkScalar checks, at compile time, that every field s reads is a column and every
// node is one the executor knows.
func (f *Frame) checkScalar(s query.Scalar) error {
	switch s := s.(type) {
	case *query.FieldOperand:
		_, err := f.lookup(s.Field.Name)
		return err
	case *query.Const:
		return nil
	case *query.Apply:
		if s.Func < query.FnToLower || s.Func > query.FnTimeText || s.Func == query.FnNow {
			return fmt.Errorf("exec: %w: function %d", ErrInvalidRequest, s.Func)
		}
		for _, a := range s.Args {
			if err := f.checkScalar(a); err != nil {
				return err
			}
		}
		return nil
	case *query.Arithmetic:
		if s.Op < query.OpAdd || s.Op > query.OpMod {
			return fmt.Errorf("exec: %w: arithmetic operator %d", ErrInvalidRequest, s.Op)
		}
		if err := f.checkScalar(s.L); err != nil {
			return err
		}
		return f.checkScalar(s.R)
	}
	return fmt.Errorf("exec: %w: scalar node %T", ErrInvalidRequest, s)
}

// scalarColumn computes s for every frame row into a column (a sort key's values).
func (f *Frame) scalarColumn(s query.Scalar) (column.Column, error) {
	if err := f.checkScalar(s); err != nil {
		return nil, err
	}
	v, err := f.evalScalar(s)
	if err != nil {
		return nil, err
	}
	v = f.toFrame(v)
	b := column.NewBuilder(s.ResultType())
	for r := range f.rows {
		x := v.get(r) // a constant's get ignores r
		if err := b.Append(x); err != nil {
			return nil, err
		}
	}
	return b.Build(), nil
}
