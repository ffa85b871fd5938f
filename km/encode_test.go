package km

import (
	"bytes"
	"encoding/json"
	"math"
	"testing"

	"github.com/kmkit/kmkit/query"
)

// stdJSON encodes v as encoding/json does without HTML escaping.
func stdJSON(t *testing.T, v any) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		t.Fatal(err)
	}
	return string(bytes.TrimSuffix(b.Bytes(), []byte("\n")))
}

func FuzzAppendString(f *testing.F) {
	for _, s := range []string{"", "plain", `q"uote\back`, "tab\tnl\ncr\r\x00\x1f", "Müller € 日本", "\xff\xfe bad", "\u2028\u2029", "<&>"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := string(appendString(nil, s)), stdJSON(t, s); got != want {
			t.Fatalf("appendString(%q) = %s, encoding/json gives %s", s, got, want)
		}
	})
}

func FuzzAppendFloat(f *testing.F) {
	for _, v := range []float64{0, math.Copysign(0, -1), 1, -2.5, 1e-7, 1e-6, 123456789.125, 1e20, 1e21, 5e-324, math.MaxFloat64} {
		f.Add(v)
	}
	f.Fuzz(func(t *testing.T, v float64) {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			if got := string(appendFloat(nil, v)); got != "null" {
				t.Fatalf("appendFloat(%v) = %s, want null", v, got)
			}
			return
		}
		if got, want := string(appendFloat(nil, v)), stdJSON(t, v); got != want {
			t.Fatalf("appendFloat(%v) = %s, encoding/json gives %s", v, got, want)
		}
	})
}

func TestAppendValue(t *testing.T) {
	tests := []struct {
		v    query.Value
		want string
	}{
		{query.Null(query.TypeString), "null"},
		{query.String("a\"b"), `"a\"b"`},
		{query.Int(-42), "-42"},
		{query.Float(2.5), "2.5"},
		{query.Bool(true), "true"},
		{query.Value{Type: query.TypeDate, Int: 20089}, `"2025-01-01"`},
		{query.Value{Type: query.TypeDate, Int: -1}, `"1969-12-31"`},
		{query.Value{Type: query.TypeDateTime, Int: 1735689600_000000}, `"2025-01-01T00:00:00Z"`},
		{query.Value{Type: query.TypeTimestamp, Int: 1735689600_123456}, `"2025-01-01T00:00:00.123456Z"`},
		{query.Value{Type: query.TypeTime, Int: (13*3600 + 5*60 + 9) * 1_000_000}, `"13:05:09"`},
		{query.Value{Type: query.TypeTime, Int: 500_000}, `"00:00:00.5"`},
	}
	for _, tt := range tests {
		if got := string(appendValue(nil, tt.v)); got != tt.want {
			t.Errorf("appendValue(%+v) = %s, want %s", tt.v, got, tt.want)
		}
	}
}

// BenchmarkEncodePage encodes a 50-row page of six columns with the handler's encoder and,
// as its peer in the same run, with encoding/json over the map-per-row form the seed
// describes.
func BenchmarkEncodePage(b *testing.B) {
	names := []string{"ORDER_ID", "CUSTOMER", "DAY", "STATUS", "NET_VALUE", "LATE"}
	pl := &plan{q: Query{Request: query.Request{PageSize: 50}}, sort: []string{"-NET_VALUE"}}
	res := &query.Result{}
	for i, n := range names {
		f := &Field{ID: n, Name: n, Type: []query.Type{query.TypeString, query.TypeString, query.TypeDate, query.TypeString, query.TypeFloat, query.TypeInteger}[i]}
		pl.columns = append(pl.columns, column{name: n, field: f})
		res.Columns = append(res.Columns, query.Column{Name: n, Type: f.Type})
	}
	for i := range 50 {
		res.Rows = append(res.Rows, []query.Value{
			query.String("SO-00000" + string(rune('0'+i%10))), query.String("Müller Maschinenbau GmbH"),
			{Type: query.TypeDate, Int: 20000 + int64(i)}, query.String("OPEN"), query.Float(12345.67 + float64(i)), query.Int(int64(i - 5)),
		})
	}
	b.Run("kmkit", func(b *testing.B) {
		var buf []byte
		for b.Loop() {
			buf = encodePage(buf[:0], pl, res, false)
		}
		b.ReportMetric(float64(len(buf)), "bytes")
	})
	b.Run("encoding-json", func(b *testing.B) {
		var n int
		for b.Loop() {
			data := make([]map[string]any, len(res.Rows))
			for i, row := range res.Rows {
				m := make(map[string]any, len(row))
				for j, v := range row {
					m[names[j]] = v.Format()
				}
				data[i] = m
			}
			out, err := json.Marshal(map[string]any{"page": 0, "pageSize": 50, "total": len(data), "sort": pl.sort,
				"content": map[string]any{"headers": res.Columns, "data": data}})
			if err != nil {
				b.Fatal(err)
			}
			n = len(out)
		}
		b.ReportMetric(float64(n), "bytes")
	})
}
