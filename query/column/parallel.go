package column

import (
	"bytes"
	"encoding/csv"
	"math"
	"strconv"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/kmkit/kmkit/internal/parallel"
	"github.com/kmkit/kmkit/query"
)

// The parallel CSV loader. The body of the file (after the header, which encoding/csv
// reads) is cut into chunks at record ends, found by counting quotes: a newline after an
// even number of quotes ends a record. A chunk holds at most as many records as newlines
// (one more at the end of a file without a final newline), so counting them gives each
// chunk its first row in the table before any chunk is parsed: every column is allocated
// once, at its final size, and the chunks, parsed in parallel, write their numbers, dates
// and booleans straight from the file's bytes into it, each at its own rows. String cells
// are written as references to their bytes (offset and length) into the slots of their
// codes. Where a chunk holds fewer records than newlines (empty lines, newlines in quoted
// cells), the rows after it move up once, after parsing. Then each string column gets its
// dictionary in one pass over its references, columns in parallel, in the order of first
// appearance, as the sequential loader builds it; the codes replace the references. A
// column whose values ascend (a file sorted by its id) has its dictionary counted first
// and allocated once.
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

// A string cell is written as a reference to its bytes, in the slot of the column's code
// for its row, which the dictionary pass then replaces with the code: nullRef for a null;
// for a cell of fewer than 256 bytes at an offset of the chunk below 2^23, the offset and
// the length (off<<8 | n); for any other cell, longRef | i, its reference in the chunk's
// list of long references.
const (
	nullRef       = math.MaxUint32
	longRef       = 1 << 31
	shortLenBits  = 8
	maxShortLen   = 1<<shortLenBits - 1
	maxShortStart = 1 << (31 - shortLenBits)
)

// escapedRef marks a long reference into a chunk's buffer of unescaped quoted cells.
const escapedRef = 1 << 31

// strRef is a string cell: n bytes at off of the chunk (or of its unescaped buffer when n
// has escapedRef).
type strRef struct{ off, n uint32 }

// target is where the chunks write one column, indexed by row of the table: the column's
// values (numbers, dates, booleans), or its codes, holding the cells' references until
// the dictionary pass (strings).
type target struct {
	ints   []int64
	floats []float64
	bools  []bool
	codes  []uint32
}

// move copies the n rows at src to dst, which is not after src.
func (t *target) move(dst, src, n int) {
	switch {
	case t.ints != nil:
		copy(t.ints[dst:], t.ints[src:src+n])
	case t.floats != nil:
		copy(t.floats[dst:], t.floats[src:src+n])
	case t.bools != nil:
		copy(t.bools[dst:], t.bools[src:src+n])
	default:
		copy(t.codes[dst:], t.codes[src:src+n])
	}
}

// parsedChunk is a chunk of the body split into cells.
type parsedChunk struct {
	data    []byte
	escaped []byte    // its quoted cells with doubled quotes or CRLFs, unescaped
	long    []strRef  // its string cells too long or too far for a short reference
	bound   int       // at most this many records: its newlines (+1 at a file's unended end)
	start   int       // its first row in the targets
	rows    int       // its records
	nulls   [][]int32 // per column, the chunk's rows whose cell is null
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
	parsed := make([]parsedChunk, len(chunks))
	parallel.For(len(chunks), func(i int) { parsed[i].bound = bytes.Count(chunks[i], []byte{'\n'}) })
	if n := len(chunks); n > 0 && chunks[n-1][len(chunks[n-1])-1] != '\n' {
		parsed[n-1].bound++
	}
	bound := 0
	for i := range parsed {
		parsed[i].start = bound
		bound += parsed[i].bound
	}
	targets := allocTargets(types, bound)
	var failed atomic.Bool
	parallel.For(len(chunks), func(i int) {
		if failed.Load() || !parsed[i].parse(chunks[i], types, targets, i == len(chunks)-1) {
			failed.Store(true)
		}
	})
	if failed.Load() {
		return nil, false
	}
	rows := 0
	for i := range parsed {
		if p := &parsed[i]; p.start != rows {
			for c := range targets {
				targets[c].move(rows, p.start, p.rows)
			}
			p.start = rows
		}
		rows += parsed[i].rows
	}
	cols := make([]Column, len(types))
	parallel.For(len(types), func(c int) { cols[c] = assemble(parsed, c, types[c], &targets[c], rows) })
	t, err := NewTable(names, cols)
	return t, err == nil
}

