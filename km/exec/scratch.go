package exec

import (
	"math/bits"
	"sync"
	"unsafe"

	"github.com/kmkit/kmkit/query/column"
)

// scratch keeps the large int32 buffers runs need for a moment (selection vectors, group
// ids, grouping keys, the dense key table) between runs, so that a heavy request does not
// allocate 10-30 MB afresh. Fresh memory costs a page fault per 4 KiB page on first touch
// (about 1,000 per 4 MB buffer), and the runtime hands idle heap back to the operating
// system after a few minutes, so without reuse the first request after a start or a pause
// paid those faults again; buffers kept here stay reachable, so the runtime never returns
// them, and NewSource's Warm touches them before the first request.
//
// Buffers come in power-of-two size classes (at most twice the size asked for; pages of
// the unused tail are never touched). The scratch keeps at most maxBytes of free buffers;
// beyond that a returned buffer is left to the garbage collector. Safe for concurrent use.
type scratch struct {
	mu       sync.Mutex
	free     [32][][]int32 // by class k: buffers of capacity 1<<k
	bytes    int           // bytes of the free buffers
	maxBytes int
}

// minScratch is the smallest buffer (in int32s) worth keeping: below it an allocation is
// cheap and its pages are likely resident already.
var minScratch = 1 << 12

// class returns the size class of a buffer of n int32s: the least k with 1<<k >= n.
func class(n int) int { return bits.Len(uint(n - 1)) }

// take returns a buffer of length n, from the free buffers when one of n's class is there.
// Its contents are left over from earlier runs: the caller writes every element it reads.
func (s *scratch) take(n int) []int32 {
	if s == nil || n < minScratch || class(n) >= len(s.free) {
		return make([]int32, n)
	}
	k := class(n)
	s.mu.Lock()
	if free := s.free[k]; len(free) > 0 {
		b := free[len(free)-1]
		free[len(free)-1] = nil
		s.free[k] = free[:len(free)-1]
		s.bytes -= 4 * cap(b)
		s.mu.Unlock()
		return b[:n]
	}
	s.mu.Unlock()
	return make([]int32, n, 1<<k)
}

// give returns b, which no one reads any more, to the free buffers.
func (s *scratch) give(b []int32) {
	c := cap(b)
	if s == nil || c < minScratch || c&(c-1) != 0 {
		return // not one of take's buffers
	}
	k := class(c)
	if k >= len(s.free) {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.bytes+4*c > s.maxBytes {
		return
	}
	s.free[k] = append(s.free[k], b[:0])
	s.bytes += 4 * c
}

// arena is one run's loan from a scratch: what it takes goes back at release, when the
// run has its result (which never points into the buffers). A nil arena allocates.
// An arena is used by one goroutine.
type arena struct {
	s    *scratch
	held [][]int32
}

// int32s returns a buffer of n int32s whose contents are undefined.
func (a *arena) int32s(n int) []int32 {
	if a == nil {
		return make([]int32, n)
	}
	b := a.s.take(n)
	if cap(b) >= minScratch {
		a.held = append(a.held, b)
	}
	return b
}

// zeroed returns a buffer of n zeros.
func (a *arena) zeroed(n int) []int32 {
	b := a.int32s(n)
	clear(b)
	return b
}

// zeroedBytes returns a buffer of n zero bytes: the bytes of an int32 buffer, so that
// byte vectors as long as a table (a search's scores) come from the scratch too.
func (a *arena) zeroedBytes(n int) []uint8 {
	if n == 0 {
		return nil
	}
	b := a.int32s((n + 3) / 4)
	out := unsafe.Slice((*uint8)(unsafe.Pointer(unsafe.SliceData(b))), n)
	clear(out)
	return out
}

// release gives every buffer taken back to the scratch.
func (a *arena) release() {
	if a == nil {
		return
	}
	for i, b := range a.held {
		a.s.give(b)
		a.held[i] = nil
	}
	a.held = a.held[:0]
}

// The scratch's bounds, in buffers of a table's rows: warmRuns buffers of each table's
// size class are touched by Warm, enough for most runs over that table (a KPI request
// grouping its own rows takes four: the grain rows, the tuples, their group ids and their
// keys; through a parent, or with a count distinct's per-group bitmaps, one more); at most
// maxRuns of the largest table's class are kept in all, or what Warm touches if that is
// more, and beyond either spareRuns of the largest class more, for the buffers of sizes
// no table has (a filtered selection, the key tables of a grouping or a distinct, the
// first rows of its groups), which a scratch filled by Warm would otherwise drop after
// every run, so that each run took them from fresh memory. Kept buffers are resident
// memory: 20 bytes a row of each table size warmed, 8 bytes a row of the largest beyond
// that once runs have used buffers of other sizes (32 bytes a row of the largest at most
// when Warm touches less than maxRuns of it).
const (
	warmRuns  = 5
	maxRuns   = 6
	spareRuns = 2
)

// newScratch returns the scratch of a Source over tables.
func newScratch(tables map[string]*column.Table) *scratch {
	largest := 0
	classes := map[int]bool{} // the size classes of the tables, which Warm fills
	for _, t := range tables {
		largest = max(largest, t.Rows())
		classes[class(max(t.Rows(), 1))] = true
	}
	if largest < minScratch {
		return nil // no buffer worth keeping: runs allocate
	}
	warmed := 0
	for k := range classes {
		warmed += warmRuns * 4 << k
	}
	// Room for what Warm touches, so that it does not touch buffers only to drop them,
	// and for buffers of other sizes beside them.
	return &scratch{maxBytes: max(maxRuns*4<<class(largest), warmed) + spareRuns*4<<class(largest)}
}

// warm takes count buffers of n int32s, writes every element (so that their pages are
// resident: the operating system maps a page on its first write), and keeps them.
func (s *scratch) warm(n, count int) {
	if s == nil || n < minScratch {
		return
	}
	a := &arena{s: s}
	for range count {
		clear(a.int32s(n))
	}
	a.release()
}
