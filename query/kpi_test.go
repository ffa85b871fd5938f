package query

import (
	"errors"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/kmkit/kmkit/problem"
)

// metricText renders a metric for comparison: aggregates as func(field|condition).
func metricText(m Metric) string {
	switch m := m.(type) {
	case *Aggregate:
		s := m.Func.String() + "(" + m.Field
		if m.Filter != nil {
			if m.Field != "" {
				s += " | "
			}
			s += Format(m.Filter)
		}
		return s + ")"
	case *Arith:
		return "(" + metricText(m.L) + " " + string(m.Op) + " " + metricText(m.R) + ")"
	case *Number:
		return formatNum(m.V)
	}
	return "?"
}

func formatNum(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }

func TestParseKPI(t *testing.T) {
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
		m, err := ParseKPI(tt.in)
		if err != nil {
			t.Errorf("ParseKPI(%q): %v", tt.in, err)
			continue
		}
		if got := metricText(m); got != tt.want {
			t.Errorf("ParseKPI(%q) = %s, want %s", tt.in, got, tt.want)
		}
	}
}

func TestParseKPIErrors(t *testing.T) {
	const syntax, limit = CodeFilterSyntax, problem.CodeConstraint
	deep := strings.Repeat("(", 70) + "1" + strings.Repeat(")", 70)
	tests := []struct {
		in   string
		kind ErrorKind
		code string
		pos  Pos    // byte offset
		want string // Error(), with the 1-based character position
	}{
		{"", KindSyntax, syntax, 0, "position 1: empty KPI expression"},
		{"total(O.V)", KindSyntax, syntax, 0, `position 1: unknown function "total" (want count, countdistinct, sum, avg, min, max, median or ratio)`},
		{"sum O.V", KindSyntax, syntax, 4, "position 5: missing ( after sum"},
		{"sum(O.V", KindSyntax, syntax, 3, "position 4: missing )"},
		{"sum()", KindSyntax, syntax, 4, "position 5: sum needs a field"},
		{"sum(V)", KindSyntax, syntax, 4, `position 5: "V" is not a field (want RECORD.FIELD)`},
		{"sum(O.V, O.S eq 'x', 3)", KindSyntax, syntax, 21, "position 22: sum takes a field and an optional condition"},
		{"sum(O.V, )", KindSyntax, syntax, 9, "position 10: empty condition"},
		{"ratio()", KindSyntax, syntax, 0, "position 1: ratio takes exactly one condition"},
		{"ratio(O.A gt)", KindSyntax, syntax, 12, "position 13: " + condMsg("O.A gt")},
		{"sum(O.V) +", KindSyntax, syntax, 10, "position 11: unexpected end of expression"},
		{"sum(O.V) sum(O.W)", KindSyntax, syntax, 9, `position 10: unexpected "sum(O.W)"`},
		{"(sum(O.V)", KindSyntax, syntax, 9, "position 10: missing )"},
		{"sum(O.S eq 'x)", KindSyntax, syntax, 11, "position 12: unterminated string"},
		{"1..2", KindSyntax, syntax, 0, `position 1: bad number "1..2"`},
		{deep, KindLimit, limit, 64, "position 65: expression nested deeper than 64"},
		// Positions count characters, as the filter parser's do: "ü" is two bytes, one
		// character, so the byte offset and the position part here.
		{"sum(O.V, O.S eq 'ü') +", KindSyntax, syntax, 23, "position 23: unexpected end of expression"},
		{"ratio(O.S eq 'ü' and)", KindSyntax, syntax, 21, "position 21: " + condMsg("O.S eq 'ü' and")},
		// A condition's own errors keep its kind and code.
		{"ratio(O.A eq 1 add 2)", KindUnsupported, CodeFilterNotSupported, 15, "position 16: " + condMsg("O.A eq 1 add 2")},
	}
	for _, tt := range tests {
		_, err := ParseKPI(tt.in)
		var qe *Error
		if !errors.As(err, &qe) {
			t.Errorf("ParseKPI(%q) error = %v, want an *Error", tt.in, err)
			continue
		}
		got := []any{qe.Kind, qe.Code, qe.Pos, qe.Param, err.Error()}
		if diff := cmp.Diff([]any{tt.kind, tt.code, tt.pos, "", tt.want}, got); diff != "" {
			t.Errorf("ParseKPI(%q) error: kind, code, byte offset, param, text (-want +got):\n%s", tt.in, diff)
		}
	}
}

