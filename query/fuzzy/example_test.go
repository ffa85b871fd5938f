package fuzzy_test

import (
	"fmt"

	"github.com/kmkit/kmkit/query/fuzzy"
)

func ExampleMatcher_Score() {
	m := fuzzy.New("materail")
	for _, v := range []string{"Raw Material", "Matter", "Screw"} {
		s := m.Score(v)
		fmt.Println(v, s, s >= fuzzy.DefaultPrecision)
	}
	fmt.Println("München", fuzzy.New("Munchen").Score("München"))
	// Output:
	// Raw Material 88 true
	// Matter 50 false
	// Screw 13 false
	// München 95
}
