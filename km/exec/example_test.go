package exec_test

import (
	"context"
	"fmt"
	"strings"
	"testing/fstest"

	"github.com/kmkit/kmkit/km"
	"github.com/kmkit/kmkit/km/exec"
	"github.com/kmkit/kmkit/query"
	"github.com/kmkit/kmkit/query/column"
)

// model loads the KM of the examples: orders and their items, and one KPI.
func model() *km.KnowledgeModel {
	const def = `id: shop
records:
  - id: ORDERS
    key: ORDER_ID
    fields: [{id: ORDER_ID, type: string}, {id: COUNTRY, type: string}, {id: NET_VALUE, type: float}]
  - id: ITEMS
    key: ITEM_ID
    fields: [{id: ITEM_ID, type: string}, {id: ORDER_ID, type: string}, {id: QTY, type: integer}]
relationships:
  - {from: ITEMS.ORDER_ID, to: ORDERS.ORDER_ID}
kpis:
  - {id: QTY, expr: sum(ITEMS.QTY)}
`
	models, err := km.Load(fstest.MapFS{"models/shop.yaml": {Data: []byte(def)}})
	if err != nil {
		panic(err)
	}
	return models[0]
}

func load(csv string, schema column.Schema) *column.Table {
	t, err := column.LoadCSV(strings.NewReader(csv), schema)
	if err != nil {
		panic(err)
	}
	return t
}

func ExampleSource() {
	m := model()
	orders := load("ORDER_ID,COUNTRY,NET_VALUE\nA1,DE,120.5\nA2,FR,80\nA3,DE,\nA4,DE,300\n",
		column.Schema{"ORDER_ID": query.TypeString, "COUNTRY": query.TypeString, "NET_VALUE": query.TypeFloat})
	items := load("ITEM_ID,ORDER_ID,QTY\n", column.Schema{"ITEM_ID": query.TypeString, "ORDER_ID": query.TypeString, "QTY": query.TypeInteger})
	src := exec.NewSource(m, map[string]*column.Table{"ORDERS": orders, "ITEMS": items})

	// km.Service compiles a request so; here the plan is compiled directly.
	filter, err := query.ParseAndBind("COUNTRY eq 'DE'", query.MapSchema{"COUNTRY": query.TypeString})
	if err != nil {
		panic(err)
	}
	p, err := km.NewPlan(m, &km.PlanRequest{Record: "ORDERS",
		Fields:   []string{"ORDER_ID", "NET_VALUE"},
		Sort:     []query.SortTerm{{Field: "NET_VALUE", Desc: true}},
		PageSize: 10,
		Count:    true,
		Filters:  []query.Expr{filter}})
	if err != nil {
		panic(err)
	}
	res, err := src.RunContext(context.Background(), p)
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

func ExampleSource_kpis() {
	m := model()
	items := load("ITEM_ID,ORDER_ID,QTY\nI1,A1,2\nI2,A1,5\nI3,A2,1\nI4,A9,7\n",
		column.Schema{"ITEM_ID": query.TypeString, "ORDER_ID": query.TypeString, "QTY": query.TypeInteger})
	orders := load("ORDER_ID,COUNTRY,NET_VALUE\nA1,DE,1\nA2,FR,2\n",
		column.Schema{"ORDER_ID": query.TypeString, "COUNTRY": query.TypeString, "NET_VALUE": query.TypeFloat})
	src := exec.NewSource(m, map[string]*column.Table{"ORDERS": orders, "ITEMS": items})

	// The KPI is summed per country of the items' orders; I4's order is missing, so it
	// falls in the group of no country.
	p, err := km.NewPlan(m, &km.PlanRequest{
		Fields:   []string{"ORDERS.COUNTRY"},
		KPIs:     []string{"QTY"},
		Sort:     []query.SortTerm{{Field: "QTY", Desc: true}}, // ties keep the groups' order
		PageSize: 10,
	})
	if err != nil {
		panic(err)
	}
	res, err := src.RunContext(context.Background(), p)
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
