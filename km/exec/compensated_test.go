package exec

import (
	"fmt"
	"math/big"
	"math/rand/v2"
	"testing"
)

// TestCompensatedSum checks the executor's compensated sums against exact rational
// arithmetic (math/big), the outside oracle: the sum of the doubles as given, rounded
// once to the nearest double.
func TestCompensatedSum(t *testing.T) {
	exact := func(xs []float64) float64 {
		s := new(big.Rat)
		for _, x := range xs {
			s.Add(s, new(big.Rat).SetFloat64(x))
		}
		f, _ := s.Float64()
		return f
	}
	rng := rand.New(rand.NewPCG(6, 29))
	cases := map[string][]float64{
		"cancellation":    {1e16, 1, -1e16},
		"tiny after huge": {1, 1e100, 1, -1e100},
	}
	for _, n := range []int{10, 1000, 100000} {
		amounts := make([]float64, n) // two decimals, as money is
		for i := range amounts {
			amounts[i] = float64(rng.IntN(100_000_000)) / 100
		}
		cases[fmt.Sprintf("%d amounts", n)] = amounts
	}
	for name, xs := range cases {
		var k compensated
		plain := 0.0
		for _, x := range xs {
			k.add(x)
			plain += x
		}
		got, want := k.value(), exact(xs)
		if got != want {
			t.Errorf("%s (%d values): compensated %v, exact %v (plain %v)", name, len(xs), got, want, plain)
		}
		if plain != want {
			t.Logf("%s: plain addition gives %v", name, plain)
		}
	}
}
