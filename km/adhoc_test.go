package km_test

import (
	"strings"
	"testing"

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
