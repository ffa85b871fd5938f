package stats

import (
	"sync"
	"unsafe"
)

// scratchWords keeps the large transient buffers of the describe functions (the copy of a
// column that percentiles reorders, the keys of a radix sort, per-value counts) between
// calls, as *[]uint64. A describe of a million-row column needs 8 to 16 MB of them, and
// memory the process has not touched since the last garbage collection costs a page
// fault per 4 KiB on first write: a server at GOGC=400 collects rarely, so without reuse
// every describe of the demo's ORDERS (10 fields, 1M rows) took 9,000 faults, 45 to 60
// ms of its 65 to 125 ms.
var scratchWords sync.Pool

// minPooled is the smallest buffer (in words) worth keeping: below it an allocation is
// cheap and its pages are likely resident already.
const minPooled = 1 << 14

// takeWords returns a buffer of n words whose contents are undefined.
func takeWords(n int) []uint64 {
	if n >= minPooled {
		if p, ok := scratchWords.Get().(*[]uint64); ok {
			if cap(*p) >= n {
				return (*p)[:n]
			}
			scratchWords.Put(p) // too small for this call; kept for a smaller one
		}
	}
	return make([]uint64, n)
}

// giveWords returns b, which no one reads any more, for a later take.
func giveWords(b []uint64) {
	if cap(b) >= minPooled {
		scratchWords.Put(&b)
	}
}

// asFloats is b's memory as float64s; asInts as int64s.
func asFloats(b []uint64) []float64 {
	return unsafe.Slice((*float64)(unsafe.Pointer(unsafe.SliceData(b))), len(b))
}

func asInts(b []uint64) []int64 {
	return unsafe.Slice((*int64)(unsafe.Pointer(unsafe.SliceData(b))), len(b))
}
