package column

import (
	"bytes"
	"encoding/csv"
	"fmt"
	"io"
	"testing"

	"github.com/kmkit/kmkit/query"
)

// benchCSV is 100,000 rows of an order record in CSV.
func benchCSV() []byte {
	var b bytes.Buffer
	b.WriteString("ORDER_ID,COUNTRY,NET_VALUE,QUANTITY,CREATED,CHANGED_AT,LATE,SHIP_TIME\n")
	for i := range 100_000 {
		fmt.Fprintf(&b, "O%07d,%s,%d.%02d,%d,2024-%02d-%02d,2024-%02d-%02dT%02d:%02d:00+02:00,%v,%02d:%02d:%02d\n",
			i, []string{"DE", "FR", "IT", "ES"}[i%4], i%5000, i%100, 1+i%50, 1+i%12, 1+i%28, 1+i%12, 1+i%28, i%24, i%60, i%7 == 0, i%24, i%60, i%60)
	}
	return b.Bytes()
}

var benchSchema = Schema{"ORDER_ID": query.TypeString, "COUNTRY": query.TypeString, "NET_VALUE": query.TypeFloat,
	"QUANTITY": query.TypeInteger, "CREATED": query.TypeDate, "CHANGED_AT": query.TypeDateTime,
	"LATE": query.TypeBoolean, "SHIP_TIME": query.TypeTime}

// BenchmarkLoadCSV loads 100,000 rows; its peers are the sequential loader (encoding/csv
// and one Builder per column, the reference LoadCSV falls back to) and encoding/csv alone,
// only splitting the records.
func BenchmarkLoadCSV(b *testing.B) {
	data := benchCSV()
	b.Run("LoadCSV", func(b *testing.B) {
		b.SetBytes(int64(len(data)))
		for b.Loop() {
			if _, err := LoadCSV(bytes.NewReader(data), benchSchema); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(b.Elapsed().Microseconds())/1000/float64(b.N), "ms/op")
	})
	b.Run("sequential", func(b *testing.B) {
		b.SetBytes(int64(len(data)))
		for b.Loop() {
			if _, err := loadSequential(bytes.NewReader(data), benchSchema); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(b.Elapsed().Microseconds())/1000/float64(b.N), "ms/op")
	})
	b.Run("csv.Reader", func(b *testing.B) {
		b.SetBytes(int64(len(data)))
		for b.Loop() {
			r := csv.NewReader(bytes.NewReader(data))
			r.ReuseRecord = true
			for {
				if _, err := r.Read(); err == io.EOF {
					break
				} else if err != nil {
					b.Fatal(err)
				}
			}
		}
		b.ReportMetric(float64(b.Elapsed().Microseconds())/1000/float64(b.N), "ms/op")
	})
}

// BenchmarkRepeated is the relationship target check of an import (km.CheckTarget) on the
// 100,000-row order table: its unique ORDER_ID strings, and 100,000 unique integers out of
// order, dense (a bit per value of their range; ascending ones take one pass, sparse ones
// a hash set). Its peer is LoadCSV of the same
// file, which every import pays before the check: the ratio is the check's share.
func BenchmarkRepeated(b *testing.B) {
	data := benchCSV()
	t, err := LoadCSV(bytes.NewReader(data), benchSchema)
	if err != nil {
		b.Fatal(err)
	}
	ids, _ := t.Column("ORDER_ID")
	ints := NewBuilder(query.TypeInteger)
	for i := range 100_000 {
		ints.AppendInt(int64(i*7919) % 100_003) // 7919 and 100,003 are prime: unique, scattered
	}
	shuffled := ints.Build()
	for _, c := range []struct {
		name string
		col  Column
	}{{"strings", ids}, {"integers", shuffled}} {
		b.Run(c.name, func(b *testing.B) {
			for b.Loop() {
				if _, dup := Repeated(c.col); dup {
					b.Fatal("a unique column reported repeated")
				}
			}
		})
	}
	b.Run("peer=LoadCSV", func(b *testing.B) {
		for b.Loop() {
			if _, err := LoadCSV(bytes.NewReader(data), benchSchema); err != nil {
				b.Fatal(err)
			}
		}
	})
}
