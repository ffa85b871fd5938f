package odata

import (
	"encoding/json"
	"net/url"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/kmkit/kmkit/problem"
)

// concatBranch is a branch of a concat and the groups pandas computes for it; top keeps
// the first N groups by the alias By descending (topcount), count turns the branch into
// the number of its groups (aggregate($count as count)).
type concatBranch struct {
	q     pandasQuery
	top   int
	by    string
	count string
}

// groups returns the entities the branch answers, computed by pandas from the CSV files.
func (b concatBranch) groups(t *testing.T) []map[string]any {
	g := pandasGroups(t, b.q)
	switch {
	case b.count != "":
		return []map[string]any{{b.count: float64(len(g))}}
	case b.top > 0:
		slices.SortFunc(g, func(x, y map[string]any) int {
			a, _ := x[b.by].(float64)
			c, _ := y[b.by].(float64)
			switch {
			case a > c:
				return -1
			case a < c:
				return 1
			}
			return 0
		})
		g = g[:min(b.top, len(g))]
	}
	return g
}

// TestApplyConcat: $apply=concat(T1,T2,...) answers the entities of each branch, one
// branch after the other, each branch as pandas computes it from the CSV files; $count
// counts them all and server-driven paging (two entities a page here) runs across the
// branches.
func TestApplyConcat(t *testing.T) {
	tests := []struct {
		apply    string
		branches []concatBranch
	}{
		{"concat(aggregate(NET with sum as S),groupby((STATUS),aggregate(NET with sum as S)))", []concatBranch{
			{q: pandasQuery{Aggs: []pandasAgg{{"S", "NET", "sum"}}}},
			{q: pandasQuery{By: []string{"STATUS"}, Aggs: []pandasAgg{{"S", "NET", "sum"}}}},
		}},
		{"filter(NET gt 50)/concat(aggregate($count as N),groupby((CUSTOMERS/COUNTRY),aggregate(NET with max as M)),identity/groupby((STATUS)))", []concatBranch{
			{q: pandasQuery{Query: "NET > 50", Aggs: []pandasAgg{{"N", "", "size"}}}},
			{q: pandasQuery{Query: "NET > 50", By: []string{"CUSTOMERS/COUNTRY"}, Aggs: []pandasAgg{{"M", "NET", "max"}}}},
			{q: pandasQuery{Query: "NET > 50", By: []string{"STATUS"}}},
		}},
		{"concat(groupby((STATUS))/aggregate($count as G),groupby((CUST),aggregate(NET with sum as S))/topcount(2,S))", []concatBranch{
			{q: pandasQuery{By: []string{"STATUS"}}, count: "G"},
			{q: pandasQuery{By: []string{"CUST"}, Aggs: []pandasAgg{{"S", "NET", "sum"}}}, top: 2, by: "S"},
		}},
	}
	for _, tt := range tests {
		var want [][]map[string]any
		total := 0
		for _, b := range tt.branches {
			g := b.groups(t)
			want = append(want, g)
			total += len(g)
		}
		target := svc + "/ORDERS_entries?$apply=" + url.QueryEscape(tt.apply) + "&$count=true"
		for _, h := range []*Handler{testHandler(t), testHandler(t, WithMaxPageSize(2))} {
			var got []map[string]any
			for next := target; next != ""; {
				w := get(h, next)
				var page struct {
					Count int              `json:"@odata.count"`
					Value []map[string]any `json:"value"`
					Next  string           `json:"@odata.nextLink"`
				}
				if err := json.Unmarshal(w.Body.Bytes(), &page); w.Code != 200 || err != nil {
					t.Fatalf("%s: %d %s", next, w.Code, w.Body)
				}
				if page.Count != total {
					t.Errorf("%s: @odata.count %d, want %d", next, page.Count, total)
				}
				got = append(got, flatten(page.Value)...)
				next = page.Next
				if next != "" {
					next = next[len("http://example.com"):]
				}
			}
			if len(got) != total {
				t.Fatalf("%s: %d entities, want %d: %v", tt.apply, len(got), total, got)
			}
			// Each branch's groups in their place; within a branch the order is the
			// service's (the KM API's), pandas' is by key.
			for i, w := range want {
				if d := cmp.Diff(w, got[:len(w)], sameGroups); d != "" {
					t.Errorf("%s: branch %d (-pandas +got):\n%s", tt.apply, i+1, d)
				}
				got = got[len(w):]
			}
		}
	}
}

