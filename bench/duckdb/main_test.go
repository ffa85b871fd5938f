package main

import (
	"testing"
)

// TestAnswersCompare checks the comparison that guards the benchmark: kmkit's page read in
// header order, cells equal as text or as numbers within 1e-9, nulls only equal to nulls.
func TestAnswersCompare(t *testing.T) {
	body := []byte(`{"page":0,"content":{"headers":[{"id":"B"},{"id":"A"}],"data":[{"A":1.5,"B":"x"},{"A":null,"B":"2025-01-01"}]}}`)
	got, err := kmkitRows(body)
	if err != nil {
		t.Fatal(err)
	}
	if err := sameRows(got, [][]any{{"x", 1.5}, {"2025-01-01", nil}}); err != nil {
		t.Errorf("equal answers differ: %v", err)
	}
	for _, want := range [][][]any{
		{{"x", 1.5}},
		{{"x", 1.5000001}, {"2025-01-01", nil}},
		{{"x", 1.5}, {"2025-01-01", 0.0}},
		{{"y", 1.5}, {"2025-01-01", nil}},
	} {
		if err := sameRows(got, want); err == nil {
			t.Errorf("%v compared equal to %v", want, got)
		}
	}
	if !sameCell("100", 100.00000000001) || !sameCell(nil, nil) || sameCell(nil, "") || sameCell("7", "8") {
		t.Error("sameCell")
	}
}
