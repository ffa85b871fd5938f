package column

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/kmkit/kmkit/query"
)

// sameTable reports how a differs from b: names, types, every cell, and the string
// dictionaries with their codes (both loaders give first-appearance order).
func sameTable(a, b *Table) error {
	if strings.Join(a.Names(), ",") != strings.Join(b.Names(), ",") {
		return fmt.Errorf("names %v and %v", a.Names(), b.Names())
	}
	if a.Rows() != b.Rows() {
		return fmt.Errorf("%d and %d rows", a.Rows(), b.Rows())
	}
	for i, ca := range a.Columns() {
		cb := b.Columns()[i]
		if ca.Type() != cb.Type() {
			return fmt.Errorf("column %d: types %v and %v", i, ca.Type(), cb.Type())
		}
		for r := range a.Rows() {
			va, vb := ca.Value(r), cb.Value(r)
			if va != vb {
				return fmt.Errorf("column %s row %d: %#v and %#v", a.Names()[i], r, va, vb)
			}
		}
		if sa, ok := ca.(*Strings); ok {
			sb := cb.(*Strings)
			if strings.Join(sa.Dict, "\x00") != strings.Join(sb.Dict, "\x00") {
				return fmt.Errorf("column %s: dictionaries %q and %q", a.Names()[i], sa.Dict, sb.Dict)
			}
			for r := range sa.Codes.Len() {
				if !sa.IsNull(r) && sa.Codes.At(r) != sb.Codes.At(r) {
					return fmt.Errorf("column %s row %d: codes %d and %d", a.Names()[i], r, sa.Codes.At(r), sb.Codes.At(r))
				}
			}
		}
	}
	return nil
}

// compareLoaders loads in with the parallel loader at several chunk sizes and with the
// sequential one. When the sequential loader succeeds, the parallel one must give the same
// table, unless mayGiveUp; when it fails, the parallel one must give up, and LoadCSV must
// return the sequential loader's error.
func compareLoaders(t *testing.T, in []byte, schema Schema, mayGiveUp bool) {
	t.Helper()
	want, wantErr := loadSequential(bytes.NewReader(in), schema)
	defer func(n int) { chunkBytes = n }(chunkBytes)
	for _, size := range []int{1, 7, 64, 1 << 20} {
		chunkBytes = size
		got, ok := loadParallel(in, schema)
		switch {
		case wantErr != nil && ok:
			t.Fatalf("chunks of %d: the parallel loader read what the sequential one rejects (%v):\n%q", size, wantErr, in)
		case wantErr == nil && !ok && !mayGiveUp:
			t.Fatalf("chunks of %d: the parallel loader gave up on a file the sequential one reads:\n%q", size, in)
		case ok:
			if err := sameTable(want, got); err != nil {
				t.Fatalf("chunks of %d: sequential and parallel differ: %v\n%q", size, err, in)
			}
		}
		tab, err := LoadCSV(bytes.NewReader(in), schema)
		if fmt.Sprint(err) != fmt.Sprint(wantErr) {
			t.Fatalf("chunks of %d: LoadCSV error %v, want %v", size, err, wantErr)
		}
		if err == nil {
			if err := sameTable(want, tab); err != nil {
				t.Fatalf("chunks of %d: LoadCSV differs: %v", size, err)
			}
		}
	}
}

var parallelSchema = Schema{"S": query.TypeString, "I": query.TypeInteger, "F": query.TypeFloat,
	"B": query.TypeBoolean, "D": query.TypeDate, "DT": query.TypeDateTime, "TS": query.TypeTimestamp,
	"T": query.TypeTime, "S2": query.TypeString}

