package exec

import (
	"cmp"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	gocmp "github.com/google/go-cmp/cmp"

	"github.com/kmkit/kmkit/km"
	"github.com/kmkit/kmkit/query"
	"github.com/kmkit/kmkit/query/fuzzy"
)

// TestSearchPages holds searched pages listed best score first to the obvious answer:
// each row that passes the filter scored by fuzzy.Matcher.Score over its searched values
// (the best, nulls left out), those reaching the precision kept, ordered by score
// descending then row, and paged; the count is the number kept. Over several blocks of
// rows, one and two searched columns (one with nulls), with and without a filter, at
// pages that end among rows of one score and beyond the last match.
func TestSearchPages(t *testing.T) {
	words := []string{"material", "Material 7", "raw material", "materail", "mat", "matter",
		"metal", "other", "Materials", "MATERIAL", "mate rial", "x"}
	r := rand.New(rand.NewPCG(8, 21))
	const n = 2*firstsBlock + 301
	rows := make([][]any, n)
	for i := range rows {
		var b any = words[r.IntN(len(words))]
		if r.IntN(6) == 0 {
			b = nil
		}
		rows[i] = []any{i, words[r.IntN(len(words))], b, r.IntN(3)}
	}
	o := kmOf(t, "T", table(t, []string{"N", "A", "B", "K"},
		[]query.Type{query.TypeInteger, query.TypeString, query.TypeString, query.TypeInteger}, rows))
	for _, c := range []struct {
		term      string
		fields    []string // searched
		precision int
		filter    bool // K eq 1
		page      int
		size      int
	}{
		{"materail", []string{"A"}, fuzzy.DefaultPrecision, false, 0, 50},
		{"materail", []string{"A"}, fuzzy.DefaultPrecision, false, 3, 1000},
		{"materail", []string{"A", "B"}, fuzzy.DefaultPrecision, false, 0, 50},
		{"materail", []string{"B"}, fuzzy.DefaultPrecision, true, 1, 700},
		{"mat", []string{"A", "B"}, 60, true, 0, 5000},
		{"mat", []string{"A", "B"}, 0, false, 0, 5000},
		{"material", []string{"B", "A"}, 95, false, 2, 3000},
		{"material", []string{"A"}, 100, true, 40, 100},
		{"zzz", []string{"A", "B"}, 70, false, 0, 10},
	} {
		name := fmt.Sprintf("%s in %v at %d, filter %v, page %d of %d", c.term, c.fields, c.precision, c.filter, c.page, c.size)
		t.Run(name, func(t *testing.T) {
			req := km.PlanRequest{Fields: []string{"N"}, Page: c.page, PageSize: c.size, Count: true,
				Search: &km.SearchRequest{Term: c.term, Fields: c.fields, Precision: c.precision}}
			if c.filter {
				req.Filters = []query.Expr{cmpx("K", query.TypeInteger, query.Eq, query.Int(1))}
			}
			res, err := o.run(req)
			if err != nil {
				t.Fatal(err)
			}
			m := fuzzy.New(c.term)
			type scored struct{ n, score int }
			var kept []scored
			for i, row := range rows {
				if c.filter && row[3].(int) != 1 {
					continue
				}
				best := 0
				for _, f := range c.fields {
					if v := row[map[string]int{"A": 1, "B": 2}[f]]; v != nil {
						best = max(best, m.Score(v.(string)))
					}
				}
				if best >= c.precision {
					kept = append(kept, scored{i, best})
				}
			}
			slices.SortStableFunc(kept, func(a, b scored) int { return cmp.Compare(b.score, a.score) })
			want := []int64{}
			for _, k := range kept[min(c.page*c.size, len(kept)):min((c.page+1)*c.size, len(kept))] {
				want = append(want, int64(k.n))
			}
			got := []int64{}
			for _, row := range res.Rows {
				got = append(got, row[0].Int)
			}
			if d := gocmp.Diff(want, got); d != "" {
				t.Errorf("page (-want +got):\n%s", d)
			}
			if res.Count != len(kept) {
				t.Errorf("count %d, want %d", res.Count, len(kept))
			}
		})
	}
}
