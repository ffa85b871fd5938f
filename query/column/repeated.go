package column

import "github.com/kmkit/kmkit/query"

// Repeated returns a value that c holds in more than one row, nulls aside: the value of
// the first row whose value an earlier row holds too. ok is false when every non-null
// value is held once. It costs a bit per dictionary value for a string column (whose
// dictionary holds each value once), a pass for an integer-like column whose values
// ascend (keys of a file sorted by its key), a bit per value of its range when that is
// at most 64 times its rows (dense ids out of order), else a hash set of its values. NaN, never
// equal to itself, is never repeated.
func Repeated(c Column) (v query.Value, ok bool) {
	switch c := c.(type) {
	case *Strings:
		seen := NewBitmap(len(c.Dict))
		for r := range c.Codes.Len() {
			if c.Nulls.Get(r) {
				continue
			}
			code := int(c.Codes.At(r))
			if seen.Get(code) {
				return c.Value(r), true
			}
			seen.Set(code)
		}
	case *Int64s:
		if strictlyAscending(c.Vals, c.Nulls) {
			break
		}
		if lo, hi, ok := c.Range(); ok && uint64(hi-lo) < 64*uint64(len(c.Vals)) {
			// Dense values (ids 1..n out of order): a bit per value of the range, at most
			// 8 bytes a row, instead of a hash set.
			seen := NewBitmap(int(hi-lo) + 1)
			for r, v := range c.Vals {
				if c.Nulls.Get(r) {
					continue
				}
				if seen.Get(int(v - lo)) {
					return c.Value(r), true
				}
				seen.Set(int(v - lo))
			}
			break
		}
		if r, ok := repeatedRow(c.Vals, c.Nulls); ok {
			return c.Value(r), true
		}
	case *Float64s:
		if r, ok := repeatedRow(c.Vals, c.Nulls); ok {
			return c.Value(r), true
		}
	case *Bools:
		if r, ok := repeatedRow(c.Vals, c.Nulls); ok {
			return c.Value(r), true
		}
	}
	return query.Value{}, false
}

// repeatedRow returns the first row of vals, nulls aside, whose value an earlier row holds.
func repeatedRow[T comparable](vals []T, nulls Bitmap) (int, bool) {
	seen := make(map[T]struct{}, len(vals))
	for r, v := range vals {
		if nulls.Get(r) {
			continue
		}
		if _, dup := seen[v]; dup {
			return r, true
		}
		seen[v] = struct{}{}
	}
	return 0, false
}

// strictlyAscending reports whether the non-null values of vals strictly ascend.
func strictlyAscending(vals []int64, nulls Bitmap) bool {
	first := true
	var prev int64
	for r, v := range vals {
		if nulls.Get(r) {
			continue
		}
		if !first && v <= prev {
			return false
		}
		prev, first = v, false
	}
	return true
}
