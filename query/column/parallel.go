package column

import (
	"bytes"
	"encoding/csv"
	"math"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/kmkit/kmkit/query"
)

// The parallel CSV loader. The body of the file (after the header, which encoding/csv
// reads) is cut into chunks at record ends, found by counting quotes: a newline after an
// even number of quotes ends a record. Each chunk is split into cells and its numbers,
// dates and booleans are parsed straight from the file's bytes into typed slices, chunks
// in parallel; string cells are kept as (offset, length) references. Then each string
// column gets its dictionary in one pass over its references, columns in parallel, in the
// order of first appearance, as the sequential loader builds it.
//
// It reads the CSV of RFC 4180 as encoding/csv does (CRLF or LF line ends, quoted cells
// with doubled quotes, commas and newlines, empty lines skipped), and gives up, returning
// ok false, at the first thing it does not take: a cell that is not of its type, a quote
// inside an unquoted cell, text after a closing quote, a record of the wrong length. LoadCSV
// then reads the file with the sequential loader, which reports the error with its line.
// So both loaders accept the same files and build the same tables; tests and a fuzz
// target hold them to it.

// chunkBytes is the size the body is cut into; a variable so that tests can cut small
// inputs into many chunks.
var chunkBytes = 1 << 20

// nullRef marks a null string cell.
const nullRef = math.MaxUint32

// escapedRef marks a reference into a chunk's buffer of unescaped quoted cells.
const escapedRef = 1 << 31

// strRef is a string cell: n bytes at off of the chunk (or of its unescaped buffer when n
// has escapedRef), or null when n is nullRef.
type strRef struct{ off, n uint32 }

// chunkColumn is one column of a parsed chunk.
type chunkColumn struct {
	ints   []int64
	floats []float64
	bools  []bool
	refs   []strRef
	nulls  []int32 // rows of the chunk whose cell is null
}

// parsedChunk is a chunk split into cells.
type parsedChunk struct {
	data    []byte
	escaped []byte
	rows    int
	cols    []chunkColumn
}

// loadParallel is LoadCSV for files it reads (see above); ok is false otherwise.
func loadParallel(data []byte, schema Schema) (*Table, bool) {
	if len(data) == 0 {
		return nil, false
	}
	cr := csv.NewReader(bytes.NewReader(data))
	header, err := cr.Read()
	if err != nil {
		return nil, false
	}
	names, types, err := checkHeader(header, schema)
	if err != nil {
		return nil, false
	}
	body := data[cr.InputOffset():]
	chunks := splitChunks(body, chunkBytes)
	parsed := make([]*parsedChunk, len(chunks))
	var failed atomic.Bool
	parallel(len(chunks), func(i int) {
		if failed.Load() {
			return
		}
		p, ok := parseChunk(chunks[i], types, i == len(chunks)-1)
		if !ok {
			failed.Store(true)
			return
		}
		parsed[i] = p
	})
	if failed.Load() {
		return nil, false
	}
	rows := 0
	for _, p := range parsed {
		rows += p.rows
	}
	cols := make([]Column, len(types))
	parallel(len(types), func(c int) { cols[c] = assemble(parsed, c, types[c], rows) })
	t, err := NewTable(names, cols)
	return t, err == nil
}

// parallel calls f(0) to f(n-1) on GOMAXPROCS goroutines.
func parallel(n int, f func(i int)) {
	workers := min(n, runtime.GOMAXPROCS(0))
	if workers <= 1 {
		for i := range n {
			f(i)
		}
		return
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for {
				i := int(next.Add(1)) - 1
				if i >= n {
					return
				}
				f(i)
			}
		})
	}
	wg.Wait()
}

// splitChunks cuts body into pieces of about size bytes, each ending after a newline that
// follows an even number of quotes since the start of body (the last piece ends with body).
func splitChunks(body []byte, size int) [][]byte {
	var chunks [][]byte
	quotes := 0 // quotes since the start of the current chunk
	start, p := 0, 0
	for p < len(body) {
		target := start + size
		if target >= len(body) {
			break
		}
		if target > p {
			quotes += bytes.Count(body[p:target], []byte{'"'})
			p = target
		}
		nl := bytes.IndexByte(body[p:], '\n')
		if nl < 0 {
			break
		}
		quotes += bytes.Count(body[p:p+nl], []byte{'"'})
		p += nl + 1
		if quotes%2 == 0 {
			chunks = append(chunks, body[start:p])
			start, quotes = p, 0
		}
	}
	if start < len(body) {
		chunks = append(chunks, body[start:])
	}
	return chunks
}

