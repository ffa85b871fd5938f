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

// TestSummaryCompare checks the comparison of kmkit's summary with DuckDB's SUMMARIZE: the
// fields in order, the rows, each field's values from the null percentage, and a numeric
// field's min, max and mean; it fails on any of them differing.
func TestSummaryCompare(t *testing.T) {
	body := []byte(`{"content":{"headers":[{"id":"V"},{"id":"S"}],"data":[]},"shape":[2000,2],` +
		`"summary":{"V":{"count":1990,"mean":2.5,"std":1,"min":-1,"25_percentile":0,"50_percentile":2,"75_percentile":3,"max":9.25},` +
		`"S":{"count":2000,"unique":3,"top":"a","freq":"900"}}}`)
	row := func(name, min, max string, avg any, count, nulls string) []any {
		return []any{name, "T", min, max, "3", avg, "1", "0", "2", "3", count, nulls}
	}
	duck := [][]any{row("V", "-1.0", "9.25", "2.5", "2000", "0.50"), row("S", "a", "c", nil, "2000", "0.00")}
	if err := sameSummary(body, duck); err != nil {
		t.Fatalf("equal summaries differ: %v", err)
	}
	for name, bad := range map[string][][]any{
		"min":               {row("V", "-2", "9.25", "2.5", "2000", "0.50"), duck[1]},
		"max":               {row("V", "-1", "9.5", "2.5", "2000", "0.50"), duck[1]},
		"mean":              {row("V", "-1", "9.25", "2.5000001", "2000", "0.50"), duck[1]},
		"rows":              {row("V", "-1", "9.25", "2.5", "2001", "0.50"), duck[1]},
		"nulls":             {row("V", "-1", "9.25", "2.5", "2000", "0.60"), duck[1]},
		"categorical count": {duck[0], row("S", "a", "c", nil, "2000", "1.00")},
		"order":             {duck[1], duck[0]},
		"columns":           {duck[0]},
	} {
		if err := sameSummary(body, bad); err == nil {
			t.Errorf("%s: a different summary compared equal", name)
		}
	}
}

// TestNewSearchTerms: the new-term search never repeats a term (each run would otherwise
// find its scores in kmkit's cache), and its path carries the term escaped.
func TestNewSearchTerms(t *testing.T) {
	searchRuns = 0
	seen := map[string]bool{}
	for range 1000 {
		term := newSearchTerm()
		if seen[term] {
			t.Fatalf("term %q repeated after %d runs", term, len(seen))
		}
		seen[term] = true
	}
	searchRuns = 0
	q := benchQuery{path: "/x?searchTerm=%s&pageSize=50", newTerm: true}
	if got, want := q.request(), "/x?searchTerm=rossi+helth&pageSize=50"; got != want {
		t.Errorf("path %q, want %q", got, want)
	}
}