// allocTargets allocates the columns of a file of at most rows rows.
func allocTargets(types []query.Type, rows int) []target {
	targets := make([]target, len(types))
	for c, t := range types {
		switch t {
		case query.TypeString:
			targets[c].codes = make([]uint32, rows)
		case query.TypeFloat:
			targets[c].floats = make([]float64, rows)
		case query.TypeBoolean:
			targets[c].bools = make([]bool, rows)
		default:
			targets[c].ints = make([]int64, rows)
		}
	}
	return targets
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

// parse splits the chunk data into records and cells, parses each cell as its column's
// type and writes it into targets at the chunk's rows. last says the chunk ends the file
// (a final \r is then dropped, as encoding/csv does). ok is false at the first thing the
// parallel loader does not take.
func (p *parsedChunk) parse(data []byte, types []query.Type, targets []target, last bool) bool {
	if len(data) >= math.MaxInt32 {
		return false
	}
	p.data, p.nulls = data, make([][]int32, len(types))
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
		if p.rows == p.bound {
			return false // cannot happen: each record but a file's last ends with a newline
		}
		row := p.start + p.rows
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
						return false // unterminated
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
						return false
					}
					ref = strRef{uint32(off), uint32(len(cell)) | escapedRef}
				}
				pos = end + 1
			} else {
				start := pos
				for pos < len(data) && data[pos] != ',' && data[pos] != '\n' {
					if data[pos] == '"' {
						return false // a bare quote
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
					return false
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
					return false
				}
			}
			if !p.setCell(&targets[c], c, types[c], row, cell, ref) {
				return false
			}
		}
		p.rows++
	}
	return true
}

// unescape appends a quoted cell's content with doubled quotes undoubled and CRLF read as
// LF, as encoding/csv reads it.
func unescape(dst, raw []byte) []byte {
	for {
		i := bytes.IndexAny(raw, "\"\r")
		if i < 0 || i+1 == len(raw) {
			return append(dst, raw...)
		}
		switch {
		case raw[i] == '"' && raw[i+1] == '"':
			dst = append(dst, raw[:i+1]...)
		case raw[i] == '\r' && raw[i+1] == '\n':
			dst = append(append(dst, raw[:i]...), '\n')
		default:
			dst = append(dst, raw[:i+1]...)
			raw = raw[i+1:]
			continue
		}
		raw = raw[i+2:]
	}
}

