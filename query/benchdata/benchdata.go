// Package benchdata generates the order table that the query benchmarks run on: the
// executor's in km/exec and the storage backends' in storage/sqlstore. Both generate it
// here, from one seed, so that their figures compare.
package benchdata

import (
	"fmt"
	"math/rand/v2"

	"github.com/kmkit/kmkit/query"
	"github.com/kmkit/kmkit/query/column"
)

// Rows is the row count of the benchmark table.
const Rows = 1_000_000

// Orders returns a generated order table of n rows and ten columns: ORDER_ID (integer,
// the row number), COUNTRY (30 values, among them DE and FR), NET_VALUE (float, null in
// about 1% of rows), QUANTITY (integer), CREATED (date), CHANGED_AT (datetime), STATUS
// (5 values), MATERIAL (50,000 values), LATE (boolean) and SHIP_TIME (time). The same n
// always gives the same table.
func Orders(n int) (*column.Table, error) {
	r := rand.New(rand.NewPCG(7, 7))
	countries := make([]string, 30)
	for i := range countries {
		countries[i] = string(rune('A'+i%26)) + string(rune('A'+(i*7)%26))
	}
	countries[0], countries[1] = "DE", "FR"
	statuses := []string{"OPEN", "SHIPPED", "INVOICED", "PAID", "CANCELLED"}
	adjectives := []string{"Steel", "Copper", "Plastic", "Raw", "Coated", "Brass", "Oak", "Glass"}
	nouns := []string{"Material", "Bolt", "Screw", "Washer", "Panel", "Pipe", "Valve", "Cable", "Hinge", "Bracket"}
	materials := make([]string, 50_000)
	for i := range materials {
		materials[i] = fmt.Sprintf("%s %s %05d", adjectives[i%len(adjectives)], nouns[(i/8)%len(nouns)], i)
	}
	names := []string{"ORDER_ID", "COUNTRY", "NET_VALUE", "QUANTITY", "CREATED", "CHANGED_AT", "STATUS", "MATERIAL", "LATE", "SHIP_TIME"}
	types := []query.Type{query.TypeInteger, query.TypeString, query.TypeFloat, query.TypeInteger, query.TypeDate,
		query.TypeDateTime, query.TypeString, query.TypeString, query.TypeBoolean, query.TypeTime}
	bs := make([]*column.Builder, len(types))
	for i, t := range types {
		bs[i] = column.NewBuilder(t)
	}
	for i := range n {
		bs[0].AppendInt(int64(i))
		bs[1].AppendString(countries[r.IntN(len(countries))])
		if r.IntN(100) == 0 {
			bs[2].AppendNull()
		} else {
			bs[2].AppendFloat(float64(r.IntN(100_000)) / 100)
		}
		bs[3].AppendInt(int64(1 + r.IntN(100)))
		day := int64(19_000 + r.IntN(1000))
		bs[4].AppendInt(day)
		bs[5].AppendInt(day*query.MicrosPerDay + r.Int64N(query.MicrosPerDay))
		bs[6].AppendString(statuses[r.IntN(len(statuses))])
		bs[7].AppendString(materials[r.IntN(len(materials))])
		bs[8].AppendBool(r.IntN(10) == 0)
		bs[9].AppendInt(r.Int64N(query.MicrosPerDay))
	}
	cols := make([]column.Column, len(bs))
	for i, b := range bs {
		cols[i] = b.Build()
	}
	return column.NewTable(names, cols)
}
