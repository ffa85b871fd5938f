package kmhttp

import (
	"encoding/json"
	"testing"

	"github.com/kmkit/kmkit/km"
	"github.com/kmkit/kmkit/query"
)

// BenchmarkEncodePage encodes a 50-row page of six columns with the handler's encoder and,
// as its peer in the same run, with encoding/json over the map-per-row form the seed
// describes.
func BenchmarkEncodePage(b *testing.B) {
	names := []string{"ORDER_ID", "CUSTOMER", "DAY", "STATUS", "NET_VALUE", "LATE"}
	pl := &plan{prep: &km.Prepared{Plan: &km.Plan{PageSize: 50}, Sort: []string{"-NET_VALUE"}}}
	res := &query.Result{}
	for i, n := range names {
		f := &km.Field{ID: n, Name: n, Type: []query.Type{query.TypeString, query.TypeString, query.TypeDate, query.TypeString, query.TypeFloat, query.TypeInteger}[i]}
		pl.columns = append(pl.columns, column{name: n, field: f})
		res.Columns = append(res.Columns, query.ColumnHeader{Name: n, Type: f.Type})
	}
	pl.keys = quoteKeys(pl.columns) // as Handler.plan makes them
	pl.head = appendHead(nil, pl, nil, false)
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
			out, err := json.Marshal(map[string]any{"page": 0, "pageSize": 50, "total": len(data), "sort": pl.prep.Sort,
				"content": map[string]any{"headers": res.Columns, "data": data}})
			if err != nil {
				b.Fatal(err)
			}
			n = len(out)
		}
		b.ReportMetric(float64(n), "bytes")
	})
}
