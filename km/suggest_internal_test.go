package km

import (
	"slices"
	"testing"
)

func TestClosest(t *testing.T) {
	ids := []string{"ORDER_ID", "ORDER_DATE", "STATUS", "NET_VALUE", "ID", "T"}
	for _, c := range []struct {
		name string
		want []string
	}{
		{"order_id", []string{"ORDER_ID"}},  // case first, even with others near
		{"STAUS", []string{"STATUS"}},       // one transposition: distance 2
		{"NETVALUE", []string{"NET_VALUE"}}, // one insertion
		{"ORDER_IDS", []string{"ORDER_ID"}}, // nearest first, ORDER_DATE is farther
		{"x", nil},                          // two characters or fewer: case only
		{"id", []string{"ID"}},              // ... which still counts
		{"CUSTOMER_NAME", nil},              // nothing near
		{"STATUS", nil},                     // an exact id is no suggestion
		{"ORDER_DAT", []string{"ORDER_DATE"}},
	} {
		if got := closest(c.name, ids); !slices.Equal(got, c.want) {
			t.Errorf("closest(%q) = %v, want %v", c.name, got, c.want)
		}
	}
}

func TestEditDistance(t *testing.T) {
	for _, c := range []struct {
		a, b  string
		limit int
		want  int
	}{
		{"kitten", "sitting", 5, 3},
		{"kitten", "sitting", 2, 3}, // past the limit: limit+1
		{"ÄBC", "äbd", 3, 1},        // case-insensitive, by runes
		{"", "abc", 3, 3},
	} {
		if got := editDistance(c.a, c.b, c.limit); got != c.want {
			t.Errorf("editDistance(%q, %q, %d) = %d, want %d", c.a, c.b, c.limit, got, c.want)
		}
	}
}

func TestDidYouMean(t *testing.T) {
	sug := func(s string) []string {
		return map[string][]string{"a": {"A"}, "b": {"B1", "B2", "B3"}}[s]
	}
	for _, c := range []struct {
		unknown []string
		want    string
	}{
		{[]string{"a"}, "; did you mean A?"},
		{[]string{"b"}, "; did you mean B1, B2 or B3?"},
		{[]string{"a", "z", "b"}, "; did you mean A for a, B1, B2 or B3 for b?"},
		{[]string{"z"}, ""},
	} {
		if got := DidYouMean(c.unknown, sug); got != c.want {
			t.Errorf("DidYouMean(%v) = %q, want %q", c.unknown, got, c.want)
		}
	}
}
