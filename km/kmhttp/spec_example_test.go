package kmhttp_test

import (
	"fmt"
	"slices"
	"time"

	"github.com/kmkit/kmkit/km"
	"github.com/kmkit/kmkit/km/kmhttp"
	"github.com/kmkit/kmkit/query"
)

// ExampleSpec builds the OpenAPI document of a KM defined in code. With curated true the
// auto-generated record LOG is left out.
func ExampleSpec() {
	m := &km.KnowledgeModel{
		ID: "sales", Name: "Sales", Published: time.Date(2026, 1, 15, 10, 0, 0, 0, time.UTC),
		Records: []*km.Record{
			{ID: "ORDERS", Name: "Orders", Curated: true, Fields: []*km.Field{
				{ID: "ID", Name: "Order", Type: query.TypeString},
				{ID: "DAY", Name: "Order day", Type: query.TypeDate},
				{ID: "NET", Name: "Net value", Type: query.TypeFloat, Unit: "EUR"},
			}},
			{ID: "LOG", Name: "Log", Fields: []*km.Field{{ID: "AT", Type: query.TypeDateTime}}},
		},
	}
	if err := m.Compile(); err != nil {
		fmt.Println(err)
		return
	}
	doc := kmhttp.Spec(m, "https://kmkit.example", true)
	fmt.Println(doc.OpenAPI, doc.Info.Title, doc.Info.Version, doc.Servers[0].URL)
	paths := doc.Paths.InMatchingOrder()
	slices.Sort(paths)
	for _, p := range paths {
		fmt.Println(p)
	}
	row := doc.Components.Schemas["ORDERS.Row"].Value
	for _, f := range []string{"ID", "DAY", "NET"} {
		s := row.Properties[f].Value
		fmt.Printf("%s: %s %s %q\n", f, (*s.Type)[0], s.Format, s.Description)
	}
	// Output:
	// 3.0.3 Sales 2026-01-15T10:00:00Z https://kmkit.example
	// /intelligence/api/knowledge-models/sales/query
	// /intelligence/api/knowledge-models/sales/records/ORDERS/query
	// ID: string  ""
	// DAY: string date ""
	// NET: number double "Unit: EUR."
}
