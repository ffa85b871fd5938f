package exec

import (
	"encoding/binary"
	"math"
	"math/bits"
	"runtime"
	"sync"

	"github.com/kmkit/kmkit/query/column"
)

// keyPart reads one column of a grouping key as a uint64 that is equal for equal values:
// the dictionary code of a string (codes are unique per value), the bits of an integer or
// float (-0 folded into 0), 0 or 1 for a boolean. null reports a null cell.
type keyPart struct {
	ref   ref
	nulls column.Bitmap
	get   func(r int32) uint64
	// card is the number of digits of the part when it is small, else 0: the digit of a
	// cell is its part minus offset, and card-1 is the digit of null. Strings have a digit
	// per dictionary code, booleans two, integer-like columns one per value of their range.
	card   int
	offset int64
}

func newKeyPart(c ref) keyPart {
	k := keyPart{ref: c, nulls: nullsOf(c.col)}
	switch col := c.col.(type) {
	case *column.Strings:
		k.get = func(r int32) uint64 { return uint64(col.Codes.At(int(r))) }
		k.card = len(col.Dict) + 1
	case *column.Int64s:
		k.get = func(r int32) uint64 { return uint64(col.Vals[r]) }
		if lo, hi, ok := col.Range(); ok && hi-lo >= 0 && hi-lo < denseLimit {
			k.card, k.offset = int(hi-lo)+2, lo
		} else if !ok {
			k.card = 1 // only nulls
		}
	case *column.Float64s:
		k.get = func(r int32) uint64 {
			v := col.Vals[r]
			if v == 0 {
				v = 0 // -0 groups with 0
			}
			if v != v {
				return math.Float64bits(math.NaN())
			}
			return math.Float64bits(v)
		}
	case *column.Bools:
		k.get = func(r int32) uint64 { return b2u(col.Vals[r]) }
		k.card = 3
	}
	return k
}

// part returns the key part of frame row r and whether the cell is null.
func (k *keyPart) part(r int32) (uint64, bool) {
	cr := k.ref.row(r)
	if cr < 0 || (k.nulls != nil && k.nulls.Get(int(cr))) {
		return 0, true
	}
	return k.get(cr), false
}

// mix sets keys[i] = keys[i]*radix + digit for each row sel[i], where the digit of a null
// cell is card-1; card must be set. A radix of 0 sets the keys to the digits. Dictionary
// columns read directly are the fast path.
func (k *keyPart) mix(keys []int32, sel []int32, radix int32) {
	card := int32(k.card)
	if col, ok := k.ref.col.(*column.Strings); ok && k.ref.index == nil {
		switch c := col.Codes; {
		case c.U8 != nil:
			mixCodes(keys, sel, c.U8, radix, col.Nulls, card-1)
		case c.U16 != nil:
			mixCodes(keys, sel, c.U16, radix, col.Nulls, card-1)
		default:
			mixCodes(keys, sel, c.U32, radix, col.Nulls, card-1)
		}
		return
	}
	if col, ok := k.ref.col.(*column.Strings); ok {
		// A dictionary column read through a join index (a parent's column).
		switch c := col.Codes; {
		case c.U8 != nil:
			mixCodesThrough(keys, sel, k.ref.index, c.U8, radix, col.Nulls, card-1)
		case c.U16 != nil:
			mixCodesThrough(keys, sel, k.ref.index, c.U16, radix, col.Nulls, card-1)
		default:
			mixCodesThrough(keys, sel, k.ref.index, c.U32, radix, col.Nulls, card-1)
		}
		return
	}
	if col, ok := k.ref.col.(*column.Int64s); ok && k.ref.index == nil && col.Nulls == nil {
		for i, r := range sel {
			keys[i] = keys[i]*radix + int32(col.Vals[r]-k.offset)
		}
		return
	}
	for i, r := range sel {
		v, null := k.part(r)
		d := int32(int64(v) - k.offset)
		if null {
			d = card - 1
		}
		keys[i] = keys[i]*radix + d
	}
}

