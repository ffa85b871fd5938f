package godata

import (
	"bytes"
	"context"
	"os"
	"testing"
	"time"
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

// BenchmarkRatio parses the twenty expressions with both parsers in every iteration,
// timing each, and reports each one's ns/expr and how many times faster kmkit is.
func BenchmarkRatio(b *testing.B) {
	ctx := context.Background()
	exprs := Expressions()
	var kmkit, godata time.Duration
	for b.Loop() {
		t0 := time.Now()
		if err := ParseKmkit(exprs); err != nil {
			b.Fatal(err)
		}
		t1 := time.Now()
		if err := ParseGodata(ctx, exprs); err != nil {
			b.Fatal(err)
		}
		kmkit += t1.Sub(t0)
		godata += time.Since(t1)
	}
	n := float64(b.N * len(exprs))
	b.ReportMetric(float64(kmkit.Nanoseconds())/n, "kmkit-ns/expr")
	b.ReportMetric(float64(godata.Nanoseconds())/n, "godata-ns/expr")
	b.ReportMetric(float64(godata)/float64(kmkit), "speedup")
}
