package query

import (
	"testing"
)

// BenchmarkParse parses the twenty expressions of testdata/bench_exprs.txt per iteration.
// bench/godata measures github.com/CiscoM31/godata on the same expressions.
func BenchmarkParse(b *testing.B) {
	exprs := benchExpressions(b)
	var size int64
	for _, s := range exprs {
		if _, err := Parse(s); err != nil {
			b.Fatalf("%s: %v", s, err)
		}
		size += int64(len(s))
	}
	b.SetBytes(size)
	b.ReportAllocs()
	for b.Loop() {
		for _, s := range exprs {
			if _, err := Parse(s); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(exprs)), "ns/expr")
}

// BenchmarkParseAndBind adds binding to BenchmarkParse.
func BenchmarkParseAndBind(b *testing.B) {
	exprs := benchExpressions(b)
	var size int64
	for _, s := range exprs {
		if _, err := ParseAndBind(s, anySchemaStringsFirst{}); err != nil {
			b.Fatalf("%s: %v", s, err)
		}
		size += int64(len(s))
	}
	b.SetBytes(size)
	b.ReportAllocs()
	for b.Loop() {
		for _, s := range exprs {
			if _, err := ParseAndBind(s, anySchemaStringsFirst{}); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(exprs)), "ns/expr")
}

// anySchemaStringsFirst types the benchmark's fields.
type anySchemaStringsFirst struct{}

var benchTypes = map[string]Type{
	"NetValue": TypeFloat, "CreatedAt": TypeDateTime, "OrderDate": TypeDate, "DaysLate": TypeInteger,
	"Priority": TypeInteger, "IsPaid": TypeBoolean, "Quantity": TypeInteger, "A": TypeInteger,
	"B": TypeInteger, "C": TypeInteger, "D": TypeInteger, "E": TypeInteger, "F": TypeInteger,
	"Amount": TypeFloat, "ChangedAt": TypeTimestamp,
}

func (anySchemaStringsFirst) FieldType(name string) (Type, bool) {
	if t, ok := benchTypes[name]; ok {
		return t, true
	}
	return TypeString, true
}
