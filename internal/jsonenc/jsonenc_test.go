package jsonenc

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
)

// noHTML encodes v as an encoding/json Encoder with SetEscapeHTML(false) does.
func noHTML(t *testing.T, v any) string {
	t.Helper()
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		t.Fatal(err)
	}
	return string(bytes.TrimSuffix(b.Bytes(), []byte("\n")))
}

func marshal(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestAppendString(t *testing.T) {
	tests := []struct{ in, html, noHTML string }{
		{"", `""`, `""`},
		{"plain text", `"plain text"`, `"plain text"`},
		{`q"uote\back`, `"q\"uote\\back"`, `"q\"uote\\back"`},
		{"\b\f\n\r\t\x00\x1f\x7f", `"\b\f\n\r\t\u0000\u001f` + "\x7f" + `"`, `"\b\f\n\r\t\u0000\u001f` + "\x7f" + `"`},
		{"<a & b>", `"\u003ca \u0026 b\u003e"`, `"<a & b>"`},
		{"Müller € 日本 😀", `"Müller € 日本 😀"`, `"Müller € 日本 😀"`},
		{"\u2028\u2029", `"\u2028\u2029"`, `"\u2028\u2029"`},
		{"a\xffb\xe2\x80", `"a\ufffdb\ufffd\ufffd"`, `"a\ufffdb\ufffd\ufffd"`},
		{"\xed\xa0\x80", `"\ufffd\ufffd\ufffd"`, `"\ufffd\ufffd\ufffd"`},
	}
	for _, tt := range tests {
		if got := string(AppendString(nil, tt.in)); got != tt.html {
			t.Errorf("AppendString(%q) = %s, want %s", tt.in, got, tt.html)
		}
		if got := string(AppendBytes(nil, []byte(tt.in))); got != tt.html {
			t.Errorf("AppendBytes(%q) = %s, want %s", tt.in, got, tt.html)
		}
		if got := string(AppendStringNoHTMLEscape(nil, tt.in)); got != tt.noHTML {
			t.Errorf("AppendStringNoHTMLEscape(%q) = %s, want %s", tt.in, got, tt.noHTML)
		}
		// The table agrees with encoding/json.
		if got := marshal(t, tt.in); got != tt.html {
			t.Errorf("json.Marshal(%q) = %s, the table says %s", tt.in, got, tt.html)
		}
	}
	if got := string(AppendString([]byte("x:"), "y")); got != `x:"y"` {
		t.Errorf("AppendString appends to %q, got %q", "x:", got)
	}
}

func TestAppendFloat(t *testing.T) {
	tests := []struct {
		f    float64
		want string
	}{
		{0, "0"},
		{math.Copysign(0, -1), "0"}, // encoding/json writes -0: the one difference
		{-2.5, "-2.5"},
		{1e-6, "0.000001"},
		{1e-7, "1e-7"},
		{1.5e-300, "1.5e-300"},
		{1e20, "100000000000000000000"},
		{1e21, "1e+21"},
		{123456789.125, "123456789.125"},
		{0.1, "0.1"},
		{math.MaxFloat64, "1.7976931348623157e+308"},
		{math.SmallestNonzeroFloat64, "5e-324"},
		{math.NaN(), "null"},
		{math.Inf(1), "null"},
		{math.Inf(-1), "null"},
	}
	for _, tt := range tests {
		if got := string(AppendFloat(nil, tt.f)); got != tt.want {
			t.Errorf("AppendFloat(%v) = %s, want %s", tt.f, got, tt.want)
		}
	}
}

// TestAppendFloatCents holds the path for whole hundredths (appendCents) and the values
// next to them to encoding/json: prices and amounts, integers, their neighbours one
// float64 apart, values around the path's bounds.
func TestAppendFloatCents(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	var vals []float64
	for range 200000 {
		n := r.Int64N(2e14) - 1e14 // up to 1e12 in hundredths
		if r.IntN(4) == 0 {
			n = r.Int64N(20000) - 10000
		}
		v := float64(n) / 100
		vals = append(vals, v, math.Nextafter(v, math.Inf(1)), math.Nextafter(v, math.Inf(-1)), v*3/7)
	}
	vals = append(vals, 0.01, 0.009999999999999998, 0.015, 0.005, 1e12, 999999999999.99, 1e12-0.01,
		-999999999999.99, 99.995, 0.1+0.2, 1.005, 2.675, 4503599627370495.5, 0.07, 1234.5)
	for _, v := range vals {
		if got, want := string(AppendFloat(nil, v)), marshal(t, v); got != want {
			t.Fatalf("AppendFloat(%v) = %s, json.Marshal gives %s", v, got, want)
		}
	}
}

// FuzzAppendString holds both string appenders to encoding/json for any string.
func FuzzAppendString(f *testing.F) {
	for _, s := range []string{"", "plain", "<>&", `"\`, "\x00\x1f\b\f\n\r\t\x7f", "é✓ 日本", "\u2028\u2029", "\xff", "a\xe2\x80", "\xed\xa0\x80", "\xf4\x90\x80\x80"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := string(AppendString(nil, s)), marshal(t, s); got != want {
			t.Fatalf("AppendString(%q) = %s, json.Marshal gives %s", s, got, want)
		}
		if got, want := string(AppendBytes(nil, []byte(s))), marshal(t, s); got != want {
			t.Fatalf("AppendBytes(%q) = %s, json.Marshal gives %s", s, got, want)
		}
		if got, want := string(AppendStringNoHTMLEscape(nil, s)), noHTML(t, s); got != want {
			t.Fatalf("AppendStringNoHTMLEscape(%q) = %s, encoding/json gives %s", s, got, want)
		}
	})
}

// FuzzAppendFloat holds AppendFloat to encoding/json for every finite float64 but -0,
// which it writes as 0.
func FuzzAppendFloat(f *testing.F) {
	for _, v := range []float64{0, math.Copysign(0, -1), 1, -2.5, 1e-7, 1e-6, 9.999999e-7, 123456789.125, 1e20, 1e21, 5e-324, math.MaxFloat64, math.NaN()} {
		f.Add(v)
	}
	f.Fuzz(func(t *testing.T, v float64) {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			if got := string(AppendFloat(nil, v)); got != "null" {
				t.Fatalf("AppendFloat(%v) = %s, want null", v, got)
			}
			return
		}
		want := marshal(t, v)
		if v == 0 {
			want = "0"
		}
		if got := string(AppendFloat(nil, v)); got != want {
			t.Fatalf("AppendFloat(%v) = %s, want %s", v, got, want)
		}
	})
}

// BenchmarkAppendFloat writes prices (whole hundredths) and other floats, next to
// strconv.AppendFloat's shortest form, which encoding/json uses for both.
func BenchmarkAppendFloat(b *testing.B) {
	r := rand.New(rand.NewPCG(3, 4))
	prices, others := make([]float64, 1024), make([]float64, 1024)
	for i := range prices {
		prices[i] = float64(r.IntN(10_000_000)) / 100
		others[i] = r.Float64() * 1000
	}
	buf := make([]byte, 0, 64)
	for _, c := range []struct {
		name string
		vals []float64
	}{{"prices", prices}, {"others", others}} {
		b.Run(c.name+"/jsonenc", func(b *testing.B) {
			for i := 0; b.Loop(); i++ {
				buf = AppendFloat(buf[:0], c.vals[i&1023])
			}
		})
		b.Run(c.name+"/strconv", func(b *testing.B) {
			for i := 0; b.Loop(); i++ {
				buf = strconv.AppendFloat(buf[:0], c.vals[i&1023], 'f', -1, 64)
			}
		})
	}
}

// BenchmarkAppendString writes a JSON page as a JSON string (the text content of an MCP
// tool result: quotes every few bytes) and a plain sentence, next to encoding/json.
func BenchmarkAppendString(b *testing.B) {
	var page strings.Builder
	page.WriteString(`{"page":0,"pageSize":50,"rows":[`)
	for i := range 50 {
		fmt.Fprintf(&page, `{"ORDER_ID":"SO-%07d","NET_VALUE":%d.25,"STATUS":"OPEN","CITY":"München"},`, i, i*97)
	}
	page.WriteString(`{}]}`)
	buf := make([]byte, 0, 16<<10)
	for _, c := range []struct{ name, s string }{{"page", page.String()}, {"sentence", strings.Repeat("Müller & Söhne ship 12 orders a week. ", 20)}} {
		b.Run(c.name+"/jsonenc", func(b *testing.B) {
			b.SetBytes(int64(len(c.s)))
			for b.Loop() {
				buf = AppendString(buf[:0], c.s)
			}
		})
		b.Run(c.name+"/encoding-json", func(b *testing.B) {
			b.SetBytes(int64(len(c.s)))
			for b.Loop() {
				if _, err := json.Marshal(c.s); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
