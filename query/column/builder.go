package column

import (
	"fmt"
	"unsafe"

	"github.com/kmkit/kmkit/query"
)

// Builder appends the cells of one column. Use the Append method that matches its type;
// Build returns the column. The zero Builder is not usable: call [NewBuilder].
type Builder struct {
	typ    query.Type
	n      int
	nulls  Bitmap
	ints   []int64
	floats []float64
	bools  []bool
	codes  []uint32
	dict   dictBuilder
}

// NewBuilder returns a builder of a column of type t. It panics if t is not a field type
// (TypeInvalid or TypeNull), which is a programming error.
func NewBuilder(t query.Type) *Builder {
	switch t {
	case query.TypeString:
		return &Builder{typ: t}
	case query.TypeInteger, query.TypeFloat, query.TypeBoolean, query.TypeDate,
		query.TypeDateTime, query.TypeTimestamp, query.TypeTime:
		return &Builder{typ: t}
	}
	panic(fmt.Sprintf("column: NewBuilder of %v", t))
}

// Type is the type of the column being built.
func (b *Builder) Type() query.Type { return b.typ }

// Len is the number of cells appended so far.
func (b *Builder) Len() int { return b.n }

// AppendNull appends a null cell.
func (b *Builder) AppendNull() {
	b.nulls = growBitmap(b.nulls, b.n+1)
	b.nulls.Set(b.n)
	switch b.typ {
	case query.TypeString:
		b.codes = append(b.codes, 0)
	case query.TypeFloat:
		b.floats = append(b.floats, 0)
	case query.TypeBoolean:
		b.bools = append(b.bools, false)
	default:
		b.ints = append(b.ints, 0)
	}
	b.n++
}

// AppendString appends s to a string column. A value new to the dictionary is copied, so
// the column never keeps the caller's buffer (a CSV record, a request body) alive.
func (b *Builder) AppendString(s string) {
	b.codes = append(b.codes, b.dict.code(unsafe.Slice(unsafe.StringData(s), len(s))))
	b.n++
}

// AppendInt appends v to an integer, date, datetime, timestamp or time column, in the units
// of query.Value.
func (b *Builder) AppendInt(v int64) {
	b.ints = append(b.ints, v)
	b.n++
}

// AppendFloat appends v to a float column.
func (b *Builder) AppendFloat(v float64) {
	b.floats = append(b.floats, v)
	b.n++
}

// AppendBool appends v to a boolean column.
func (b *Builder) AppendBool(v bool) {
	b.bools = append(b.bools, v)
	b.n++
}

// Append appends v, which must be null or have the column's type.
func (b *Builder) Append(v query.Value) error {
	if v.Null {
		b.AppendNull()
		return nil
	}
	if v.Type != b.typ {
		return fmt.Errorf("column: cannot append a %v value to a %v column", v.Type, b.typ)
	}
	switch v.Type {
	case query.TypeString:
		b.AppendString(v.Str)
	case query.TypeFloat:
		b.AppendFloat(v.Float)
	case query.TypeBoolean:
		b.AppendBool(v.Bool)
	default:
		b.AppendInt(v.Int)
	}
	return nil
}

// Build returns the column built so far, with its slices trimmed to their length. The
// builder must not be used afterwards.
func (b *Builder) Build() Column {
	var nulls Bitmap
	if b.nulls != nil {
		nulls = growBitmap(b.nulls, b.n)
		nulls = nulls[:len(nulls):len(nulls)]
	}
	switch b.typ {
	case query.TypeString:
		dict := b.dict.values()
		return &Strings{Codes: NarrowCodes(b.codes, len(dict)), Dict: dict, Nulls: nulls}
	case query.TypeFloat:
		return &Float64s{Vals: trim(b.floats), Nulls: nulls}
	case query.TypeBoolean:
		return &Bools{Vals: trim(b.bools), Nulls: nulls}
	default:
		return &Int64s{T: b.typ, Vals: trim(b.ints), Nulls: nulls}
	}
}

// trim returns s without spare capacity, copying it when the spare is worth returning.
func trim[T any](s []T) []T {
	if cap(s)-len(s) > len(s)/16 {
		return append(make([]T, 0, len(s)), s...)
	}
	return s[:len(s):len(s)]
}