// genCSV writes a CSV file of rows random rows of parallelSchema's fields in a random
// order, with nulls, quoted cells (doubled quotes, commas, LF and CRLF inside), repeated and
// unicode strings, empty lines, CRLF line ends and, when bad, one cell that is not of its
// type.
func genCSV(rng *rand.Rand, rows int, bad bool) []byte {
	cols := []string{"S", "I", "F", "B", "D", "DT", "TS", "T", "S2"}
	rng.Shuffle(len(cols), func(i, j int) { cols[i], cols[j] = cols[j], cols[i] })
	crlf := rng.IntN(3) == 0
	var b bytes.Buffer
	if rng.IntN(4) == 0 {
		b.WriteString("\uFEFF")
	}
	nl := func() {
		if crlf {
			b.WriteString("\r\n")
		} else {
			b.WriteByte('\n')
		}
	}
	b.WriteString(strings.Join(cols, ","))
	nl()
	strs := []string{"DE", "FR", "a,b", `say "hi"`, "two\nlines", "two\r\nlines", "ünïcødé", " spaced ", "x\ry", "SO-0000001"}
	badRow, badCol := -1, -1
	if bad && rows > 0 {
		badRow, badCol = rng.IntN(rows), rng.IntN(len(cols))
	}
	for r := range rows {
		if rng.IntN(20) == 0 {
			nl() // an empty line
		}
		for c, name := range cols {
			if c > 0 {
				b.WriteByte(',')
			}
			if r == badRow && c == badCol && name != "S" && name != "S2" {
				b.WriteString([]string{"x", "1.5.5", "maybe", "2020-13-01", "2020-01-01T25:00:00Z", "25:00:00", "NaN", "99999999999999999999"}[rng.IntN(8)])
				continue
			}
			if rng.IntN(8) == 0 {
				if rng.IntN(2) == 0 {
					b.WriteString(`""`)
				}
				continue // null
			}
			var cell string
			switch name {
			case "S", "S2":
				if rng.IntN(3) == 0 {
					cell = strs[rng.IntN(len(strs))]
				} else {
					cell = "id-" + strconv.Itoa(rng.IntN(rows/2+1))
				}
			case "I":
				cell = strconv.FormatInt(rng.Int64()>>uint(rng.IntN(64)), 10)
				if rng.IntN(2) == 0 {
					cell = "-" + cell
				}
				if rng.IntN(10) == 0 {
					cell = "+" + cell
				}
			case "F":
				cell = strconv.FormatFloat((rng.Float64()-0.5)*1e6, 'g', -1, 64)
				if rng.IntN(10) == 0 {
					cell = "1e-5"
				}
			case "B":
				cell = strconv.FormatBool(rng.IntN(2) == 0)
			case "D":
				cell = time.Unix(rng.Int64N(1e10)-5e9, 0).UTC().Format(time.DateOnly)
			case "DT", "TS":
				tm := time.Unix(rng.Int64N(1e10)-5e9, rng.Int64N(1e9)).UTC()
				switch rng.IntN(3) {
				case 0:
					cell = tm.Truncate(time.Second).Format(time.RFC3339)
				case 1:
					cell = tm.In(time.FixedZone("", 5400)).Format(time.RFC3339Nano)
				default:
					cell = tm.Format(time.RFC3339Nano)
				}
			case "T":
				cell = fmt.Sprintf("%02d:%02d:%02d", rng.IntN(24), rng.IntN(60), rng.IntN(60))
				if rng.IntN(2) == 0 {
					cell += "." + strconv.Itoa(rng.IntN(1000))
				}
			}
			if strings.ContainsAny(cell, ",\"\r\n") || rng.IntN(10) == 0 {
				cell = `"` + strings.ReplaceAll(cell, `"`, `""`) + `"`
			}
			b.WriteString(cell)
		}
		if r < rows-1 || rng.IntN(2) == 0 {
			nl()
		}
	}
	return b.Bytes()
}

// TestParallelMatchesSequential holds the parallel loader to the sequential one on
// generated files: the same tables for good files, the same errors for bad ones.
func TestParallelMatchesSequential(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range 300 {
		rows := rng.IntN(60)
		bad := i%3 == 2
		in := genCSV(rng, rows, bad)
		t.Run(strconv.Itoa(i), func(t *testing.T) { compareLoaders(t, in, parallelSchema, false) })
	}
}

// TestParallelErrorsAsSequential checks errors that the parallel loader leaves to the
// sequential one keep their line and reason.
func TestParallelErrorsAsSequential(t *testing.T) {
	const header = "S,I\n"
	tests := []struct{ in, want string }{
		{header + "a,1\nb,2\nc,x\n", `line 4, column 2 (I): "x" is not an integer`},
		{header + "\"a\nb\",1\n\nc,x\n", `line 5, column 2 (I): "x" is not an integer`},
		{header + "a,1\nb\"c,2\n", `csv: parse error on line 3, column 2: bare " in non-quoted-field`},
		{header + "a,1\n\"b\"c,2\n", `csv: parse error on line 3, column 3: extraneous or missing " in quoted-field`},
		{header + "a,1\nb,2,3\n", `csv: record on line 3: wrong number of fields`},
		{header + "a,1\n\"b,2\n", `csv: parse error on line 3, column 6: extraneous or missing " in quoted-field`},
	}
	schema := Schema{"S": query.TypeString, "I": query.TypeInteger}
	defer func(n int) { chunkBytes = n }(chunkBytes)
	chunkBytes = 3
	for _, tt := range tests {
		_, err := LoadCSV(strings.NewReader(tt.in), schema)
		if err == nil || err.Error() != tt.want {
			t.Errorf("%q: err = %v, want %s", tt.in, err, tt.want)
		}
	}
}

