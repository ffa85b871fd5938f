package km

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/kmkit/kmkit/internal/jsonenc"
	"github.com/kmkit/kmkit/query"
)

// metricText renders a metric for comparison: aggregates as func(field|condition).
func metricText(m query.Metric) string {
	switch m := m.(type) {
	case *query.Aggregate:
		s := aggName(m.Func) + "(" + m.Field
		if m.Filter != nil {
			if m.Field != "" {
				s += " | "
			}
			s += query.Format(m.Filter)
		}
		return s + ")"
	case *query.Arith:
		return "(" + metricText(m.L) + " " + string(m.Op) + " " + metricText(m.R) + ")"
	case *query.Number:
		return formatNum(m.V)
	}
	return "?"
}

func formatNum(v float64) string { return string(jsonenc.AppendFloat(nil, v)) }

func TestParseKPIExpr(t *testing.T) {
	tests := []struct {
		in   string
		want string
	}{
		{"count()", "count()"},
		{"COUNT( )", "count()"},
		{"count(ORDERS.ORDER_ID)", "count(ORDERS.ORDER_ID)"},
		{"countdistinct(ORDERS.CUSTOMER_ID)", "countdistinct(ORDERS.CUSTOMER_ID)"},
		{"sum(ORDERS.NET_VALUE, ORDERS.STATUS eq 'OPEN')", "sum(ORDERS.NET_VALUE | ORDERS.STATUS eq 'OPEN')"},
		{"sum(O.V, O.S eq 'a,b(c)')", "sum(O.V | O.S eq 'a,b(c)')"},
		{"sum(O.V, O.S eq 'it''s')", "sum(O.V | O.S eq 'it''s')"},
		{"ratio(ORDERS.DAYS_LATE gt 0)", "ratio(ORDERS.DAYS_LATE gt 0)"},
		{"ratio((O.A gt 1) and O.B in ('x', 'y'))", "ratio(O.A gt 1 and O.B in ('x', 'y'))"},
		{"sum(O.V) / countdistinct(O.C)", "(sum(O.V) / countdistinct(O.C))"},
		{"sum(O.V) - sum(O.W) * 2", "(sum(O.V) - (sum(O.W) * 2))"},
		{"(sum(O.V) - sum(O.W)) * 2", "((sum(O.V) - sum(O.W)) * 2)"},
		{"100 * ratio(O.A eq true)", "(100 * ratio(O.A eq true))"},
		{"-sum(O.V)", "(-1 * sum(O.V))"},
		{"-2.5e1 + max(O.V)", "(-25 + max(O.V))"},
		{"avg(O.V) + min(O.V) + median(O.V)", "((avg(O.V) + min(O.V)) + median(O.V))"},
	}
	for _, tt := range tests {
		m, err := ParseKPIExpr(tt.in)
		if err != nil {
			t.Errorf("ParseKPIExpr(%q): %v", tt.in, err)
			continue
		}
		if got := metricText(m); got != tt.want {
			t.Errorf("ParseKPIExpr(%q) = %s, want %s", tt.in, got, tt.want)
		}
	}
}