// parseChunk splits a chunk into records and cells and parses each cell as its column's
// type. last says the chunk ends the file (a final \r is then dropped, as encoding/csv
// does). ok is false at the first thing the parallel loader does not take.
func parseChunk(data []byte, types []query.Type, last bool) (*parsedChunk, bool) {
	if len(data) >= math.MaxInt32 {
		return nil, false
	}
	p := &parsedChunk{data: data, cols: make([]chunkColumn, len(types))}
	est := bytes.Count(data, []byte{'\n'}) + 1
	for c, t := range types {
		col := &p.cols[c]
		switch t {
		case query.TypeString:
			col.refs = make([]strRef, 0, est)
		case query.TypeFloat:
			col.floats = make([]float64, 0, est)
		case query.TypeBoolean:
			col.bools = make([]bool, 0, est)
		default:
			col.ints = make([]int64, 0, est)
		}
	}
	if last && len(data) > 0 && data[len(data)-1] == '\r' {
		data = data[:len(data)-1]
		p.data = data
	}
	pos := 0
	for pos < len(data) {
		// Empty lines are skipped.
		if data[pos] == '\n' {
			pos++
			continue
		}
		if data[pos] == '\r' && pos+1 < len(data) && data[pos+1] == '\n' {
			pos += 2
			continue
		}
		for c := range types {
			var cell []byte
			var ref strRef
			if pos < len(data) && data[pos] == '"' {
				// A quoted cell: up to the quote that is not doubled.
				start := pos + 1
				end, plain := start, true
				for {
					q := bytes.IndexByte(data[end:], '"')
					if q < 0 {
						return nil, false // unterminated
					}
					end += q
					if end+1 < len(data) && data[end+1] == '"' {
						plain = false
						end += 2
						continue
					}
					break
				}
				raw := data[start:end]
				if plain && bytes.Contains(raw, []byte("\r\n")) {
					plain = false
				}
				if plain {
					cell = raw
					ref = strRef{uint32(start), uint32(len(raw))}
				} else {
					off := len(p.escaped)
					p.escaped = unescape(p.escaped, raw)
					cell = p.escaped[off:]
					if len(p.escaped) >= escapedRef {
						return nil, false
					}
					ref = strRef{uint32(off), uint32(len(cell)) | escapedRef}
				}
				pos = end + 1
			} else {
				start := pos
				for pos < len(data) && data[pos] != ',' && data[pos] != '\n' {
					if data[pos] == '"' {
						return nil, false // a bare quote
					}
					pos++
				}
				end := pos
				if end > start && end < len(data) && data[end] == '\n' && data[end-1] == '\r' {
					end--
				}
				cell = data[start:end]
				ref = strRef{uint32(start), uint32(len(cell))}
			}
			// What ends the cell: a comma before the last column, a line end (or the end
			// of the chunk) after it.
			if c < len(types)-1 {
				if pos >= len(data) || data[pos] != ',' {
					return nil, false
				}
				pos++
			} else {
				switch {
				case pos >= len(data):
				case data[pos] == '\n':
					pos++
				case data[pos] == '\r' && pos+1 < len(data) && data[pos+1] == '\n':
					pos += 2
				default:
					return nil, false
				}
			}
			if !p.appendCell(c, types[c], cell, ref) {
				return nil, false
			}
		}
		p.rows++
	}
	return p, true
}

// unescape appends a quoted cell's content with doubled quotes undoubled and CRLF read as
// LF, as encoding/csv reads it.
func unescape(dst, raw []byte) []byte {
	for i := 0; i < len(raw); i++ {
		switch {
		case raw[i] == '"' && i+1 < len(raw) && raw[i+1] == '"':
			dst = append(dst, '"')
			i++
		case raw[i] == '\r' && i+1 < len(raw) && raw[i+1] == '\n':
			dst = append(dst, '\n')
			i++
		default:
			dst = append(dst, raw[i])
		}
	}
	return dst
}

