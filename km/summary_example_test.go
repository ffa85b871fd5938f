package km_test

import (
	"encoding/json"
	"fmt"

	"github.com/kmkit/kmkit/km"
	"github.com/kmkit/kmkit/query"
)

// ExampleDescribeResult computes the statistics a store without a Summarizer leaves to the
// handler: pandas' describe of each column, nulls left out, top of the most frequent value
// (the first in row order among ties).
func ExampleDescribeResult() {
	res := &query.Result{
		Columns: []query.ColumnHeader{{Name: "NET", Type: query.TypeFloat}, {Name: "STATUS", Type: query.TypeString}},
		Rows: [][]query.Value{
			{query.Float(100.5), query.String("OPEN")},
			{query.Float(250), query.String("PAID")},
			{query.Null(query.TypeFloat), query.String("PAID")},
			{query.Float(80), query.String("OPEN")},
		},
	}
	for i, s := range km.DescribeResult(res) {
		b, _ := json.Marshal(s)
		fmt.Printf("%s: %s\n", res.Columns[i].Name, b)
	}
	// Output:
	// NET: {"count":3,"mean":143.5,"std":92.79951508493997,"min":80,"25_percentile":90.25,"50_percentile":100.5,"75_percentile":175.25,"max":250}
	// STATUS: {"count":4,"unique":2,"top":"OPEN","freq":"2"}
}
