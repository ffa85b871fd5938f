package km_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/kmkit/kmkit/km"
	"github.com/kmkit/kmkit/query"
)

// AdHocKPI types and checks an expression as a definition would be, without adding it to
// the KM. (That a request carrying one answers what the same KPI defined in the KM
// answers, on every store, TestApplyKPIsEqualKMAPI checks at the repository root.)
func TestAdHocKPI(t *testing.T) {
	m := demoKM(t)
	tests := []struct {
		expr, record string
		typ          query.Type
		err          string
	}{
		{"count()", "ORDERS", query.TypeInteger, ""},
		{"countdistinct(ORDERS.CUSTOMER_ID)", "", query.TypeInteger, ""},
		{"sum(ORDERS.NET_VALUE)", "", query.TypeFloat, ""},
		{"max(ORDERS.DAYS_LATE)", "", query.TypeInteger, ""},
		{"sum(ORDERS.STATUS)", "", 0, "sum of ORDERS.STATUS: the field is string, not numeric"},
		{"sum(ORDERS.NOPE)", "", 0, "NOPE"},
		{"count()", "NOPE", 0, "record NOPE: no such record"},
	}
	for _, tt := range tests {
		k, err := m.AdHocKPI("X", tt.expr, tt.record)
		switch {
		case tt.err != "":
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("AdHocKPI(%s): error %v, want one containing %q", tt.expr, err, tt.err)
			}
		case err != nil:
			t.Errorf("AdHocKPI(%s): %v", tt.expr, err)
		case k.Type != tt.typ:
			t.Errorf("AdHocKPI(%s): type %v, want %v", tt.expr, k.Type, tt.typ)
		}
	}
	if m.KPI("X") != nil {
		t.Fatal("AdHocKPI added the KPI to the KM")
	}
}

// MetricKPI takes a parsed, bound expression where AdHocKPI takes its text: the same
// KPI, and the same refusals for trees no text would bind to.
func TestMetricKPI(t *testing.T) {
	m := demoKM(t)
	for _, tt := range []struct{ expr, record string }{
		{"count()", "ORDERS"},
		{"sum(ORDERS.NET_VALUE, ORDERS.STATUS eq 'OPEN') / count(ORDERS.ORDER_ID)", ""},
		{"max(ORDERS.DAYS_LATE)", ""},
	} {
		metric, err := query.ParseAndBindKPI(tt.expr, m.FilterSchema(""))
		if err != nil {
			t.Fatal(err)
		}
		got, err := m.MetricKPI("X", metric, tt.record)
		if err != nil {
			t.Fatalf("MetricKPI(%s): %v", tt.expr, err)
		}
		want, err := m.AdHocKPI("X", tt.expr, tt.record)
		if err != nil {
			t.Fatal(err)
		}
		// The compiled aggregates: function, field, grain, type and condition.
		aggregates := func(k *km.KPI) []string {
			p, err := km.NewPlan(m, &km.PlanRequest{KPIs: []string{"X"}, AdHocKPIs: []*km.KPI{k}, PageSize: 1})
			if err != nil {
				t.Fatalf("%s: %v", tt.expr, err)
			}
			var out []string
			for _, a := range p.Aggregates {
				s := fmt.Sprintf("%v(%v) at %s: %v", a.Func, a.Field, a.Grain, a.Type)
				if a.Cond != nil {
					s += " where " + query.Format(a.Cond.Expr)
				}
				out = append(out, s)
			}
			return out
		}
		if got.Type != want.Type {
			t.Errorf("MetricKPI(%s): type %v, want %v", tt.expr, got.Type, want.Type)
		}
		if d := cmp.Diff(aggregates(want), aggregates(got)); d != "" {
			t.Errorf("MetricKPI(%s) compiles otherwise than AdHocKPI (-AdHocKPI +MetricKPI):\n%s", tt.expr, d)
		}
	}
	for _, tt := range []struct {
		metric query.Metric
		record string
		err    string
	}{
		{nil, "", "KPI X: no expression"},
		{&query.Aggregate{Func: query.AggSum, Field: "ORDERS.STATUS"}, "", "sum of ORDERS.STATUS: the field is string, not numeric"},
		{&query.Aggregate{Func: query.AggSum, Field: "ORDERS.NOPE"}, "", "NOPE"},
		{&query.Aggregate{Func: query.AggCount}, "NOPE", "record NOPE: no such record"},
	} {
		if _, err := m.MetricKPI("X", tt.metric, tt.record); err == nil || !strings.Contains(err.Error(), tt.err) {
			t.Errorf("MetricKPI(%#v, %q): error %v, want one containing %q", tt.metric, tt.record, err, tt.err)
		}
	}
}

// A request that sets a KPI's parameters gets a KPI of its own with those values: the
// plan's KPI carries them, the KM's keeps its defaults, and the next request without
// them computes with the defaults.
func TestKPIParamsLeaveTheKMAlone(t *testing.T) {
	m := demoKM(t)
	s := km.NewService(nil)
	cond := func(p *km.Prepared) string {
		t.Helper()
		return query.Format(p.Plan.Aggregates[0].Cond.Expr)
	}
	p, err := s.Prepare(m, &km.Request{KPIs: []string{"LATE_SHARE"}, KPIParams: map[string]map[string]string{"LATE_SHARE": {"threshold": "5"}}, PageSize: 1})
	if err != nil {
		t.Fatal(err)
	}
	if got := cond(p); got != "ORDERS.DAYS_LATE gt 5" {
		t.Errorf("with threshold 5 the condition is %q", got)
	}
	if k := p.Plan.KPIs[0].KPI; k.Parameters[0].Value != "5" || k.Name != m.KPI("LATE_SHARE").Name {
		t.Errorf("the plan's KPI is %+v, want LATE_SHARE with threshold 5", k)
	}
	if v := m.KPI("LATE_SHARE").Parameters[0].Value; v != "0" {
		t.Errorf("the KM's LATE_SHARE has threshold %s after a request set it, want its default 0", v)
	}
	p, err = s.Prepare(m, &km.Request{KPIs: []string{"LATE_SHARE"}, PageSize: 1})
	if err != nil {
		t.Fatal(err)
	}
	if got := cond(p); got != "ORDERS.DAYS_LATE gt 0" {
		t.Errorf("without parameters the condition is %q", got)
	}
}
