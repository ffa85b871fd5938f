package exec

import (
	"cmp"
	"math"
	"math/bits"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/kmkit/kmkit/query/column"
)

// sortIndex orders the rows of a frame by one column. It is built once per frame and
// column, by the first query that walks it, and read without locks afterwards.
type sortIndex struct {
	once sync.Once
	// perm holds the frame rows by the column's value ascending (the executor's order:
	// strings byte-wise, NaN below every other float, -0 equal to 0), ties in row order,
	// nulls last.
	perm []int32
	// bounds delimit the runs of equal values in perm: run k is perm[bounds[k]:bounds[k+1]].
	// The nulls, if any, are the last run. It is nil when every non-null value is
	// distinct: run k is then perm[k] alone (see run), saving an int32 a row for keys.
	bounds []int32
	// nonNull is the number of non-null rows: perm[:nonNull] are they, perm[nonNull:] the
	// null rows.
	nonNull int
	// identity marks the index of a column whose values ascend with the row and are
	// distinct and never null (a row key): build makes the identity permutation without
	// sorting.
	identity bool
	// built is set once a table index is built: filters use it then (builtIndex), but
	// never wait for a build or start one.
	built atomic.Bool
}

// sortIndex returns the index of the frame column c named name, building it on first use:
// a base column's in the frame's table indexes when it has them (shared with every frame
// over the table), any other in the frame's own. It is safe for concurrent use:
// concurrent first users wait for one build.
func (f *Frame) sortIndex(name string, c ref) *sortIndex {
	v, ok := f.indexes.Load(name)
	if !ok {
		if c.index == nil && f.tableIndexes != nil {
			return tableSortIndex(f.tableIndexes, c.col, nil)
		}
		v, _ = f.indexes.LoadOrStore(name, &sortIndex{})
	}
	ix := v.(*sortIndex)
	ix.once.Do(func() { ix.build(f.rows, c, nil) })
	return ix
}

// tableSortIndex returns the sort index of the table column c in indexes (by column),
// building it on first use with bufs (see build); concurrent first users wait for one
// build.
func tableSortIndex(indexes *sync.Map, c column.Column, bufs *sortBufs) *sortIndex {
	v, ok := indexes.Load(c)
	if !ok {
		v, _ = indexes.LoadOrStore(c, &sortIndex{})
	}
	ix := v.(*sortIndex)
	ix.once.Do(func() {
		ix.build(c.Len(), ref{col: c}, bufs)
		ix.built.Store(true)
	})
	return ix
}

// builtIndex returns the sort index of the table column c when one has been built (by
// Source.Warm, or by an earlier query sorting by c), else nil.
func (f *Frame) builtIndex(c column.Column) *sortIndex {
	if f.tableIndexes == nil {
		return nil
	}
	v, ok := f.tableIndexes.Load(c)
	if !ok || !v.(*sortIndex).built.Load() {
		return nil
	}
	return v.(*sortIndex)
}

// equal returns the rows whose value the sought one equals, by binary search over the
// runs of non-null values: seek(row) compares the sought value with row's, as cmp.Compare
// orders them (the index's order).
func (ix *sortIndex) equal(seek func(row int32) int) []int32 {
	k, found := sort.Find(ix.valueRuns(), func(k int) int { return seek(ix.run(k)[0]) })
	if !found {
		return nil
	}
	return ix.run(k)
}

// runs is the number of runs of ix, the nulls' included.
func (ix *sortIndex) runs() int {
	if ix.bounds != nil {
		return len(ix.bounds) - 1
	}
	if ix.nonNull < len(ix.perm) {
		return ix.nonNull + 1
	}
	return ix.nonNull
}

// valueRuns is the number of runs of non-null values of ix.
func (ix *sortIndex) valueRuns() int {
	if ix.nonNull < len(ix.perm) {
		return ix.runs() - 1 // the last run holds the nulls
	}
	return ix.runs()
}

// run returns the rows of run k of ix.
func (ix *sortIndex) run(k int) []int32 {
	switch {
	case ix.bounds != nil:
		return ix.perm[ix.bounds[k]:ix.bounds[k+1]]
	case k < ix.nonNull:
		return ix.perm[k : k+1]
	}
	return ix.perm[ix.nonNull:]
}

// rowsPerSoughtValue is the fewest rows of a column per value sought by an equality or
// an in-list for the filter to seek the values' rows in a built index (a binary search
// each, some twenty reads at random) rather than scan the column.
var rowsPerSoughtValue = 2048

// seeker returns the rows of sought value i in ix, the built sort index of col: the
// column a kernel filters, or the key that column refers to (of its type).
type seeker func(ix *sortIndex, col column.Column, i int) []int32

// seekStrings seeks values in string columns.
func seekStrings(values []string) seeker {
	return func(ix *sortIndex, col column.Column, i int) []int32 {
		c, ok := col.(*column.Strings)
		if !ok {
			return nil
		}
		return ix.equal(func(row int32) int { return strings.Compare(values[i], c.Dict[c.Codes.At(int(row))]) })
	}
}

