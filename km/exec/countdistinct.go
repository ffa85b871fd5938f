package exec

import (
	"slices"

	"github.com/kmkit/kmkit/query/column"
)

// distinctBitsLimit (a variable for tests) bounds the bits of the per-group bitmaps
// countDistinct uses (groups times the column's digits): 2^28 bits are 32 MiB. Beyond it, the values are
// sorted per group instead.
var distinctBitsLimit = 1 << 28

// countDistinct counts, per group of g, the distinct non-null values of frame column c at
// the rows of g that are in pass (nil: every row).
//
// A column of few digits (a dictionary's codes, a boolean, integers of a small range: see
// keyPart) gets one bitmap per group indexed by the digit, so each row costs a bit test;
// any other column has its values bucketed by group and sorted, and the runs counted.
func countDistinct(c ref, g groups, pass column.Bitmap) []int64 {
	n := make([]int64, g.n)
	k := newKeyPart(c)
	if k.card > 0 && g.n <= distinctBitsLimit/k.card {
		countDistinctBits(k, g, pass, n)
		return n
	}
	// Bucket the values by group (a counting sort), then sort each bucket.
	off := make([]int32, g.n+1)
	vals := make([]uint64, 0, g.ids.len())
	gids := make([]int32, 0, g.ids.len())
	eachPart(k, g, pass, func(gi int32, v uint64) {
		vals = append(vals, v)
		gids = append(gids, gi)
		off[gi+1]++
	})
	for i := 1; i < len(off); i++ {
		off[i] += off[i-1]
	}
	next := slices.Clone(off[:g.n])
	bucketed := make([]uint64, len(vals))
	for i, v := range vals {
		bucketed[next[gids[i]]] = v
		next[gids[i]]++
	}
	for gi := range g.n {
		b := bucketed[off[gi]:off[gi+1]]
		slices.Sort(b)
		for i := range b {
			if i == 0 || b[i] != b[i-1] {
				n[gi]++
			}
		}
	}
	return n
}

// countDistinctBits is countDistinct over per-group bitmaps of k's digits (k.card set).
func countDistinctBits(k keyPart, g groups, pass column.Bitmap, n []int64) {
	card := k.card
	// 32-bit words, so that the bitmap is a buffer of the run's scratch (g.arena): the
	// first run after a start or an idle period then finds its pages resident.
	seen := g.arena.zeroed((g.n*card + 31) / 32)
	mark := func(gi int32, d int) {
		bit := int(gi)*card + d
		w, m := bit>>5, int32(1)<<(bit&31)
		if seen[w]&m == 0 {
			seen[w] |= m
			n[gi]++
		}
	}
	if col, ok := k.ref.col.(*column.Strings); ok {
		// The common case: a dictionary column, read directly or through a join index.
		nulls, index := col.Nulls, k.ref.index
		g.each(func(lo int, ids []int32) {
			for j, gi := range ids {
				r := g.row(lo + j)
				if pass != nil && !pass.Get(int(r)) {
					continue
				}
				if index != nil {
					if r = index[r]; r < 0 {
						continue
					}
				}
				if nulls != nil && nulls.Get(int(r)) {
					continue
				}
				mark(gi, int(col.Codes.At(int(r))))
			}
		})
		return
	}
	eachPart(k, g, pass, func(gi int32, v uint64) { mark(gi, int(int64(v)-k.offset)) })
}

// eachPart calls f with the group and the key part of each row of g that is in pass
// (nil: every row) and whose cell of k is not null.
func eachPart(k keyPart, g groups, pass column.Bitmap, f func(gi int32, v uint64)) {
	g.each(func(lo int, ids []int32) {
		for j, gi := range ids {
			r := g.row(lo + j)
			if pass != nil && !pass.Get(int(r)) {
				continue
			}
			if v, null := k.part(r); !null {
				f(gi, v)
			}
		}
	})
}
