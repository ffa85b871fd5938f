package namelist

import (
	"fmt"
	"slices"
	"testing"
)

func TestDedup(t *testing.T) {
	long := make([]string, 0, 40)
	for i := range 40 {
		long = append(long, fmt.Sprint(i%20))
	}
	want20 := make([]string, 20)
	for i := range want20 {
		want20[i] = fmt.Sprint(i)
	}
	for _, tt := range []struct{ in, want []string }{
		{nil, []string{}},
		{[]string{"A", "B", "A", "C", "B"}, []string{"A", "B", "C"}},
		{[]string{"A", "B"}, []string{"A", "B"}},
		{long, want20}, // beyond the pairwise comparison
	} {
		if got := Dedup(tt.in); !slices.Equal(got, tt.want) {
			t.Errorf("Dedup(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
	// Appending to the result never writes into the caller's slice.
	in := make([]string, 2, 4)
	in[0], in[1] = "A", "B"
	out := append(Dedup(in), "C")
	if in[:3][2] == "C" || !slices.Equal(out, []string{"A", "B", "C"}) {
		t.Errorf("Dedup shares its backing array: %q", in[:3])
	}
}

func TestJoin(t *testing.T) {
	if got := Join([]string{"A", "B"}); got != "A, B" {
		t.Errorf("Join = %q", got)
	}
	names := []string{"1", "2", "3", "4", "5", "6", "7", "8", "9", "10", "11", "12"}
	if got, want := Join(names), "1, 2, 3, 4, 5, 6, 7, 8, 9, 10 and 2 more"; got != want {
		t.Errorf("Join of 12 = %q, want %q", got, want)
	}
}

func TestPlural(t *testing.T) {
	if Plural(1) != "" || Plural(0) != "s" || Plural(2) != "s" {
		t.Errorf("Plural: 1 %q, 0 %q, 2 %q", Plural(1), Plural(0), Plural(2))
	}
}
