package kmhttp

import "testing"

// TestTimeless: requests whose plan depends on the moment of planning are not kept.
func TestTimeless(t *testing.T) {
	for _, tt := range []struct {
		p    dataParams
		want bool
	}{
		{dataParams{filterExprs: []string{"STATUS eq 'OPEN'"}, sort: "-NET"}, true},
		{dataParams{}, true},
		{dataParams{filterExprs: []string{"STATUS eq 'OPEN'", "CREATED lt now()"}}, false},
		{dataParams{filterExprs: []string{"CREATED lt NOW()"}}, false},
		{dataParams{filterExprs: []string{"CREATED lt nOw ( )"}}, false},
		{dataParams{sort: "-(now() - CREATED)"}, false},
		{dataParams{filterExprs: []string{"NAME eq 'Known'"}}, false}, // "now" in a literal: refused, harmlessly
		{dataParams{filterExprs: []string{"NAME eq 'no'"}, sort: "n"}, true},
		{dataParams{kpiParams: map[string]map[string]string{"LATE_SHARE": {"t": "3"}}}, false},
	} {
		if got := timeless(&tt.p); got != tt.want {
			t.Errorf("timeless(%+v) = %v, want %v", tt.p, got, tt.want)
		}
	}
}
