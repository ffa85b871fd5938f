package godata

import (
	"bytes"
	"context"
	"os"
	"testing"
)

func TestExpressionsInSync(t *testing.T) {
	orig, err := os.ReadFile("../../query/testdata/bench_exprs.txt")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(orig, exprFile) {
		t.Fatal("bench_exprs.txt differs from ../../query/testdata/bench_exprs.txt: run go generate")
	}
	if n := len(Expressions()); n != 20 {
		t.Fatalf("%d expressions, want 20", n)
	}
}

func TestBothParsersAccept(t *testing.T) {
	exprs := Expressions()
	if err := ParseKmkit(exprs); err != nil {
		t.Errorf("kmkit: %v", err)
	}
	for _, s := range exprs {
		if err := ParseGodata(context.Background(), []string{s}); err != nil {
			t.Errorf("godata rejects %q: %v", s, err)
		}
	}
}

func benchParse(b *testing.B, parse func([]string) error) {
	exprs := Expressions()
	b.SetBytes(Bytes(exprs))
	b.ReportAllocs()
	for b.Loop() {
		if err := parse(exprs); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(exprs)), "ns/expr")
}

// BenchmarkFilterParse parses the twenty expressions with each parser in the same run.
func BenchmarkFilterParse(b *testing.B) {
	ctx := context.Background()
	b.Run("parser=kmkit", func(b *testing.B) { benchParse(b, ParseKmkit) })
	b.Run("parser=godata", func(b *testing.B) {
		benchParse(b, func(e []string) error { return ParseGodata(ctx, e) })
	})
}

// BenchmarkRatio measures both parsers back to back and reports how many times faster
// kmkit is (speedup) beside each one's ns/expr.
func BenchmarkRatio(b *testing.B) {
	ctx := context.Background()
	exprs := Expressions()
	var kmkit, godata float64
	for b.Loop() {
		k := testing.Benchmark(func(b *testing.B) {
			for b.Loop() {
				_ = ParseKmkit(exprs)
			}
		})
		g := testing.Benchmark(func(b *testing.B) {
			for b.Loop() {
				_ = ParseGodata(ctx, exprs)
			}
		})
		kmkit += float64(k.NsPerOp())
		godata += float64(g.NsPerOp())
	}
	n := float64(b.N * len(exprs))
	b.ReportMetric(kmkit/n, "kmkit-ns/expr")
	b.ReportMetric(godata/n, "godata-ns/expr")
	b.ReportMetric(godata/kmkit, "speedup")
}
