package column

import (
	"bytes"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/kmkit/kmkit/query"
)

// Schema maps the field ids of a record to their types.
type Schema map[string]query.Type

// CellError is a cell of a CSV file that does not hold a value of its column's type.
type CellError struct {
	Line   int    // 1-based line of the file where the record starts
	Column int    // 1-based column number
	Field  string // the field id of the column (its header)
	Value  string // the cell as read
	Want   string // what the cell should hold
}

// Error implements error.
func (e *CellError) Error() string {
	return fmt.Sprintf("line %d, column %d (%s): %q is not %s", e.Line, e.Column, e.Field, e.Value, e.Want)
}

// LoadCSV reads a CSV file whose header row names the fields of schema, once each and in
// any order, and returns the table of its rows with the columns in header order. An empty
// cell is null. Cells hold dates as YYYY-MM-DD, datetimes and timestamps in RFC 3339 (the
// offset is applied; the value is stored in UTC), times as HH:MM:SS[.fraction], booleans as
// true or false, integers in base 10, floats as strconv.ParseFloat reads them (finite only).
// A cell that is not of its type gives a *CellError; a header that is not the schema's set
// of fields gives an error naming the unknown, duplicate or missing fields.
//
// LoadCSV is a [Loader] used once: to read several files, use one Loader for all of them.
func LoadCSV(r io.Reader, schema Schema) (*Table, error) {
	var l Loader
	return l.Load(r, schema)
}

// Loader reads CSV files into tables as [LoadCSV] does, keeping the memory it reads a file
// into from one file to the next: loading a directory then holds that memory for its
// largest file once, instead of leaving each file's behind as garbage until the next
// collection. The tables it returns
// share no memory with it or with each other. The zero Loader is ready to use; a Loader is
// not safe for concurrent use. Drop it after the last file, so that its memory can go.
type Loader struct {
	buf []byte // the file being read
}

// Load reads the CSV file r holds into a table of the fields of schema, as LoadCSV does.
func (l *Loader) Load(r io.Reader, schema Schema) (*Table, error) {
	data, err := readAll(r, l.buf)
	if err != nil {
		return nil, fmt.Errorf("csv: %w", err)
	}
	l.buf = data[:0]
	if t, ok := loadParallel(data, schema); ok {
		return t, nil
	}
	// The parallel loader gave up: on a file with an error, or a form it does not read
	// (see parallel.go). The sequential loader reads it and says what is wrong, where.
	return loadSequential(bytes.NewReader(data), schema)
}

// readAll reads r whole into buf's memory, or into a buffer sized by r's Stat (a file) or
// Size (a bytes.Reader or strings.Reader: at most what is left to read) when buf is
// smaller, so that the buffer does not grow by copying.
func readAll(r io.Reader, buf []byte) ([]byte, error) {
	size := int64(-1)
	switch r := r.(type) {
	case interface{ Stat() (fs.FileInfo, error) }:
		if fi, err := r.Stat(); err == nil && fi.Mode().IsRegular() {
			size = fi.Size()
		}
	case interface{ Size() int64 }:
		size = r.Size()
	}
	// One spare byte: the final Read sees EOF without growing the buffer.
	if size >= 0 && size < math.MaxInt32 && cap(buf) < int(size)+1 {
		buf = make([]byte, 0, size+1)
	}
	buf = buf[:0]
	for {
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)] // grow, as io.ReadAll does
		}
		n, err := r.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if err == io.EOF {
			return buf, nil
		}
		if err != nil {
			return nil, err
		}
	}
}

// checkHeader returns the field names of a CSV header and their types, or an error naming
// the unknown, repeated and missing fields of schema.
func checkHeader(header []string, schema Schema) ([]string, []query.Type, error) {
	names := make([]string, len(header))
	types := make([]query.Type, len(header))
	seen := make(map[string]bool, len(header))
	var unknown, dups []string
	for i, h := range header {
		if i == 0 {
			h = strings.TrimPrefix(h, "\uFEFF")
		}
		names[i] = h
		t, ok := schema[h]
		switch {
		case !ok:
			unknown = append(unknown, strconv.Quote(h))
		case seen[h]:
			dups = append(dups, strconv.Quote(h))
		case t == query.TypeInvalid || t >= query.TypeNull:
			return nil, nil, fmt.Errorf("csv: field %q has type %v, which no column can hold", h, t)
		default:
			types[i] = t
		}
		seen[h] = true
	}
	var missing []string
	for id := range schema {
		if !seen[id] {
			missing = append(missing, strconv.Quote(id))
		}
	}
	if len(unknown)+len(dups)+len(missing) > 0 {
		var parts []string
		if len(unknown) > 0 {
			parts = append(parts, "unknown fields "+strings.Join(unknown, ", "))
		}
		if len(dups) > 0 {
			parts = append(parts, "repeated fields "+strings.Join(dups, ", "))
		}
		if len(missing) > 0 {
			slices.Sort(missing)
			parts = append(parts, "missing fields "+strings.Join(missing, ", "))
		}
		return nil, nil, fmt.Errorf("csv: header: %s", strings.Join(parts, "; "))
	}
	return names, types, nil
}

