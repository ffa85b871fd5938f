package storetest

import (
	"fmt"
	"io/fs"
	"math"
	"math/big"
	"slices"
	"strconv"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/kmkit/kmkit/internal/kmparams"
	"github.com/kmkit/kmkit/km"
	"github.com/kmkit/kmkit/query"
)

// numbersKM is the KM of runNumbers: one record of an integer N and two floats X and Y in
// groups G, and KPIs whose values leave the ranges of int64 and of a double.
const numbersKM = `id: numbers
name: Numbers
records:
  - id: R
    name: R
    source: num_r
    fields:
      - {id: G, name: G, type: string}
      - {id: N, name: N, type: integer}
      - {id: X, name: X, type: float}
      - {id: Y, name: Y, type: float}
  - id: M
    name: M
    source: num_m
    fields:
      - {id: G, name: G, type: string}
      - {id: X, name: X, type: float}
      - {id: N, name: N, type: integer}
kpis:
  - {id: S, name: Sum of N, expr: sum(R.N)}
  - {id: A, name: Mean of N, expr: avg(R.N)}
  - {id: C, name: Count of N, expr: count(R.N)}
  - {id: S2, name: Twice the sum of N, expr: sum(R.N) * 2}
  - {id: P, name: Product of sums, expr: sum(R.X) * sum(R.Y)}
  - {id: Q, name: Sum over least, expr: sum(R.X) / min(R.Y)}
  - {id: U, name: Square of least, expr: min(R.Y) * min(R.Y)}
  - {id: MX, name: Median of X, expr: median(M.X)}
  - {id: MN, name: Median of N, expr: median(M.N)}
`

// numbersRows are the rows of numbersKM's record, G, N, X and Y ("" is null): in "a53"
// the sum of N is 2^53 + 1, which sums in doubles round to 2^53, and P leaves a double's
// range; in "wrap" the partial sums of N pass 2^63 - 1 and come back (29), Q is finite and
// U too small for a double; in "over" and "under" the sums of N are beyond int64 (null)
// while their means are not, and Q is -Inf.
var numbersRows = [][4]string{
	{"a53", "9007199254740992", "1e200", "1e200"},
	{"a53", "1", "1e200", "1e200"},
	{"wrap", "9223372036854775807", "1", "1e-200"},
	{"wrap", "29", "2", "1e-200"},
	{"wrap", "-9223372036854775807", "3", "1e-200"},
	{"over", "9223372036854775807", "-1e300", "1e-300"},
	{"over", "9223372036854775807", "-1e300", "1e-300"},
	{"under", "-9223372036854775808", "5", "2"},
	{"under", "-1", "7", ""},
	{"small", "1", "0.5", "3e-200"},
	{"small", "2", "", "1e-200"},
	{"small", "", "0.25", "5"},
}

// mediansRows are the rows of numbersKM's record M, G, X and N ("" is null): in "big"
// the two middle values of X add up beyond a double's range, in "spread" their difference
// does, in "tiny" their mean lies between two subnormals; the Ns near 2^63 are the same
// double; "odd" has a middle value; "none" only nulls.
var mediansRows = [][3]string{
	{"big", "1.5e308", "9223372036854775807"},
	{"big", "1.7e308", "9223372036854775805"},
	{"spread", "-1.5e308", "-9223372036854775808"},
	{"spread", "1.5e308", "9223372036854775807"},
	{"tiny", "5e-324", "1"},
	{"tiny", "1e-323", "2"},
	{"odd", "3", "5"},
	{"odd", "1", ""},
	{"odd", "2", "-4"},
	{"none", "", ""},
}

// NumbersData returns the data directory of runNumbers's KM (numbers).
func NumbersData() fstest.MapFS {
	var b strings.Builder
	b.WriteString("G,N,X,Y\n")
	for _, r := range numbersRows {
		b.WriteString(strings.Join(r[:], ",") + "\n")
	}
	var m strings.Builder
	m.WriteString("G,X,N\n")
	for _, r := range mediansRows {
		m.WriteString(strings.Join(r[:], ",") + "\n")
	}
	return fstest.MapFS{
		"models/numbers.yaml": {Data: []byte(numbersKM)},
		"data/num_r.csv":      {Data: []byte(b.String())},
		"data/num_m.csv":      {Data: []byte(m.String())},
	}
}

