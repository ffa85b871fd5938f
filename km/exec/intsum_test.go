package exec

import (
	"math/big"
	"math/rand/v2"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/kmkit/kmkit/query"
	"github.com/kmkit/kmkit/query/column"
)

// TestIntegerSums holds the sums and averages of integer columns, on every path (every
// row or a selection, with and without nulls, read directly or through a join index, with
// and without a condition; values that never overflow and values near ±2^63 that do) to
// exact arithmetic (math/big), the outside oracle: the sum is the true sum where it fits
// in int64 and null where it does not, the average the double nearest to the true mean.
func TestIntegerSums(t *testing.T) {
	r := rand.New(rand.NewPCG(53, 63))
	value := func(huge bool) int64 {
		if huge && r.IntN(2) == 0 {
			return []int64{1<<63 - 1, -1 << 63, 1<<63 - 29, -(1<<63 - 1), 1 << 53, 1<<62 + 1}[r.IntN(6)]
		}
		return r.Int64N(2001) - 1000
	}
	for c := range 400 {
		n := 1 + r.IntN(200)
		huge := c%2 == 1
		b := column.NewBuilder(query.TypeInteger)
		nullShare := []int{0, 2, 7}[r.IntN(3)] // 0: a column without nulls (no bitmap)
		for range n {
			if nullShare > 0 && r.IntN(nullShare) == 0 {
				b.AppendNull()
			} else {
				b.AppendInt(value(huge))
			}
		}
		col := b.Build()
		rows := n
		c0 := ref{col: col}
		if r.IntN(3) == 0 {
			rows = 1 + r.IntN(200)
			c0.index = make([]int32, rows)
			for i := range c0.index {
				c0.index[i] = int32(r.IntN(n+1)) - 1 // -1: no joined row
			}
		}
		var pass column.Bitmap
		if r.IntN(3) == 0 {
			pass = column.NewBitmap(rows)
			for i := range rows {
				if r.IntN(2) == 0 {
					pass.Set(i)
				}
			}
		}
		g, gid := groups{n: 1 + r.IntN(4)}, []int32(nil)
		all := r.IntN(3) == 0 // sel nil: every frame row
		for i := range rows {
			if all || r.IntN(4) > 0 {
				g.sel = append(g.sel, int32(i))
				gid = append(gid, int32(r.IntN(g.n)))
			}
		}
		g.ids = writtenIDs(gid)
		sums := make([]*big.Int, g.n)
		counts := make([]int64, g.n)
		for i := range sums {
			sums[i] = new(big.Int)
		}
		for i, row := range g.sel {
			cr := c0.row(row)
			if cr < 0 || col.IsNull(int(cr)) || pass != nil && !pass.Get(int(row)) {
				continue
			}
			sums[gid[i]].Add(sums[gid[i]], big.NewInt(col.Value(int(cr)).Int))
			counts[gid[i]]++
		}
		if all {
			g.sel = nil
		}
		wantSum := make([]query.Value, g.n)
		wantAvg := make([]query.Value, g.n)
		for i, s := range sums {
			switch {
			case counts[i] == 0:
				wantSum[i], wantAvg[i] = query.Null(query.TypeInteger), query.Null(query.TypeFloat)
				continue
			case s.IsInt64():
				wantSum[i] = query.Int(s.Int64())
			default:
				wantSum[i] = query.Null(query.TypeInteger)
			}
			mean, _ := new(big.Rat).SetFrac(s, big.NewInt(counts[i])).Float64()
			wantAvg[i] = query.Float(mean)
		}
		passing := func() column.Bitmap { return pass }
		for _, avg := range []bool{false, true} {
			want := wantSum
			if avg {
				want = wantAvg
			}
			if d := cmp.Diff(want, sumOf(c0, avg, passing).eval(g)); d != "" {
				t.Fatalf("case %d (avg %v, huge %v, nulls %v, index %v, pass %v, every row %v): (-want +got)\n%s",
					c, avg, huge, nullsOf(col) != nil, c0.index != nil, pass != nil, g.sel == nil, d)
			}
		}
	}
}

// TestIntegerSumCases: the sums the backends disagreed on (2^53 + 1 added in doubles gave
// 2^53; 2^63-1, 29 and -(2^63-1) gave 30 where the exact sum is 29), and sums past
// ±2^63 that come back into range.
func TestIntegerSumCases(t *testing.T) {
	for _, c := range []struct {
		vals []int64
		sum  query.Value
		avg  float64
	}{
		{[]int64{1 << 53, 1}, query.Int(1<<53 + 1), (1<<53 + 1) / 2.0},
		{[]int64{1<<63 - 1, 29, -(1<<63 - 1)}, query.Int(29), 29 / 3.0},
		{[]int64{1<<63 - 1, 1, -1}, query.Int(1<<63 - 1), (1<<63 - 1) / 3.0},
		{[]int64{-1 << 63, -1, 1}, query.Int(-1 << 63), -(1 << 63) / 3.0},
		{[]int64{1<<63 - 1, 1}, query.Null(query.TypeInteger), (1 << 63) / 2.0},
		{[]int64{-1 << 63, -1 << 63, 1<<63 - 1}, query.Null(query.TypeInteger), -(1<<63 + 1) / 3.0},
	} {
		b := column.NewBuilder(query.TypeInteger)
		for _, v := range c.vals {
			b.AppendInt(v)
		}
		g := groups{ids: writtenIDs(make([]int32, len(c.vals))), n: 1}
		c0 := ref{col: b.Build()}
		none := func() column.Bitmap { return nil }
		if got := sumOf(c0, false, none).eval(g)[0]; got != c.sum {
			t.Errorf("sum of %v = %+v, want %+v", c.vals, got, c.sum)
		}
		if got := sumOf(c0, true, none).eval(g)[0]; got != query.Float(c.avg) {
			t.Errorf("avg of %v = %+v, want %v", c.vals, got, c.avg)
		}
	}
}
