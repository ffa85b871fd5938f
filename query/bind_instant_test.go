package query

import (
	"fmt"
	"testing"
	"time"
)

// TestDateAgainstInstant checks that a date field compared with a date-time literal
// compares the date's midnight UTC with the instant (SPEC-NOTES), for every operator, in
// lists, bare and quoted literals and offsets, against the truth computed here with
// package time; a null date stays unknown. The bound expressions are evaluated by a small
// three-valued evaluator of date comparisons written for this test.
func TestDateAgainstInstant(t *testing.T) {
	dates := []string{"2025-05-31", "2025-06-01", "2025-06-02", ""} // "" is null
	instants := []string{
		"2025-06-01T00:00:00Z", "2025-06-01T00:00:00.000Z", "2025-06-01T12:30:00Z",
		"2025-05-31T23:59:59.999Z", "2025-06-01T02:00:00+03:00", "2025-06-02T00:00Z",
	}
	ops := map[string]func(a, b time.Time) bool{
		"eq": func(a, b time.Time) bool { return a.Equal(b) },
		"ne": func(a, b time.Time) bool { return !a.Equal(b) },
		"gt": func(a, b time.Time) bool { return a.After(b) },
		"ge": func(a, b time.Time) bool { return !a.Before(b) },
		"lt": func(a, b time.Time) bool { return a.Before(b) },
		"le": func(a, b time.Time) bool { return !a.After(b) },
	}
	for _, inst := range instants {
		at, err := time.Parse(time.RFC3339Nano, inst)
		if err != nil {
			at, err = time.Parse("2006-01-02T15:04Z07:00", inst)
		}
		if err != nil {
			t.Fatal(err)
		}
		for op, truth := range ops {
			for _, lit := range []string{inst, "'" + inst + "'"} {
				src := "D " + op + " " + lit
				e, err := ParseAndBind(src, testSchema)
				if err != nil {
					t.Fatalf("%s: %v", src, err)
				}
				for _, d := range dates {
					want := "unknown"
					if d != "" {
						mid, _ := time.Parse("2006-01-02", d)
						want = fmt.Sprint(truth(mid, at))
					}
					if got := evalDates(t, e, d); got != want {
						t.Errorf("%s with D = %q: %s, want %s (bound as %s)", src, d, got, want, Format(e))
					}
				}
			}
		}
		// An in list holds a date exactly when one of its instants is that date's midnight.
		src := "D in (" + inst + ", 2025-06-02T00:00:00Z)"
		e, err := ParseAndBind(src, testSchema)
		if err != nil {
			t.Fatalf("%s: %v", src, err)
		}
		for _, d := range dates {
			want := "unknown"
			if d != "" {
				mid, _ := time.Parse("2006-01-02", d)
				want = fmt.Sprint(mid.Equal(at) || d == "2025-06-02")
			}
			if got := evalDates(t, e, d); got != want {
				t.Errorf("%s with D = %q: %s, want %s (bound as %s)", src, d, got, want, Format(e))
			}
		}
	}
	if e, err := ParseAndBind("D in (2025-06-01T12:00:00Z)", testSchema); err != nil || evalDates(t, e, "2025-06-01") != "false" {
		t.Errorf("an in list of one instant that is no midnight: %v, %v; want a condition no date meets", e, err)
	}
	// A plan splits a filter at its top-level ANDs, each part a condition of its own on
	// the related rows; the condition no date meets must be one part, or two related rows
	// could each meet one half of it.
	if e, err := ParseAndBind("D eq 2025-06-01T12:00:00Z", testSchema); err != nil {
		t.Fatal(err)
	} else if l, ok := e.(*Logical); ok && l.Op == And {
		t.Errorf("D eq an instant that is no midnight is bound as a conjunction, %s", Format(e))
	}
}

// evalDates evaluates e, a tree of comparisons and in lists of the date field D, for D
// holding the date d ("" for null): "true", "false" or "unknown".
func evalDates(t *testing.T, e Expr, d string) string {
	t.Helper()
	var day int64
	if d != "" {
		tm, _ := time.Parse("2006-01-02", d)
		day = tm.Unix() / 86400
	}
	switch e := e.(type) {
	case *Compare:
		if d == "" {
			return "unknown"
		}
		if e.Value.Value.Type != TypeDate {
			t.Fatalf("%s compares D with %v, not a date", Format(e), e.Value.Value)
		}
		x := e.Value.Value.Int
		return fmt.Sprint(map[CompareOp]bool{Eq: day == x, Ne: day != x, Gt: day > x, Ge: day >= x, Lt: day < x, Le: day <= x}[e.Op])
	case *In:
		if d == "" {
			return "unknown"
		}
		for _, v := range e.Values {
			if v.Value.Type != TypeDate {
				t.Fatalf("%s lists %v, not a date", Format(e), v.Value)
			}
			if v.Value.Int == day {
				return "true"
			}
		}
		return "false"
	case *Logical:
		l, r := evalDates(t, e.L, d), evalDates(t, e.R, d)
		if e.Op == And {
			switch {
			case l == "false" || r == "false":
				return "false"
			case l == "true" && r == "true":
				return "true"
			}
			return "unknown"
		}
		switch {
		case l == "true" || r == "true":
			return "true"
		case l == "false" && r == "false":
			return "false"
		}
		return "unknown"
	case *Not:
		return map[string]string{"true": "false", "false": "true", "unknown": "unknown"}[evalDates(t, e.X, d)]
	}
	t.Fatalf("unexpected node %T", e)
	return ""
}