// medianExpected is the median of column col (1: X, 2: N) of mediansRows in group g, from
// the CSV text in exact arithmetic (math/big): the middle double, or the exact mean of
// the middle two rounded once to a double; nil without values.
func medianExpected(t *testing.T, g string, col int) any {
	var vs []float64
	for _, r := range mediansRows {
		if r[0] != g || r[col] == "" {
			continue
		}
		f, err := strconv.ParseFloat(r[col], 64) // an integer's median is of its doubles
		if err != nil {
			t.Fatal(err)
		}
		vs = append(vs, f)
	}
	if len(vs) == 0 {
		return nil
	}
	slices.Sort(vs)
	if len(vs)%2 == 1 {
		return vs[len(vs)/2]
	}
	sum := new(big.Rat).Add(new(big.Rat).SetFloat64(vs[len(vs)/2-1]), new(big.Rat).SetFloat64(vs[len(vs)/2]))
	f, _ := sum.Quo(sum, big.NewRat(2, 1)).Float64()
	return f
}

// runMedians checks the median KPIs of numbersKM on record M against exact arithmetic
// (medianExpected) and the reference evaluator: the mean of the two middle values is the
// double nearest to it, finite where their sum or their difference leaves a double's
// range. Before, memory and SQLite answered +Inf for 1.5e308 and 1.7e308 (their sum
// overflowed) and PostgreSQL +Inf for -1.5e308 and 1.5e308 (percentile_cont's
// difference did).
func runMedians(t *testing.T, newStore func(t *testing.T, data fs.FS) km.Store) {
	fsys := NumbersData()
	ref, err := LoadReference(fsys, "numbers")
	if err != nil {
		t.Fatal(err)
	}
	svc := newService(newStore(t, fsys))
	r := km.Request{Fields: []string{"M.G"}, KPIs: []string{"MX", "MN"}}
	res, err := askRequest(svc, "numbers", r)
	if err != nil {
		t.Fatal(err)
	}
	groups := []string{"big", "spread", "tiny", "odd", "none"}
	got := cells(res.Rows)
	if len(got) != len(groups) {
		t.Fatalf("%d groups %v, want %d", len(got), got, len(groups))
	}
	for i, g := range groups {
		want := []any{g, medianExpected(t, g, 1), medianExpected(t, g, 2)}
		for j, w := range want {
			if got[i][j] != w { // exact: every backend rounds the exact mean once
				t.Errorf("group %s: %s = %#v, want %#v", g, res.Columns[j].Name, got[i][j], w)
			}
		}
	}
	checkService(t, svc, ref, "numbers", RefRequest{Fields: r.Fields, KPIs: r.KPIs})
}

// numbersExpected computes the KPIs of numbersKM for the rows of group g ("": every row)
// from the CSV text: the sums and means of N in exact arithmetic (math/big), a sum of N
// beyond int64 null; the sums of X and Y the doubles nearest to the exact sums of their
// doubles; the
// arithmetic between aggregates in IEEE 754 doubles, as Go computes it. The values are
// int64, float64 or nil, in the order S, A, C, S2, P, Q, U.
func numbersExpected(t *testing.T, g string) []any {
	n, count := new(big.Int), int64(0)
	x, y := new(big.Rat), new(big.Rat)
	var xs, ys int
	minY := math.Inf(1)
	for _, r := range numbersRows {
		if g != "" && r[0] != g {
			continue
		}
		if r[1] != "" {
			v, ok := new(big.Int).SetString(r[1], 10)
			if !ok {
				t.Fatalf("N %q", r[1])
			}
			n.Add(n, v)
			count++
		}
		for i, acc := range []*big.Rat{x, y} {
			if r[2+i] == "" {
				continue
			}
			f, err := strconv.ParseFloat(r[2+i], 64)
			if err != nil {
				t.Fatal(err)
			}
			acc.Add(acc, new(big.Rat).SetFloat64(f)) // the double the stores hold, exactly
			if i == 0 {
				xs++
			} else {
				ys++
				minY = math.Min(minY, f)
			}
		}
	}
	nearest := func(r *big.Rat) float64 { f, _ := r.Float64(); return f }
	var s, s2, a any
	if n.IsInt64() {
		s, s2 = n.Int64(), float64(n.Int64())*2
	}
	if count > 0 {
		a = nearest(new(big.Rat).SetFrac(n, big.NewInt(count)))
	} else {
		s, s2 = nil, nil
	}
	var p, q, u any
	if xs > 0 && ys > 0 {
		p = nearest(x) * nearest(y)
		if minY != 0 {
			q = nearest(x) / minY
		}
	}
	if ys > 0 {
		u = minY * minY
	}
	return []any{s, a, count, s2, p, q, u}
}

