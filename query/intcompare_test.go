package query

import (
	"math"
	"testing"
)

// TestIntegerComparisons checks the rewrites against comparing as floats (exact for the
// small values used) for every operator.
func TestIntegerComparisons(t *testing.T) {
	ops := []CompareOp{Eq, Ne, Gt, Ge, Lt, Le}
	cmp := func(op CompareOp, a, b float64) bool {
		switch op {
		case Eq:
			return a == b
		case Ne:
			return a != b
		case Gt:
			return a > b
		case Ge:
			return a >= b
		case Lt:
			return a < b
		}
		return a <= b
	}
	eval := func(c IntegerComparison, v int64) bool {
		if c.Constant {
			return c.Result
		}
		return cmp(c.Op, float64(v), float64(c.X))
	}
	for _, f := range []float64{-3, -2.5, -0.5, 0, 0.25, 2, 2.5, 7.999, math.NaN(), 1e19, -1e19} {
		for _, op := range ops {
			c := CompareIntegerWithFloat(op, f)
			for v := int64(-5); v <= 9; v++ {
				if got, want := eval(c, v), cmp(op, float64(v), f); got != want {
					t.Errorf("%d %v %v: rewrite %+v gives %v, want %v", v, op, f, c, got, want)
				}
			}
		}
	}
	day := int64(MicrosPerDay)
	for _, us := range []int64{-day - 1, -day, -1, 0, 1, day / 2, day, 3*day + 7} {
		for _, op := range ops {
			c := CompareDayWithInstant(op, us)
			for d := int64(-3); d <= 4; d++ {
				if got, want := eval(c, d), cmp(op, float64(d*day), float64(us)); got != want {
					t.Errorf("day %d %v %dµs: rewrite %+v gives %v, want %v", d, op, us, c, got, want)
				}
			}
		}
	}
}
