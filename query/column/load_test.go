package column

import (
	"bytes"
	"encoding/csv"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"testing/iotest"
	"time"
	"unsafe"

	"github.com/kmkit/kmkit/query"
)

// edgeSchema is the schema of edgeCSV's files.
var edgeSchema = Schema{"ID": query.TypeInteger, "NAME": query.TypeString, "NOTE": query.TypeString,
	"AMOUNT": query.TypeFloat, "DAY": query.TypeDate, "AT": query.TypeDateTime, "OK": query.TypeBoolean,
	"T": query.TypeTime}

// edgeCSV writes rows rows of edgeSchema with the cells a loader can get wrong: quoted
// cells with commas, doubled quotes, LF and CRLF inside, empty and quoted empty cells
// (null), unicode, strings of 255, 256 and some thousands of bytes (past the short
// references of the parallel loader), with huge one cell of 9 MiB followed by more cells
// (offsets past 2^23 in a chunk), runs of one id and ids out of order, amounts in every form
// strconv reads, and empty lines.
func edgeCSV(rng *rand.Rand, rows int, huge bool) []byte {
	var b bytes.Buffer
	b.WriteString("ID,NAME,NOTE,AMOUNT,DAY,AT,OK,T\n")
	names := []string{"DE", "Zoë", "日本語", "a,b", `say "hi"`, "two\nlines", "two\r\nlines", " x ", "x\ry",
		strings.Repeat("é", 127) + "x", strings.Repeat("a", 255), strings.Repeat("b", 256), strings.Repeat("c", 5000)}
	quote := func(s string) string {
		if strings.ContainsAny(s, ",\"\r\n") || rng.IntN(8) == 0 {
			return `"` + strings.ReplaceAll(s, `"`, `""`) + `"`
		}
		return s
	}
	for r := range rows {
		if rng.IntN(50) == 0 {
			b.WriteString("\n") // an empty line
		}
		cells := make([]string, 8)
		cells[0] = strconv.Itoa(r - rows/3)
		switch k := rng.IntN(4); {
		case k == 0:
			cells[1] = names[rng.IntN(len(names))]
		case k == 1:
			cells[1] = fmt.Sprintf("SO-%07d", r/3) // runs of one id, ascending
		default:
			cells[1] = fmt.Sprintf("C-%04d", rng.IntN(rows/4+1))
		}
		cells[2] = names[rng.IntN(len(names))]
		if huge && r == rows/2 {
			cells[2] = strings.Repeat("long text, ", 9<<20/11) + "\"quoted\",\r\n\n"
		}
		switch rng.IntN(6) {
		case 0:
			cells[3] = strconv.FormatFloat(rng.NormFloat64()*1e6, 'g', -1, 64)
		case 1:
			cells[3] = fmt.Sprintf("%d.%02d", rng.IntN(100000)-50000, rng.IntN(100))
		case 2:
			cells[3] = []string{"-0", "0.000", "1e-5", ".5", "5.", "123456789012345", "1234567890123456", "-0.1", "1E300", "0x1p-2"}[rng.IntN(10)]
		default:
			cells[3] = fmt.Sprintf("%d.%d", rng.IntN(1000), rng.IntN(1000))
		}
		day := time.Date(1900, 1, 1, 0, 0, 0, 0, time.UTC).AddDate(0, 0, rng.IntN(80000))
		cells[4] = day.Format(time.DateOnly)
		cells[5] = day.Add(time.Duration(rng.Int64N(int64(24 * time.Hour)))).Format(time.RFC3339Nano)
		cells[6] = strconv.FormatBool(rng.IntN(2) == 0)
		cells[7] = fmt.Sprintf("%02d:%02d:%02d.%03d", rng.IntN(24), rng.IntN(60), rng.IntN(60), rng.IntN(1000))
		for c := range cells {
			if c > 0 && rng.IntN(10) == 0 {
				cells[c] = [...]string{"", `""`}[rng.IntN(2)] // null
			} else {
				cells[c] = quote(cells[c])
			}
		}
		b.WriteString(strings.Join(cells, ","))
		if r < rows-1 || rng.IntN(2) == 0 {
			b.WriteString([...]string{"\n", "\r\n"}[rng.IntN(2)])
		}
	}
	return b.Bytes()
}

