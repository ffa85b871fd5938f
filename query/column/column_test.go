package column

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"
	"unsafe"

	"github.com/google/go-cmp/cmp"
	"github.com/kmkit/kmkit/query"
)

func TestBuilderValues(t *testing.T) {
	tests := []struct {
		typ  query.Type
		vals []query.Value
	}{
		{query.TypeString, []query.Value{query.String("a"), query.Null(query.TypeString), query.String("b"), query.String("a"), query.String("")}},
		{query.TypeInteger, []query.Value{query.Int(-3), query.Null(query.TypeInteger), query.Int(1 << 62)}},
		{query.TypeFloat, []query.Value{query.Float(1.5), query.Null(query.TypeFloat), query.Float(-0.25)}},
		{query.TypeBoolean, []query.Value{query.Bool(true), query.Bool(false), query.Null(query.TypeBoolean)}},
		{query.TypeDate, []query.Value{{Type: query.TypeDate, Int: -1}, query.Null(query.TypeDate)}},
		{query.TypeDateTime, []query.Value{{Type: query.TypeDateTime, Int: 1_700_000_000_000_000}}},
		{query.TypeTimestamp, []query.Value{query.Null(query.TypeTimestamp), {Type: query.TypeTimestamp, Int: 5}}},
		{query.TypeTime, []query.Value{{Type: query.TypeTime, Int: 3_600_000_000}}},
	}
	for _, tt := range tests {
		t.Run(tt.typ.String(), func(t *testing.T) {
			b := NewBuilder(tt.typ)
			for _, v := range tt.vals {
				if err := b.Append(v); err != nil {
					t.Fatal(err)
				}
			}
			c := b.Build()
			if c.Type() != tt.typ || c.Len() != len(tt.vals) {
				t.Fatalf("type %v len %d, want %v %d", c.Type(), c.Len(), tt.typ, len(tt.vals))
			}
			var got []query.Value
			for i := range c.Len() {
				got = append(got, c.Value(i))
				if c.IsNull(i) != tt.vals[i].Null {
					t.Errorf("IsNull(%d) = %v", i, c.IsNull(i))
				}
			}
			if d := cmp.Diff(tt.vals, got); d != "" {
				t.Errorf("values (-want +got):\n%s", d)
			}
		})
	}
}

func TestBuilderTypeMismatch(t *testing.T) {
	b := NewBuilder(query.TypeInteger)
	err := b.Append(query.String("x"))
	want := "column: cannot append a string value to a integer column"
	if err == nil || err.Error() != want {
		t.Fatalf("err = %v, want %q", err, want)
	}
}

func TestStringDictionary(t *testing.T) {
	b := NewBuilder(query.TypeString)
	for _, s := range []string{"DE", "FR", "DE", "AT", "FR"} {
		b.AppendString(s)
	}
	c := b.Build().(*Strings)
	if d := cmp.Diff([]string{"DE", "FR", "AT"}, c.Dict); d != "" {
		t.Errorf("dict (-want +got):\n%s", d)
	}
	if d := cmp.Diff(Codes{U8: []uint8{0, 1, 0, 2, 1}}, c.Codes); d != "" {
		t.Errorf("codes (-want +got):\n%s", d)
	}
	if d := cmp.Diff([]uint32{1, 2, 0}, c.Ranks()); d != "" {
		t.Errorf("ranks (-want +got):\n%s", d)
	}
	if c.RawBytes() != 10 {
		t.Errorf("RawBytes = %d, want 10", c.RawBytes())
	}
}

func TestNewTableErrors(t *testing.T) {
	one := NewBuilder(query.TypeInteger)
	one.AppendInt(1)
	c1 := one.Build()
	c0 := NewBuilder(query.TypeInteger).Build()
	tests := []struct {
		names []string
		cols  []Column
		want  string
	}{
		{[]string{"A"}, nil, "column: 1 names for 0 columns"},
		{[]string{"A", "A"}, []Column{c1, c1}, `column: duplicate column "A"`},
		{[]string{"A", "B"}, []Column{c1, c0}, `column: column "B" has 0 rows, column "A" has 1`},
	}
	for _, tt := range tests {
		_, err := NewTable(tt.names, tt.cols)
		if err == nil || err.Error() != tt.want {
			t.Errorf("NewTable(%v) err = %v, want %q", tt.names, err, tt.want)
		}
	}
}

