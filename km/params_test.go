package km

import (
	"errors"
	"testing"

	"github.com/kmkit/kmkit/query"
)

func TestFillParams(t *testing.T) {
	params := map[string]string{"n": "5", "s": "O'Brien", "d": "2025-01-01T10:00:00+02:00", "bad": "1 or x", "kw": "or"}
	tests := []struct {
		in, want, err string
	}{
		{"ratio(O.A gt ${n})", "ratio(O.A gt 5)", ""},
		{"sum(O.V, O.S eq '${s}')", "sum(O.V, O.S eq 'O''Brien')", ""},
		{"ratio(O.T lt ${d})", "ratio(O.T lt 2025-01-01T10:00:00+02:00)", ""},
		{"ratio(O.S eq 'a''${s}')", "ratio(O.S eq 'a''O''Brien')", ""},
		{"ratio(O.A gt ${bad})", "", `position 14: value "1 or x" of parameter bad is not a single literal`},
		{"ratio(O.A gt ${kw})", "", `position 14: value "or" of parameter kw is not a single literal`},
		{"ratio(O.A gt ${none})", "", "position 14: placeholder ${none} names no parameter of the KPI"},
		{"ratio(O.A gt ${n)", "", "position 14: unterminated ${ placeholder"},
		{"sum(O.V) * 2 $", "sum(O.V) * 2 $", ""},
		// Positions count characters, as the KPI and filter parsers' do ("ü" is two bytes).
		{"ratio(O.S eq 'ü' or O.A gt ${none})", "", "position 28: placeholder ${none} names no parameter of the KPI"},
	}
	for _, tt := range tests {
		got, err := fillParams(tt.in, params)
		gotErr := ""
		if err != nil {
			gotErr = err.Error()
			var qe *query.Error
			if !errors.As(err, &qe) {
				t.Errorf("fillParams(%q) error %T, want *query.Error", tt.in, err)
			}
		}
		if got != tt.want || gotErr != tt.err {
			t.Errorf("fillParams(%q) = %q, %q; want %q, %q", tt.in, got, gotErr, tt.want, tt.err)
		}
	}
}