// checkAgainstCSVReader compares every cell of tab with the file read by encoding/csv and
// each cell parsed by strconv and time: the table of a loader against a reader that
// shares none of its code.
func checkAgainstCSVReader(t *testing.T, tab *Table, in []byte, schema Schema) {
	t.Helper()
	recs, err := csv.NewReader(bytes.NewReader(in)).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if tab.Rows() != len(recs)-1 {
		t.Fatalf("%d rows, encoding/csv reads %d", tab.Rows(), len(recs)-1)
	}
	for c, name := range recs[0] {
		col, ok := tab.Column(name)
		if !ok {
			t.Fatalf("no column %s", name)
		}
		for r, rec := range recs[1:] {
			got, cell := col.Value(r), rec[c]
			want, err := expectedValue(schema[name], cell)
			if err != nil {
				t.Fatalf("row %d column %s: %q: %v", r, name, cell, err)
			}
			if got != want && !(got.Type == query.TypeFloat && want.Type == query.TypeFloat &&
				math.Float64bits(got.Float) == math.Float64bits(want.Float)) {
				t.Fatalf("row %d column %s: %q loads as %#v, want %#v", r, name, cell, got, want)
			}
			if got.Type == query.TypeFloat && math.Float64bits(got.Float) != math.Float64bits(want.Float) {
				t.Fatalf("row %d column %s: %q loads as %v, want %v (sign of zero)", r, name, cell, got.Float, want.Float)
			}
		}
	}
}

// expectedValue is the value of a CSV cell of type typ, parsed by the standard library.
func expectedValue(typ query.Type, cell string) (query.Value, error) {
	if cell == "" {
		return query.Null(typ), nil
	}
	switch typ {
	case query.TypeString:
		return query.String(cell), nil
	case query.TypeInteger:
		v, err := strconv.ParseInt(cell, 10, 64)
		return query.Int(v), err
	case query.TypeFloat:
		v, err := strconv.ParseFloat(cell, 64)
		return query.Float(v), err
	case query.TypeBoolean:
		v, err := strconv.ParseBool(cell)
		return query.Bool(v), err
	case query.TypeDate:
		d, err := time.Parse(time.DateOnly, cell)
		return query.Value{Type: typ, Int: query.DaysFromTime(d)}, err
	case query.TypeDateTime, query.TypeTimestamp:
		d, err := time.Parse(time.RFC3339Nano, cell)
		return query.Value{Type: typ, Int: d.UnixMicro()}, err
	case query.TypeTime:
		d, err := time.Parse("15:04:05.999999", cell)
		return query.Value{Type: typ, Int: int64(d.Sub(d.Truncate(24*time.Hour)) / time.Microsecond)}, err
	}
	return query.Value{}, fmt.Errorf("type %v", typ)
}

// TestLoadEdgeCases loads files of edgeCSV, large enough to cross many chunk boundaries,
// with the default chunks and with small ones, and compares every cell with encoding/csv's
// reading; the dictionaries must be in order of first appearance, as the sequential
// loader builds them.
func TestLoadEdgeCases(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	in := edgeCSV(rng, 20_000, true)
	want, err := loadSequential(bytes.NewReader(in), edgeSchema)
	if err != nil {
		t.Fatal(err)
	}
	checkAgainstCSVReader(t, want, in, edgeSchema)
	defer func(n int) { chunkBytes = n }(chunkBytes)
	for _, size := range []int{1 << 20, 4096, 100} {
		chunkBytes = size
		got, ok := loadParallel(in, edgeSchema)
		if !ok {
			t.Fatalf("chunks of %d: the parallel loader gave up", size)
		}
		checkAgainstCSVReader(t, got, in, edgeSchema)
		if err := sameTable(want, got); err != nil {
			t.Fatalf("chunks of %d: %v", size, err)
		}
	}
}

// TestLoaderReuse loads files of several sizes and schemas, larger and smaller, with one
// Loader: each table must be the file's, and stay so while the Loader reads the next
// files into the memory it read the earlier ones into.
func TestLoaderReuse(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	var files [][]byte
	var schemas []Schema
	for _, rows := range []int{3000, 50, 20_000, 0, 700} {
		files = append(files, edgeCSV(rng, rows/10+1, false))
		schemas = append(schemas, edgeSchema)
		// genCSV may write an integer with two signs; such a file is left out.
		if in := genCSV(rng, rows, false); !bytes.Contains(in, []byte("+-")) {
			files = append(files, in)
			schemas = append(schemas, parallelSchema)
		}
	}
	var l Loader
	tables := make([]*Table, len(files))
	for i, in := range files {
		tab, err := l.Load(bytes.NewReader(in), schemas[i])
		if err != nil {
			t.Fatalf("file %d: %v", i, err)
		}
		tables[i] = tab
	}
	for i, in := range files {
		want, err := loadSequential(bytes.NewReader(in), schemas[i])
		if err != nil {
			t.Fatal(err)
		}
		if err := sameTable(want, tables[i]); err != nil {
			t.Errorf("file %d after loading the others: %v", i, err)
		}
	}
}