func TestParseKPIExprErrors(t *testing.T) {
	tests := []struct {
		in   string
		want string // Error()
	}{
		{"", "at position 1: empty KPI expression"},
		{"total(O.V)", `at position 1: unknown function "total" (want count, countdistinct, sum, avg, min, max, median or ratio)`},
		{"sum O.V", "at position 5: missing ( after sum"},
		{"sum(O.V", "at position 4: missing )"},
		{"sum()", "at position 5: sum needs a field"},
		{"sum(V)", `at position 5: "V" is not a field (want RECORD.FIELD)`},
		{"sum(O.V, O.S eq 'x', 3)", "at position 22: sum takes a field and an optional condition"},
		{"sum(O.V, )", "at position 10: empty condition"},
		{"ratio()", "at position 1: ratio takes exactly one condition"},
		{"ratio(O.A gt)", "at position 13: " + condMsg("O.A gt")},
		{"sum(O.V) +", "at position 11: unexpected end of expression"},
		{"sum(O.V) sum(O.W)", `at position 10: unexpected "sum(O.W)"`},
		{"(sum(O.V)", "at position 10: missing )"},
		{"sum(O.S eq 'x)", "at position 12: unterminated string"},
		{"1..2", `at position 1: bad number "1..2"`},
		{strings.Repeat("(", 70) + "1" + strings.Repeat(")", 70), "at position 65: expression nested deeper than 64"},
	}
	for _, tt := range tests {
		_, err := ParseKPIExpr(tt.in)
		var ee *ExprError
		if !errors.As(err, &ee) {
			t.Errorf("ParseKPIExpr(%q) error = %v, want an *ExprError", tt.in, err)
			continue
		}
		if diff := cmp.Diff(tt.want, err.Error()); diff != "" {
			t.Errorf("ParseKPIExpr(%q) error (-want +got):\n%s", tt.in, diff)
		}
	}
}

// condMsg is the filter parser's message for a condition, so the test follows its wording.
func condMsg(cond string) string {
	_, err := query.Parse(cond)
	var qe *query.Error
	if errors.As(err, &qe) {
		return qe.Msg
	}
	return "no error"
}

func TestFillParams(t *testing.T) {
	params := map[string]string{"n": "5", "s": "O'Brien", "d": "2025-01-01T10:00:00+02:00", "bad": "1 or x", "kw": "or"}
	tests := []struct {
		in, want, err string
	}{
		{"ratio(O.A gt ${n})", "ratio(O.A gt 5)", ""},
		{"sum(O.V, O.S eq '${s}')", "sum(O.V, O.S eq 'O''Brien')", ""},
		{"ratio(O.T lt ${d})", "ratio(O.T lt 2025-01-01T10:00:00+02:00)", ""},
		{"ratio(O.S eq 'a''${s}')", "ratio(O.S eq 'a''O''Brien')", ""},
		{"ratio(O.A gt ${bad})", "", `at position 14: value "1 or x" of parameter bad is not a single literal`},
		{"ratio(O.A gt ${kw})", "", `at position 14: value "or" of parameter kw is not a single literal`},
		{"ratio(O.A gt ${none})", "", "at position 14: placeholder ${none} names no parameter of the KPI"},
		{"ratio(O.A gt ${n)", "", "at position 14: unterminated ${ placeholder"},
		{"sum(O.V) * 2 $", "sum(O.V) * 2 $", ""},
	}
	for _, tt := range tests {
		got, err := fillParams(tt.in, params)
		gotErr := ""
		if err != nil {
			gotErr = err.Error()
		}
		if got != tt.want || gotErr != tt.err {
			t.Errorf("fillParams(%q) = %q, %q; want %q, %q", tt.in, got, gotErr, tt.want, tt.err)
		}
	}
}

func FuzzParseKPIExpr(f *testing.F) {
	for _, s := range []string{
		"count()", "sum(O.V, O.S eq 'x')", "ratio(O.A gt 0 and not (O.B eq 'a,b'))",
		"sum(O.V) / countdistinct(O.C) - 2 * -max(O.W)", "((1))", "sum(O.S eq 'x)", "ratio(", "-", "1e",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		m, err := ParseKPIExpr(s)
		if err != nil {
			var ee *ExprError
			if !errors.As(err, &ee) {
				t.Fatalf("ParseKPIExpr(%q): error %T %v, want *ExprError", s, err, err)
			}
			if ee.Pos < 0 || ee.Pos > len(s) {
				t.Fatalf("ParseKPIExpr(%q): error position %d outside the text", s, ee.Pos)
			}
			return
		}
		if m == nil {
			t.Fatalf("ParseKPIExpr(%q): nil metric without error", s)
		}
	})
}
