package exec_test

import (
	"fmt"
	"strings"

	"github.com/kmkit/kmkit/km/exec"
	"github.com/kmkit/kmkit/query"
	"github.com/kmkit/kmkit/query/column"
)

func ExampleRun() {
	const data = "ORDER_ID,COUNTRY,NET_VALUE\n" +
		"A1,DE,120.5\n" +
		"A2,FR,80\n" +
		"A3,DE,\n" +
		"A4,DE,300\n"
	schema := column.Schema{"ORDER_ID": query.TypeString, "COUNTRY": query.TypeString, "NET_VALUE": query.TypeFloat}
	t, err := column.LoadCSV(strings.NewReader(data), schema)
	if err != nil {
		panic(err)
	}
	filter, err := query.ParseAndBind("COUNTRY eq 'DE'", query.MapSchema(schema))
	if err != nil {
		panic(err)
	}
	res, err := exec.Run(exec.FromTable(t), &query.Request{
		Fields:   []string{"ORDER_ID", "NET_VALUE"},
		Filter:   filter,
		Sort:     []query.SortTerm{{Field: "NET_VALUE", Desc: true}},
		PageSize: 10,
		Count:    true,
	})
	if err != nil {
		panic(err)
	}
	for _, row := range res.Rows {
		fmt.Println(row[0].Format(), row[1].Format())
	}
	fmt.Println("count:", res.Count)
	// Output:
	// A4 300
	// A1 120.5
	// A3 <nil>
	// count: 3
}

func ExampleNewFrame() {
	load := func(csv string, schema column.Schema) *column.Table {
		t, err := column.LoadCSV(strings.NewReader(csv), schema)
		if err != nil {
			panic(err)
		}
		return t
	}
	items := load("ITEM_ID,ORDER_ID,QTY\nI1,A1,2\nI2,A1,5\nI3,A2,1\nI4,A9,7\n",
		column.Schema{"ITEM_ID": query.TypeString, "ORDER_ID": query.TypeString, "QTY": query.TypeInteger})
	orders := load("ORDER_ID,COUNTRY\nA1,DE\nA2,FR\n",
		column.Schema{"ORDER_ID": query.TypeString, "COUNTRY": query.TypeString})

	// Each item meets its order (many-to-one); I4's order is missing, so its ORDERS
	// columns read null.
	f, err := exec.NewFrame("ITEMS", items, exec.Join{From: "ITEMS.ORDER_ID", Record: "ORDERS", Table: orders, Key: "ORDER_ID"})
	if err != nil {
		panic(err)
	}
	res, err := exec.Run(f, &query.Request{
		Fields:   []string{"ORDERS.COUNTRY"},
		KPIs:     []query.NamedMetric{{ID: "QTY", Metric: &query.Aggregate{Func: query.AggSum, Field: "ITEMS.QTY"}}},
		Sort:     []query.SortTerm{{Field: "QTY", Desc: true}}, // ties keep the groups' order
		PageSize: 10,
	})
	if err != nil {
		panic(err)
	}
	for _, row := range res.Rows {
		fmt.Println(row[0].Format(), row[1].Format())
	}
	// Output:
	// DE 7
	// <nil> 7
	// FR 1
}