var testSchema = Schema{
	"ID": query.TypeInteger, "NAME": query.TypeString, "NET": query.TypeFloat, "OK": query.TypeBoolean,
	"DAY": query.TypeDate, "AT": query.TypeDateTime, "TS": query.TypeTimestamp, "T": query.TypeTime,
}

func TestLoadCSV(t *testing.T) {
	in := "\uFEFFID,NAME,NET,OK,DAY,AT,TS,T\n" +
		"1,Alpha,1.5,true,2015-05-07,2023-12-05T15:48:44+03:00,2023-12-05T15:48:44.123456Z,15:48:44.5\n" +
		"2,\"\",,,,,,\r\n" +
		"-3,\"with, comma\",-2e3,false,1969-12-31,1970-01-01T00:00:00Z,1969-12-31T23:59:59Z,00:00:00\n"
	tab, err := LoadCSV(strings.NewReader(in), testSchema)
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff([]string{"ID", "NAME", "NET", "OK", "DAY", "AT", "TS", "T"}, tab.Names()); d != "" {
		t.Errorf("names (-want +got):\n%s", d)
	}
	at := time.Date(2023, 12, 5, 12, 48, 44, 0, time.UTC)
	want := [][]query.Value{
		{query.Int(1), query.String("Alpha"), query.Float(1.5), query.Bool(true),
			{Type: query.TypeDate, Int: query.DaysFromTime(time.Date(2015, 5, 7, 0, 0, 0, 0, time.UTC))},
			query.DateTime(at), {Type: query.TypeTimestamp, Int: at.Add(3*time.Hour).UnixMicro() + 123456},
			{Type: query.TypeTime, Int: (15*3600+48*60+44)*1_000_000 + 500_000}},
		{query.Int(2), query.Null(query.TypeString), query.Null(query.TypeFloat), query.Null(query.TypeBoolean),
			query.Null(query.TypeDate), query.Null(query.TypeDateTime), query.Null(query.TypeTimestamp), query.Null(query.TypeTime)},
		{query.Int(-3), query.String("with, comma"), query.Float(-2000), query.Bool(false),
			{Type: query.TypeDate, Int: -1}, {Type: query.TypeDateTime, Int: 0}, {Type: query.TypeTimestamp, Int: -1_000_000},
			{Type: query.TypeTime, Int: 0}},
	}
	var got [][]query.Value
	for r := range tab.Rows() {
		var row []query.Value
		for _, c := range tab.Columns() {
			row = append(row, c.Value(r))
		}
		got = append(got, row)
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("rows (-want +got):\n%s", d)
	}
}

