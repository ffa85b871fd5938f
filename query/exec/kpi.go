package exec

import (
	"fmt"
	"slices"

	"github.com/kmkit/kmkit/query"
	"github.com/kmkit/kmkit/query/column"
)

// groups is the grouping of a selection: gid[i] is the group of frame row sel[i].
type groups struct {
	sel []int32
	gid []int32
	n   int
}

// compiledMetric computes a KPI for every group.
type compiledMetric struct {
	typ  query.Type
	eval func(g groups) []query.Value
}

// compileMetric checks a KPI expression against the frame and compiles it.
func (f *Frame) compileMetric(m query.Metric) (compiledMetric, error) {
	switch m := m.(type) {
	case *query.Number:
		v := query.Float(m.V)
		return compiledMetric{typ: query.TypeFloat, eval: func(g groups) []query.Value {
			out := make([]query.Value, g.n)
			for i := range out {
				out[i] = v
			}
			return out
		}}, nil
	case *query.Arith:
		l, err := f.compileMetric(m.L)
		if err != nil {
			return compiledMetric{}, err
		}
		r, err := f.compileMetric(m.R)
		if err != nil {
			return compiledMetric{}, err
		}
		if !l.typ.Numeric() || !r.typ.Numeric() {
			return compiledMetric{}, fmt.Errorf("exec: %w: arithmetic on a %v and a %v KPI value", ErrInvalidRequest, l.typ, r.typ)
		}
		op, err := arith(m.Op)
		if err != nil {
			return compiledMetric{}, err
		}
		return compiledMetric{typ: query.TypeFloat, eval: func(g groups) []query.Value {
			a, b := l.eval(g), r.eval(g)
			out := make([]query.Value, g.n)
			for i := range out {
				if a[i].Null || b[i].Null {
					out[i] = query.Null(query.TypeFloat)
					continue
				}
				out[i] = op(asFloat(a[i]), asFloat(b[i]))
			}
			return out
		}}, nil
	case *query.Aggregate:
		return f.compileAggregate(m)
	case nil:
		return compiledMetric{}, fmt.Errorf("exec: %w: nil KPI expression", ErrInvalidRequest)
	}
	return compiledMetric{}, fmt.Errorf("exec: %w: KPI expression %T", ErrInvalidRequest, m)
}

func arith(op byte) (func(a, b float64) query.Value, error) {
	switch op {
	case '+':
		return func(a, b float64) query.Value { return query.Float(a + b) }, nil
	case '-':
		return func(a, b float64) query.Value { return query.Float(a - b) }, nil
	case '*':
		return func(a, b float64) query.Value { return query.Float(a * b) }, nil
	case '/':
		return func(a, b float64) query.Value {
			if b == 0 {
				return query.Null(query.TypeFloat)
			}
			return query.Float(a / b)
		}, nil
	}
	return nil, fmt.Errorf("exec: %w: arithmetic operator %q", ErrInvalidRequest, op)
}

func asFloat(v query.Value) float64 {
	if v.Type == query.TypeFloat {
		return v.Float
	}
	return float64(v.Int)
}

