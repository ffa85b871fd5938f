package exec_test

import (
	"fmt"
	"strings"

	"github.com/kmkit/kmkit/query"
	"github.com/kmkit/kmkit/query/column"
	"github.com/kmkit/kmkit/query/exec"
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
		Sort:     []query.SortKey{{Field: "NET_VALUE", Desc: true}},
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
