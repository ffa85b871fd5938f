package column

// Code is a dictionary code at one of the widths [Codes] stores.
type Code interface{ ~uint8 | ~uint16 | ~uint32 }

// Codes are a string column's dictionary codes, one per row, at the narrowest width that
// holds every code of the dictionary: a byte a row for up to 256 values (a country, a
// status), two bytes for up to 65,536 (a material, a customer), else four. Exactly one of
// the slices holds the rows (all are nil for a column without rows). A pass over every
// row reads a quarter or half of the memory 4-byte codes took, which is most of its cost
// when the column is not in the processor's caches (a first request).
//
// Loops over many rows take the slice of the column's width (a switch on which is set)
// and run as generic functions over [Code]; a lookup of one row calls At.
type Codes struct {
	U8  []uint8
	U16 []uint16
	U32 []uint32
}

// NarrowCodes returns codes, every one below dictLen, at the narrowest width that holds
// dictLen values, in a slice of its own unless that width is 32 bits (then codes, copied
// only when their capacity exceeds their length by more than a sixteenth).
func NarrowCodes(codes []uint32, dictLen int) Codes {
	switch {
	case len(codes) == 0:
		return Codes{}
	case dictLen <= 1<<8:
		return Codes{U8: narrow[uint8](codes)}
	case dictLen <= 1<<16:
		return Codes{U16: narrow[uint16](codes)}
	}
	return Codes{U32: trim(codes)}
}

func narrow[T Code](codes []uint32) []T {
	out := make([]T, len(codes))
	for i, c := range codes {
		out[i] = T(c)
	}
	return out
}

// Len is the number of rows.
func (c Codes) Len() int { return len(c.U8) + len(c.U16) + len(c.U32) }

// At returns the code of row i.
func (c Codes) At(i int) uint32 {
	switch {
	case c.U8 != nil:
		return uint32(c.U8[i])
	case c.U16 != nil:
		return uint32(c.U16[i])
	}
	return c.U32[i]
}

// Bytes is the memory of the codes.
func (c Codes) Bytes() int { return cap(c.U8) + 2*cap(c.U16) + 4*cap(c.U32) }