// TestParseDateAndDateTime compares the fast date parsers with time.Parse over every day
// from year 0 to 2999 and edge cases.
func TestParseDateAndDateTime(t *testing.T) {
	for d := time.Date(0, 1, 1, 0, 0, 0, 0, time.UTC); d.Year() < 3000; d = d.AddDate(0, 0, 1) {
		s := d.Format(time.DateOnly)
		got, ok := ParseDate(s)
		if !ok || got != query.DaysFromTime(d) {
			t.Fatalf("ParseDate(%q) = %d, %v; want %d", s, got, ok, query.DaysFromTime(d))
		}
	}
	for _, s := range []string{"2021-02-29", "2020-02-30", "2020-00-10", "2020-13-01", "2020-01-00", "2020-04-31",
		"2020-1-01", "20200101", "2020-01-01x", "+020-01-01", "2020-01-32", "1900-02-29", "2000-02-29", "9999-12-31",
		"2020-01-01T00:00:00Z", "2020-01-01T23:59:59Z", "2020-01-01T24:00:00Z", "2020-01-01T00:60:00Z",
		"2020-01-01T00:00:60Z", "2020-01-01t00:00:00Z", "2020-01-01T00:00:00z", "2020-02-30T00:00:00Z",
		"1969-12-31T23:59:59Z", "2020-01-01T00:00:00+01:00", "2020-01-01T00:00:00.5Z", "0000-01-01T00:00:00Z",
		"1969-12-31T23:59:59.9999999Z", "1969-12-31T23:59:59.000001-00:30", "2020-01-01T00:00:00.123456789+23:59",
		"2020-01-01T00:00:00.1234567890Z", "2020-01-01T00:00:00.Z", "2020-01-01T00:00:00,5Z", "2020-01-01T00:00:00+24:00",
		"2020-01-01T00:00:00+01:60", "2020-01-01T00:00:00-00:00", "2020-01-01T00:00:00+0100", "2020-01-01T00:00:00.5z",
		"0000-01-01T00:00:00+01:00", "9999-12-31T23:59:59-23:59", "2020-01-01T00:00:00.5+01:00x",
		"2020-01-01T00:00:00.12345678901234Z", "1969-12-31T23:59:59.99999999999-00:30", "2016-12-31T23:59:60Z",
		"0000-10-01T0:00:00Z", "2020-01-01T00:00:00.5+1:00", "2020-01-01T00:00:00+99:00", "2020-01-01T00:00:00,123+01:00"} {
		checkDate(t, s)
	}
}

func checkDate(t *testing.T, s string) {
	t.Helper()
	d, ok := ParseDate(s)
	tm, err := time.Parse(time.DateOnly, s)
	if ok != (err == nil) || (ok && d != query.DaysFromTime(tm)) {
		t.Errorf("ParseDate(%q) = %d, %v; time.Parse: %v, %v", s, d, ok, tm, err)
	}
	us, ok := ParseDateTime(s)
	tm, err = time.Parse(time.RFC3339Nano, s)
	if err == nil && !rfc3339Strict(s) {
		err = errors.New("RFC 3339 refuses it")
	}
	if ok != (err == nil) || (ok && us != tm.UnixMicro()) {
		t.Errorf("ParseDateTime(%q) = %d, %v; time.Parse: %v, %v", s, us, ok, tm, err)
	}
}

// rfc3339Strict reports whether s, a date-time time.Parse takes, is one RFC 3339's
// grammar takes too: two digits for each part of the time, a point before the fraction,
// and an offset whose hours are 00 to 23 and minutes 00 to 59.
func rfc3339Strict(s string) bool {
	return rfc3339DateTime.MatchString(s)
}

// rfc3339DateTime is RFC 3339's date-time (section 5.6), upper-case T and Z.
var rfc3339DateTime = regexp.MustCompile(`^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}(\.[0-9]+)?(Z|[+-]([01][0-9]|2[0-3]):[0-5][0-9])$`)

// FuzzParseDate compares the fast date and date-time parsers with time.Parse.
func FuzzParseDate(f *testing.F) {
	for _, s := range []string{"2020-02-29", "2021-02-29", "0000-01-01", "2020-01-01T00:00:00Z", "2020-01-01T23:59:59Z",
		"2020-01-01T00:00:00+01:00", "9999-12-31T23:59:59.999999Z", "2020-1-1", "1969-12-31T23:59:59.1234567-01:30",
		"2025-06-01T10:00:00.123456789012345678Z", "2016-12-31T23:59:60Z"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) { checkDate(t, s) })
}

// FuzzParallelLoad holds the parallel loader to the sequential one on any input: what
// it reads, the sequential loader reads into the same table; what the sequential loader
// rejects, it gives up on.
func FuzzParallelLoad(f *testing.F) {
	rng := rand.New(rand.NewPCG(3, 4))
	for i := range 8 {
		f.Add(genCSV(rng, 5, i%2 == 1))
	}
	f.Add([]byte("S,I\n\"a\"\"b\",1\r\n\r\n\"c\nd\",2\r"))
	f.Add([]byte("S,I\na,1\nb\"c,2\n"))
	f.Add([]byte("I,S\n1,\"x\"\n2,\"y\"z\n"))
	f.Add([]byte("S\n\"\"\n\n\"a\r\nb\"\n"))
	f.Fuzz(func(t *testing.T, in []byte) {
		schema := parallelSchema
		if bytes.HasPrefix(in, []byte("S,I\n")) || bytes.HasPrefix(in, []byte("I,S\n")) {
			schema = Schema{"S": query.TypeString, "I": query.TypeInteger}
		} else if bytes.HasPrefix(in, []byte("S\n")) {
			schema = Schema{"S": query.TypeString}
		}
		compareLoaders(t, in, schema, true)
	})
}
