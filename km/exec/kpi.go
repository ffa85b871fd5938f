package exec

import (
	"fmt"
	"math"
	"math/big"
	"slices"

	"github.com/kmkit/kmkit/query"
	"github.com/kmkit/kmkit/query/column"
	"github.com/kmkit/kmkit/stats"
)

// groups is the grouping of a selection: entry i is frame row sel[i], in the group ids
// give it, one of n. A nil sel stands for every frame row in order (sel[i] == i, as many
// as the ids): the aggregates over every row (a KPI request without a filter) read no
// vector of row numbers. The hot loops take that case apart; the others read each
// entry's row through row. The loops read the ids a block at a time (each), as they come.
type groups struct {
	sel   []int32
	ids   *groupIDs
	n     int
	arena *arena // buffers for the evaluation, of the goroutine evaluating (nil: allocate)
}

// rows returns sel, written out from the arena when it stands for every row.
func (g groups) rows() []int32 {
	if g.sel != nil {
		return g.sel
	}
	return rowRangeIn(g.arena, 0, g.ids.len())
}

// each calls f with the group ids of the entries lo..lo+len(ids)-1, for consecutive
// blocks that cover every entry, in order (see groupIDs.blocks).
func (g groups) each(f func(lo int, ids []int32)) { g.ids.blocks(g.arena, f) }

// row returns the frame row of entry i of the grouping: sel[i], or i itself with a nil
// sel. Loops that read each row once call it rather than rows, which would write a
// vector of every row's number (4 MB at a million rows) only for them to read it back.
func (g groups) row(i int) int32 {
	if g.sel == nil {
		return int32(i)
	}
	return g.sel[i]
}

// compiledMetric computes a KPI for every group.
type compiledMetric struct {
	typ  query.Type
	eval func(g groups) []query.Value
	// sums, set for sum and avg, is eval in two steps: the compensated sum and the count
	// of the values of each group, then the metric's values from them (finish), so that
	// a sum and an avg of the same field over the same rows add the values once.
	sums *sumMetric
}

// sumMetric is a sum's or an avg's evaluation in two steps (compiledMetric.sums).
type sumMetric struct {
	add    func(g groups) groupSums
	finish func(groupSums) []query.Value
}