// seekInts seeks values (in the column's unit) in integer, date, instant or time columns.
func seekInts(values []int64) seeker {
	return func(ix *sortIndex, col column.Column, i int) []int32 {
		c, ok := col.(*column.Int64s)
		if !ok {
			return nil
		}
		return ix.equal(func(row int32) int { return cmp.Compare(values[i], c.Vals[row]) })
	}
}

// viaIndex returns a kernel that sets the rows of c holding one of n sought values and
// returns rule: it seeks them (seekRows) when c has rowsPerSoughtValue rows per value,
// and otherwise, or when no index serves, runs scan, which does the same by a scan. The
// rows sought hold no null where the scan's may: leafSets clears the nulls under both
// rules an equality or an in-list returns (nullsUnknown, notTrueUnknown).
func (f *Frame) viaIndex(c column.Column, n int, seek seeker, rule unknownRule, scan kernel) kernel {
	if n == 0 || n*rowsPerSoughtValue > c.Len() {
		return scan
	}
	return func(out column.Bitmap) unknownRule {
		if f.seekRows(c, n, seek, out) {
			return rule
		}
		return scan(out)
	}
}

// seekRows sets in out (and nothing else) the rows of c that hold one of n sought
// values, found by binary search in c's built sort index, or else through the
// relationship c refers by: the children of the rows of the referred key that hold the
// values, found in the key's built sort index. It reports false, out untouched, when
// neither index is built, or when a value sought is no key's (rows may still hold it:
// a reference to no row).
func (f *Frame) seekRows(c column.Column, n int, seek seeker, out column.Bitmap) bool {
	if ix := f.builtIndex(c); ix != nil {
		clear(out)
		for i := range n {
			for _, r := range seek(ix, c, i) {
				out.Set(int(r))
			}
		}
		return true
	}
	if f.referrals == nil {
		return false
	}
	v, ok := f.referrals.Load(c)
	if !ok {
		return false
	}
	ref := v.(*referral)
	kix := f.builtIndex(ref.key)
	if kix == nil {
		return false
	}
	keys := make([][]int32, n)
	for i := range n {
		if keys[i] = seek(kix, ref.key, i); len(keys[i]) == 0 {
			return false
		}
	}
	clear(out)
	ch := ref.children
	for _, run := range keys {
		for _, p := range run {
			for _, r := range ch.rows[ch.off[p]:ch.off[p+1]] {
				out.Set(int(r))
			}
		}
	}
	return true
}

// sortBufs hold the rows a build sorts, each with its column value mapped to an
// unsigned integer of the same order, as two parallel arrays (12 bytes a row, not the 16
// of a struct of both), twice: radixSort's input and its scratch.
type sortBufs struct {
	keys [2][]uint64
	rows [2][]int32
}

// build sorts the n frame rows of c by order-preserving integer keys. bufs, when not nil,
// holds the keyed rows and radixSort's scratch (grown to n rows where shorter), so that
// builds one after another (Source.Warm's) reuse them instead of each leaving 24 bytes a
// row of garbage, which a heap run at a high GOGC keeps until it has grown several times
// over.
func (ix *sortIndex) build(n int, c ref, bufs *sortBufs) {
	if ix.identity {
		ix.perm = make([]int32, n)
		for i := range ix.perm {
			ix.perm[i] = int32(i)
		}
		ix.nonNull = n // and every value distinct: no bounds
		return
	}
	nulls := nullsOf(c.col)
	var keyOf func(cr int32) uint64
	switch col := c.col.(type) {
	case *column.Strings:
		ranks := col.Ranks()
		keyOf = func(cr int32) uint64 { return uint64(ranks[col.Codes.At(int(cr))]) }
	case *column.Int64s:
		keyOf = func(cr int32) uint64 { return uint64(col.Vals[cr]) ^ 1<<63 }
	case *column.Float64s:
		keyOf = func(cr int32) uint64 { return floatKey(col.Vals[cr]) }
	case *column.Bools:
		keyOf = func(cr int32) uint64 { return b2u(col.Vals[cr]) }
	default:
		panic("exec: unknown column type")
	}
	if bufs == nil {
		bufs = new(sortBufs)
	}
	for i := range 2 {
		if cap(bufs.keys[i]) < n {
			bufs.keys[i], bufs.rows[i] = make([]uint64, 0, n), make([]int32, 0, n)
		}
	}
	keys, rows := bufs.keys[0][:0], bufs.rows[0][:0]
	var nullRows []int32
	for r := range int32(n) {
		cr := c.row(r)
		if cr < 0 || nulls.Get(int(cr)) {
			nullRows = append(nullRows, r)
			continue
		}
		keys, rows = append(keys, keyOf(cr)), append(rows, r)
	}
	keys, rows = radixSort(keys, rows, bufs.keys[1][:len(keys)], bufs.rows[1][:len(rows)])
	ix.perm = make([]int32, 0, n)
	ix.nonNull = len(rows)
	ix.perm = append(ix.perm, rows...)
	ix.perm = append(ix.perm, nullRows...)
	runs := 0 // of non-null values
	for i, k := range keys {
		if i == 0 || k != keys[i-1] {
			runs++
		}
	}
	if runs == len(keys) {
		return // every value distinct: no bounds (see run)
	}
	ix.bounds = make([]int32, 0, runs+2) // sized once: no garbage of growing it
	for i, k := range keys {
		if i == 0 || k != keys[i-1] {
			ix.bounds = append(ix.bounds, int32(i))
		}
	}
	if len(nullRows) > 0 {
		ix.bounds = append(ix.bounds, int32(len(rows)))
	}
	ix.bounds = append(ix.bounds, int32(n))
	ix.bounds = slices.Clip(ix.bounds)
}