// appendCell parses cell as type t into column c of the chunk; false if it is not of t.
func (p *parsedChunk) appendCell(c int, t query.Type, cell []byte, ref strRef) bool {
	col := &p.cols[c]
	if len(cell) == 0 {
		col.nulls = append(col.nulls, int32(p.rows))
		switch t {
		case query.TypeString:
			col.refs = append(col.refs, strRef{n: nullRef})
		case query.TypeFloat:
			col.floats = append(col.floats, 0)
		case query.TypeBoolean:
			col.bools = append(col.bools, false)
		default:
			col.ints = append(col.ints, 0)
		}
		return true
	}
	s := unsafe.String(unsafe.SliceData(cell), len(cell)) // only read while cell lives
	switch t {
	case query.TypeString:
		col.refs = append(col.refs, ref)
	case query.TypeInteger:
		v, ok := parseInt(cell)
		if !ok {
			var err error
			if v, err = strconv.ParseInt(s, 10, 64); err != nil {
				return false
			}
		}
		col.ints = append(col.ints, v)
	case query.TypeFloat:
		v, err := strconv.ParseFloat(s, 64)
		if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
			return false
		}
		col.floats = append(col.floats, v)
	case query.TypeBoolean:
		switch s {
		case "true":
			col.bools = append(col.bools, true)
		case "false":
			col.bools = append(col.bools, false)
		default:
			return false
		}
	case query.TypeDate:
		d, ok := ParseDate(s)
		if !ok {
			return false
		}
		col.ints = append(col.ints, d)
	case query.TypeDateTime, query.TypeTimestamp:
		us, ok := ParseDateTime(s)
		if !ok {
			return false
		}
		col.ints = append(col.ints, us)
	case query.TypeTime:
		us, ok := ParseTime(s)
		if !ok {
			return false
		}
		col.ints = append(col.ints, us)
	default:
		return false
	}
	return true
}

// parseInt reads up to 18 decimal digits with an optional minus sign, which cannot
// overflow; ok is false for anything else (strconv.ParseInt then decides).
func parseInt(b []byte) (int64, bool) {
	neg := false
	if len(b) > 0 && b[0] == '-' {
		neg, b = true, b[1:]
	}
	if len(b) == 0 || len(b) > 18 {
		return 0, false
	}
	var v int64
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		v = v*10 + int64(c-'0')
	}
	if neg {
		v = -v
	}
	return v, true
}

// ParseDate parses a date YYYY-MM-DD, as time.Parse(time.DateOnly, s) accepts it, and
// returns it in days since 1970-01-01.
func ParseDate(s string) (int64, bool) {
	if len(s) == 10 && s[4] == '-' && s[7] == '-' {
		y1, ok1 := twoDigits(s[0:2])
		y2, ok2 := twoDigits(s[2:4])
		m, ok3 := twoDigits(s[5:7])
		d, ok4 := twoDigits(s[8:10])
		if ok1 && ok2 && ok3 && ok4 {
			y := y1*100 + y2
			if m < 1 || m > 12 || d < 1 || d > daysIn(m, y) {
				return 0, false
			}
			return daysFromCivil(int64(y), m, d), true
		}
	}
	t, err := time.Parse(time.DateOnly, s)
	if err != nil {
		return 0, false
	}
	return query.DaysFromTime(t), true
}

// ParseDateTime parses an RFC 3339 date-time, as time.Parse(time.RFC3339Nano, s) accepts
// it, and returns the instant in microseconds since the Unix epoch.
func ParseDateTime(s string) (int64, bool) {
	// The common form YYYY-MM-DDTHH:MM:SSZ directly; every other through time.Parse.
	if len(s) == 20 && s[10] == 'T' && s[13] == ':' && s[16] == ':' && s[19] == 'Z' {
		day, ok := ParseDate(s[:10])
		h, ok1 := twoDigits(s[11:13])
		m, ok2 := twoDigits(s[14:16])
		sec, ok3 := twoDigits(s[17:19])
		if ok && ok1 && ok2 && ok3 && h < 24 && m < 60 && sec < 60 {
			return day*query.MicrosPerDay + (int64(h)*3600+int64(m)*60+int64(sec))*1_000_000, true
		}
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return 0, false
	}
	return t.UnixMicro(), true
}

func isLeap(y int) bool { return y%4 == 0 && (y%100 != 0 || y%400 == 0) }