// mixCodes is mix for the dictionary codes of a column read directly: keys[i] =
// keys[i]*radix + codes[sel[i]], or + nullDigit where nulls (nil: none) has the row.
func mixCodes[T column.Code](keys, sel []int32, codes []T, radix int32, nulls column.Bitmap, nullDigit int32) {
	if nulls == nil {
		for i, r := range sel {
			keys[i] = keys[i]*radix + int32(codes[r])
		}
		return
	}
	for i, r := range sel {
		d := int32(codes[r])
		if nulls.Get(int(r)) {
			d = nullDigit
		}
		keys[i] = keys[i]*radix + d
	}
}

// mixCodesThrough is mixCodes for a column read through a join index: the codes are
// gathered through index, and a row without a parent (-1) or a null cell takes nullDigit.
func mixCodesThrough[T column.Code](keys, sel, index []int32, codes []T, radix int32, nulls column.Bitmap, nullDigit int32) {
	for i, r := range sel {
		d := nullDigit
		if cr := index[r]; cr >= 0 && (nulls == nil || !nulls.Get(int(cr))) {
			d = int32(codes[cr])
		}
		keys[i] = keys[i]*radix + d
	}
}

// mixCodeRange sets keys[i] = keys[i]*radix + codes[i].
func mixCodeRange[T column.Code](keys []int32, codes []T, radix int32) {
	codes = codes[:len(keys)]
	for i, c := range codes {
		keys[i] = keys[i]*radix + int32(c)
	}
}

// mixRange is mix for the rows lo..lo+len(keys)-1 of a column read directly, dictionary
// codes or integers without nulls, with no vector of row numbers; it reports false, and
// does nothing, for any other column.
func (k *keyPart) mixRange(keys []int32, lo int, radix int32) bool {
	if k.ref.index != nil {
		return false
	}
	switch col := k.ref.col.(type) {
	case *column.Strings:
		if col.Nulls != nil {
			return false
		}
		switch c, hi := col.Codes, lo+len(keys); {
		case c.U8 != nil:
			mixCodeRange(keys, c.U8[lo:hi], radix)
		case c.U16 != nil:
			mixCodeRange(keys, c.U16[lo:hi], radix)
		default:
			mixCodeRange(keys, c.U32[lo:hi], radix)
		}
		return true
	case *column.Int64s:
		if col.Nulls != nil {
			return false
		}
		vals := col.Vals[lo : lo+len(keys)]
		for i, v := range vals {
			keys[i] = keys[i]*radix + int32(v-k.offset)
		}
		return true
	}
	return false
}

// denseLimit bounds the product of key cardinalities for which grouping uses an array
// indexed by the combined key instead of a hash map.
const denseLimit = 1 << 22

// groupRows gives each row of sel a group id, numbering groups in order of first
// appearance in sel; equal keys (nulls equal to each other) share a group. A nil sel
// stands for every row 0..n-1, in order. It returns the group id of each entry of sel and
// the sel position of each group's first row. st may stop it between blocks of rows and
// within the hash-map passes. Its buffers (the group ids and the first positions returned
// among them) are a's: a run of many groups (a distinct page of 50,000 pairs) takes them
// from the scratch instead of growing a slice, whose fresh pages cost a fault each in
// every run.
//
// On the dense path (every part small) the only vector of a row each it writes is the
// group ids: the combined keys are written there a block at a time (with a nil sel, the
// block's row numbers are a small buffer's, or none for columns read directly), then
// numbered in place. A first request finds none of its buffers in the processor's
// caches, and every vector written costs it a pass to memory.
func groupRows(parts []keyPart, sel []int32, n int, st *stop, a *arena) (gid []int32, first []int32) {
	if sel != nil {
		n = len(sel)
	}
	gid = a.int32s(n)
	if len(parts) == 0 {
		clear(gid)
		if n > 0 {
			first = []int32{0}
		}
		return gid, first
	}
	dense := denseKeys(parts)
	if dense == 0 {
		if sel == nil {
			sel = rowRangeIn(a, 0, n)
		}
		return gid, groupHashed(parts, sel, gid, st, a)
	}
	// Every part is small: combine them in mixed radix, null as the last digit, and
	// number the combined keys in order of first appearance: the keys go where the ids
	// will, and are numbered there in place.
	first = denseFirsts(parts, sel, n, dense, gid, st, a)
	ids := a.int32s(dense) // read only at the keys present, each set below
	for id, f := range first {
		ids[gid[f]] = int32(id)
	}
	inSplits(n, splits(n, dense), st, func(_, b, e int) {
		keys := gid[b:e]
		for i, k := range keys {
			keys[i] = ids[k]
		}
	})
	return gid, first
}