// TestParseDecimal holds the decimal fast path to strconv.ParseFloat, bit for bit.
func TestParseDecimal(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	cases := []string{"0", "-0", "0.0", "-0.000", "1", "1.", ".5", "-.5", "5.", "123456789012345",
		"999999999999999", "-999999999999999", "1234567890123456", "0.000000000000001", "00000000000000.1",
		"9007199254740993", "1.2.3", "", "-", ".", "1e5", "+1", "1_000", "0x10", "١"}
	for range 200_000 {
		digits := 1 + rng.IntN(17)
		s := strconv.FormatUint(rng.Uint64()%uint64(math.Pow10(digits)), 10)
		if p := rng.IntN(len(s) + 1); p < len(s) {
			s = s[:p] + "." + s[p:]
		}
		if rng.IntN(2) == 0 {
			s = "-" + s
		}
		cases = append(cases, s)
	}
	for _, s := range cases {
		checkDecimal(t, s)
	}
}

func checkDecimal(t *testing.T, s string) {
	t.Helper()
	got, ok := parseDecimal([]byte(s))
	if !ok {
		return // strconv.ParseFloat reads it
	}
	want, err := strconv.ParseFloat(s, 64)
	if err != nil || math.Float64bits(got) != math.Float64bits(want) {
		t.Errorf("parseDecimal(%q) = %v (%x); strconv.ParseFloat: %v (%x), %v", s, got, math.Float64bits(got), want, math.Float64bits(want), err)
	}
}

// FuzzParseDecimal holds the decimal fast path to strconv.ParseFloat on any input.
func FuzzParseDecimal(f *testing.F) {
	for _, s := range []string{"0", "-0.5", "123.45", "999999999999999", "1.", ".1"} {
		f.Add(s)
	}
	f.Fuzz(checkDecimal)
}

// TestReadAll reads through each kind of reader, with and without a buffer to reuse: the
// bytes read whole, into one allocation of the reader's size when it tells it.
func TestReadAll(t *testing.T) {
	data := bytes.Repeat([]byte("0123456789abcdef"), 40_000)
	path := filepath.Join(t.TempDir(), "f.csv")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	readers := map[string]func() io.Reader{
		"file":           func() io.Reader { f, _ := os.Open(path); t.Cleanup(func() { f.Close() }); return f },
		"bytes.Reader":   func() io.Reader { return bytes.NewReader(data) },
		"one byte":       func() io.Reader { return iotest.OneByteReader(bytes.NewReader(data)) },
		"plain":          func() io.Reader { return iotest.HalfReader(bytes.NewBuffer(data)) },
		"data and EOF":   func() io.Reader { return iotest.DataErrReader(bytes.NewReader(data)) },
		"strings.Reader": func() io.Reader { return strings.NewReader(string(data)) },
	}
	for name, open := range readers {
		for _, buf := range [][]byte{nil, make([]byte, 10, 100), make([]byte, 0, 2*len(data))} {
			got, err := readAll(open(), buf)
			if err != nil || !bytes.Equal(got, data) {
				t.Fatalf("%s, buffer of %d: %d bytes, %v", name, cap(buf), len(got), err)
			}
			sized := name == "file" || name == "bytes.Reader" || name == "strings.Reader"
			switch {
			case cap(buf) > len(data) && unsafe.SliceData(got) != unsafe.SliceData(buf):
				t.Errorf("%s: a buffer large enough was not reused", name)
			case cap(buf) <= len(data) && sized && cap(got) != len(data)+1:
				t.Errorf("%s: read into %d bytes of capacity, want the size and one", name, cap(got))
			}
		}
	}
	if _, err := readAll(iotest.ErrReader(io.ErrUnexpectedEOF), nil); err != io.ErrUnexpectedEOF {
		t.Errorf("error reader: %v", err)
	}
}

// TestDictBuilderReserve holds the dictionary to first-appearance order whether it was
// sized for the values that come (one block, no copy) or for fewer or none.
func TestDictBuilderReserve(t *testing.T) {
	vals := []string{"a", "b", "b", "c", "a", "d", "e"}
	want := []string{"a", "b", "c", "d", "e"}
	for _, n := range []int{-1, 0, 1, 3, 5} {
		var d dictBuilder
		if n >= 0 {
			d.reserve(n)
		}
		for _, v := range vals {
			d.code([]byte(v))
		}
		got := d.values()
		if strings.Join(got, ",") != strings.Join(want, ",") {
			t.Errorf("reserve(%d): %q, want %q", n, got, want)
		}
		if n == len(want) && unsafe.SliceData(got) != unsafe.SliceData(d.blocks[0]) {
			t.Errorf("reserve(%d): the dictionary was copied", n)
		}
	}
}