func TestLoadCSVErrors(t *testing.T) {
	const header = "ID,NAME,NET,OK,DAY,AT,TS,T\n"
	const good = "1,a,1,true,2020-01-01,2020-01-01T00:00:00Z,2020-01-01T00:00:00Z,10:00:00\n"
	tests := []struct {
		name, in, want string
	}{
		{"integer", header + good + "x,a,1,true,2020-01-01,2020-01-01T00:00:00Z,2020-01-01T00:00:00Z,10:00:00\n",
			`line 3, column 1 (ID): "x" is not an integer`},
		{"integer overflow", header + "9223372036854775808,a,1,true,2020-01-01,2020-01-01T00:00:00Z,2020-01-01T00:00:00Z,10:00:00\n",
			`line 2, column 1 (ID): "9223372036854775808" is not an integer`},
		{"float", header + "1,a,1,5,true,2020-01-01,2020-01-01T00:00:00Z,2020-01-01T00:00:00Z\n",
			`line 2, column 4 (OK): "5" is not true or false`},
		{"nan", header + "1,a,NaN,true,2020-01-01,2020-01-01T00:00:00Z,2020-01-01T00:00:00Z,10:00:00\n",
			`line 2, column 3 (NET): "NaN" is not a finite number`},
		{"date", header + "1,a,1,true,2020-02-30,2020-01-01T00:00:00Z,2020-01-01T00:00:00Z,10:00:00\n",
			`line 2, column 5 (DAY): "2020-02-30" is not a date (YYYY-MM-DD)`},
		{"datetime without zone", header + "1,a,1,true,2020-01-01,2020-01-01T00:00:00,2020-01-01T00:00:00Z,10:00:00\n",
			`line 2, column 6 (AT): "2020-01-01T00:00:00" is not an RFC 3339 date-time`},
		{"datetime with a decimal comma", header + "1,a,1,true,2020-01-01,\"2020-01-01T00:00:00,5Z\",2020-01-01T00:00:00Z,10:00:00\n",
			`line 2, column 6 (AT): "2020-01-01T00:00:00,5Z" is not an RFC 3339 date-time`},
		{"datetime offset of 24 hours", header + "1,a,1,true,2020-01-01,2020-01-01T00:00:00+24:00,2020-01-01T00:00:00Z,10:00:00\n",
			`line 2, column 6 (AT): "2020-01-01T00:00:00+24:00" is not an RFC 3339 date-time`},
		{"timestamp offset of 60 minutes", header + "1,a,1,true,2020-01-01,2020-01-01T00:00:00Z,2020-01-01T00:00:00+05:60,10:00:00\n",
			`line 2, column 7 (TS): "2020-01-01T00:00:00+05:60" is not an RFC 3339 date-time`},
		{"timestamp", header + "1,a,1,true,2020-01-01,2020-01-01T00:00:00Z,yesterday,10:00:00\n",
			`line 2, column 7 (TS): "yesterday" is not an RFC 3339 date-time`},
		{"time", header + "1,a,1,true,2020-01-01,2020-01-01T00:00:00Z,2020-01-01T00:00:00Z,24:00:00\n",
			`line 2, column 8 (T): "24:00:00" is not a time (HH:MM:SS[.fraction])`},
		{"time fraction without digits", header + "1,a,1,true,2020-01-01,2020-01-01T00:00:00Z,2020-01-01T00:00:00Z,10:00:00.\n",
			`line 2, column 8 (T): "10:00:00." is not a time (HH:MM:SS[.fraction])`},
		{"leap second time", header + good + "1,a,1,true,2020-01-01,2020-01-01T00:00:00Z,2020-01-01T00:00:00Z,23:59:60.5\n",
			`line 3, column 8 (T): "23:59:60.5" is not a time (HH:MM:SS[.fraction]), with seconds 00 to 59 (a leap second, :60, is not a value kmkit stores: write the second before it, or the next minute's first)`},
		{"leap second date-time", header + "1,a,1,true,2020-01-01,2016-12-31T23:59:60Z,2020-01-01T00:00:00Z,10:00:00\n",
			`line 2, column 6 (AT): "2016-12-31T23:59:60Z" is not an RFC 3339 date-time, with seconds 00 to 59 (a leap second, :60, is not a value kmkit stores: write the second before it, or the next minute's first)`},
		{"multi-line quoted cell", header + "1,\"a\nb\",x,true,2020-01-01,2020-01-01T00:00:00Z,2020-01-01T00:00:00Z,10:00:00\n",
			`line 2, column 3 (NET): "x" is not a finite number`},
		{"header", "ID,NAME,NAME,X,NET,Y,OK,DAY,T\n",
			`csv: header: unknown fields "X", "Y"; repeated fields "NAME"; missing fields "AT", "TS"`},
		{"empty", "", "csv: no header row"},
		{"field count", header + "1,a\n", "csv: record on line 2: wrong number of fields"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := LoadCSV(strings.NewReader(tt.in), testSchema)
			if err == nil || err.Error() != tt.want {
				t.Fatalf("err = %v\nwant %s", err, tt.want)
			}
		})
	}
	var ce *CellError
	_, err := LoadCSV(strings.NewReader(header+"1,a,1,true,2020-01-01,2020-01-01T00:00:00Z,2020-01-01T00:00:00Z,x\n"), testSchema)
	if !errors.As(err, &ce) || ce.Field != "T" || ce.Column != 8 || ce.Line != 2 {
		t.Errorf("errors.As CellError: %#v", ce)
	}
}

