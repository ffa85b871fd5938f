package exec

import (
	"cmp"
	"container/heap"
	"slices"

	"github.com/kmkit/kmkit/query"
	"github.com/kmkit/kmkit/query/column"
)

// rowCmp orders two frame rows; 0 means the sort keys tie.
type rowCmp func(a, b int32) int

// keyCmp compiles one sort key over a frame column: nulls last in both directions.
func keyCmp(c ref, desc bool) rowCmp {
	sign := 1
	if desc {
		sign = -1
	}
	nulls := nullsOf(c.col)
	idx := c.index
	if idx == nil && nulls == nil {
		return directCmp(c.col, sign)
	}
	// pos maps a frame row to a column row, -1 for null.
	pos := func(r int32) int32 {
		if idx != nil {
			r = idx[r]
			if r < 0 {
				return -1
			}
		}
		if nulls != nil && nulls.Get(int(r)) {
			return -1
		}
		return r
	}
	var byRow func(a, b int32) int
	switch col := c.col.(type) {
	case *column.Strings:
		ranks := col.Ranks()
		byRow = func(a, b int32) int { return cmp.Compare(ranks[col.Codes.At(int(a))], ranks[col.Codes.At(int(b))]) }
	case *column.Int64s:
		byRow = func(a, b int32) int { return cmp.Compare(col.Vals[a], col.Vals[b]) }
	case *column.Float64s:
		byRow = func(a, b int32) int { return cmp.Compare(col.Vals[a], col.Vals[b]) }
	case *column.Bools:
		byRow = func(a, b int32) int { return cmp.Compare(b2u(col.Vals[a]), b2u(col.Vals[b])) }
	}
	return func(a, b int32) int {
		pa, pb := pos(a), pos(b)
		switch {
		case pa < 0 && pb < 0:
			return 0
		case pa < 0:
			return 1
		case pb < 0:
			return -1
		}
		return sign * byRow(pa, pb)
	}
}

// directCmp compares rows of a column read directly that has no nulls: one closure, no
// null or index checks.
func directCmp(c column.Column, sign int) rowCmp {
	switch col := c.(type) {
	case *column.Strings:
		ranks := col.Ranks()
		return func(a, b int32) int {
			return sign * cmp.Compare(ranks[col.Codes.At(int(a))], ranks[col.Codes.At(int(b))])
		}
	case *column.Int64s:
		return func(a, b int32) int { return sign * cmp.Compare(col.Vals[a], col.Vals[b]) }
	case *column.Float64s:
		return func(a, b int32) int { return sign * cmp.Compare(col.Vals[a], col.Vals[b]) }
	case *column.Bools:
		return func(a, b int32) int { return sign * cmp.Compare(b2u(col.Vals[a]), b2u(col.Vals[b])) }
	}
	panic("exec: unknown column type")
}

// chain orders by the keys in turn, then by row number, so the order is total and ties
// keep row order.
func chain(keys []rowCmp) rowCmp {
	if len(keys) == 1 {
		k := keys[0]
		return func(a, b int32) int {
			if c := k(a, b); c != 0 {
				return c
			}
			return cmp.Compare(a, b)
		}
	}
	return func(a, b int32) int {
		for _, k := range keys {
			if c := k(a, b); c != 0 {
				return c
			}
		}
		return cmp.Compare(a, b)
	}
}

// sortTop orders sel by less and returns its first limit entries (all when limit >=
// len(sel)). When limit is small against len(sel) it keeps a bounded heap of the best
// limit rows instead of sorting everything: O(n log limit).
func sortTop(sel []int32, order rowCmp, limit int) []int32 {
	if limit <= 0 {
		return nil
	}
	if limit >= len(sel) || limit > len(sel)/8 {
		slices.SortFunc(sel, order)
		return sel[:min(limit, len(sel))]
	}
	h := &topHeap{rows: make([]int32, 0, limit), order: order}
	for _, r := range sel {
		if len(h.rows) < limit {
			heap.Push(h, r)
		} else if order(r, h.rows[0]) < 0 {
			h.rows[0] = r
			heap.Fix(h, 0)
		}
	}
	slices.SortFunc(h.rows, order)
	return h.rows
}

// topHeap is a max-heap under order: the worst kept row is at the top.
type topHeap struct {
	rows  []int32
	order rowCmp
}

func (h *topHeap) Len() int           { return len(h.rows) }
func (h *topHeap) Less(i, j int) bool { return h.order(h.rows[i], h.rows[j]) > 0 }
func (h *topHeap) Swap(i, j int)      { h.rows[i], h.rows[j] = h.rows[j], h.rows[i] }
func (h *topHeap) Push(x any)         { h.rows = append(h.rows, x.(int32)) }
func (h *topHeap) Pop() any {
	x := h.rows[len(h.rows)-1]
	h.rows = h.rows[:len(h.rows)-1]
	return x
}

// compareValues orders two values of one column: nulls last whatever desc says.
func compareValues(a, b query.Value, desc bool) int {
	switch {
	case a.Null && b.Null:
		return 0
	case a.Null:
		return 1
	case b.Null:
		return -1
	}
	var c int
	switch a.Type {
	case query.TypeString:
		c = cmp.Compare(a.Str, b.Str)
	case query.TypeFloat:
		c = cmp.Compare(a.Float, b.Float)
	case query.TypeBoolean:
		c = cmp.Compare(b2u(a.Bool), b2u(b.Bool))
	default:
		c = cmp.Compare(a.Int, b.Int)
	}
	if desc {
		return -c
	}
	return c
}
