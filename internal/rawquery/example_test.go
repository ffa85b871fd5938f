package rawquery_test

import (
	"fmt"

	"github.com/kmkit/kmkit/internal/kmparams"
	"github.com/kmkit/kmkit/internal/rawquery"
)

func ExampleParse() {
	ps, err := rawquery.Parse("filterExpr=D%20ge%202023-12-05T15:48+03:00&fields=A,B&fields=C")
	if err != nil {
		panic(err)
	}
	fmt.Println(ps.Get("filterExpr"))
	fmt.Println(kmparams.ParseList(ps.Values("fields")))
	// Output:
	// D ge 2023-12-05T15:48+03:00
	// [A B C]
}