// groupSums are the sum and the count of the values of each group: the compensated sums
// of a float field's values, or the exact sums of an integer field's values, each
// ints[i] + carry[i]*2^64 (ints wraps around as int64 arithmetic does; carry counts the
// wraps, nil where no partial sum left the int64 range).
type groupSums struct {
	sum   []compensated
	ints  []int64
	carry []int64
	n     []int
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

// aggregateWith compiles an aggregate whose condition is cond (nil: none), ignoring
// a.Filter.
func (f *Frame) aggregateWith(a *query.Aggregate, cond pred) (compiledMetric, error) {
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
			g.each(func(lo int, ids []int32) {
				if g.sel == nil {
					for j, id := range ids {
						den[id]++
						num[id] += bit(b, int32(lo+j)) // no branch: the condition's rows are scattered
					}
					return
				}
				for j, r := range g.sel[lo : lo+len(ids)] {
					den[ids[j]]++
					num[ids[j]] += bit(b, r)
				}
			})
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
				return ints(countRows(g, passing(), ref{}))
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
			return ints(countRows(g, passing(), c))
		}}, nil
	case query.AggCountDistinct:
		return compiledMetric{typ: query.TypeInteger, eval: func(g groups) []query.Value {
			return ints(countDistinct(c, g, passing()))
		}}, nil
	case query.AggMin, query.AggMax:
		order := keyCmp(c, a.Func == query.AggMax)
		nulls := nullsOf(c.col)
		return compiledMetric{typ: c.col.Type(), eval: func(g groups) []query.Value {
			b := passing()
			best := make([]int32, g.n)
			for i := range best {
				best[i] = -1
			}
			g.each(func(lo int, ids []int32) {
				for j, id := range ids {
					r := g.row(lo + j)
					if cr := c.row(r); cr < 0 || nulls.Get(int(cr)) || !pass(b, r) {
						continue
					}
					if cur := best[id]; cur < 0 || order(r, cur) < 0 {
						best[id] = r
					}
				}
			})
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
	if !isNumeric(c.col) {
		return compiledMetric{}, fmt.Errorf("exec: %w: %s of %v field %q", ErrInvalidRequest, aggName(a.Func), c.col.Type(), a.Field)
	}
	if a.Func == query.AggMedian {
		return compiledMetric{typ: query.TypeFloat, eval: func(g groups) []query.Value {
			vals, valid := numbers(c, g.rows(), passing())
			byGroup := make([][]float64, g.n)
			g.each(func(lo int, ids []int32) {
				for j, id := range ids {
					if valid[lo+j] {
						byGroup[id] = append(byGroup[id], vals[lo+j])
					}
				}
			})
			out := make([]query.Value, g.n)
			for i, vs := range byGroup {
				out[i] = median(vs)
			}
			return out
		}}, nil
	}
	return sumOf(c, a.Func == query.AggAvg, passing), nil
}

// sumOf compiles a sum (or, when avg, an average) of the numeric frame column c over
// the rows in passing() (nil: every row). The sum of an integer column is an exact
// integer, null where it does not fit in 64 bits; the sums of a float column and every
// average are floats (see the package doc).
func sumOf(c ref, avg bool, passing func() column.Bitmap) compiledMetric {
	ints := c.col.Type() == query.TypeInteger
	typ := query.TypeFloat
	if ints && !avg {
		typ = query.TypeInteger
	}
	sm := &sumMetric{
		add: func(g groups) groupSums {
			gs := groupSums{n: make([]int, g.n)}
			if ints {
				gs.ints = make([]int64, g.n)
				accumulateInts(c, g, passing(), &gs)
			} else {
				gs.sum = make([]compensated, g.n)
				accumulate(c, g, passing(), gs.sum, gs.n)
			}
			return gs
		},
		finish: func(gs groupSums) []query.Value {
			out := make([]query.Value, len(gs.n))
			for i, n := range gs.n {
				var carry int64
				if gs.carry != nil {
					carry = gs.carry[i]
				}
				switch {
				case n == 0 || ints && !avg && carry != 0:
					out[i] = query.Null(typ)
				case ints && avg:
					out[i] = query.Float(intMean(gs.ints[i], carry, n))
				case ints:
					out[i] = query.Int(gs.ints[i])
				case avg:
					out[i] = query.Float(gs.sum[i].value() / float64(n))
				default:
					out[i] = query.Float(gs.sum[i].value())
				}
			}
			return out
		},
	}
	return compiledMetric{typ: typ, sums: sm, eval: func(g groups) []query.Value {
		return sm.finish(sm.add(g))
	}}
}

// compensated is a sum of doubles with Neumaier's compensation (Kahan-Babuska): c holds
// the low-order bits that each addition to s rounded off, added back at the end. Sums of
// decimal amounts then come out as the double nearest to their true sum (5173310.32, not
// the 5173310.319999997 of plain addition), as SQLite's sum and PostgreSQL's numeric sum
// give them; the error of plain addition grows with the number of values, that of a
// compensated sum stays about one rounding (it can still miss by one unit in the last
// place where huge values cancel).
type compensated struct{ s, c float64 }

// add adds x.
func (k *compensated) add(x float64) {
	t := k.s + x
	if math.Abs(k.s) >= math.Abs(x) {
		k.c += (k.s - t) + x
	} else {
		k.c += (x - t) + k.s
	}
	k.s = t
}

// value is the sum.
func (k compensated) value() float64 {
	if math.IsInf(k.s, 0) || math.IsNaN(k.s) {
		return k.s // the compensation of an overflow is NaN
	}
	return k.s + k.c
}

// accumulate adds the non-null values of the float frame column c at the rows of g that
// are in pass (nil: every row) to sum and counts them in n, by group. A column read
// directly takes one fused loop; other cases gather through numbers.
func accumulate(c ref, g groups, pass column.Bitmap, sum []compensated, n []int) {
	col := c.col.(*column.Float64s) // the float columns of a frame
	if c.index == nil && pass == nil {
		addAll(col.Vals, col.Nulls, g, sum, n)
		return
	}
	// Through a join index or under a condition: each row tested in place, in the
	// order addAll adds them, with no vector of the values or of their validity.
	g.each(func(lo int, ids []int32) {
		for j, id := range ids {
			r := g.row(lo + j)
			if pass != nil && !pass.Get(int(r)) {
				continue
			}
			if cr := c.row(r); cr >= 0 && !col.Nulls.Get(int(cr)) {
				sum[id].add(col.Vals[cr])
				n[id]++
			}
		}
	})
}

// countRows counts by group the rows of g that are in pass (nil: every row) and whose cell
// of c is not null; a zero ref (no column) counts every row. Whether a column has nulls is
// known at load time (a column without nulls has no bitmap), so a column read directly
// without nulls costs no test per row: the counts are those of the group ids alone.
func countRows(g groups, pass column.Bitmap, c ref) []int64 {
	n := make([]int64, g.n)
	var nulls column.Bitmap
	if c.col != nil {
		nulls = nullsOf(c.col)
	}
	if c.index == nil && nulls == nil {
		g.each(func(lo int, ids []int32) {
			switch {
			case pass == nil:
				for _, id := range ids {
					n[id]++
				}
			case g.sel == nil:
				for j, id := range ids {
					n[id] += int64(bit(pass, int32(lo+j))) // no branch: the passing rows are scattered
				}
			default:
				for j, r := range g.sel[lo : lo+len(ids)] {
					n[ids[j]] += int64(bit(pass, r))
				}
			}
		})
		return n
	}
	g.each(func(lo int, ids []int32) {
		for j, id := range ids {
			r := g.row(lo + j)
			if cr := c.row(r); cr >= 0 && !nulls.Get(int(cr)) && (pass == nil || pass.Get(int(r))) {
				n[id]++
			}
		}
	})
	return n
}

// bit is 1 when row r is in b, else 0, as b.Get(r) without a branch on the bit.
func bit(b column.Bitmap, r int32) int {
	w := int(r >> 6)
	if w >= len(b) {
		return 0
	}
	return int(b[w] >> (uint(r) & 63) & 1)
}

// addAll adds the non-null values of vals at the rows of g to sum and counts them in n,
// by group.
func addAll(vals []float64, nulls column.Bitmap, g groups, sum []compensated, n []int) {
	g.each(func(lo int, ids []int32) {
		switch {
		case g.sel == nil && nulls == nil:
			vs := vals[lo : lo+len(ids)]
			for j, id := range ids {
				sum[id].add(vs[j])
				n[id]++
			}
		case g.sel == nil:
			for j, id := range ids {
				if r := lo + j; !nulls.Get(r) {
					sum[id].add(vals[r])
					n[id]++
				}
			}
		case nulls == nil:
			for j, r := range g.sel[lo : lo+len(ids)] {
				sum[ids[j]].add(vals[r])
				n[ids[j]]++
			}
		default:
			for j, r := range g.sel[lo : lo+len(ids)] {
				if !nulls.Get(int(r)) {
					sum[ids[j]].add(vals[r])
					n[ids[j]]++
				}
			}
		}
	})
}

// accumulateInts adds the non-null values of the integer frame column c at the rows of g
// that are in pass (nil: every row) to gs.ints and counts them in gs.n, by group, exactly.
// A column read directly takes addInts's plain int64 additions; only where one of them
// overflows (values near ±2^63) are the sums taken again by addIntsWide, which counts the
// wraps, as are those of other cases.
func accumulateInts(c ref, g groups, pass column.Bitmap, gs *groupSums) {
	col := c.col.(*column.Int64s) // the integer columns of a frame
	if c.index == nil && pass == nil {
		if !addInts(col.Vals, col.Nulls, g, gs.ints, gs.n) {
			return
		}
		clear(gs.ints)
		clear(gs.n)
	}
	addIntsWide(c, col, g, pass, gs)
}

// overflowed is negative when t = s + v overflowed int64 (the sign of t differs from the
// signs of both s and v), else not.
func overflowed(s, v, t int64) int64 { return (s ^ t) & (v ^ t) }

// addInts adds the non-null values of vals at the rows of g to sum and counts them in n,
// by group, in int64 arithmetic, and reports whether an addition overflowed (the sums
// are then wrong). The test costs two xors and an and per value, no branch.
func addInts(vals []int64, nulls column.Bitmap, g groups, sum []int64, n []int) bool {
	var ovf int64
	g.each(func(lo int, ids []int32) {
		switch {
		case g.sel == nil && nulls == nil:
			vs := vals[lo : lo+len(ids)]
			for j, id := range ids {
				s, v := sum[id], vs[j]
				sum[id] = s + v
				ovf |= overflowed(s, v, s+v)
				n[id]++
			}
		case g.sel == nil:
			for j, id := range ids {
				if r := lo + j; !nulls.Get(r) {
					s, v := sum[id], vals[r]
					sum[id] = s + v
					ovf |= overflowed(s, v, s+v)
					n[id]++
				}
			}
		case nulls == nil:
			for j, r := range g.sel[lo : lo+len(ids)] {
				id := ids[j]
				s, v := sum[id], vals[r]
				sum[id] = s + v
				ovf |= overflowed(s, v, s+v)
				n[id]++
			}
		default:
			for j, r := range g.sel[lo : lo+len(ids)] {
				if !nulls.Get(int(r)) {
					id := ids[j]
					s, v := sum[id], vals[r]
					sum[id] = s + v
					ovf |= overflowed(s, v, s+v)
					n[id]++
				}
			}
		}
	})
	return ovf < 0
}

// addIntsWide is accumulateInts one row at a time, counting in gs.carry the times each
// sum wrapped around: +1 where adding a positive value passed 2^63-1, -1 where adding a
// negative one passed -2^63.
func addIntsWide(c ref, col *column.Int64s, g groups, pass column.Bitmap, gs *groupSums) {
	gs.carry = make([]int64, len(gs.ints))
	g.each(func(lo int, ids []int32) {
		for j, id := range ids {
			r := g.row(lo + j)
			cr := c.row(r)
			if cr < 0 || col.Nulls.Get(int(cr)) || pass != nil && !pass.Get(int(r)) {
				continue
			}
			s, v := gs.ints[id], col.Vals[cr]
			gs.ints[id] = s + v
			gs.carry[id] += overflowed(s, v, s+v) >> 63 & (1 | v>>63) // 0, or the sign of v
			gs.n[id]++
		}
	})
}

// intMean is the double nearest to (sum + carry*2^64) / n, the mean of n integers whose
// sum groupSums holds as sum and carry.
func intMean(sum, carry int64, n int) float64 {
	if carry == 0 && sum >= -1<<53 && sum <= 1<<53 {
		return float64(sum) / float64(n) // one rounding: the sum and n are exact doubles
	}
	total := new(big.Int).Lsh(big.NewInt(carry), 64)
	total.Add(total, big.NewInt(sum))
	f, _ := new(big.Rat).SetFrac(total, big.NewInt(int64(n))).Float64()
	return f
}

// numbers gathers the numeric frame column c at the rows of sel as float64; valid[i] says
// that the cell is not null and its row is in pass (nil: every row). Columns read directly
// take tight typed loops.
func numbers(c ref, sel []int32, pass column.Bitmap) (vals []float64, valid []bool) {
	vals = make([]float64, len(sel))
	valid = make([]bool, len(sel))
	switch col := c.col.(type) {
	case *column.Float64s:
		if c.index == nil {
			for i, r := range sel {
				vals[i] = col.Vals[r]
			}
		} else {
			for i, r := range sel {
				if cr := c.index[r]; cr >= 0 {
					vals[i] = col.Vals[cr]
				}
			}
		}
	case *column.Int64s:
		if c.index == nil {
			for i, r := range sel {
				vals[i] = float64(col.Vals[r])
			}
		} else {
			for i, r := range sel {
				if cr := c.index[r]; cr >= 0 {
					vals[i] = float64(col.Vals[cr])
				}
			}
		}
	}
	nulls := nullsOf(c.col)
	for i, r := range sel {
		ok := true
		if c.index != nil {
			r = c.index[r]
			ok = r >= 0
		}
		if ok && nulls != nil {
			ok = !nulls.Get(int(r))
		}
		valid[i] = ok
	}
	if pass != nil {
		for i, r := range sel {
			valid[i] = valid[i] && pass.Get(int(r))
		}
	}
	return vals, valid
}

func isNumeric(c column.Column) bool {
	return c.Type() == query.TypeInteger || c.Type() == query.TypeFloat
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
	return query.Float(stats.Midpoint(vs[m-1], vs[m]))
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
