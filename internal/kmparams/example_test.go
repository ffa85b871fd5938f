package kmparams_test

import (
	"fmt"

	"github.com/kmkit/kmkit/internal/kmparams"
	"github.com/kmkit/kmkit/query"
)

func ExampleSplitTopLevel() {
	for _, part := range kmparams.SplitTopLevel("COUNTRY in ('DE', 'AT'),NAME eq 'Smith, J.'") {
		fmt.Println(part)
	}
	// Output:
	// COUNTRY in ('DE', 'AT')
	// NAME eq 'Smith, J.'
}

func ExampleParseSort() {
	keys, err := kmparams.ParseSort("-NET_VALUE,+COUNTRY")
	if err != nil {
		panic(err)
	}
	fmt.Println(keys, query.CheckSort(keys, []string{"NET_VALUE", "COUNTRY"}))
	_, err = kmparams.ParseSort("A,-A")
	fmt.Println(err)
	// Output:
	// [-NET_VALUE +COUNTRY] <nil>
	// sort: field "A" is sorted both ascending and descending
}
