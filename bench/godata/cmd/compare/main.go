// Command compare measures the kmkit and godata filter parsers on the twenty benchmark
// expressions, alternating them for a number of rounds, and prints each round and the
// median speed-up of kmkit over godata.
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"slices"
	"testing"

	bench "github.com/kmkit/kmkit/bench/godata"
)

func main() {
	rounds := flag.Int("rounds", 5, "number of measurement rounds")
	flag.Parse()
	ctx := context.Background()
	exprs := bench.Expressions()
	if err := bench.ParseKmkit(exprs); err != nil {
		log.Fatalf("kmkit: %v", err)
	}
	if err := bench.ParseGodata(ctx, exprs); err != nil {
		log.Fatalf("godata: %v", err)
	}
	size := float64(bench.Bytes(exprs))
	fmt.Printf("%d expressions, %d bytes\n", len(exprs), int(size))
	fmt.Printf("%-6s %16s %12s %16s %12s %8s\n", "round", "kmkit ns/expr", "kmkit MB/s", "godata ns/expr", "godata MB/s", "speedup")
	var ratios []float64
	for r := 1; r <= *rounds; r++ {
		k := testing.Benchmark(func(b *testing.B) {
			for b.Loop() {
				_ = bench.ParseKmkit(exprs)
			}
		})
		g := testing.Benchmark(func(b *testing.B) {
			for b.Loop() {
				_ = bench.ParseGodata(ctx, exprs)
			}
		})
		kns, gns := float64(k.NsPerOp()), float64(g.NsPerOp())
		ratios = append(ratios, gns/kns)
		fmt.Printf("%-6d %16.0f %12.1f %16.0f %12.1f %7.1fx\n", r,
			kns/float64(len(exprs)), size/kns*1e3, gns/float64(len(exprs)), size/gns*1e3, gns/kns)
	}
	slices.Sort(ratios)
	fmt.Printf("median speedup of kmkit over godata: %.1fx\n", ratios[len(ratios)/2])
}
