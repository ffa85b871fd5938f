package sqlstore

import (
	"encoding/binary"
	"fmt"
	"io"
	"math"

	"github.com/kmkit/kmkit/query"
)

// cellRows is Rows that can also give the current row as query.Values, which the loaders
// encode without boxing each cell in an interface (the import's own tables do).
type cellRows interface {
	Rows
	Cells() []query.Value
}

// copyHeader starts PostgreSQL's binary COPY format: the signature, no flags, no header
// extension.
var copyHeader = []byte("PGCOPY\n\xff\r\n\x00\x00\x00\x00\x00\x00\x00\x00\x00")

// copyChunk is how many bytes copyReader encodes at a time.
const copyChunk = 256 << 10

// copyReader encodes rows in PostgreSQL's binary COPY format as they are read, each
// numbered in RowColumn from 0 (the first column) and followed by its cells. It reads
// no more than a chunk ahead, so a table of any size streams in constant memory.
type copyReader struct {
	types []query.Type // the cells' column types (after RowColumn)
	rows  Rows
	cells cellRows // rows, when it gives query.Values
	n     int64    // rows encoded
	buf   []byte
	off   int
	done  bool
}

func newCopyReader(types []query.Type, rows Rows) *copyReader {
	r := &copyReader{types: types, rows: rows, buf: make([]byte, 0, copyChunk+4096)}
	r.cells, _ = rows.(cellRows)
	r.buf = append(r.buf, copyHeader...)
	return r
}

// Read implements io.Reader.
func (r *copyReader) Read(p []byte) (int, error) {
	for r.off >= len(r.buf) {
		if r.done {
			return 0, io.EOF
		}
		if err := r.fill(); err != nil {
			return 0, err
		}
	}
	n := copy(p, r.buf[r.off:])
	r.off += n
	return n, nil
}

// fill encodes the next chunk of rows, and the trailer after the last.
func (r *copyReader) fill() error {
	r.buf, r.off = r.buf[:0], 0
	fields := uint16(1 + len(r.types))
	for len(r.buf) < copyChunk {
		if !r.rows.Next() {
			r.buf = binary.BigEndian.AppendUint16(r.buf, 0xffff)
			r.done = true
			return nil
		}
		r.buf = binary.BigEndian.AppendUint16(r.buf, fields)
		r.buf = appendInt8(r.buf, r.n)
		var err error
		if r.cells != nil {
			r.buf = r.appendCells(r.buf, r.cells.Cells())
		} else if r.buf, err = r.appendValues(r.buf, r.rows.Values()); err != nil {
			return fmt.Errorf("row %d: %w", r.n+1, err)
		}
		r.n++
	}
	return nil
}

func appendInt8(b []byte, v int64) []byte {
	b = binary.BigEndian.AppendUint32(b, 8)
	return binary.BigEndian.AppendUint64(b, uint64(v))
}

func appendFloat8(b []byte, v float64) []byte {
	b = binary.BigEndian.AppendUint32(b, 8)
	return binary.BigEndian.AppendUint64(b, math.Float64bits(v))
}

func appendText(b []byte, s string) []byte {
	b = binary.BigEndian.AppendUint32(b, uint32(len(s)))
	return append(b, s...)
}

func appendBool(b []byte, v bool) []byte {
	b = binary.BigEndian.AppendUint32(b, 1)
	if v {
		return append(b, 1)
	}
	return append(b, 0)
}

// nullCell is a null field: length -1.
var nullCell = []byte{0xff, 0xff, 0xff, 0xff}

// appendCells encodes one row of query.Values, each as its column's type (sqlType).
func (r *copyReader) appendCells(b []byte, row []query.Value) []byte {
	for i, v := range row {
		switch {
		case v.Null:
			b = append(b, nullCell...)
		case r.types[i] == query.TypeString:
			b = appendText(b, v.Str)
		case r.types[i] == query.TypeFloat:
			b = appendFloat8(b, v.Float)
		case r.types[i] == query.TypeBoolean:
			b = appendBool(b, v.Bool)
		default:
			b = appendInt8(b, v.Int)
		}
	}
	return b
}

// appendValues encodes one row of Rows.Values (see checkValues).
func (r *copyReader) appendValues(b []byte, row []any) ([]byte, error) {
	if err := checkValues(r.types, row); err != nil {
		return b, err
	}
	for i, v := range row {
		switch v := v.(type) {
		case nil:
			b = append(b, nullCell...)
		case string:
			b = appendText(b, v)
		case float64:
			b = appendFloat8(b, v)
		case bool:
			b = appendBool(b, v)
		case int64:
			if r.types[i] == query.TypeFloat {
				b = appendFloat8(b, float64(v))
			} else {
				b = appendInt8(b, v)
			}
		}
	}
	return b, nil
}

// checkValues checks that a row of Rows.Values fits the columns' types: nil, a string
// for a string column, a float64 for a float column, a bool for a boolean column and an
// int64 for any other column (or a float column).
func checkValues(types []query.Type, row []any) error {
	if len(row) != len(types) {
		return fmt.Errorf("%d values for %d columns", len(row), len(types))
	}
	for i, v := range row {
		t := types[i]
		var ok bool
		switch v.(type) {
		case nil:
			ok = true
		case string:
			ok = t == query.TypeString
		case float64:
			ok = t == query.TypeFloat
		case bool:
			ok = t == query.TypeBoolean
		case int64:
			ok = t != query.TypeString && t != query.TypeBoolean
		default:
			return fmt.Errorf("column %d: unsupported value %T", i+1, v)
		}
		if !ok {
			return fmt.Errorf("column %d: a %T for a %s column", i+1, v, t)
		}
	}
	return nil
}
