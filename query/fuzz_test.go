package query

import (
	"bufio"
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// benchExpressions reads testdata/bench_exprs.txt: one expression a line, # comments.
func benchExpressions(tb testing.TB) []string {
	tb.Helper()
	f, err := os.Open("testdata/bench_exprs.txt")
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close()
	var out []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if line := sc.Text(); line != "" && !strings.HasPrefix(line, "#") {
			out = append(out, line)
		}
	}
	if err := sc.Err(); err != nil {
		tb.Fatal(err)
	}
	return out
}

var fuzzSeeds = []string{
	"A eq 1", "not A eq 1 and B gt 2.5 or C in ('x','y')", "contains(R.F, 'a''b')",
	"5 lt A", "A is not null", "A not eq DE", "D ge 2023-12-05T15:48+03:00",
	"(A eq 1", "A eq", "A EQ 1", "Price add 2 eq 3", "A eq 2023-12-05T15:48 03:00", "",
	"A/B eq 1", "tolower(A) eq 'x'", "A in ['x']", "null eq A", "A eq 'abc", "A in ()",
	"T eq 15:48:44.123", "A eq -2e3", "A eq 1972-06-30T23:59:60Z", "A eq O2C-17",
	"((((A eq 1))))", "not not not A eq 1", "A eq 'ü' and Ä ne ä", "A eq \xff",
	"$it eq 1", "A eq @p", "Products/any(p:p eq 1)", "A eq 9223372036854775808",
}

// FuzzParse checks that Parse never panics, that every error is an *Error with a position
// inside the text, and that accepted trees print to text that parses to the same tree.
func FuzzParse(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add(s)
	}
	for _, s := range benchExpressions(f) {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, src string) {
		e, err := Parse(src)
		if err != nil {
			var qe *Error
			if !errors.As(err, &qe) {
				t.Fatalf("Parse(%q) error %v is not an *Error", src, err)
			}
			if qe.Kind < KindSyntax || qe.Kind > KindLimit || qe.Code == "" || qe.Msg == "" {
				t.Fatalf("Parse(%q): malformed error %#v", src, qe)
			}
			if qe.Pos != NoPos && (qe.Pos < 0 || int(qe.Pos) > len(src)) {
				t.Fatalf("Parse(%q): position %d outside the text", src, qe.Pos)
			}
			return
		}
		text := Format(e)
		back, err := Parse(text)
		if err != nil {
			t.Fatalf("Parse(%q) accepted, but its Format %q fails: %v", src, text, err)
		}
		if diff := cmp.Diff(e, back, ignorePos); diff != "" {
			t.Fatalf("Parse(%q) and Parse(Format) = Parse(%q) differ:\n%s", src, text, diff)
		}
		// Binding against a schema that knows every field must not panic either.
		if _, err := Bind(e, anySchema{}); err != nil {
			var qe *Error
			if !errors.As(err, &qe) || qe.Kind != KindType {
				t.Fatalf("Bind(%q): %v", src, err)
			}
		}
	})
}

// anySchema types every field by the first letter of its name.
type anySchema struct{}

func (anySchema) FieldType(name string) (Type, bool) {
	types := []Type{TypeString, TypeInteger, TypeFloat, TypeBoolean, TypeDate, TypeDateTime, TypeTimestamp, TypeTime}
	return types[int(name[0])%len(types)], true
}
