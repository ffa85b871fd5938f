package jsonenc

import (
	"bytes"
	"encoding/json"
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/kmkit/kmkit/query"
)

// formatJSON is the reference for AppendJSON: Format's value through encoding/json
// without HTML escaping.
func formatJSON(t *testing.T, v query.Value) string {
	t.Helper()
	f := v.Format()
	if x, ok := f.(float64); ok && (math.IsNaN(x) || math.IsInf(x, 0)) {
		return "null" // encoding/json refuses them
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(f); err != nil {
		t.Fatal(err)
	}
	return string(bytes.TrimSuffix(b.Bytes(), []byte("\n")))
}

func TestAppendJSON(t *testing.T) {
	tests := []struct {
		v    query.Value
		want string
	}{
		{query.Null(query.TypeString), "null"},
		{query.Null(query.TypeDate), "null"},
		{query.String("a\"b<&>\x01\u2028\xff"), `"a\"b<&>\u0001\u2028\ufffd"`},
		{query.Int(-42), "-42"},
		{query.Int(math.MaxInt64), "9223372036854775807"},
		{query.Float(2.5), "2.5"},
		{query.Float(1e21), "1e+21"},
		{query.Float(1e-7), "1e-7"},
		{query.Float(math.NaN()), "null"},
		{query.Float(math.Inf(-1)), "null"},
		{query.Bool(true), "true"},
		{query.Bool(false), "false"},
		{query.Value{Type: query.TypeDate, Int: -1}, `"1969-12-31"`},
		{query.Value{Type: query.TypeDate, Int: 19696}, `"2023-12-05"`},
		{query.Value{Type: query.TypeDateTime, Int: 1_701_787_724_000_000}, `"2023-12-05T14:48:44Z"`},
		{query.Value{Type: query.TypeTimestamp, Int: 1_500_000}, `"1970-01-01T00:00:01.5Z"`},
		{query.Value{Type: query.TypeTime, Int: 3_600_000_001}, `"01:00:00.000001"`},
		{query.Value{Type: query.TypeTime, Int: 0}, `"00:00:00"`},
		{query.Value{Type: query.TypeTime, Int: 500_000}, `"00:00:00.5"`},
		{query.Value{Type: query.TypeTime, Int: (13*3600 + 5*60 + 9) * 1_000_000}, `"13:05:09"`},
		{query.Value{Type: query.TypeDateTime, Int: 1735689600_000000}, `"2025-01-01T00:00:00Z"`},
		{query.Value{Type: query.TypeTimestamp, Int: 1735689600_123456}, `"2025-01-01T00:00:00.123456Z"`},
		{query.Value{}, "null"},
	}
	for _, tt := range tests {
		if got := string(AppendJSON(nil, tt.v)); got != tt.want {
			t.Errorf("AppendJSON(%+v) = %s, want %s", tt.v, got, tt.want)
		}
		if ref := formatJSON(t, tt.v); ref != tt.want {
			t.Errorf("Format(%+v) through encoding/json = %s, the table says %s", tt.v, ref, tt.want)
		}
	}
}

// The digit-by-digit temporal formats agree with package time's, over years 0000 to
// 9999 and beyond them.
func TestAppendTemporal(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	const maxUS = 253402300799999999 // 9999-12-31T23:59:59.999999Z
	const minUS = -62167219200000000 // 0000-01-01T00:00:00Z
	micros := []int64{0, -1, 1, minUS, minUS - 1, maxUS, maxUS + 1, 951782400000000 /* 2000-02-29 */, -86400000000}
	for range 20000 {
		micros = append(micros, minUS+rng.Int64N(maxUS-minUS), rng.Int64N(3_000_000_000)*1_000_000, rng.Int64())
	}
	for _, us := range micros {
		tm := time.UnixMicro(us).UTC()
		checks := []struct {
			v    query.Value
			want string
		}{
			{query.Value{Type: query.TypeDateTime, Int: us}, tm.Format(time.RFC3339Nano)},
			{query.Value{Type: query.TypeTimestamp, Int: us}, tm.Format(time.RFC3339Nano)},
			{query.Value{Type: query.TypeDate, Int: query.DayOfMicros(us)}, tm.Format(time.DateOnly)},
			{query.Value{Type: query.TypeTime, Int: us - query.DayOfMicros(us)*query.MicrosPerDay}, tm.Format("15:04:05.999999")},
		}
		for _, c := range checks {
			if got := string(AppendTemporal(nil, c.v)); got != c.want {
				t.Fatalf("%s of %d: %s, want %s", c.v.Type, c.v.Int, got, c.want)
			}
		}
	}
	if got := string(AppendTemporal([]byte("x"), query.String("y"))); got != "x" {
		t.Errorf("AppendTemporal of a string appended %q", got)
	}
}

// FuzzAppendJSON holds AppendJSON to encoding/json's encoding of Format's value, for
// values of every type.
func FuzzAppendJSON(f *testing.F) {
	f.Add(uint8(query.TypeString), false, "a<&>\u2028\xff\"", int64(0), 0.0, false)
	f.Add(uint8(query.TypeInteger), false, "", int64(math.MinInt64), 0.0, false)
	f.Add(uint8(query.TypeFloat), false, "", int64(0), 1e-7, false)
	f.Add(uint8(query.TypeBoolean), false, "", int64(0), 0.0, true)
	f.Add(uint8(query.TypeDate), false, "", int64(-719528), 0.0, false)
	f.Add(uint8(query.TypeDateTime), false, "", int64(-62167219200000001), 0.0, false)
	f.Add(uint8(query.TypeTimestamp), false, "", int64(1_701_787_724_123_400), 0.0, false)
	f.Add(uint8(query.TypeTime), false, "", int64(86_399_999_999), 0.0, false)
	f.Add(uint8(query.TypeString), true, "", int64(0), 0.0, false)
	f.Fuzz(func(t *testing.T, typ uint8, null bool, s string, i int64, fl float64, bo bool) {
		v := query.Value{Type: query.Type(typ), Null: null, Str: s, Int: i, Float: fl, Bool: bo}
		if v.Type == query.TypeDate && (i > 1<<40 || i < -(1<<40)) {
			return // beyond what package time can render from days
		}
		if got, want := string(AppendJSON(nil, v)), formatJSON(t, v); got != want {
			t.Fatalf("AppendJSON(%+v) = %s, encoding/json of Format gives %s", v, got, want)
		}
	})
}
