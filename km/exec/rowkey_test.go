package exec

import (
	"slices"
	"testing"

	"github.com/kmkit/kmkit/query/column"
)

// The row key's sort index, the identity, is the one a sort of the column builds.
func TestRowKeySortIndexIsIdentity(t *testing.T) {
	for _, n := range []int{0, 1, 5, 300} {
		vals := make([]int64, n)
		for i := range vals {
			vals[i] = int64(i) + 1
		}
		col := &column.Int64s{Vals: vals}
		f := &Frame{rows: n, refs: map[string]ref{}}
		f.addRowKey("R.#row", col)
		got := f.sortIndex("R.#row", f.refs["R.#row"])
		want := &sortIndex{}
		want.build(n, ref{col: col}, nil)
		if !slices.Equal(got.perm, want.perm) || got.runs() != want.runs() || got.nonNull != want.nonNull {
			t.Errorf("n=%d: identity %v %d runs %d, sorted %v %d runs %d", n, got.perm, got.runs(), got.nonNull, want.perm, want.runs(), want.nonNull)
		}
		var desc []int32
		got.walk(true, func(run []int32) bool { desc = append(desc, run...); return true })
		for i, r := range desc {
			if int(r) != n-1-i {
				t.Fatalf("n=%d: descending walk %v", n, desc)
			}
		}
	}
}
