package odata

import (
	"encoding/json"
	"net/url"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// $apply's min and max of dates, date-times, timestamps, times, strings and booleans,
// directly and along a navigation property, and the null group of a grouping path whose
// record only an aggregate reads, against pandas over testdata/shop/data/*.csv.
func TestApplyExtremesAgainstPandas(t *testing.T) {
	h := testHandler(t)
	agg := func(as, col, fn string) pandasAgg { return pandasAgg{As: as, Col: col, Fn: fn} }
	extremes := []pandasAgg{agg("D0", "DAY", "min"), agg("D1", "DAY", "max"), agg("C0", "CREATED", "min"), agg("C1", "CREATED", "max"),
		agg("S0", "SEEN", "min"), agg("S1", "SEEN", "max"), agg("H0", "SLOT", "min"), agg("H1", "SLOT", "max"),
		agg("W0", "STATUS", "min"), agg("W1", "STATUS", "max"), agg("B0", "EXPRESS", "min"), agg("B1", "EXPRESS", "max"),
		agg("N0", "CUSTOMERS/NAME", "min"), agg("N1", "CUSTOMERS/NAME", "max")}
	var items []string
	for _, a := range extremes {
		items = append(items, a.Col+" with "+a.Fn+" as "+a.As)
	}
	all := strings.Join(items, ",")
	tests := []struct {
		apply string
		want  pandasQuery
	}{
		{"aggregate(" + all + ")", pandasQuery{Aggs: extremes}},
		{"groupby((CUSTOMERS/COUNTRY),aggregate(" + all + "))", pandasQuery{By: []string{"CUSTOMERS/COUNTRY"}, Aggs: extremes}},
		{"groupby((STATUS),aggregate(" + all + "))", pandasQuery{By: []string{"STATUS"}, Aggs: extremes}},
		{"filter(NET lt 1000)/groupby((EXPRESS),aggregate(" + all + "))", pandasQuery{Query: "NET < 1000", By: []string{"EXPRESS"}, Aggs: extremes}},
		// The orders without a customer (O7) and, but for the filter, O4 (customer C3, no
		// country) make the null group of CUSTOMERS/COUNTRY; the aggregates read customers
		// only, none of them in that group without O4.
		{"filter(ID ne 'O4')/groupby((CUSTOMERS/COUNTRY),aggregate(CUSTOMERS/NAME with max as N1,CUSTOMERS/NAME with countdistinct as K))",
			pandasQuery{Query: "ID != 'O4'", By: []string{"CUSTOMERS/COUNTRY"}, Aggs: []pandasAgg{agg("N1", "CUSTOMERS/NAME", "max"), agg("K", "CUSTOMERS/NAME", "nunique")}}},
		{"filter(ID ne 'O4')/groupby((CUSTOMERS/COUNTRY,STATUS),aggregate(CUSTOMERS/NAME with min as N0))",
			pandasQuery{Query: "ID != 'O4'", By: []string{"CUSTOMERS/COUNTRY", "STATUS"}, Aggs: []pandasAgg{agg("N0", "CUSTOMERS/NAME", "min")}}},
	}
	for _, tt := range tests {
		target := svc + "/ORDERS_entries?$apply=" + strings.ReplaceAll(url.QueryEscape(tt.apply), "+", "%20")
		w := get(h, target)
		var got struct{ Value []map[string]any }
		if err := json.Unmarshal(w.Body.Bytes(), &got); w.Code != 200 || err != nil {
			t.Errorf("%s: %d %s", tt.apply, w.Code, w.Body)
			continue
		}
		want := pandasGroups(t, tt.want)
		if len(tt.want.By) > 0 && !hasNullGroup(want, tt.want.By[0]) {
			t.Fatalf("%s: pandas has no null group: the case proves less than it says", tt.apply)
		}
		if d := cmp.Diff(want, flatten(got.Value), sameGroups); d != "" {
			t.Errorf("%s (-pandas +service):\n%s", tt.apply, d)
		}
	}
}

// hasNullGroup reports whether a group of rows has a null key column.
func hasNullGroup(rows []map[string]any, key string) bool {
	for _, r := range rows {
		if v, ok := r[key]; ok && v == nil {
			return true
		}
	}
	return false
}
