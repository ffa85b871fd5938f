package rawquery

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/kmkit/kmkit/internal/kmparams"
	"github.com/kmkit/kmkit/problem"
	"github.com/kmkit/kmkit/query"
)

// wantErr checks err: nil when code is empty, else a parameter *query.Error with code and
// message msg, answered with 400.
func wantErr(t *testing.T, name string, err error, code, msg string) {
	t.Helper()
	if code == "" {
		if err != nil {
			t.Errorf("%s: unexpected error %v", name, err)
		}
		return
	}
	var qe *query.Error
	if !errors.As(err, &qe) {
		t.Errorf("%s: got %v, want %s %q", name, err, code, msg)
		return
	}
	if qe.Kind != query.KindParameter || qe.Code != code || qe.Error() != msg || qe.Status() != 400 {
		t.Errorf("%s:\n got %v %s %d %q\nwant parameter %s 400 %q", name, qe.Kind, qe.Code, qe.Status(), qe.Error(), code, msg)
	}
}

func TestParse(t *testing.T) {
	tests := []struct {
		raw       string
		want      Params
		code, msg string
	}{
		{"", nil, "", ""},
		{"a=1&b=2&a=3", Params{{"a", "1"}, {"b", "2"}, {"a", "3"}}, "", ""},
		{"filterExpr=D%20ge%202023-12-05T15:48+03:00", Params{{"filterExpr", "D ge 2023-12-05T15:48+03:00"}}, "", ""},
		{"filterExpr=D%20ge%202023-12-05T15:48%2B03:00", Params{{"filterExpr", "D ge 2023-12-05T15:48+03:00"}}, "", ""},
		{"filterExpr=A%20eq%20'x;y'&fields=A", Params{{"filterExpr", "A eq 'x;y'"}, {"fields", "A"}}, "", ""},
		{"a&&b=&=c", Params{{"a", ""}, {"b", ""}, {"", "c"}}, "", ""},
		{"sort=%2BA,-B", Params{{"sort", "+A,-B"}}, "", ""},
		{"sort=+A,-B", Params{{"sort", " A,-B"}}, "", ""},
		{"filterExpr=A+eq+'x+y'", Params{{"filterExpr", "A eq 'x y'"}}, "", ""},
		{"a+b=c", Params{{"a b", "c"}}, "", ""},
		{"a=x=y", Params{{"a", "x=y"}}, "", ""},
		{"%24filter=A%20eq%201", Params{{"$filter", "A eq 1"}}, "", ""},
		{"a=%zz", nil, problem.CodeParameterIllegal, "a: the value has a malformed percent-escape"},
		{"a=%4", nil, problem.CodeParameterIllegal, "a: the value has a malformed percent-escape"},
		{"a=x%", nil, problem.CodeParameterIllegal, "a: the value has a malformed percent-escape"},
		{"a+b=%", nil, problem.CodeParameterIllegal, "a b: the value has a malformed percent-escape"},
		{"%g=1", nil, problem.CodeParameterIllegal, `query: parameter name "%g" has a malformed percent-escape`},
	}
	for _, tt := range tests {
		got, err := Parse(tt.raw)
		wantErr(t, "Parse("+tt.raw+")", err, tt.code, tt.msg)
		if err == nil {
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Parse(%q) mismatch (-want +got):\n%s", tt.raw, diff)
			}
		}
	}
	ps, _ := Parse("fields=A,B&fields=C&x=1")
	if got := kmparams.ParseList(ps.Values("fields")); !cmp.Equal(got, []string{"A", "B", "C"}) {
		t.Errorf("Values(fields) = %q", got)
	}
	if ps.Get("x") != "1" || ps.Get("y") != "" || !ps.Has("x") || ps.Has("y") {
		t.Errorf("Get/Has wrong on %v", ps)
	}
}