func (f *Frame) compileAggregate(a *query.Aggregate) (compiledMetric, error) {
	var cond pred
	if a.Filter != nil {
		p, err := f.compileFilter(a.Filter)
		if err != nil {
			return compiledMetric{}, err
		}
		cond = p
	}
	// passing returns the rows where the aggregate's filter is true (nil: every row).
	passing := func() column.Bitmap {
		if cond == nil {
			return nil
		}
		return cond().t
	}
	pass := func(b column.Bitmap, r int32) bool { return b == nil || b.Get(int(r)) }

	switch a.Func {
	case query.AggRatio:
		if cond == nil {
			return compiledMetric{}, fmt.Errorf("exec: %w: ratio without a condition", ErrInvalidRequest)
		}
		return compiledMetric{typ: query.TypeFloat, eval: func(g groups) []query.Value {
			b := passing()
			num, den := make([]int, g.n), make([]int, g.n)
			for i, r := range g.sel {
				den[g.gid[i]]++
				if b.Get(int(r)) {
					num[g.gid[i]]++
				}
			}
			out := make([]query.Value, g.n)
			for i := range out {
				if den[i] == 0 {
					out[i] = query.Null(query.TypeFloat)
				} else {
					out[i] = query.Float(float64(num[i]) / float64(den[i]))
				}
			}
			return out
		}}, nil
	case query.AggCount:
		if a.Field == "" {
			return compiledMetric{typ: query.TypeInteger, eval: func(g groups) []query.Value {
				b := passing()
				n := make([]int64, g.n)
				for i, r := range g.sel {
					if pass(b, r) {
						n[g.gid[i]]++
					}
				}
				return ints(n)
			}}, nil
		}
	case query.AggCountDistinct, query.AggSum, query.AggAvg, query.AggMin, query.AggMax, query.AggMedian:
	default:
		return compiledMetric{}, fmt.Errorf("exec: %w: aggregate function %d", ErrInvalidRequest, a.Func)
	}

	c, err := f.lookup(a.Field)
	if err != nil {
		return compiledMetric{}, err
	}
	switch a.Func {
	case query.AggCount:
		return compiledMetric{typ: query.TypeInteger, eval: func(g groups) []query.Value {
			b := passing()
			n := make([]int64, g.n)
			for i, r := range g.sel {
				if pass(b, r) && !c.isNull(r) {
					n[g.gid[i]]++
				}
			}
			return ints(n)
		}}, nil
	case query.AggCountDistinct:
		return compiledMetric{typ: query.TypeInteger, eval: func(g groups) []query.Value {
			b := passing()
			k := newKeyPart(c)
			seen := make(map[[2]uint64]struct{})
			n := make([]int64, g.n)
			for i, r := range g.sel {
				if !pass(b, r) {
					continue
				}
				v, null := k.part(r)
				if null {
					continue
				}
				key := [2]uint64{uint64(g.gid[i]), v}
				if _, dup := seen[key]; !dup {
					seen[key] = struct{}{}
					n[g.gid[i]]++
				}
			}
			return ints(n)
		}}, nil
	case query.AggMin, query.AggMax:
		order := keyCmp(c, a.Func == query.AggMax)
		return compiledMetric{typ: c.col.Type(), eval: func(g groups) []query.Value {
			b := passing()
			best := make([]int32, g.n)
			for i := range best {
				best[i] = -1
			}
			for i, r := range g.sel {
				if !pass(b, r) || c.isNull(r) {
					continue
				}
				if cur := best[g.gid[i]]; cur < 0 || order(r, cur) < 0 {
					best[g.gid[i]] = r
				}
			}
			out := make([]query.Value, g.n)
			for i, r := range best {
				if r < 0 {
					out[i] = query.Null(c.col.Type())
				} else {
					out[i] = c.value(r)
				}
			}
			return out
		}}, nil
	}

	// sum, avg, median: numeric fields only.
	num := numeric(c)
	if num == nil {
		return compiledMetric{}, fmt.Errorf("exec: %w: %s of %v field %q", ErrInvalidRequest, aggName(a.Func), c.col.Type(), a.Field)
	}
	if a.Func == query.AggMedian {
		return compiledMetric{typ: query.TypeFloat, eval: func(g groups) []query.Value {
			b := passing()
			vals := make([][]float64, g.n)
			for i, r := range g.sel {
				if v, ok := num(r); ok && pass(b, r) {
					vals[g.gid[i]] = append(vals[g.gid[i]], v)
				}
			}
			out := make([]query.Value, g.n)
			for i, vs := range vals {
				out[i] = median(vs)
			}
			return out
		}}, nil
	}
	avg := a.Func == query.AggAvg
	return compiledMetric{typ: query.TypeFloat, eval: func(g groups) []query.Value {
		b := passing()
		sum := make([]float64, g.n)
		n := make([]int, g.n)
		for i, r := range g.sel {
			if v, ok := num(r); ok && pass(b, r) {
				sum[g.gid[i]] += v
				n[g.gid[i]]++
			}
		}
		out := make([]query.Value, g.n)
		for i := range out {
			switch {
			case n[i] == 0:
				out[i] = query.Null(query.TypeFloat)
			case avg:
				out[i] = query.Float(sum[i] / float64(n[i]))
			default:
				out[i] = query.Float(sum[i])
			}
		}
		return out
	}}, nil
}

// numeric returns a reader of the numeric frame column c as float64 (ok false for null),
// or nil when c is not an integer or float column.
func numeric(c ref) func(r int32) (float64, bool) {
	switch col := c.col.(type) {
	case *column.Float64s:
		return func(r int32) (float64, bool) {
			cr := c.row(r)
			if cr < 0 || col.Nulls.Get(int(cr)) {
				return 0, false
			}
			return col.Vals[cr], true
		}
	case *column.Int64s:
		if col.T != query.TypeInteger {
			return nil
		}
		return func(r int32) (float64, bool) {
			cr := c.row(r)
			if cr < 0 || col.Nulls.Get(int(cr)) {
				return 0, false
			}
			return float64(col.Vals[cr]), true
		}
	}
	return nil
}

func median(vs []float64) query.Value {
	if len(vs) == 0 {
		return query.Null(query.TypeFloat)
	}
	slices.Sort(vs)
	m := len(vs) / 2
	if len(vs)%2 == 1 {
		return query.Float(vs[m])
	}
	return query.Float((vs[m-1] + vs[m]) / 2)
}

func ints(n []int64) []query.Value {
	out := make([]query.Value, len(n))
	for i, v := range n {
		out[i] = query.Int(v)
	}
	return out
}

func aggName(f query.AggFunc) string {
	switch f {
	case query.AggSum:
		return "sum"
	case query.AggAvg:
		return "avg"
	}
	return "median"
}
