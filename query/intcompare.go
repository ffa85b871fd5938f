package query

import "math"

// IntegerComparison is a comparison "v Op X" over int64 values that stands for the
// comparison of an integer-valued column with a literal of a finer scale. When Constant is
// set, the comparison has the same result, Result, for every non-null v, and Op and X are
// unused. Executors share these rewrites so that every backend decides such comparisons alike.
type IntegerComparison struct {
	Op       CompareOp
	X        int64
	Constant bool
	Result   bool
}

// CompareIntegerWithFloat rewrites "v op f", for an integer v and a float f, exactly: for
// example "v gt 2.5" as "v gt 2", "v eq 2.5" as always false. NaN is equal to nothing, and
// values beyond the int64 range compare as such.
func CompareIntegerWithFloat(op CompareOp, f float64) IntegerComparison {
	switch {
	case math.IsNaN(f):
		return IntegerComparison{Constant: true, Result: op == Ne}
	case f >= math.MaxInt64: // 2^63: above every int64
		return IntegerComparison{Constant: true, Result: op == Lt || op == Le || op == Ne}
	case f < math.MinInt64:
		return IntegerComparison{Constant: true, Result: op == Gt || op == Ge || op == Ne}
	}
	fl := math.Floor(f)
	return compareWithFraction(op, int64(fl), fl != f)
}

// CompareDayWithInstant rewrites "d op t", for a date d in days (standing for its midnight,
// UTC) and an instant t in microseconds since the Unix epoch, as a comparison of days.
func CompareDayWithInstant(op CompareOp, micros int64) IntegerComparison {
	q, r := micros/MicrosPerDay, micros%MicrosPerDay
	if r < 0 {
		q--
		r += MicrosPerDay
	}
	return compareWithFraction(op, q, r != 0)
}

// compareWithFraction rewrites "v op (q + frac)" for integers v, where 0 <= frac < 1 and
// fractional says whether frac > 0.
func compareWithFraction(op CompareOp, q int64, fractional bool) IntegerComparison {
	if !fractional {
		return IntegerComparison{Op: op, X: q}
	}
	switch op {
	case Eq:
		return IntegerComparison{Constant: true, Result: false}
	case Ne:
		return IntegerComparison{Constant: true, Result: true}
	case Gt, Ge: // v > q+frac  <=>  v > q
		return IntegerComparison{Op: Gt, X: q}
	}
	return IntegerComparison{Op: Le, X: q} // v < q+frac  <=>  v <= q
}
