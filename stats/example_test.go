package stats_test

import (
	"encoding/json"
	"fmt"
	"math"

	"github.com/kmkit/kmkit/stats"
)

func ExampleDescribeFloat() {
	netValue := []float64{120.5, math.NaN(), 99, 310.25, 99, 47.5}
	d := stats.DescribeFloat(netValue, nil) // NaN is a null, as for pandas
	b, _ := json.Marshal(d)
	fmt.Println(string(b))
	// Output:
	// {"count":5,"mean":135.25,"std":101.45288315272268,"min":47.5,"25_percentile":99,"50_percentile":99,"75_percentile":120.5,"max":310.25}
}

func ExampleDescribeStrings() {
	country := []string{"DE", "FR", "", "FR", "DE", "IT"}
	missing := func(i int) bool { return country[i] == "" }
	b, _ := json.Marshal(stats.DescribeStrings(country, missing))
	fmt.Println(string(b)) // DE and FR tie; DE comes first
	// Output:
	// {"count":5,"unique":3,"top":"DE","freq":"2"}
}

func ExampleDescribeInt() {
	single := stats.DescribeInt([]int64{42}, nil)
	b, _ := json.Marshal(single) // the std of one value is NaN for pandas, null in JSON
	fmt.Println(string(b))
	// Output:
	// {"count":1,"mean":42,"std":null,"min":42,"25_percentile":42,"50_percentile":42,"75_percentile":42,"max":42}
}
