package exec

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/kmkit/kmkit/query"
)

// TestParsedFilters runs filters through the query package's parser and binder, so the
// executor is checked against the bound trees the handlers really build.
func TestParsedFilters(t *testing.T) {
	f := orders(t)
	schema := query.MapSchema{}
	for _, name := range f.Names() {
		typ, _ := f.Type(name)
		schema[name] = typ
	}
	tests := []struct {
		filter string
		want   []string
	}{
		{"N gt 6 and C in ('DE', 'FR')", []string{"o1", "o2"}},
		{"not C eq 'DE'", []string{"o2", "o5"}},
		{"C ne 'DE'", []string{"o2", "o5"}},
		{"C eq null", []string{"o3"}},
		{"C ne null and Q le 1.5", []string{"o1"}},
		{"Q gt 1.5 or N lt 6", []string{"o2", "o4", "o5"}},
		{"AT eq 1970-04-11", []string{"o1"}},
		{"AT lt 1970-04-11", []string{"o4", "o5"}},
		{"AT ge 1970-04-12T00:00:00Z", []string{"o2"}},
		{"D eq 1970-04-11", []string{"o1", "o4"}},
		{"contains(ID, '4') or endswith(C, 'T')", []string{"o4", "o5"}},
		{"not (N gt 0 and Q eq 2)", []string{"o1", "o4"}},
	}
	for _, tt := range tests {
		t.Run(tt.filter, func(t *testing.T) {
			e, err := query.ParseAndBind(tt.filter, schema)
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(tt.want, ids(t, f, e)); d != "" {
				t.Errorf("rows (-want +got):\n%s", d)
			}
		})
	}
}