// TestLoadCSVFractions: fractions of a second of any length, in times and date-times
// alike, are kept to the microsecond by dropping the digits after the sixth, as Go's
// time.Parse reads them (the oracle: time.Time.UnixMicro, and for a time of day its
// nanoseconds since midnight divided down); offsets Z, +00:00 and -00:00 are one
// instant, and -hh:mm is behind UTC. On both loaders, the parallel one and the sequential
// one (which reads the files the parallel one gives up on).
func TestLoadCSVFractions(t *testing.T) {
	cells := []struct{ at, t string }{
		{"2025-06-01T00:00:00.1234567Z", "00:00:00.1234567"},
		{"2025-06-01T23:59:59.9999999+00:00", "23:59:59.9999999"},
		{"2025-06-01T23:59:59.9999999-00:00", "23:59:59.999999999999"},
		{"2025-12-31T23:59:59.99999995-02:30", "12:00:00.1234560"},
		{"1969-12-31T23:59:59.9999999Z", "12:00:00.0000001"},
		{"2025-06-01T10:00:00.123456789012Z", "12:00:00.5"},
		{"2025-06-01T10:00:00.5+05:45", "12:00:00"},
	}
	var in strings.Builder
	in.WriteString("ID,AT,TS,T\n")
	for i, c := range cells {
		fmt.Fprintf(&in, "%d,%s,%s,%s\n", i, c.at, c.at, c.t)
	}
	schema := Schema{"ID": query.TypeInteger, "AT": query.TypeDateTime, "TS": query.TypeTimestamp, "T": query.TypeTime}
	for _, sequential := range []bool{false, true} {
		load := LoadCSV
		if sequential {
			load = loadSequential
		}
		tab, err := load(strings.NewReader(in.String()), schema)
		if err != nil {
			t.Fatal(err)
		}
		at, _ := tab.Column("AT")
		ts, _ := tab.Column("TS")
		tm, _ := tab.Column("T")
		for i, c := range cells {
			instant, err := time.Parse(time.RFC3339Nano, c.at)
			if err != nil {
				t.Fatal(err)
			}
			clock, err := time.Parse("15:04:05.999999999", c.t)
			if err != nil {
				t.Fatal(err)
			}
			wantT := clock.Sub(time.Date(0, 1, 1, 0, 0, 0, 0, time.UTC)).Nanoseconds() / 1000
			if got := at.Value(i).Int; got != instant.UnixMicro() {
				t.Errorf("sequential=%v: AT %s loaded as %d µs, want %d (%s)", sequential, c.at, got, instant.UnixMicro(), instant.UTC().Format(time.RFC3339Nano))
			}
			if got := ts.Value(i).Int; got != instant.UnixMicro() {
				t.Errorf("sequential=%v: TS %s loaded as %d µs, want %d", sequential, c.at, got, instant.UnixMicro())
			}
			if got := tm.Value(i).Int; got != wantT {
				t.Errorf("sequential=%v: T %s loaded as %d µs, want %d", sequential, c.t, got, wantT)
			}
		}
		// Z, +00:00 and -00:00 are one instant.
		if a, b := at.Value(1).Int, at.Value(2).Int; a != b || a != time.Date(2025, 6, 1, 23, 59, 59, 999_999_000, time.UTC).UnixMicro() {
			t.Errorf("sequential=%v: +00:00 and -00:00 loaded as %d and %d", sequential, a, b)
		}
	}
}

func TestParseTime(t *testing.T) {
	tests := []struct {
		in   string
		want int64
		ok   bool
	}{
		{"00:00:00", 0, true},
		{"23:59:59.999999", 86_399_999_999, true},
		{"12:00:00.5", 43_200_500_000, true},
		{"12:00", 0, false},
		{"12:60:00", 0, false},
		{"12:00:00.", 0, false},
		{"12:00:00,5", 0, false},
		{"1a:00:00", 0, false},
		{"12:00:00.5x", 0, false},
		// Digits after the sixth are dropped, however many (.NET writes 7).
		{"10:00:00.1234567", 36_000_123_456, true},
		{"23:59:59.9999999", 86_399_999_999, true},
		{"00:00:00.0000009", 0, true},
		{"12:00:00.123456789012345", 43_200_123_456, true},
		{"12:00:00.1234567x", 0, false},
		{"23:59:60", 0, false},
	}
	for _, tt := range tests {
		got, ok := ParseTime(tt.in)
		if got != tt.want || ok != tt.ok {
			t.Errorf("ParseTime(%q) = %d, %v; want %d, %v", tt.in, got, ok, tt.want, tt.ok)
		}
	}
}