// setCell parses cell as type t and writes it to row of tg, the target of column c; false
// if it is not of t.
func (p *parsedChunk) setCell(tg *target, c int, t query.Type, row int, cell []byte, ref strRef) bool {
	if len(cell) == 0 {
		p.nulls[c] = append(p.nulls[c], int32(row-p.start))
		if t == query.TypeString {
			tg.codes[row] = nullRef
		}
		return true // the other targets hold zeros
	}
	s := unsafe.String(unsafe.SliceData(cell), len(cell)) // only read while cell lives
	switch t {
	case query.TypeString:
		switch {
		case ref.n <= maxShortLen && ref.off < maxShortStart:
			tg.codes[row] = ref.off<<shortLenBits | ref.n
		case len(p.long) < longRef-1:
			tg.codes[row] = longRef | uint32(len(p.long))
			p.long = append(p.long, ref)
		default:
			return false
		}
	case query.TypeInteger:
		v, ok := parseInt(cell)
		if !ok {
			var err error
			if v, err = strconv.ParseInt(s, 10, 64); err != nil {
				return false
			}
		}
		tg.ints[row] = v
	case query.TypeFloat:
		v, ok := parseDecimal(cell)
		if !ok {
			var err error
			if v, err = strconv.ParseFloat(s, 64); err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
				return false
			}
		}
		tg.floats[row] = v
	case query.TypeBoolean:
		switch s {
		case "true":
			tg.bools[row] = true
		case "false":
		default:
			return false
		}
	case query.TypeDate:
		d, ok := ParseDate(s)
		if !ok {
			return false
		}
		tg.ints[row] = d
	case query.TypeDateTime, query.TypeTimestamp:
		us, ok := ParseDateTime(s)
		if !ok {
			return false
		}
		tg.ints[row] = us
	case query.TypeTime:
		us, ok := ParseTime(s)
		if !ok {
			return false
		}
		tg.ints[row] = us
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

// pow10 holds the powers of ten a float64 represents exactly, up to those parseDecimal
// divides by.
var pow10 = [...]float64{1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15}

// parseDecimal reads a decimal [-]ddd[.ddd] of at most 15 digits (the form of amounts and
// prices) as strconv.ParseFloat does, without its general machinery: the digits make an
// integer below 2^53 and the power of ten is exact, so one division rounds correctly (the
// exact path of strconv). ok is false for anything else (strconv.ParseFloat then decides).
func parseDecimal(b []byte) (float64, bool) {
	neg := len(b) > 0 && b[0] == '-'
	if neg {
		b = b[1:]
	}
	var m uint64
	digits, point := 0, -1
	for i, c := range b {
		switch {
		case c >= '0' && c <= '9':
			m = m*10 + uint64(c-'0')
			digits++
		case c == '.' && point < 0:
			point = i
		default:
			return 0, false
		}
	}
	if digits == 0 || digits >= len(pow10) {
		return 0, false
	}
	f := float64(m)
	if point >= 0 {
		f /= pow10[len(b)-1-point]
	}
	if neg {
		f = -f
	}
	return f, true
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

// ParseDateTime parses an RFC 3339 date-time, YYYY-MM-DDTHH:MM:SS[.fraction] followed by Z
// or an offset ±hh:mm (hh up to 23, mm up to 59), and returns the instant in microseconds
// since the Unix epoch, the digits of the fraction of a second after the sixth dropped
// (see the package documentation). It takes what time.Parse(time.RFC3339Nano, s) takes
// except what RFC 3339 refuses and time.Parse lets through: a comma before the fraction,
// a one-digit hour, and an offset of 24 hours or more, or of 60 minutes or more.
func ParseDateTime(s string) (int64, bool) {
	if len(s) < 20 || s[10] != 'T' || s[13] != ':' || s[16] != ':' {
		return 0, false
	}
	day, ok := ParseDate(s[:10])
	h, ok1 := twoDigits(s[11:13])
	m, ok2 := twoDigits(s[14:16])
	sec, ok3 := twoDigits(s[17:19])
	if !ok || !ok1 || !ok2 || !ok3 || h > 23 || m > 59 || sec > 59 {
		return 0, false
	}
	us := day*query.MicrosPerDay + (int64(h)*3600+int64(m)*60+int64(sec))*1_000_000
	zone := s[19:]
	if zone[0] == '.' {
		f, n := fraction(zone)
		if n == 0 {
			return 0, false
		}
		us += f
		zone = zone[n:]
	}
	switch {
	case zone == "Z":
		return us, true
	case len(zone) == 6 && (zone[0] == '+' || zone[0] == '-') && zone[3] == ':':
		oh, ok1 := twoDigits(zone[1:3])
		om, ok2 := twoDigits(zone[4:6])
		if !ok1 || !ok2 || oh > 23 || om > 59 {
			return 0, false
		}
		off := int64(oh*3600+om*60) * 1_000_000
		if zone[0] == '+' {
			off = -off
		}
		return us + off, true
	}
	return 0, false
}

// fraction reads the fraction of a second at the start of s, a point and one digit or
// more, and returns it in microseconds, the digits after the sixth dropped (see the
// package documentation), and the bytes it read: 0 when s holds no fraction.
func fraction(s string) (us int64, n int) {
	if len(s) < 2 || s[0] != '.' || s[1] < '0' || s[1] > '9' {
		return 0, 0
	}
	for n = 1; n < len(s) && s[n] >= '0' && s[n] <= '9'; n++ {
		if n <= 6 {
			us += int64(s[n]-'0') * pow10Int[6-n]
		}
	}
	return us, n
}

// pow10Int holds the powers of ten of a fraction's microsecond digits.
var pow10Int = [...]int64{1, 10, 100, 1_000, 10_000, 100_000}

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

// assemble builds column c of the table, of type t and rows rows, from its target and the
// parsed chunks.
func assemble(chunks []parsedChunk, c int, t query.Type, tg *target, rows int) Column {
	var nulls Bitmap
	for i := range chunks {
		p := &chunks[i]
		for _, r := range p.nulls[c] {
			if nulls == nil {
				nulls = NewBitmap(rows)
			}
			nulls.Set(p.start + int(r))
		}
	}
	switch t {
	case query.TypeString:
		return assembleStrings(chunks, trim(tg.codes[:rows]), nulls)
	case query.TypeFloat:
		return &Float64s{Vals: trim(tg.floats[:rows]), Nulls: nulls}
	case query.TypeBoolean:
		return &Bools{Vals: trim(tg.bools[:rows]), Nulls: nulls}
	default:
		return &Int64s{T: t, Vals: trim(tg.ints[:rows]), Nulls: nulls}
	}
}

// cell returns the bytes of the string cell of reference ref, which is not null.
func (p *parsedChunk) cell(ref uint32) []byte {
	if ref&longRef == 0 {
		off := ref >> shortLenBits
		return p.data[off : off+ref&maxShortLen]
	}
	r := p.long[ref&^longRef]
	if r.n&escapedRef != 0 {
		return p.escaped[r.off : r.off+r.n&^escapedRef]
	}
	return p.data[r.off : r.off+r.n]
}

// assembleStrings builds a string column from its cells' references, which codes holds:
// its dictionary in order of first appearance, and its codes in place of the references.
// A cell equal to the cell before it (runs of one id, as in the items of an order) takes
// its code without a lookup.
func assembleStrings(chunks []parsedChunk, codes []uint32, nulls Bitmap) *Strings {
	var d dictBuilder
	if n, ok := ascendingDistinct(chunks, codes); ok {
		d.reserve(n)
	}
	var prev []byte
	prevCode := uint32(0)
	havePrev := false
	for i := range chunks {
		p := &chunks[i]
		rows := codes[p.start : p.start+p.rows]
		for r, ref := range rows {
			if ref == nullRef {
				rows[r] = 0
				continue
			}
			b := p.cell(ref)
			if !havePrev || !bytes.Equal(b, prev) {
				prevCode = d.code(b)
				prev, havePrev = b, true
			}
			rows[r] = prevCode
		}
	}
	dict := d.values()
	return &Strings{Codes: NarrowCodes(codes, len(dict)), Dict: dict, Nulls: nulls}
}

// ascendingDistinct returns the number of distinct values of the string cells referenced
// by refs when they come in ascending order (the ids of a file sorted by them, each once
// or in runs); ok is false when they do not. Their dictionary then takes exactly that
// size, allocated once.
func ascendingDistinct(chunks []parsedChunk, refs []uint32) (int, bool) {
	n := 0
	var prev []byte
	for i := range chunks {
		p := &chunks[i]
		for _, ref := range refs[p.start : p.start+p.rows] {
			if ref == nullRef {
				continue
			}
			b := p.cell(ref)
			switch c := bytes.Compare(b, prev); {
			case c < 0:
				return 0, false
			case c > 0 || n == 0:
				n++
				prev = b
			}
		}
	}
	return n, true
}
