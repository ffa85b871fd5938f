package stats

// chunkSize is the number of values numpy's reductions hand to the summation loop at once
// (its iterator's buffer size). Every sum pandas takes is the in-order sum of the pairwise
// sums of such chunks, also for float64 arrays that need no buffering.
const chunkSize = 8192

// pairwiseSum sums a exactly as numpy's pairwise summation does (pairwise_sum in
// numpy/core/src/umath/loops_utils.h.src): fewer than 8 values left to right from 0, up to
// 128 values in 8 interleaved accumulators combined as a tree, more values split in two at
// a multiple of 8 near the middle. Adding in this order is what makes the mean agree with
// pandas to the last bit rather than to 1e-15.
func pairwiseSum(a []float64) float64 {
	n := len(a)
	switch {
	case n < 8:
		res := 0.0 // numpy starts from +0 too, so a lone -0 sums to +0
		for _, v := range a {
			res += v
		}
		return res
	case n <= 128:
		r0, r1, r2, r3, r4, r5, r6, r7 := a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7]
		i := 8
		for ; i < n-n%8; i += 8 {
			b := a[i : i+8 : i+8]
			r0 += b[0]
			r1 += b[1]
			r2 += b[2]
			r3 += b[3]
			r4 += b[4]
			r5 += b[5]
			r6 += b[6]
			r7 += b[7]
		}
		res := ((r0 + r1) + (r2 + r3)) + ((r4 + r5) + (r6 + r7))
		for ; i < n; i++ {
			res += a[i]
		}
		return res
	}
	n2 := n / 2
	n2 -= n2 % 8
	return pairwiseSum(a[:n2]) + pairwiseSum(a[n2:])
}