// runNumbers checks the KPIs whose values leave the ranges of int64 and of a double, on
// every backend, against exact arithmetic (numbersExpected) and the reference evaluator:
// the sum of an integer field is its exact integer sum (null beyond int64), whatever the
// partial sums do; the average of one is the double nearest to the exact mean; arithmetic
// between aggregates beyond a double's range is ±Inf and below it 0, never a refusal
// (package km, "Numbers"). Before, memory and SQLite added integers in doubles (2^53 + 1
// gave 2^53) and PostgreSQL refused a KPI's product beyond a double's range with a 400.
func runNumbers(t *testing.T, newStore func(t *testing.T, data fs.FS) km.Store) {
	fsys := NumbersData()
	ref, err := LoadReference(fsys, "numbers")
	if err != nil {
		t.Fatal(err)
	}
	svc := newService(newStore(t, fsys))
	kpis := []string{"S", "A", "C", "S2", "P", "Q", "U"}
	types := []query.Type{query.TypeInteger, query.TypeFloat, query.TypeInteger, query.TypeFloat, query.TypeFloat, query.TypeFloat, query.TypeFloat}
	groups := []string{"a53", "wrap", "over", "under", "small"}
	sort := func(s string) []query.SortTerm {
		if s == "" {
			return nil
		}
		keys, err := kmparams.ParseSort(s)
		if err != nil {
			t.Fatal(err)
		}
		return keys
	}
	check := func(r km.Request, sortText string, want [][]any) {
		t.Helper()
		r.Sort = sort(sortText)
		desc := fmt.Sprintf("fields %v kpis %v sort %q", r.Fields, r.KPIs, sortText)
		res, err := askRequest(svc, "numbers", r)
		if err != nil {
			t.Fatalf("%s: %v", desc, err)
		}
		nf := len(r.Fields)
		for i, c := range res.Columns[nf:] {
			if c.Type != types[i] {
				t.Errorf("%s: KPI %s is %v, want %v", desc, c.Name, c.Type, types[i])
			}
		}
		got := cells(res.Rows)
		if len(got) != len(want) {
			t.Fatalf("%s: %d rows %v, want %d %v", desc, len(got), got, len(want), want)
		}
		for i, row := range got {
			for j, w := range want[i] {
				// Integers exactly and as integers (a sum read as a float is wrong),
				// floats within 1e-9 relative (DESIGN: every database rounds its own way).
				g := row[j]
				wf, isFloat := w.(float64)
				gf, ok := g.(float64)
				if isFloat && ok && closeFloats(wf, gf) || !isFloat && g == w {
					continue
				}
				t.Errorf("%s: row %d %s = %#v, want %#v", desc, i, res.Columns[j].Name, g, w)
			}
		}
		checkService(t, svc, ref, "numbers", RefRequest{Fields: r.Fields, KPIs: r.KPIs, Sort: sortText})
	}
	var byGroup [][]any
	for _, g := range groups {
		byGroup = append(byGroup, append([]any{g}, numbersExpected(t, g)...))
	}
	// Grouped, in the groups' natural order (the order of their first rows).
	check(km.Request{Fields: []string{"R.G"}, KPIs: kpis}, "", byGroup)
	// One group of every row: the sum of N is beyond int64.
	check(km.Request{KPIs: kpis}, "", [][]any{numbersExpected(t, "")})
	// Sorted by a KPI that is -Inf in one group, and by the integer sum with its nulls
	// last, both ways.
	for _, c := range []struct {
		sort  string
		order []string
	}{
		{"-Q", []string{"wrap", "small", "under", "a53", "over"}},
		{"+Q", []string{"over", "a53", "under", "small", "wrap"}},
		{"+S", []string{"small", "wrap", "a53", "over", "under"}},
		{"-S,+R.G", []string{"a53", "wrap", "small", "over", "under"}},
	} {
		var want [][]any
		for _, g := range c.order {
			want = append(want, byGroup[slices.Index(groups, g)])
		}
		check(km.Request{Fields: []string{"R.G"}, KPIs: kpis}, c.sort, want)
	}
}