func daysIn(m, y int) int {
	switch m {
	case 2:
		if isLeap(y) {
			return 29
		}
		return 28
	case 4, 6, 9, 11:
		return 30
	}
	return 31
}

// daysFromCivil returns the days since 1970-01-01 of a proleptic Gregorian date (Howard
// Hinnant's days_from_civil).
func daysFromCivil(y int64, m, d int) int64 {
	if m <= 2 {
		y--
	}
	era := y / 400
	if y < 0 && y%400 != 0 {
		era--
	}
	yoe := y - era*400
	mp := int64((m + 9) % 12)
	doy := (153*mp+2)/5 + int64(d) - 1
	doe := yoe*365 + yoe/4 - yoe/100 + doy
	return era*146097 + doe - 719468
}

// assemble builds column c of the table from the parsed chunks.
func assemble(chunks []*parsedChunk, c int, t query.Type, rows int) Column {
	var nulls Bitmap
	base := 0
	for _, p := range chunks {
		for _, r := range p.cols[c].nulls {
			if nulls == nil {
				nulls = NewBitmap(rows)
			}
			nulls.Set(base + int(r))
		}
		base += p.rows
	}
	switch t {
	case query.TypeString:
		return assembleStrings(chunks, c, rows, nulls)
	case query.TypeFloat:
		vals := make([]float64, 0, rows)
		for _, p := range chunks {
			vals = append(vals, p.cols[c].floats...)
		}
		return &Float64s{Vals: vals, Nulls: nulls}
	case query.TypeBoolean:
		vals := make([]bool, 0, rows)
		for _, p := range chunks {
			vals = append(vals, p.cols[c].bools...)
		}
		return &Bools{Vals: vals, Nulls: nulls}
	default:
		vals := make([]int64, 0, rows)
		for _, p := range chunks {
			vals = append(vals, p.cols[c].ints...)
		}
		return &Int64s{T: t, Vals: vals, Nulls: nulls}
	}
}

// assembleStrings builds a string column's dictionary in order of first appearance. A
// cell equal to the cell before it (runs of one id, as in the items of an order) takes
// its code without a lookup.
func assembleStrings(chunks []*parsedChunk, c, rows int, nulls Bitmap) *Strings {
	codes := make([]uint32, 0, rows)
	var d dictBuilder
	var prev []byte
	prevCode := uint32(0)
	havePrev := false
	for _, p := range chunks {
		for _, ref := range p.cols[c].refs {
			if ref.n == nullRef {
				codes = append(codes, 0)
				continue
			}
			var b []byte
			if ref.n&escapedRef != 0 {
				n := ref.n &^ escapedRef
				b = p.escaped[ref.off : ref.off+n]
			} else {
				b = p.data[ref.off : ref.off+ref.n]
			}
			if havePrev && bytes.Equal(b, prev) {
				codes = append(codes, prevCode)
				continue
			}
			prevCode = d.code(b)
			prev, havePrev = b, true
			codes = append(codes, prevCode)
		}
	}
	return &Strings{Codes: codes, Dict: trim(d.dict), Nulls: nulls}
}

// dictBuilder assigns codes to strings in order of first appearance. While the values
// come in strictly ascending byte order (ids of a file sorted by its key), a value greater
// than the last one is new without a lookup; the map is built at the first value out of
// order. New values are copied into shared blocks of memory, not one allocation each
// (values above a quarter of a block get their own).
type dictBuilder struct {
	dict   []string
	lookup map[string]uint32 // nil while the values ascend
	arena  []byte
}

// arenaBlock is the size of the blocks dictionary strings are copied into.
const arenaBlock = 64 << 10

// code returns the code of b, adding it to the dictionary when it is new.
func (d *dictBuilder) code(b []byte) uint32 {
	if d.lookup == nil {
		n := len(d.dict)
		if n == 0 || string(b) > d.dict[n-1] {
			d.dict = append(d.dict, d.clone(b))
			return uint32(n)
		}
		if string(b) == d.dict[n-1] {
			return uint32(n - 1)
		}
		d.lookup = make(map[string]uint32, 2*n)
		for i, s := range d.dict {
			d.lookup[s] = uint32(i)
		}
	}
	if code, ok := d.lookup[string(b)]; ok {
		return code
	}
	s := d.clone(b)
	code := uint32(len(d.dict))
	d.dict = append(d.dict, s)
	d.lookup[s] = code
	return code
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