// groupHashed is groupRows for keys too large to index an array by: it numbers the keys
// of the rows of sel in a hash map, writing each row's group id to gid, and returns the
// positions of each group's first row.
func groupHashed(parts []keyPart, sel, gid []int32, st *stop, a *arena) (first []int32) {
	first = a.int32s(len(sel))[:0] // a group per row at most: no growth
	if len(parts) <= 3 {
		// The parts and a null mask in a fixed array key.
		ids := make(map[[4]uint64]int32)
		for i, r := range sel {
			if i&1023 == 0 {
				st.check(1024)
			}
			var key [4]uint64
			for j, p := range parts {
				v, null := p.part(r)
				if null {
					key[3] |= 1 << j
				} else {
					key[j] = v
				}
			}
			id, ok := ids[key]
			if !ok {
				id = int32(len(first))
				ids[key] = id
				first = append(first, int32(i))
			}
			gid[i] = id
		}
		return first
	}
	// Any number of parts: their bytes and null flags as a string key.
	ids := make(map[string]int32)
	buf := make([]byte, 9*len(parts))
	for i, r := range sel {
		if i&1023 == 0 {
			st.check(1024)
		}
		putKey(buf, parts, r)
		id, ok := ids[string(buf)]
		if !ok {
			id = int32(len(first))
			ids[string(buf)] = id
			first = append(first, int32(i))
		}
		gid[i] = id
	}
	return first
}

// blockRows returns the rows sel[b:e], or, with a nil sel (every row), the numbers
// b..e-1 written into buf (at least e-b long).
func blockRows(sel []int32, b, e int, buf []int32) []int32 {
	if sel != nil {
		return sel[b:e]
	}
	rows := buf[:e-b]
	for i := range rows {
		rows[i] = int32(b + i)
	}
	return rows
}

// blockKeys writes the combined dense key of each row of the block b..e of sel (nil:
// every row, so the block's rows are b..e-1) to keys (at least e-b long) and returns
// them: every part's digit in mixed radix, the first part's most significant. rowBuf (at
// least e-b long, or nil with a sel) holds the numbers b..e-1 for the parts that read
// through them; a column read directly is read as a range.
func blockKeys(parts []keyPart, sel []int32, b, e int, rowBuf, keys []int32) []int32 {
	keys = keys[:e-b]
	var rows []int32
	for i, p := range parts {
		radix := int32(p.card)
		if i == 0 {
			radix = 0 // the first part sets the keys: no clearing pass
		}
		if sel == nil && p.mixRange(keys, b, radix) {
			continue
		}
		if rows == nil {
			rows = blockRows(sel, b, e, rowBuf)
		}
		p.mix(keys, rows, radix)
	}
	return keys
}

// putKey writes the key of row r, each part's null flag and bytes, into buf (9 bytes a
// part).
func putKey(buf []byte, parts []keyPart, r int32) {
	for j, p := range parts {
		v, null := p.part(r)
		if null {
			buf[9*j] = 1
			v = 0
		} else {
			buf[9*j] = 0
		}
		binary.LittleEndian.PutUint64(buf[9*j+1:], v)
	}
}