func TestMemoryRatio(t *testing.T) {
	// A table shaped like a business record: ids, amounts, dates, short codes, names.
	names := []string{"ID", "NET", "DAY", "AT", "COUNTRY", "CUSTOMER", "OK"}
	types := []query.Type{query.TypeInteger, query.TypeFloat, query.TypeDate, query.TypeDateTime,
		query.TypeString, query.TypeString, query.TypeBoolean}
	bs := make([]*Builder, len(types))
	for i, ty := range types {
		bs[i] = NewBuilder(ty)
	}
	countries := []string{"DE", "FR", "AT", "CH", "IT"}
	for r := range 10000 {
		bs[0].AppendInt(int64(r))
		bs[1].AppendFloat(float64(r) / 3)
		bs[2].AppendInt(int64(r % 400))
		if r%10 == 0 {
			bs[3].AppendNull()
		} else {
			bs[3].AppendInt(int64(r) * 1_000_000)
		}
		bs[4].AppendString(countries[r%len(countries)])
		bs[5].AppendString("Customer " + strings.Repeat("x", r%7) + string(rune('A'+r%500)))
		bs[6].AppendBool(r%2 == 0)
	}
	cols := make([]Column, len(bs))
	for i, b := range bs {
		cols[i] = b.Build()
	}
	tab, err := NewTable(names, cols)
	if err != nil {
		t.Fatal(err)
	}
	ratio := float64(tab.Bytes()) / float64(tab.RawBytes())
	t.Logf("bytes %d raw %d ratio %.3f", tab.Bytes(), tab.RawBytes(), ratio)
	if ratio > 1.5 {
		t.Errorf("memory %d bytes is %.3f times the raw size %d, want at most 1.5", tab.Bytes(), ratio, tab.RawBytes())
	}
}

func FuzzLoadCSV(f *testing.F) {
	f.Add("ID,NAME,NET,OK,DAY,AT,TS,T\n1,a,1.5,true,2020-01-01,2020-01-01T00:00:00+01:00,2020-01-01T00:00:00Z,10:00:00.25\n")
	f.Add("ID,NAME,NET,OK,DAY,AT,TS,T\n,,,,,,,\n")
	f.Add("T,TS,AT,DAY,OK,NET,NAME,ID\n99:00:00,x,y,z,maybe,NaN,\"q\"\"\",1e3\n")
	f.Add("ID,\"NAME\nX\"\n")
	f.Add("\"")
	f.Fuzz(func(t *testing.T, in string) {
		tab, err := LoadCSV(strings.NewReader(in), testSchema)
		if err != nil {
			return
		}
		for _, c := range tab.Columns() {
			for r := range tab.Rows() {
				v := c.Value(r)
				if v.Type != c.Type() {
					t.Fatalf("value type %v in a %v column", v.Type, c.Type())
				}
				_ = v.Format()
			}
		}
	})
}

func TestInt64sRange(t *testing.T) {
	tests := []struct {
		vals   []query.Value
		lo, hi int64
		ok     bool
	}{
		{nil, 0, 0, false},
		{[]query.Value{query.Null(query.TypeInteger)}, 0, 0, false},
		{[]query.Value{query.Null(query.TypeInteger), query.Int(5), query.Int(-3), query.Null(query.TypeInteger), query.Int(4)}, -3, 5, true},
	}
	for _, tt := range tests {
		b := NewBuilder(query.TypeInteger)
		for _, v := range tt.vals {
			if err := b.Append(v); err != nil {
				t.Fatal(err)
			}
		}
		lo, hi, ok := b.Build().(*Int64s).Range()
		if lo != tt.lo || hi != tt.hi || ok != tt.ok {
			t.Errorf("Range of %v = %d, %d, %v; want %d, %d, %v", tt.vals, lo, hi, ok, tt.lo, tt.hi, tt.ok)
		}
	}
}

func TestAppendStringCopies(t *testing.T) {
	buf := []byte("DE,FR")
	b := NewBuilder(query.TypeString)
	line := string(buf)
	b.AppendString(line[:2])
	c := b.Build().(*Strings)
	if unsafe.StringData(c.Dict[0]) == unsafe.StringData(line) {
		t.Error("the dictionary shares the caller's string")
	}
}
