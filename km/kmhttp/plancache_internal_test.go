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

// TestPlanCacheBounded: the cache holds at most planCacheSize plans.
func TestPlanCacheBounded(t *testing.T) {
	var c planCache
	p := &dataParams{}
	for i := range 3 * planCacheSize {
		c.put(planKey{raw: string(rune('a'+i%26)) + string(rune(i))}, p, &plan{})
		if n := len(c.plans); n > planCacheSize {
			t.Fatalf("after %d plans the cache holds %d", i+1, n)
		}
	}
	k := planKey{raw: "x"}
	pl := &plan{}
	c.put(k, p, pl)
	if c.get(k) != pl {
		t.Fatal("the plan just kept is not found")
	}
	if c.get(planKey{raw: "y"}) != nil {
		t.Fatal("a plan never kept is found")
	}
}