// denseKeys is the number of combined keys of parts when every part is small (see
// keyPart.card) and their product at most denseLimit, else 0.
func denseKeys(parts []keyPart) int {
	dense := 1
	for _, p := range parts {
		if p.card == 0 || dense > denseLimit/p.card {
			return 0
		}
		dense *= p.card
	}
	return dense
}

// mergeFirsts returns the first positions of the keys 0..dense-1 that chunks hold
// (chunkFirst[c][k]: the first position of key k in chunk c, or -1; chunks in order;
// positions below n), ascending: a key's first row is in the first chunk that holds it,
// and ordering the keys by that position numbers them as a sequential pass would. The
// positions are ordered by marking them in a bitmap over 0..n-1 and reading it in order
// (a distinct page of 50,000 pairs among a million rows: a pass over 128 KB where
// sorting took 3 ms). Its buffers are a's.
func mergeFirsts(chunkFirst [][]int32, dense, n int, a *arena) []int32 {
	marks := a.zeroed((n + 31) / 32) // bit f%32 of word f/32: position f is a first
	count := 0
	for k := range dense {
		for _, cf := range chunkFirst {
			if f := cf[k]; f >= 0 {
				marks[f>>5] |= 1 << (f & 31)
				count++
				break
			}
		}
	}
	first := a.int32s(count)[:0] // sized exactly: no growth
	for w, m := range marks {
		for m != 0 {
			first = append(first, int32(w<<5+bits.TrailingZeros32(uint32(m))))
			m &= m - 1
		}
	}
	return first
}

// firstsBlock is the rows a dense grouping pass (groupRows, groupFirsts, firstsUpTo)
// combines at a time: their keys and row numbers stay in the core's cache.
const firstsBlock = 1 << 13

// groupFirsts returns the positions in sel of the first row of each distinct key of
// parts, ascending (groupRows' first, without the group ids: what a distinct page needs);
// a nil sel stands for every row 0..n-1, in order. On the dense path it combines the keys
// a block of rows at a time in small buffers (with a nil sel, the block's rows too), so
// that a distinct of every row of a million writes no vector of a million row numbers,
// keys or group ids: on caches that hold none of it (a first request) that traffic cost
// more than the keys' columns themselves. Its buffers are a's.
func groupFirsts(parts []keyPart, sel []int32, n int, st *stop, a *arena) []int32 {
	dense := denseKeys(parts)
	if len(parts) == 0 || dense == 0 {
		_, first := groupRows(parts, sel, n, st, a)
		return first
	}
	return denseFirsts(parts, sel, n, dense, nil, st, a)
}

// denseFirsts is groupFirsts for parts whose combined keys are fewer than dense (at
// least 1). With keys (as long as the rows) it also leaves each row's combined key
// there, else it keeps each block's in a buffer of its own.
func denseFirsts(parts []keyPart, sel []int32, n, dense int, keys []int32, st *stop, a *arena) []int32 {
	if sel != nil {
		n = len(sel)
	}
	nc := splits(n, dense)
	chunkFirst := make([][]int32, nc)
	keyBlocks := make([][]int32, nc)
	rowBlocks := make([][]int32, nc)
	for c := range nc { // taken here: an arena is one goroutine's
		chunkFirst[c] = a.int32s(dense)
		for i := range chunkFirst[c] {
			chunkFirst[c][i] = -1
		}
		if keys == nil {
			keyBlocks[c] = a.int32s(firstsBlock)
		}
		if sel == nil {
			rowBlocks[c] = a.int32s(firstsBlock)
		}
	}
	inSplits(n, nc, st, func(c, b, e int) {
		kb := keyBlocks[c]
		if keys != nil {
			kb = keys[b:e]
		}
		f := chunkFirst[c]
		for i, k := range blockKeys(parts, sel, b, e, rowBlocks[c], kb) {
			if f[k] < 0 {
				f[k] = int32(b + i)
			}
		}
	})
	return mergeFirsts(chunkFirst, dense, n, a)
}

