package demodata

// The row-by-row generator as it was before Tables generated columns directly: the
// reference the columnar generator must reproduce value for value.

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/kmkit/kmkit/query"
	"github.com/kmkit/kmkit/query/column"
)

// refGenerate emits the rows of every source for n orders, as Generate.
func refGenerate(n int, emit func(source string, row []query.Value) error) error {
	if n < 1 {
		return fmt.Errorf("demodata: %d orders: want at least 1", n)
	}
	rng := rand.New(rand.NewPCG(20260115, uint64(n)))
	nc, nm := Sizes(n)
	str, flt := query.String, query.Float
	money := func(v float64) query.Value { return flt(math.Round(v*100) / 100) }

	custID := func(i int) string { return fmt.Sprintf("C-%06d", i+1) }
	for i := range nc {
		c := countries[rng.IntN(len(countries))]
		country := str(c.code)
		if i%23 == 22 {
			country = query.Null(query.TypeString)
		}
		name := fmt.Sprintf("%s %s", companyStems[rng.IntN(len(companyStems))], companyKinds[rng.IntN(len(companyKinds))])
		if i >= len(companyStems)*len(companyKinds)/3 {
			name = fmt.Sprintf("%s %d", name, i+1)
		}
		row := []query.Value{str(custID(i)), str(name), country, str(c.city),
			str(segments[rng.IntN(len(segments))]), money(float64(10+rng.IntN(490)) * 1000)}
		if err := emit("customers", row); err != nil {
			return err
		}
	}
	matID := func(i int) string { return fmt.Sprintf("M-%05d", i+1) }
	prices := make([]float64, nm)
	for i := range nm {
		noun := materialNouns[i%len(materialNouns)]
		prices[i] = math.Round((5+rng.Float64()*1995)*100) / 100
		row := []query.Value{str(matID(i)), str(fmt.Sprintf("%s %d", noun, i/len(materialNouns)+1)),
			str(materialGroups[rng.IntN(len(materialGroups))]), flt(prices[i])}
		if err := emit("materials", row); err != nil {
			return err
		}
	}

	// Orders first draw their items, so that NET_VALUE is the sum of the item values;
	// items and activities are emitted after all orders.
	type item struct {
		material, qty int
	}
	orderItems := make([][]item, n)
	orderTimes := make([]time.Time, n)
	orderStatus := make([]int, n)
	orderID := func(i int) string { return fmt.Sprintf("SO-%07d", i+1) }
	for i := range n {
		created := epoch.Add(time.Duration(rng.Int64N(int64(500*24*time.Hour))) / time.Second * time.Second)
		k := 1 + rng.IntN(4)
		items := make([]item, k)
		total := 0.0
		for j := range items {
			items[j] = item{material: rng.IntN(nm), qty: 1 + rng.IntN(20)}
			total += math.Round(prices[items[j].material]*float64(items[j].qty)*100) / 100
		}
		orderItems[i], orderTimes[i] = items, created
		st := rng.IntN(len(statuses))
		orderStatus[i] = st
		daysLate := query.Null(query.TypeInteger)
		if st != 0 && st != 4 { // delivered at some point
			daysLate = query.Int(int64(rng.IntN(15)) - 4)
		}
		currency := "EUR"
		if rng.IntN(5) == 0 {
			currency = "USD"
		}
		row := []query.Value{str(orderID(i)), str(custID(rng.IntN(nc))), query.Date(created), query.DateTime(created),
			str(statuses[st]), money(total), str(currency), daysLate, query.Bool(rng.IntN(7) == 0),
			str(salesOrgs[rng.IntN(len(salesOrgs))])}
		if err := emit("orders", row); err != nil {
			return err
		}
	}
	for i, items := range orderItems {
		for j, it := range items {
			price := prices[it.material]
			row := []query.Value{str(fmt.Sprintf("%s-%02d", orderID(i), (j+1)*10)), str(orderID(i)), str(matID(it.material)),
				query.Int(int64(it.qty)), flt(price), money(price * float64(it.qty))}
			if err := emit("order_items", row); err != nil {
				return err
			}
		}
	}
	actID := int64(0)
	for i := range n {
		// The happy path up to the order's status, with an occasional price change.
		last := lastStep[orderStatus[i]]
		t := orderTimes[i]
		for s := 0; s <= last; s++ {
			if s == 1 && rng.IntN(6) != 0 {
				continue // most orders keep their price
			}
			if s == 2 && rng.IntN(2) == 0 {
				continue // credit approval only for some
			}
			actID++
			row := []query.Value{query.Int(actID), str(orderID(i)), str(steps[s]), query.DateTime(t), query.Bool(s == 0 || s == 4)}
			if err := emit("activities", row); err != nil {
				return err
			}
			t = t.Add(time.Duration(1+rng.IntN(72)) * time.Hour)
		}
	}
	return nil
}

// TestTablesMatchRowGenerator holds the columnar generator to the row-by-row one: the same
// rows, and the same dictionaries in the same order (first appearance), for several sizes.
func TestTablesMatchRowGenerator(t *testing.T) {
	for _, n := range []int{1, 7, 1000, 4321} {
		tables, err := Tables(n)
		if err != nil {
			t.Fatal(err)
		}
		want := map[string]*column.Table{}
		bs := map[string][]*column.Builder{}
		for _, s := range Sources {
			bs[s.Name] = builders(s.Types)
		}
		err = refGenerate(n, func(source string, row []query.Value) error {
			for i, v := range row {
				if err := bs[source][i].Append(v); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range Sources {
			cols := make([]column.Column, len(s.Columns))
			for i, b := range bs[s.Name] {
				cols[i] = b.Build()
			}
			want[s.Name] = mustTable(s.Columns, cols...)
		}
		for _, s := range Sources {
			got, w := tables[s.Name], want[s.Name]
			if got.Rows() != w.Rows() {
				t.Fatalf("n=%d %s: %d rows, want %d", n, s.Name, got.Rows(), w.Rows())
			}
			for c, gc := range got.Columns() {
				wc := w.Columns()[c]
				for r := range w.Rows() {
					if gv, wv := gc.Value(r), wc.Value(r); gv != wv {
						t.Fatalf("n=%d %s.%s row %d: %#v, want %#v", n, s.Name, s.Columns[c], r, gv, wv)
					}
				}
				if ws, ok := wc.(*column.Strings); ok {
					if d := cmp.Diff(ws.Dict, gc.(*column.Strings).Dict); d != "" {
						t.Fatalf("n=%d %s.%s dictionary (-want +got):\n%s", n, s.Name, s.Columns[c], d)
					}
				}
			}
		}
	}
	if _, err := Tables(0); err == nil {
		t.Error("Tables(0) succeeded, want an error")
	}
}