// loadSequential is LoadCSV one record at a time through encoding/csv: the reference the
// parallel loader must agree with, and the reader of files it does not take.
func loadSequential(r io.Reader, schema Schema) (*Table, error) {
	cr := csv.NewReader(r)
	cr.ReuseRecord = true
	header, err := cr.Read()
	if err == io.EOF {
		return nil, errors.New("csv: no header row")
	}
	if err != nil {
		return nil, fmt.Errorf("csv: %w", err)
	}
	names, types, err := checkHeader(header, schema)
	if err != nil {
		return nil, err
	}
	builders := make([]*Builder, len(types))
	for i, t := range types {
		builders[i] = NewBuilder(t)
	}
	for {
		rec, err := cr.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("csv: %w", err)
		}
		line, _ := cr.FieldPos(0)
		for i, cell := range rec {
			if err := appendCell(builders[i], cell); err != nil {
				return nil, &CellError{Line: line, Column: i + 1, Field: names[i], Value: cell, Want: err.Error()}
			}
		}
	}
	cols := make([]Column, len(builders))
	for i, b := range builders {
		cols[i] = b.Build()
	}
	return NewTable(names, cols)
}

// errWant is the description of what a cell of a type must hold.
type errWant string

func (e errWant) Error() string { return string(e) }

var wants = [...]errWant{
	query.TypeInteger:   "an integer",
	query.TypeFloat:     "a finite number",
	query.TypeBoolean:   "true or false",
	query.TypeDate:      "a date (YYYY-MM-DD)",
	query.TypeDateTime:  "an RFC 3339 date-time",
	query.TypeTimestamp: "an RFC 3339 date-time",
	query.TypeTime:      "a time (HH:MM:SS[.fraction])",
}

// appendCell parses cell as b's type and appends it; the error says what was expected.
func appendCell(b *Builder, cell string) error {
	if cell == "" {
		b.AppendNull()
		return nil
	}
	t := b.Type()
	switch t {
	case query.TypeString:
		b.AppendString(cell)
		return nil
	case query.TypeInteger:
		v, err := strconv.ParseInt(cell, 10, 64)
		if err != nil {
			return wants[t]
		}
		b.AppendInt(v)
	case query.TypeFloat:
		v, err := strconv.ParseFloat(cell, 64)
		if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
			return wants[t]
		}
		b.AppendFloat(v)
	case query.TypeBoolean:
		switch cell {
		case "true":
			b.AppendBool(true)
		case "false":
			b.AppendBool(false)
		default:
			return wants[t]
		}
	case query.TypeDate:
		d, err := time.Parse(time.DateOnly, cell)
		if err != nil {
			return wants[t]
		}
		b.AppendInt(query.DaysFromTime(d))
	case query.TypeDateTime, query.TypeTimestamp:
		us, ok := ParseDateTime(cell)
		if !ok {
			return wantOf(t, cell)
		}
		b.AppendInt(us)
	case query.TypeTime:
		us, ok := ParseTime(cell)
		if !ok {
			return wantOf(t, cell)
		}
		b.AppendInt(us)
	}
	return nil
}

// wantOf is what a cell of type t must hold, for the time or date-time cell that is
// none: a leap second's text (23:59:60) is said to be refused as such.
func wantOf(t query.Type, cell string) errWant {
	clock := cell
	if t != query.TypeTime {
		_, clock, _ = strings.Cut(cell, "T")
	}
	if len(clock) >= 8 && clock[2] == ':' && clock[5] == ':' && clock[6:8] == "60" {
		return wants[t] + ", with seconds 00 to 59 (a leap second, :60, is not a value kmkit stores: write the second before it, or the next minute's first)"
	}
	return wants[t]
}

// ParseTime parses a time of day HH:MM:SS with an optional fraction of a second (a point
// and one digit or more) and returns it in microseconds since midnight, the digits after
// the sixth dropped (see the package documentation). Hours run 00-23, minutes and seconds
// 00-59.
func ParseTime(s string) (int64, bool) {
	if len(s) < 8 || s[2] != ':' || s[5] != ':' {
		return 0, false
	}
	h, ok1 := twoDigits(s[0:2])
	m, ok2 := twoDigits(s[3:5])
	sec, ok3 := twoDigits(s[6:8])
	if !ok1 || !ok2 || !ok3 || h > 23 || m > 59 || sec > 59 {
		return 0, false
	}
	us := (int64(h)*3600 + int64(m)*60 + int64(sec)) * 1_000_000
	if frac := s[8:]; frac != "" {
		f, n := fraction(frac)
		if n != len(frac) {
			return 0, false
		}
		us += f
	}
	return us, true
}

func twoDigits(s string) (int, bool) {
	if s[0] < '0' || s[0] > '9' || s[1] < '0' || s[1] > '9' {
		return 0, false
	}
	return int(s[0]-'0')*10 + int(s[1]-'0'), true
}