// splits is the number of contiguous chunks a dense pass over n rows with dense keys
// runs in, each on a goroutine of its own: one per core (see chunks) when the rows are
// many and the keys fewer than the rows (each chunk passes over the key range), else 1.
func splits(n, dense int) int {
	if n >= parallelRows && dense <= n && chunks() > 1 {
		return chunks()
	}
	return 1
}

// inSplits calls f(c, b, e) for the blocks b..e of at most firstsBlock rows of the
// range 0..n in nc contiguous chunks (c numbers the chunk), in order within a chunk,
// the chunks on goroutines of their own when there are several. With one chunk, st may
// stop it between blocks (a stop is one goroutine's).
func inSplits(n, nc int, st *stop, f func(c, b, e int)) {
	chunk := func(c, lo, hi int) {
		for b := lo; b < hi; b += firstsBlock {
			e := min(b+firstsBlock, hi)
			f(c, b, e)
			if nc == 1 {
				st.check(e - b)
			}
		}
	}
	if nc == 1 {
		chunk(0, 0, n)
		return
	}
	inChunks(n, nc, chunk)
}

// firstsUpTo returns the positions in sel of the first row of each of the first want
// distinct keys of parts, ascending (what groupFirsts returns, cut at want): the first
// page of a distinct request without a count is found among the first rows, so it walks
// sel from the start, a block at a time, and stops when it has want keys. A nil sel
// stands for every row 0..n-1. It gives up (false) when the keys it found in
// earlyFirstsRows rows (or 64 per key wanted, if more) are fewer than want: a grouping
// pass over every row then costs little more than the walk did. A walk that reaches the
// end of sel returns every key (fewer than want). Its buffers are a's.
func firstsUpTo(parts []keyPart, sel []int32, n, want int, st *stop, a *arena) ([]int32, bool) {
	if sel != nil {
		n = len(sel)
	}
	limit := max(earlyFirstsRows, 64*want)
	if len(parts) == 0 || limit >= n/2 {
		return nil, false
	}
	dense := denseKeys(parts)
	var seen []int32 // dense: bit k%32 of word k/32 is set once key k is found
	var seenKeys map[string]struct{}
	var buf []byte
	if dense > 0 {
		seen = a.zeroed((dense + 31) / 32)
	} else {
		seenKeys = make(map[string]struct{}, want)
		buf = make([]byte, 9*len(parts))
	}
	first := make([]int32, 0, want)
	keys, rowBlock := a.int32s(firstsBlock), a.int32s(firstsBlock)
	for b := 0; b < n; b += firstsBlock {
		if b >= limit {
			return nil, false
		}
		e := min(b+firstsBlock, n)
		if dense > 0 {
			for i, k := range blockKeys(parts, sel, b, e, rowBlock, keys) {
				if bit := int32(1) << (k & 31); seen[k>>5]&bit == 0 {
					seen[k>>5] |= bit
					if first = append(first, int32(b+i)); len(first) == want {
						return first, true
					}
				}
			}
		} else {
			for i, r := range blockRows(sel, b, e, rowBlock) {
				putKey(buf, parts, r)
				if _, ok := seenKeys[string(buf)]; !ok {
					seenKeys[string(buf)] = struct{}{}
					if first = append(first, int32(b+i)); len(first) == want {
						return first, true
					}
				}
			}
		}
		st.check(e - b)
	}
	return first, true
}

// earlyFirstsRows is the number of rows firstsUpTo walks at least before it gives up.
var earlyFirstsRows = 1 << 16

// parallelRows is the number of rows from which groupRows splits the dense path over the
// cores.
var parallelRows = 1 << 16

// chunks is the number of goroutines a pass over rows splits into: one per core, at
// most 8.
func chunks() int { return min(runtime.GOMAXPROCS(0), 8) }

