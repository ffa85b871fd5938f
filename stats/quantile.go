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
	var lo, hi [3]int
	var t [3]float64
	for i, p := range quartiles {
		h := float64(n-1) * p
		if h >= float64(n-1) {
			lo[i], hi[i], t[i] = n-1, n-1, h+1
			continue
		}
		f := math.Floor(h)
		lo[i], hi[i], t[i] = int(f), int(f)+1, h-f
	}
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

// lerpFloat is numpy's _lerp for float64: a + (b-a)t below t = 0.5, b - (b-a)(1-t) from
// there on. The float64 conversions keep Go from fusing a product and a sum into one FMA,
// which rounds once where numpy rounds twice.
func lerpFloat(a, b, t float64) float64 {
	d := b - a
	if t >= 0.5 {
		return b - float64(d*(1-t))
	}
	return a + float64(d*t)
}

// lerpInt is numpy's _lerp for int64 neighbours: the difference b-a is taken in integers
// and only then converted, as numpy subtracts the int64 arrays before multiplying by t. Where
// that difference would overflow int64 (numpy wraps around), it is taken in float64.
func lerpInt(a, b int64, t float64) float64 {
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
// before it and no smaller one after it. It is Hoare's selection with a median-of-three pivot,
// which splits runs of equal values evenly; after 2·log2(n) rounds that do not finish it
// sorts what is left, so that no input makes it quadratic. k = 0 and k = len(x)-1, the
// neighbours percentiles asks for right after a selection, are a single scan.
func selectNth[T cmp.Ordered](x []T, k int) {
	lo, hi := 0, len(x)-1
	switch k {
	case lo:
		m := lo
		for i := lo + 1; i <= hi; i++ {
			if x[i] < x[m] {
				m = i
			}
		}
		x[lo], x[m] = x[m], x[lo]
		return
	case hi:
		m := hi
		for i := lo; i < hi; i++ {
			if x[i] > x[m] {
				m = i
			}
		}
		x[hi], x[m] = x[m], x[hi]
		return
	}
	for rounds := 2 * bits.Len(uint(len(x))); lo < hi; rounds-- {
		if rounds == 0 {
			slices.Sort(x[lo : hi+1])
			return
		}
		m := lo + (hi-lo)/2
		if x[m] < x[lo] {
			x[m], x[lo] = x[lo], x[m]
		}
		if x[hi] < x[lo] {
			x[hi], x[lo] = x[lo], x[hi]
		}
		if x[hi] < x[m] {
			x[hi], x[m] = x[m], x[hi]
		}
		pivot := x[m]
		i, j := lo, hi
		for i <= j {
			for x[i] < pivot {
				i++
			}
			for pivot < x[j] {
				j--
			}
			if i <= j {
				x[i], x[j] = x[j], x[i]
				i++
				j--
			}
		}
		// Now x[lo..j] <= pivot <= x[i..hi], and every x between j and i equals pivot.
		switch {
		case k <= j:
			hi = j
		case k >= i:
			lo = i
		default:
			return
		}
	}
}
