// Package column holds tables in memory by column: typed value slices with a null bitmap,
// strings dictionary-encoded, built by appending values or by loading a CSV file.
//
// Behaviours chosen where the specification is silent:
//
//   - Integer, date, datetime, timestamp and time columns share one representation, [Int64s]:
//     dates are days since 1970-01-01, instants microseconds since the Unix epoch (UTC), times
//     microseconds since midnight, as query.Value holds them.
//   - A null cell keeps the zero value in the value slice (code 0 in a string column); only
//     the null bitmap says it is null. A column without nulls has a nil bitmap.
//   - String dictionaries hold each distinct value once, in order of first appearance; codes
//     are as narrow as the dictionary allows ([Codes]: 1 byte per cell up to 256 values, 2
//     up to 65,536, else 4), plus the dictionary.
//   - Memory: Bytes counts the value slices, bitmaps and dictionaries (string headers
//     included); RawBytes counts only non-null cells (8 bytes per number or temporal value, 1
//     per boolean, the length of each string). Short strings of a large dictionary can cost
//     more than their raw size (4-byte codes); a typical record stays well under 1.5 times.
//   - In CSV, an empty cell is null whether quoted or not (encoding/csv does not tell them
//     apart), so a CSV file cannot give a string column the empty string.
//   - The CSV loader rejects NaN and infinite floats (they have no JSON form) and integers
//     outside int64; it accepts "true"/"false" only, in that spelling, for booleans.
//   - Fractions of a second, in times and date-times alike, take one digit or more (RFC
//     3339's time-secfrac; .NET and SQL Server's datetime2 write 7, Java 9) and are kept to
//     the microsecond, the unit of the values, by dropping the digits after the sixth
//     (truncation, not rounding): the value keeps every part its text shows, so
//     23:59:59.9999999 stays in its second, its day and its year (rounding would carry it
//     into the next day, and a time of day out of the day), and a date-time's parts
//     (year(T), time(T)) are the text's. Every backend stores the loader's microseconds
//     (PostgreSQL, which rounds a timestamp text it reads itself, receives integers). A
//     filter literal with digits past the microsecond lies between two microseconds (see
//     package query): a row loaded from ...:00.1234567Z holds ...:00.123456Z, which
//     "eq ...:00.123456Z" finds, and "le" or "lt" of the 7-digit text too, but not its
//     "eq": no stored value equals a text between two microseconds. Where the digits after
//     the sixth are zeros (.1234560) the text is the value, and "eq" of it finds the row.
//   - Date-times take their offset as Z or ±hh:mm (Z, +00:00 and -00:00 are one instant;
//     -02:30 is two and a half hours behind UTC) and are stored in UTC. A leap second's
//     text (23:59:60) is refused, with the file's line and column: no value holds it, and
//     reading it as the next minute would store a row's instant as a text it never had.
//   - LoadCSV reads the file whole, cuts it into chunks of about 1 MiB at record ends and
//     parses the chunks on GOMAXPROCS goroutines straight into the table's slices (numbers
//     and dates from the file's bytes, no string per cell): the newlines of the chunks bound
//     their records, so every column is allocated once, at its final size, before parsing,
//     and no slice grows by copying. String columns then get their dictionaries, one column
//     per goroutine. A dictionary needs no map while its values come in strictly ascending
//     order (ids of a file sorted by its key): the map is built at the first value out of
//     order; the values of an ascending column are counted first, so that its dictionary is
//     allocated once. Dictionary strings are copied into shared blocks (of up to 64 KiB)
//     rather than allocated one by one. A file with an error, or in a form the parallel
//     parser does not take, is read again by the sequential loader (encoding/csv), which
//     reports the error with its line: both read the same files into the same tables. A
//     [Loader] reads many files into the same memory, one after the other.
//
// Columns and tables are immutable once built and safe for concurrent use.
package column

import (
	"cmp"
	"math/bits"
	"slices"
	"sync"
	"unsafe"

	"github.com/kmkit/kmkit/query"
)

// Column is one typed column of a table. The concrete types are [*Strings], [*Int64s],
// [*Float64s] and [*Bools], and no others: the interface is sealed, so executors can switch
// on them exhaustively to read the value slices directly.
type Column interface {
	// Type is the field type of the column.
	Type() query.Type
	// Len is the number of cells.
	Len() int
	// IsNull reports whether the cell at row is null.
	IsNull(row int) bool
	// Value returns the cell at row as a query.Value.
	Value(row int) query.Value
	// Bytes is the memory the column holds: value slices, bitmap and dictionary.
	Bytes() int
	// RawBytes is the natural size of the non-null values: 8 bytes per integer, float,
	// date, datetime or time cell, 1 per boolean, the length of each string.
	RawBytes() int

	sealed()
}

func (*Strings) sealed()  {}
func (*Int64s) sealed()   {}
func (*Float64s) sealed() {}
func (*Bools) sealed()    {}

// Bitmap is a set of row numbers, one bit per row. A nil Bitmap is empty.
type Bitmap []uint64

// NewBitmap returns an empty bitmap with room for n rows.
func NewBitmap(n int) Bitmap { return make(Bitmap, (n+63)/64) }

// Get reports whether row i is in the set. Rows beyond the bitmap are not.
func (b Bitmap) Get(i int) bool {
	w := i >> 6
	return w < len(b) && b[w]&(1<<(uint(i)&63)) != 0
}

// Set adds row i; the bitmap must have room for it.
func (b Bitmap) Set(i int) { b[i>>6] |= 1 << (uint(i) & 63) }

func growBitmap(b Bitmap, n int) Bitmap {
	for len(b) < (n+63)/64 {
		b = append(b, 0)
	}
	return b
}

