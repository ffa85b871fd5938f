package km

import (
	"errors"
	"testing"
	"testing/fstest"

	"github.com/google/go-cmp/cmp"

	"github.com/kmkit/kmkit/problem"
)

func TestParseQueryString(t *testing.T) {
	tests := []struct {
		raw  string
		want map[string][]string
	}{
		{"fields=A,B&fields=C", map[string][]string{"fields": {"A,B", "C"}}},
		{"filterExpr=A%20eq%20'x;y'", map[string][]string{"filterExpr": {"A eq 'x;y'"}}},
		{"filterExpr=A+eq+'it''s'", map[string][]string{"filterExpr": {"A eq 'it''s'"}}},
		{"filterExpr=T+gt+2023-12-05T15:48:44+03:00", map[string][]string{"filterExpr": {"T gt 2023-12-05T15:48:44+03:00"}}},
		{"filterExpr=T+gt+2023-12-05T15:48+03:00", map[string][]string{"filterExpr": {"T gt 2023-12-05T15:48+03:00"}}},
		{"filterExpr=T+gt+2023-12-05T15:48:44.123+01:00", map[string][]string{"filterExpr": {"T gt 2023-12-05T15:48:44.123+01:00"}}},
		{"filterExpr=T%20gt%202023-12-05T15:48:44%2B03:00", map[string][]string{"filterExpr": {"T gt 2023-12-05T15:48:44+03:00"}}},
		{"sort=+NET&sort=-X", map[string][]string{"sort": {" NET", "-X"}}},
		{"a&&b=&=c", map[string][]string{"a": {""}, "b": {""}, "": {"c"}}},
		{"", map[string][]string{}},
	}
	for _, tt := range tests {
		got, err := parseQueryString(tt.raw)
		if err != nil {
			t.Errorf("parseQueryString(%q): %v", tt.raw, err)
			continue
		}
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("parseQueryString(%q) (-want +got):\n%s", tt.raw, diff)
		}
	}
	for _, raw := range []string{"a=%zz", "%g=1", "a=%"} {
		_, err := parseQueryString(raw)
		var p *problem.Problem
		if !errors.As(err, &p) || p.Status != 400 || p.ErrorCode != problem.CodeParameterIllegal {
			t.Errorf("parseQueryString(%q) error = %v, want a 400 %s", raw, err, problem.CodeParameterIllegal)
		}
	}
}

func FuzzParseQueryString(f *testing.F) {
	for _, s := range []string{"fields=A,B&filterExpr=A+eq+'x'", "filterExpr=T+gt+2023-12-05T15:48:44+03:00", "a=%zz", "x=T1:2+", "&&=&"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		got, err := parseQueryString(raw)
		if err != nil {
			var p *problem.Problem
			if !errors.As(err, &p) || p.Status != 400 {
				t.Fatalf("parseQueryString(%q): error %v is not a 400 problem", raw, err)
			}
			return
		}
		for k, vs := range got {
			if len(vs) == 0 {
				t.Fatalf("parseQueryString(%q): key %q without values", raw, k)
			}
		}
	})
}

func FuzzLoadDefinition(f *testing.F) {
	f.Add([]byte(baseYAML))
	f.Add([]byte(childYAML))
	f.Add([]byte("id: a\nrecords: [{id: R, fields: [{id: F, type: integer}]}]\nkpis: [{id: K, expr: 'sum(R.F, R.F gt ${p})', parameters: [{id: p, value: '1'}]}]\n"))
	f.Add([]byte("id: [\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		_, err := Load(fstest.MapFS{"models/a.yaml": {Data: data}})
		if err == nil {
			return
		}
		var de *DefinitionError
		if !errors.As(err, &de) {
			t.Fatalf("Load: error %T %v is not a *DefinitionError", err, err)
		}
	})
}
