// Package godata compares the kmkit filter parser with the filter parser of
// github.com/CiscoM31/godata on the same twenty expressions (../../query/testdata/bench_exprs.txt).
// It is a module of its own so that the root module does not depend on godata.
//
// Run the comparison with
//
//	go test -bench . -count 5
//
// or, for one table with the ratio, go run ./cmd/compare.
package godata

import (
	"bufio"
	"bytes"
	"context"
	_ "embed"
	"strings"

	cisco "github.com/CiscoM31/godata"
	"github.com/kmkit/kmkit/query"
)

// The file is copied next to this one by go:generate so that go:embed can reach it; the
// test TestExpressionsInSync checks the copy against the original.
//
//go:generate cp ../../query/testdata/bench_exprs.txt bench_exprs.txt
//go:embed bench_exprs.txt
var exprFile []byte

// Expressions returns the benchmark expressions: one a line, # starts a comment.
func Expressions() []string {
	var out []string
	sc := bufio.NewScanner(bytes.NewReader(exprFile))
	for sc.Scan() {
		if line := sc.Text(); line != "" && !strings.HasPrefix(line, "#") {
			out = append(out, line)
		}
	}
	return out
}

// ParseKmkit parses every expression with query.Parse.
func ParseKmkit(exprs []string) error {
	for _, s := range exprs {
		if _, err := query.Parse(s); err != nil {
			return err
		}
	}
	return nil
}

// ParseGodata parses every expression with godata.ParseFilterString.
func ParseGodata(ctx context.Context, exprs []string) error {
	for _, s := range exprs {
		if _, err := cisco.ParseFilterString(ctx, s); err != nil {
			return err
		}
	}
	return nil
}

// Bytes returns the total length of exprs.
func Bytes(exprs []string) int64 {
	var n int64
	for _, s := range exprs {
		n += int64(len(s))
	}
	return n
}