// inChunks calls f on n contiguous chunks of the range 0..rows, each on a goroutine of
// its own (c numbers the chunk), and returns when every call has.
func inChunks(rows, n int, f func(c, lo, hi int)) {
	var wg sync.WaitGroup
	for c := range n {
		wg.Go(func() { f(c, rows*c/n, rows*(c+1)/n) })
	}
	wg.Wait()
}

// groupIDs are the group of each entry of a grouping (groups, pairs): written out as a
// vector of an entry each, or computed a block of entries at a time from the entries'
// combined dense keys (keyed). A KPI grouping of every row of a million writes no vector
// of a million ids then: each aggregate combines the keys of a block in a small buffer
// and reads each key's group from a table of the keys present. On caches that hold none
// of the data (a first request) the vector's passes (written, renumbered, read by each
// aggregate: 4 MB each at a million rows) cost more than combining the keys again, which
// reads the key columns (a byte a row for most dictionaries).
type groupIDs struct {
	vec   []int32   // written out: vec[i] is the group of entry i (keyed false)
	keyed bool      // computed: the group of entry i is byKey[the combined key of tuple row i]
	count int       // keyed: the entries
	parts []keyPart // keyed: the key's parts (none: every entry is in group 0)
	byKey []int32   // keyed: the group of each combined key present
}

// writtenIDs returns the groupIDs of the vector ids.
func writtenIDs(ids []int32) *groupIDs { return &groupIDs{vec: ids} }

// len is the number of entries.
func (g *groupIDs) len() int {
	if g.keyed {
		return g.count
	}
	return len(g.vec)
}

// blocks calls f with the group ids of the entries lo..lo+len(ids)-1, for consecutive
// blocks that cover every entry, in order: the written vector in one block, computed ids
// a block of firstsBlock entries at a time in a buffer of a's (f must not keep it).
func (g *groupIDs) blocks(a *arena, f func(lo int, ids []int32)) {
	if !g.keyed {
		f(0, g.vec)
		return
	}
	buf := a.int32s(firstsBlock)
	if len(g.parts) == 0 {
		clear(buf)
		for b := 0; b < g.count; b += firstsBlock {
			f(b, buf[:min(firstsBlock, g.count-b)])
		}
		return
	}
	if col, ok := g.parts[0].ref.col.(*column.Strings); ok && len(g.parts) == 1 && g.parts[0].ref.index == nil && col.Nulls == nil {
		// One dictionary column read directly: a code is its key.
		switch c := col.Codes; {
		case c.U8 != nil:
			codeBlocks(c.U8[:g.count], g.byKey, buf, f)
		case c.U16 != nil:
			codeBlocks(c.U16[:g.count], g.byKey, buf, f)
		default:
			codeBlocks(c.U32[:g.count], g.byKey, buf, f)
		}
		return
	}
	rowBuf := a.int32s(firstsBlock)
	for b := 0; b < g.count; b += firstsBlock {
		keys := blockKeys(g.parts, nil, b, min(b+firstsBlock, g.count), rowBuf, buf)
		for i, k := range keys {
			keys[i] = g.byKey[k]
		}
		f(b, keys)
	}
}

// codeBlocks is groupIDs.blocks for a key of one dictionary column read directly
// without nulls, codes: the group of entry i is byKey[codes[i]].
func codeBlocks[T column.Code](codes []T, byKey, buf []int32, f func(lo int, ids []int32)) {
	for b := 0; b < len(codes); b += firstsBlock {
		cs := codes[b:min(b+firstsBlock, len(codes))]
		ids := buf[:len(cs)]
		for i, c := range cs {
			ids[i] = byKey[c]
		}
		f(b, ids)
	}
}

// keyedLimit bounds the combined keys of a grouping whose ids are computed (groupIDs
// keyed): its table of a group per key (256 KB) stays in a core's cache.
const keyedLimit = 1 << 16
