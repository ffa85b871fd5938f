package exec

import (
	"math/rand/v2"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/kmkit/kmkit/query"
	"github.com/kmkit/kmkit/query/column"
)

// TestCountRows holds countRows' paths (no column, a column without nulls read directly,
// with nulls, through a join index with missing rows; with and without a condition) to
// the row-by-row definition: a row counts when it passes and its cell is not null.
func TestCountRows(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for c := range 300 {
		n := 1 + r.IntN(300)
		b := column.NewBuilder(query.TypeInteger)
		nullShare := []int{0, 2, 7}[r.IntN(3)] // 0: a column without nulls (no bitmap)
		for range n {
			if nullShare > 0 && r.IntN(nullShare) == 0 {
				b.AppendNull()
			} else {
				b.AppendInt(r.Int64N(5))
			}
		}
		col := b.Build()
		rows := n
		var c0 ref
		switch r.IntN(3) {
		case 0:
			c0 = ref{} // count(): every row
		case 1:
			c0 = ref{col: col}
		case 2:
			rows = 1 + r.IntN(300)
			index := make([]int32, rows)
			for i := range index {
				index[i] = int32(r.IntN(n+1)) - 1 // -1: no joined row
			}
			c0 = ref{col: col, index: index}
		}
		var pass column.Bitmap
		if r.IntN(2) == 0 {
			pass = column.NewBitmap(rows)
			for i := range rows {
				if r.IntN(2) == 0 {
					pass.Set(i)
				}
			}
		}
		g, gid := groups{n: 1 + r.IntN(4)}, []int32(nil)
		for i := range rows {
			if r.IntN(4) > 0 {
				g.sel = append(g.sel, int32(i))
				gid = append(gid, int32(r.IntN(g.n)))
			}
		}
		g.ids = writtenIDs(gid)
		want := make([]int64, g.n)
		for i, row := range g.sel {
			if pass != nil && !pass.Get(int(row)) {
				continue
			}
			if c0.col != nil {
				cr := c0.row(row)
				if cr < 0 || c0.col.IsNull(int(cr)) {
					continue
				}
			}
			want[gid[i]]++
		}
		if d := cmp.Diff(want, countRows(g, pass, c0)); d != "" {
			t.Fatalf("case %d (nulls %v, index %v, pass %v): (-want +got)\n%s", c, nullsOf(col) != nil, c0.index != nil, pass != nil, d)
		}
	}
}
