package query

import (
	"fmt"
	"strings"
	"testing"
)

// TestInListsDoNotCountTowardMaxLength: the values of an in list count toward MaxIn, not
// MaxLength, so that the documented 1000 values fit with string keys (issue 30: 630 order
// ids of the demo were refused as 8203 bytes long).
func TestInListsDoNotCountTowardMaxLength(t *testing.T) {
	ids := func(n int) string {
		v := make([]string, n)
		for i := range v {
			v[i] = fmt.Sprintf("'SO-%07d'", i)
		}
		return strings.Join(v, ", ")
	}
	long := "S eq '" + strings.Repeat("x", DefaultMaxLength-7) + "'" // exactly 8192 bytes
	for _, c := range []struct {
		name, src, err string
	}{
		{"1000 order ids", "S in (" + ids(1000) + ")", ""},
		{"1000 order ids, twice, with more", "S in (" + ids(1000) + ") or (S in (" + ids(1000) + ") and I gt 1)", ""},
		{"1000 order ids under OData's scalar grammar", "tolower(S) in (" + ids(1000) + ")", ""},
		{"1001 order ids", "S in (" + ids(1001) + ")", "the in list has more than 1000 values"},
		{"8192 bytes besides the list", long + " and S in ('a')", "the expression is 8204 bytes long without the values of its in lists; at most 8192 are allowed"},
		{"8193 bytes and no list", long + " ", "the expression is 8193 bytes long; at most 8192 are allowed"},
		{"past every bound", "S in (" + strings.Repeat("'"+strings.Repeat("y", 70)+"', ", 1000) + "'z')",
			"the expression is 74010 bytes long; at most 8192 are allowed, and 64000 more in the values of in lists"},
	} {
		_, err := ParseAndBind(c.src, testSchema, ODataSyntax())
		switch {
		case c.err == "" && err != nil:
			t.Errorf("%s: %v", c.name, err)
		case c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)):
			t.Errorf("%s: %v, want %q", c.name, err, c.err)
		}
	}
}
