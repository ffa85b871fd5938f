package query_test

import (
	"errors"
	"fmt"

	"github.com/kmkit/kmkit/query"
)

func ExampleParse() {
	e, err := query.Parse("not COUNTRY eq 'DE' and (5 lt NET_VALUE or STATUS is null)")
	if err != nil {
		panic(err)
	}
	fmt.Println(query.Format(e))
	// Output: not COUNTRY eq 'DE' and (NET_VALUE gt 5 or STATUS eq null)
}

func ExampleParseAndBind() {
	schema := query.MapSchema{"ORDERS.NET_VALUE": query.TypeFloat, "ORDERS.CREATED": query.TypeDateTime}
	e, err := query.ParseAndBind("ORDERS.NET_VALUE gt 100 and ORDERS.CREATED ge 2023-12-05T15:48+03:00", schema)
	if err != nil {
		panic(err)
	}
	and := e.(*query.Logical)
	fmt.Println(and.L.(*query.Compare).Value.Value.Float)
	fmt.Println(and.R.(*query.Compare).Value.Value.Format())
	// Output:
	// 100
	// 2023-12-05T12:48:00Z
}

func ExampleError() {
	_, err := query.ParseAndBind("NET_VALUE gt 'high'", query.MapSchema{"NET_VALUE": query.TypeFloat})
	var qe *query.Error
	if errors.As(err, &qe) {
		fmt.Println(qe.Status(), qe.Code, qe.Kind)
		fmt.Println(qe)
	}
	_, err = query.Parse("NET_VALUE add 1 gt 2", query.WithParam("$filter"))
	fmt.Println(err)
	// Output:
	// 400 FILTER_TYPE_MISMATCH type
	// filterExpr: position 14: NET_VALUE is a float and cannot be compared with the text 'high'; write a number such as 4.2
	// $filter: position 11: the arithmetic operator add is not supported
}