// TestParseRawQueryPlus pins the rule for "+": a space, except as the sign of a time
// offset after a time of day; %2B is always a plus.
func TestParseRawQueryPlus(t *testing.T) {
	tests := []struct{ raw, want string }{
		{"A+eq+1", "A eq 1"},
		{"+A", " A"},
		{"A+", "A "},
		{"1+2", "1 2"},
		{"%2B1%2b2", "+1+2"},
		{"T+gt+2023-12-05T15:48:44+03:00", "T gt 2023-12-05T15:48:44+03:00"},
		{"T+gt+2023-12-05T15:48+03:00", "T gt 2023-12-05T15:48+03:00"},
		{"T+gt+2023-12-05t15:48+03:00", "T gt 2023-12-05t15:48+03:00"},
		{"T+gt+2023-12-05T15:48:44.123456+01:00", "T gt 2023-12-05T15:48:44.123456+01:00"},
		{"T%20gt%202023-12-05T15:48:44%2B03:00", "T gt 2023-12-05T15:48:44+03:00"},
		{"T+in+(2023-12-05T15:48+03:00,2023-12-06T00:00+01:00)", "T in (2023-12-05T15:48+03:00,2023-12-06T00:00+01:00)"},
		// Not an offset: no T, a short clock, one digit after, or a clock not after T.
		{"15:48+03:00", "15:48 03:00"},
		{"T15:4+03:00", "T15:4 03:00"},
		{"T15:48+3", "T15:48 3"},
		{"T15:48+", "T15:48 "},
		{"X15:48+03", "X15:48 03"},
		{"T1548+03", "T1548 03"},
		// The clock is judged as sent: an encoded colon does not make one.
		{"T15%3A48+03:00", "T15:48 03:00"},
	}
	for _, tt := range tests {
		ps, err := Parse("v=" + tt.raw)
		if err != nil {
			t.Errorf("Parse(v=%s): %v", tt.raw, err)
			continue
		}
		if got := ps.Get("v"); got != tt.want {
			t.Errorf("Parse(v=%s) = %q, want %q", tt.raw, got, tt.want)
		}
	}
}

// FuzzParse checks that Parse never panics, that only bad escapes fail,
// and that without escapes the pairs come back as sent, each "+" a space except those
// that stand before two digits (the offsets kept).
func FuzzParse(f *testing.F) {
	for _, s := range []string{"", "a=1&b=2", "filterExpr=A%20eq%20'x;y'", "a&&b=&=c", "%zz", "a=%2B1+2", "k=v=w",
		"filterExpr=T+gt+2023-12-05T15:48:44+03:00", "x=T1:2+", "a=%4", "v=T15:48:44.1+01"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		ps, err := Parse(raw)
		if err != nil {
			var qe *query.Error
			if !errors.As(err, &qe) || qe.Code != problem.CodeParameterIllegal || !strings.Contains(raw, "%") {
				t.Fatalf("Parse(%q): %v", raw, err)
			}
			return
		}
		if strings.Contains(raw, "%") {
			return
		}
		var want Params
		for pair := range strings.SplitSeq(raw, "&") {
			if pair != "" {
				k, v, _ := strings.Cut(pair, "=")
				want = append(want, Param{Key: k, Value: v})
			}
		}
		if len(ps) != len(want) {
			t.Fatalf("Parse(%q) = %q, want %d pairs", raw, ps, len(want))
		}
		spaced := func(s string) string { return strings.ReplaceAll(s, "+", " ") }
		for i, p := range ps {
			if spaced(p.Key) != spaced(want[i].Key) || spaced(p.Value) != spaced(want[i].Value) {
				t.Fatalf("Parse(%q): pair %d is %q, want %q with + as spaces", raw, i, p, want[i])
			}
			for _, s := range []string{p.Key, p.Value} {
				for j := range len(s) {
					if s[j] == '+' && (j+2 >= len(s) || !isDigit(s[j+1]) || !isDigit(s[j+2])) {
						t.Fatalf("Parse(%q): %q keeps a + that is no offset sign", raw, s)
					}
				}
			}
		}
	})
}