// TestParseKPIOptions checks that the options of the filter parser apply to a KPI
// expression and its conditions.
func TestParseKPIOptions(t *testing.T) {
	_, err := ParseKPI("(((sum(O.V))))", WithParam("expr"), WithLimits(Limits{MaxDepth: 2}))
	if got, want := errText(err), "expr: position 3: expression nested deeper than 2"; got != want {
		t.Errorf("depth limit: got %q, want %q", got, want)
	}
	_, err = ParseKPI("ratio(O.A in (1, 2, 3))", WithLimits(Limits{MaxIn: 2}))
	var qe *Error
	if !errors.As(err, &qe) || qe.Kind != KindLimit || qe.Pos < 6 {
		t.Errorf("in-list limit in a condition: got %#v, want a KindLimit error inside the condition", err)
	}
	if _, err := ParseKPI("ratio(O.A EQ 1)"); err == nil {
		t.Errorf("upper-case EQ accepted without ODataSyntax")
	}
	if _, err := ParseKPI("ratio(O.A EQ 1)", ODataSyntax()); err != nil {
		t.Errorf("upper-case EQ under ODataSyntax: %v", err)
	}
}

func errText(err error) string {
	if err == nil {
		return "no error"
	}
	return err.Error()
}

// TestParseAndBindKPI checks that conditions are bound against the schema, with binding
// errors positioned in the whole expression, and that the aggregated fields are left to
// the caller.
func TestParseAndBindKPI(t *testing.T) {
	s := MapSchema{"O.A": TypeInteger, "O.S": TypeString}
	m, err := ParseAndBindKPI("sum(O.UNCHECKED, O.A gt 1) / count()", s)
	if err != nil {
		t.Fatalf("ParseAndBindKPI: %v", err)
	}
	cond := m.(*Arith).L.(*Aggregate).Filter.(*Compare)
	if cond.Field.Type != TypeInteger || cond.Value.Value.Type != TypeInteger {
		t.Errorf("condition not bound: field %v, value %#v", cond.Field, cond.Value)
	}
	tests := []struct {
		in   string
		code string
		want string
	}{
		{"ratio(O.B eq 1)", CodeFieldNotFound, "position 7: " + bindMsg(t, "O.B eq 1", s)},
		{"count(O.A, O.A eq 'x')", CodeFilterTypeMismatch, "position 19: " + bindMsg(t, "O.A eq 'x'", s)},
		{"ratio(O.S eq 'ü') + ratio(O.A eq 'x')", CodeFilterTypeMismatch, "position 34: " + bindMsg(t, "O.A eq 'x'", s)},
	}
	for _, tt := range tests {
		_, err := ParseAndBindKPI(tt.in, s)
		var qe *Error
		if !errors.As(err, &qe) || qe.Kind != KindType || qe.Code != tt.code || err.Error() != tt.want {
			t.Errorf("ParseAndBindKPI(%q) = %#v; want a KindType %s error %q", tt.in, err, tt.code, tt.want)
		}
	}
}

// bindMsg is the binder's message for a condition, so the test follows its wording.
func bindMsg(t *testing.T, cond string, s Schema) string {
	t.Helper()
	_, err := ParseAndBind(cond, s)
	var qe *Error
	if !errors.As(err, &qe) {
		t.Fatalf("ParseAndBind(%q) = %v, want an *Error", cond, err)
	}
	return qe.Msg
}

// condMsg is the filter parser's message for a condition, so the test follows its wording.
func condMsg(cond string) string {
	_, err := Parse(cond)
	var qe *Error
	if errors.As(err, &qe) {
		return qe.Msg
	}
	return "no error"
}

// FuzzParseKPI checks that ParseKPI never panics and that every error is an *Error of
// the filter parser's kinds with a position inside the text.
func FuzzParseKPI(f *testing.F) {
	for _, s := range []string{
		"count()", "sum(O.V, O.S eq 'x')", "ratio(O.A gt 0 and not (O.B eq 'a,b'))",
		"sum(O.V) / countdistinct(O.C) - 2 * -max(O.W)", "((1))", "sum(O.S eq 'x)", "ratio(", "-", "1e",
		"ratio(O.S eq 'ü' and)", "sum(O.V, O.A eq 1 add 2)", "avg(O.V, )", "ratio(O.A in ())",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		m, err := ParseKPI(s)
		if err != nil {
			var qe *Error
			if !errors.As(err, &qe) {
				t.Fatalf("ParseKPI(%q): error %T %v, want *Error", s, err, err)
			}
			if qe.Kind < KindSyntax || qe.Kind > KindLimit || qe.Code == "" || qe.Msg == "" {
				t.Fatalf("ParseKPI(%q): malformed error %#v", s, qe)
			}
			if qe.Pos < 0 || int(qe.Pos) > len(s) {
				t.Fatalf("ParseKPI(%q): error position %d outside the text", s, qe.Pos)
			}
			if want := CharPos(s, qe.Pos); qe.Char != want {
				t.Fatalf("ParseKPI(%q): character position %d, want %d for byte offset %d", s, qe.Char, want, qe.Pos)
			}
			return
		}
		if m == nil {
			t.Fatalf("ParseKPI(%q): nil metric without error", s)
		}
	})
}
