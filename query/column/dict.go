package column

import "unsafe"

// dictBuilder assigns codes to strings in order of first appearance. While the values
// come in strictly ascending byte order (ids of a file sorted by its key), a value greater
// than the last one is new without a lookup; the map is built at the first value out of
// order. The values are kept in blocks that are filled and never copied (a slice grown by
// append would copy itself at each growth, leaving garbage of several times its final
// size), then copied once into a slice of their number. New values are copied into shared
// blocks of memory, not one allocation each (values above a quarter of a block get their
// own).
type dictBuilder struct {
	blocks [][]string        // the values in order of their codes
	n      int               // the values in blocks
	top    string            // the last value, while the values ascend
	lookup map[string]uint32 // nil while the values ascend
	arena  []byte
}

// The blocks of values start at firstDictBlock values and double up to maxDictBlock, so
// that a small column does not hold a large block.
const (
	firstDictBlock = 16
	maxDictBlock   = 64 << 10
)

// arenaBlock is the size of the blocks dictionary strings are copied into.
const arenaBlock = 64 << 10

// code returns the code of b, adding it to the dictionary when it is new.
func (d *dictBuilder) code(b []byte) uint32 {
	if d.lookup == nil {
		if d.n == 0 || string(b) > d.top {
			d.top = d.clone(b)
			return d.add(d.top)
		}
		if string(b) == d.top {
			return uint32(d.n - 1)
		}
		d.lookup = make(map[string]uint32, 2*d.n)
		code := uint32(0)
		for _, block := range d.blocks {
			for _, s := range block {
				d.lookup[s] = code
				code++
			}
		}
	}
	if code, ok := d.lookup[string(b)]; ok {
		return code
	}
	s := d.clone(b)
	code := d.add(s)
	d.lookup[s] = code
	return code
}

// reserve sizes the dictionary for n values, before the first: a dictionary of exactly n
// values then takes one allocation and no copy.
func (d *dictBuilder) reserve(n int) {
	d.blocks = [][]string{make([]string, 0, n)}
}

// add appends s to the values and returns its code.
func (d *dictBuilder) add(s string) uint32 {
	k := len(d.blocks)
	if k == 0 || len(d.blocks[k-1]) == cap(d.blocks[k-1]) {
		size := firstDictBlock
		if k > 0 {
			size = max(firstDictBlock, min(2*cap(d.blocks[k-1]), maxDictBlock))
		}
		d.blocks = append(d.blocks, make([]string, 0, size))
		k++
	}
	d.blocks[k-1] = append(d.blocks[k-1], s)
	d.n++
	return uint32(d.n - 1)
}

// values returns the dictionary: the values in the order of their codes, in a slice
// without spare capacity worth returning (nil when there are none).
func (d *dictBuilder) values() []string {
	switch len(d.blocks) {
	case 0:
		return nil
	case 1:
		return trim(d.blocks[0])
	}
	dict := make([]string, 0, d.n)
	for _, block := range d.blocks {
		dict = append(dict, block...)
	}
	return dict
}

// clone copies b into the current block and returns it as a string. Blocks start small
// and double up to arenaBlock, so that a small column does not hold a large block.
func (d *dictBuilder) clone(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	if cap(d.arena)-len(d.arena) < len(b) {
		size := min(arenaBlock, max(256, 2*cap(d.arena)))
		if len(b) > size/4 {
			return string(b)
		}
		d.arena = make([]byte, 0, size)
	}
	off := len(d.arena)
	d.arena = append(d.arena, b...)
	return unsafe.String(&d.arena[off], len(b))
}