// radixSort sorts rows by keys (parallel arrays), stably (rows come in row order, so ties
// stay in row order): a least-significant-digit radix sort on bytes, skipping the bytes
// all keys share. Short inputs use a comparison sort. bufKeys and bufRows are its
// scratch, as long as keys. It returns the sorted arrays, the input's or the scratch.
func radixSort(keys []uint64, rows []int32, bufKeys []uint64, bufRows []int32) ([]uint64, []int32) {
	if len(keys) < 256 {
		order := make([]int, len(keys))
		for i := range order {
			order[i] = i
		}
		slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(keys[a], keys[b]) })
		for i, o := range order {
			bufKeys[i], bufRows[i] = keys[o], rows[o]
		}
		return bufKeys, bufRows
	}
	var counts [8][256]int
	for _, k := range keys {
		for d := range 8 {
			counts[d][byte(k>>(8*d))]++
		}
	}
	for d := range 8 {
		c := &counts[d]
		if c[byte(keys[0]>>(8*d))] == len(keys) {
			continue // every key has this byte
		}
		pos := 0
		for i, n := range c {
			c[i] = pos
			pos += n
		}
		for i, k := range keys {
			b := byte(k >> (8 * d))
			bufKeys[c[b]], bufRows[c[b]] = k, rows[i]
			c[b]++
		}
		keys, bufKeys = bufKeys, keys
		rows, bufRows = bufRows, rows
	}
	return keys, rows
}

// floatKey maps a float to an integer in cmp.Compare's order: every NaN lowest and equal,
// -0 equal to 0.
func floatKey(v float64) uint64 {
	if v != v {
		return 0
	}
	if v == 0 {
		v = 0 // -0 too
	}
	b := math.Float64bits(v)
	if b>>63 == 1 {
		return ^b // negative: larger magnitudes lower
	}
	return b | 1<<63
}

// walk calls visit with the runs of equal values of the index in the order of a sort on
// the column (desc: values descending), each run's rows ascending, nulls last, until
// visit returns false.
func (ix *sortIndex) walk(desc bool, visit func(run []int32) bool) {
	nonNullRuns := ix.valueRuns()
	for i := range nonNullRuns {
		k := i
		if desc {
			k = nonNullRuns - 1 - i
		}
		if !visit(ix.run(k)) {
			return
		}
	}
	if ix.nonNull < len(ix.perm) {
		visit(ix.perm[ix.nonNull:])
	}
}

// maxCodeRows is the most distinct values a string column may have for codeRows to index
// it: the bitmaps then take at most as much memory as the column's codes.
const maxCodeRows = 32

// codeRowsIndex is the rows of each code of a string column, built once.
type codeRowsIndex struct {
	once   sync.Once
	byCode []column.Bitmap
}

// codeRows returns the rows of each code of col as bitmaps over its rows, building them on
// first use, or nil when col has more than maxCodeRows values. Null cells count under the
// code they hold. It is safe for concurrent use.
func (f *Frame) codeRows(col *column.Strings) []column.Bitmap {
	if len(col.Dict) > maxCodeRows {
		return nil
	}
	v, ok := f.codeIndexes.Load(col)
	if !ok {
		v, _ = f.codeIndexes.LoadOrStore(col, &codeRowsIndex{})
	}
	ix := v.(*codeRowsIndex)
	ix.once.Do(func() {
		ix.byCode = make([]column.Bitmap, len(col.Dict))
		for code := range ix.byCode {
			ix.byCode[code] = column.NewBitmap(col.Codes.Len())
		}
		switch c := col.Codes; {
		case c.U8 != nil:
			setCodeRows(ix.byCode, c.U8)
		case c.U16 != nil:
			setCodeRows(ix.byCode, c.U16)
		default:
			setCodeRows(ix.byCode, c.U32)
		}
	})
	return ix.byCode
}

// setCodeRows sets row r in byCode[codes[r]], for every row.
func setCodeRows[T column.Code](byCode []column.Bitmap, codes []T) {
	for r, c := range codes {
		byCode[c].Set(r)
	}
}

// bitmapOf returns the bitmap of the rows of sel, frame rows below n.
func bitmapOf(sel []int32, n int) column.Bitmap {
	b := column.NewBitmap(n)
	for _, r := range sel {
		b.Set(int(r))
	}
	return b
}

// popcount is the number of rows in b.
func popcount(b column.Bitmap) int {
	n := 0
	for _, w := range b {
		n += bits.OnesCount64(w)
	}
	return n
}
