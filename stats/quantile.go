package stats

import (
	"cmp"
	"math"
	"math/bits"
	"slices"
)

// quartiles are the probabilities describe reports.
var quartiles = [3]float64{0.25, 0.5, 0.75}

// percentiles returns the 25th, 50th and 75th percentiles of x as numpy.percentile computes
// them with its default linear method, reordering x. x must hold no NaN. Without values they
// are NaN.
//
// numpy's virtual index is h = (n-1)p; the neighbours are x[⌊h⌋] and x[⌊h⌋+1] of x sorted,
// and the weight is t = h-⌊h⌋. When h reaches the last index both neighbours are the last
// value and numpy, having put the index -1 in place of ⌊h⌋, takes t = h+1; that matters only
// to lerp's rounding (and makes the percentile of a lone ±Inf NaN, as numpy's is).
//
// Only the needed order statistics are found, by selection rather than a full sort: O(n).
func percentiles[T cmp.Ordered](x []T, lerp func(a, b T, t float64) float64) [3]float64 {
	n := len(x)
	if n == 0 {
		return [3]float64{math.NaN(), math.NaN(), math.NaN()}
	}
	lo, hi, t := QuartileRanks(n)
	ks := append(lo[:], hi[:]...)
	slices.Sort(ks)
	start := 0
	for _, k := range slices.Compact(ks) {
		selectNth(x[start:], k-start)
		start = k + 1
	}
	var q [3]float64
	for i := range q {
		q[i] = lerp(x[lo[i]], x[hi[i]], t[i])
	}
	return q
}

// QuartileRanks returns where the 25th, 50th and 75th percentiles of n values (n > 0) lie
// among them sorted, as numpy.percentile's linear method places them: for each, the 0-based
// ranks lo and hi of its two neighbours and the weight t, so that the percentile is
// LerpFloat(x[lo], x[hi], t) (LerpInt for an int64 column without nulls). A store that
// sorts in its database fetches the values at these ranks and interpolates with them.
func QuartileRanks(n int) (lo, hi [3]int, t [3]float64) {
	for i, p := range quartiles {
		h := float64(n-1) * p
		if h >= float64(n-1) {
			lo[i], hi[i], t[i] = n-1, n-1, h+1
			continue
		}
		f := math.Floor(h)
		lo[i], hi[i], t[i] = int(f), int(f)+1, h-f
	}
	return lo, hi, t
}

// LerpFloat is numpy's _lerp for float64: a + (b-a)t below t = 0.5, b - (b-a)(1-t) from
// there on. The float64 conversions keep Go from fusing a product and a sum into one FMA,
// which rounds once where numpy rounds twice.
func LerpFloat(a, b, t float64) float64 {
	d := b - a
	if t >= 0.5 {
		return b - float64(d*(1-t))
	}
	return a + float64(d*t)
}

// Midpoint returns the double nearest to (a+b)/2, the median of two middle values: what
// numpy's median computes as (a+b)/2 wherever that is finite, and finite also where a+b
// overflows (two values beyond half of the largest double), since the mean of two doubles
// never leaves their range. Halving a double of magnitude 1 or more is exact, so a/2+b/2
// rounds once, as (a+b)/2 does when it does not overflow; below 1, a+b cannot overflow
// and halving a tiny double might round.
func Midpoint(a, b float64) float64 {
	if math.Abs(a) < 1 && math.Abs(b) < 1 {
		return (a + b) / 2
	}
	return a/2 + b/2
}

// LerpInt is numpy's _lerp for int64 neighbours: the difference b-a is taken in integers
// and only then converted, as numpy subtracts the int64 arrays before multiplying by t. Where
// that difference would overflow int64 (numpy wraps around), it is taken in float64.
func LerpInt(a, b int64, t float64) float64 {
	d := float64(b - a)
	if b-a < 0 { // b >= a, so only an overflow makes it negative
		d = float64(b) - float64(a)
	}
	if t >= 0.5 {
		return float64(b) - float64(d*(1-t))
	}
	return float64(a) + float64(d*t)
}

// selectNth reorders x so that x[k] is the value a sort would put there, with no greater value
// before it and no smaller one after it.
//
// It is Floyd and Rivest's SELECT (CACM 18(3), 1975): on a large range it first selects
// within a small sample around the expected position of the k-th value, so that the pivot
// lands close to it and one partition discards nearly everything; that makes it about twice
// as fast as a median-of-three quickselect on a million values. Equal values stop both scans,
// so runs of ties split evenly. A range that has not shrunk to one value after 4·log2(n)
// rounds is sorted instead, so that no input makes it quadratic. k = 0 and k = len(x)-1, the
// neighbours percentiles asks for right after a selection, are a single scan.
func selectNth[T cmp.Ordered](x []T, k int) {
	left, right := 0, len(x)-1
	switch k {
	case left:
		m := minIndex(x)
		x[left], x[m] = x[m], x[left]
		return
	case right:
		m := maxIndex(x)
		x[right], x[m] = x[m], x[right]
		return
	}
	for rounds := 4 * bits.Len(uint(len(x))); right > left; rounds-- {
		if rounds == 0 {
			slices.Sort(x[left : right+1])
			return
		}
		if right-left > 600 {
			// Select within the sample range [l, r] first; it holds the k-th value with high
			// probability, and afterwards x[k] is a pivot close to the final one.
			n, i := float64(right-left+1), float64(k-left+1)
			z := math.Log(n)
			s := 0.5 * math.Exp(2*z/3)
			sd := 0.5 * math.Sqrt(z*s*(n-s)/n)
			switch {
			case i < n/2:
				sd = -sd
			case i == n/2:
				sd = 0
			}
			l := max(left, int(float64(k)-i*s/n+sd))
			r := min(right, int(float64(k)+(n-i)*s/n+sd))
			selectNth(x[l:r+1], k-l)
		}
		// Partition [left, right] around t = x[k]; x[left] and x[right] serve as sentinels.
		t := x[k]
		i, j := left, right
		x[left], x[k] = x[k], x[left]
		if x[right] > t {
			x[right], x[left] = x[left], x[right]
		}
		for i < j {
			x[i], x[j] = x[j], x[i]
			i++
			j--
			for x[i] < t {
				i++
			}
			for x[j] > t {
				j--
			}
		}
		if x[left] == t {
			x[left], x[j] = x[j], x[left]
		} else {
			j++
			x[j], x[right] = x[right], x[j]
		}
		// Now x[j] = t, with nothing greater before it and nothing smaller after it.
		if j <= k {
			left = j + 1
		}
		if k <= j {
			right = j - 1
		}
	}
}

// minIndex returns the index of the first smallest value of x.
func minIndex[T cmp.Ordered](x []T) int {
	m := 0
	for i, v := range x {
		if v < x[m] {
			m = i
		}
	}
	return m
}

// maxIndex returns the index of the first greatest value of x.
func maxIndex[T cmp.Ordered](x []T) int {
	m := 0
	for i, v := range x {
		if v > x[m] {
			m = i
		}
	}
	return m
}