func bitmapBytes(b Bitmap) int { return cap(b) * 8 }

// Strings is a dictionary-encoded string column: cell i is Dict[Codes.At(i)] unless Nulls
// has i.
type Strings struct {
	Codes Codes
	Dict  []string
	Nulls Bitmap

	rankOnce sync.Once
	ranks    []uint32
}

// Type implements Column.
func (c *Strings) Type() query.Type { return query.TypeString }

// Len implements Column.
func (c *Strings) Len() int { return c.Codes.Len() }

// IsNull implements Column.
func (c *Strings) IsNull(row int) bool { return c.Nulls.Get(row) }

// Value implements Column.
func (c *Strings) Value(row int) query.Value {
	if c.Nulls.Get(row) {
		return query.Null(query.TypeString)
	}
	return query.String(c.Dict[c.Codes.At(row)])
}

// Bytes implements Column.
func (c *Strings) Bytes() int {
	n := c.Codes.Bytes() + bitmapBytes(c.Nulls) + cap(c.Dict)*int(unsafe.Sizeof(""))
	for _, s := range c.Dict {
		n += len(s)
	}
	return n
}

// RawBytes implements Column.
func (c *Strings) RawBytes() int {
	n := 0
	for i := range c.Codes.Len() {
		if !c.Nulls.Get(i) {
			n += len(c.Dict[c.Codes.At(i)])
		}
	}
	return n
}

// Ranks returns, for each dictionary code, the position of its value in byte-wise sorted
// order; comparing ranks compares the strings. It is computed once, on first use.
func (c *Strings) Ranks() []uint32 {
	c.rankOnce.Do(func() {
		order := make([]uint32, len(c.Dict))
		for i := range order {
			order[i] = uint32(i)
		}
		slices.SortFunc(order, func(a, b uint32) int { return cmp.Compare(c.Dict[a], c.Dict[b]) })
		c.ranks = make([]uint32, len(c.Dict))
		for r, code := range order {
			c.ranks[code] = uint32(r)
		}
	})
	return c.ranks
}

// Int64s is a column of integers, dates, datetimes, timestamps or times (see
// query.Value for the units).
type Int64s struct {
	T     query.Type
	Vals  []int64
	Nulls Bitmap

	rangeOnce sync.Once
	lo, hi    int64
	hasValue  bool
}

// Range returns the smallest and largest non-null value; ok is false when every cell is
// null. It is computed once, on first use.
func (c *Int64s) Range() (lo, hi int64, ok bool) {
	c.rangeOnce.Do(func() {
		for i, v := range c.Vals {
			if c.Nulls != nil && c.Nulls.Get(i) {
				continue
			}
			if !c.hasValue || v < c.lo {
				c.lo = v
			}
			if !c.hasValue || v > c.hi {
				c.hi = v
			}
			c.hasValue = true
		}
	})
	return c.lo, c.hi, c.hasValue
}

// Type implements Column.
func (c *Int64s) Type() query.Type { return c.T }

// Len implements Column.
func (c *Int64s) Len() int { return len(c.Vals) }

// IsNull implements Column.
func (c *Int64s) IsNull(row int) bool { return c.Nulls.Get(row) }

// Value implements Column.
func (c *Int64s) Value(row int) query.Value {
	if c.Nulls.Get(row) {
		return query.Null(c.T)
	}
	return query.Value{Type: c.T, Int: c.Vals[row]}
}

// Bytes implements Column.
func (c *Int64s) Bytes() int { return cap(c.Vals)*8 + bitmapBytes(c.Nulls) }

// RawBytes implements Column.
func (c *Int64s) RawBytes() int { return 8 * nonNull(len(c.Vals), c.Nulls) }

// Float64s is a column of floats.
type Float64s struct {
	Vals  []float64
	Nulls Bitmap
}

// Type implements Column.
func (c *Float64s) Type() query.Type { return query.TypeFloat }

// Len implements Column.
func (c *Float64s) Len() int { return len(c.Vals) }

// IsNull implements Column.
func (c *Float64s) IsNull(row int) bool { return c.Nulls.Get(row) }

// Value implements Column.
func (c *Float64s) Value(row int) query.Value {
	if c.Nulls.Get(row) {
		return query.Null(query.TypeFloat)
	}
	return query.Float(c.Vals[row])
}

// Bytes implements Column.
func (c *Float64s) Bytes() int { return cap(c.Vals)*8 + bitmapBytes(c.Nulls) }

// RawBytes implements Column.
func (c *Float64s) RawBytes() int { return 8 * nonNull(len(c.Vals), c.Nulls) }

// Bools is a column of booleans.
type Bools struct {
	Vals  []bool
	Nulls Bitmap
}

// Type implements Column.
func (c *Bools) Type() query.Type { return query.TypeBoolean }

// Len implements Column.
func (c *Bools) Len() int { return len(c.Vals) }

// IsNull implements Column.
func (c *Bools) IsNull(row int) bool { return c.Nulls.Get(row) }

// Value implements Column.
func (c *Bools) Value(row int) query.Value {
	if c.Nulls.Get(row) {
		return query.Null(query.TypeBoolean)
	}
	return query.Bool(c.Vals[row])
}

// Bytes implements Column.
func (c *Bools) Bytes() int { return cap(c.Vals) + bitmapBytes(c.Nulls) }

// RawBytes implements Column.
func (c *Bools) RawBytes() int { return nonNull(len(c.Vals), c.Nulls) }

func nonNull(n int, nulls Bitmap) int {
	for _, w := range nulls {
		n -= bits.OnesCount64(w)
	}
	return n
}