// TestApplyConcatPage: $skip and $top over the concatenation, across a branch boundary.
func TestApplyConcatPage(t *testing.T) {
	h := testHandler(t)
	target := svc + "/ORDERS_entries?$apply=" + url.QueryEscape("concat(aggregate(NET with sum as S),groupby((STATUS),aggregate(NET with sum as S))/topcount(2,S))")
	w := get(h, target+"&$skip=0&$top=2")
	want := `{"@odata.context":"` + ctxURL + `ORDERS_entries(S,STATUS)","value":[{"S":1305.6},{"STATUS":"OPEN","S":1300.5}]}`
	if w.Code != 200 || w.Body.String() != want {
		t.Errorf("%d %s\nwant %s", w.Code, w.Body, want)
	}
	w = get(h, target+"&$skip=2&$top=5&$count=true")
	want = `{"@odata.context":"` + ctxURL + `ORDERS_entries(S,STATUS)","@odata.count":3,"value":[{"STATUS":"PAID","S":330}]}`
	if w.Code != 200 || w.Body.String() != want {
		t.Errorf("%d %s\nwant %s", w.Code, w.Body, want)
	}
}

// TestApplyConcatErrors: the forms of concat the service does not serve are 501 with
// the reason; malformed ones 400.
func TestApplyConcatErrors(t *testing.T) {
	h := testHandler(t)
	two := "concat(aggregate($count as N),groupby((STATUS)))"
	for _, c := range []struct {
		apply, extra string
		status       int
		code, msg    string
	}{
		{two, "&$orderby=N", 501, CodeOptionNotSupported, "$apply: $orderby after concat(...) is not supported: rank inside a branch with topcount or bottomcount"},
		{two, "&$filter=STATUS%20eq%20'PAID'", 501, CodeOptionNotSupported, "$apply: $filter with concat(...) is not supported: filter first inside $apply, $apply=filter(...)/concat(...)"},
		{"aggregate($count as N)/" + two, "", 501, CodeOptionNotSupported, "$apply: concat(...) after an aggregation is not supported: put it first, after filter steps only"},
		{two + "/topcount(1,N)", "", 501, CodeOptionNotSupported, "$apply: transformations after concat(...) are not supported: end $apply with it"},
		{"concat(" + two + ",aggregate($count as M))", "", 501, CodeOptionNotSupported, "$apply: concat(...) inside concat(...) is not supported: list every sequence in one concat"},
		{"concat(identity,aggregate($count as M))", "", 501, CodeOptionNotSupported, "$apply: $apply without groupby or aggregate is not supported: use $filter"},
		{"concat(aggregate($count as N))", "", 400, problem.CodeParameterIllegal, `$apply: concat takes two transformation sequences or more, separated by commas: "aggregate($count as N)"`},
		{"concat(aggregate(NOPE with sum as S),groupby((STATUS)))", "", 400, "KM_FIELD_NOTFOUND", "$apply: aggregate: entity type ORDERS has no property NOPE"},
		{two, "&$select=N", 501, CodeOptionNotSupported, "$apply: $select with $apply is not supported: the answer has the grouping properties and the aliases"},
	} {
		w := get(h, svc+"/ORDERS_entries?$apply="+url.QueryEscape(c.apply)+c.extra)
		want := problemBodyAt(c.status, c.code, c.msg, "$apply")
		if w.Code != c.status || w.Body.String() != want {
			t.Errorf("%s%s: %d %s\nwant %s", c.apply, c.extra, w.Code, w.Body, want)
		}
	}
}
