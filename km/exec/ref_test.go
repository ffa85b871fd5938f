package exec

import (
	"cmp"
	"fmt"
	"math/big"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	gocmp "github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/kmkit/kmkit/km"
	"github.com/kmkit/kmkit/query"
	"github.com/kmkit/kmkit/query/column"
	"github.com/kmkit/kmkit/query/fuzzy"
)

// refFrame is the naive model of a frame: every cell as a query.Value, row by row.
type refFrame struct {
	names []string
	types map[string]query.Type
	rows  []map[string]query.Value
	// o is the same tables as a KM (records A and B, A.FK -> B.K) and the Source over
	// them.
	o *one
}

// plan runs req as a plan on rf's KM: at KM level when rf's names are qualified
// (record).
func (rf *refFrame) plan(req *km.PlanRequest) (*query.Result, error) {
	r := *req
	r.Record = rf.record()
	return rf.o.run(r)
}

// record is the record of the plans rf's requests stand for: "-" (KM level) when its
// names are qualified, else the one record's.
func (rf *refFrame) record() string {
	if strings.Contains(rf.names[0], ".") {
		return "-"
	}
	return ""
}

// Three-valued results of the reference evaluator.
const (
	vFalse = iota
	vTrue
	vUnknown
)

func (rf *refFrame) eval(e query.Expr, row map[string]query.Value) int {
	switch e := e.(type) {
	case *query.Logical:
		l, r := rf.eval(e.L, row), rf.eval(e.R, row)
		if e.Op == query.And {
			switch {
			case l == vFalse || r == vFalse:
				return vFalse
			case l == vTrue && r == vTrue:
				return vTrue
			}
			return vUnknown
		}
		switch {
		case l == vTrue || r == vTrue:
			return vTrue
		case l == vFalse && r == vFalse:
			return vFalse
		}
		return vUnknown
	case *query.Not:
		switch rf.eval(e.X, row) {
		case vTrue:
			return vFalse
		case vFalse:
			return vTrue
		}
		return vUnknown
	case *query.IsNull:
		if row[e.Field.Name].Null != e.Negated {
			return vTrue
		}
		return vFalse
	case *query.Compare:
		v := row[e.Field.Name]
		if v.Null || e.Value.Value.Null {
			return vUnknown
		}
		c := refCompare(v, e.Value.Value)
		ok := false
		switch e.Op {
		case query.Eq:
			ok = c == 0
		case query.Ne:
			ok = c != 0
		case query.Gt:
			ok = c > 0
		case query.Ge:
			ok = c >= 0
		case query.Lt:
			ok = c < 0
		case query.Le:
			ok = c <= 0
		}
		if ok {
			return vTrue
		}
		return vFalse
	case *query.In:
		v := row[e.Field.Name]
		if v.Null {
			return vUnknown
		}
		res := vFalse
		for _, l := range e.Values {
			if l.Value.Null {
				res = vUnknown
			} else if refCompare(v, l.Value) == 0 {
				return vTrue
			}
		}
		return res
	case *query.Call:
		v := row[e.Field.Name]
		if v.Null {
			return vUnknown
		}
		var ok bool
		switch e.Func {
		case query.Contains:
			ok = strings.Contains(v.Str, e.Arg.Value.Str)
		case query.StartsWith:
			ok = strings.HasPrefix(v.Str, e.Arg.Value.Str)
		case query.EndsWith:
			ok = strings.HasSuffix(v.Str, e.Arg.Value.Str)
		}
		if ok {
			return vTrue
		}
		return vFalse
	}
	panic(fmt.Sprintf("eval %T", e))
}

// refCompare compares a cell with a literal exactly, with big numbers.
func refCompare(v, l query.Value) int {
	switch {
	case v.Type == query.TypeString:
		return strings.Compare(v.Str, l.Str)
	case v.Type == query.TypeBoolean:
		return cmp.Compare(b2u(v.Bool), b2u(l.Bool))
	case v.Type.Temporal() && l.Type == query.TypeDate:
		return cmp.Compare(query.DayOfMicros(v.Int), l.Int)
	case v.Type == query.TypeDate && l.Type.Temporal():
		return big.NewInt(v.Int).Mul(big.NewInt(v.Int), big.NewInt(query.MicrosPerDay)).Cmp(big.NewInt(l.Int))
	}
	return bigOf(v).Cmp(bigOf(l))
}

func bigOf(v query.Value) *big.Float {
	if v.Type == query.TypeFloat {
		return big.NewFloat(v.Float)
	}
	return new(big.Float).SetInt64(v.Int)
}

func refCompareValues(a, b query.Value, desc bool) int {
	switch {
	case a.Null && b.Null:
		return 0
	case a.Null:
		return 1
	case b.Null:
		return -1
	}
	c := refCompare(a, b)
	if desc {
		return -c
	}
	return c
}

func keyOf(vals []query.Value) string {
	var b strings.Builder
	for _, v := range vals {
		fmt.Fprintf(&b, "%v|%v|%q|%d|%v|%v;", v.Null, v.Type, v.Str, v.Int, v.Float, v.Bool)
	}
	return b.String()
}

// run is the reference executor: row by row, with sort.Stable and maps of printed keys.
// passes reports whether row passes every filter entry.
func (rf *refFrame) passes(filters []query.Expr, row map[string]query.Value) bool {
	for _, e := range filters {
		if rf.eval(e, row) != vTrue {
			return false
		}
	}
	return true
}

// metricOf returns the metric of the KPI id of a request of gen.request: an ad-hoc KPI.
func metricOf(req *km.PlanRequest, id string) query.Metric {
	for _, k := range req.AdHocKPIs {
		if k.ID == id {
			return k.Metric()
		}
	}
	panic("no ad-hoc KPI " + id)
}

// run answers req, a request of gen.request, as the reference does.
func (rf *refFrame) run(req *km.PlanRequest) *query.Result {
	fields := req.Fields
	if len(fields) == 0 && len(req.KPIs) == 0 {
		fields = rf.names
	}
	var rows []int
	for r, row := range rf.rows {
		if rf.passes(req.Filters, row) {
			rows = append(rows, r)
		}
	}
	score := map[int]int{}
	if s := req.Search; s != nil {
		searched := s.Fields
		if len(searched) == 0 {
			sel := req.Fields
			if len(sel) == 0 {
				sel = rf.names
			}
			for _, name := range sel {
				if t := rf.types[name]; t == query.TypeString || t == query.TypeTime {
					searched = append(searched, name)
				}
			}
		}
		m := fuzzy.New(s.Term)
		var kept []int
		for _, r := range rows {
			best := 0
			for _, name := range searched {
				if v := rf.rows[r][name]; !v.Null {
					text := v.Str
					if v.Type == query.TypeTime { // searched as its text, as presented
						text = time.UnixMicro(v.Int).UTC().Format("15:04:05.999999")
					}
					best = max(best, m.Score(text))
				}
			}
			if best >= s.Precision {
				score[r] = best
				kept = append(kept, r)
			}
		}
		rows = kept
		if len(req.Sort) == 0 {
			slices.SortStableFunc(rows, func(a, b int) int { return score[b] - score[a] })
		}
	}
	res := &query.Result{}
	for _, name := range fields {
		res.Columns = append(res.Columns, query.ColumnHeader{Name: name, Type: rf.types[name]})
	}
	var out [][]query.Value
	if len(req.KPIs) > 0 {
		var order []string
		groups := map[string][]int{}
		for _, r := range rows {
			var key []query.Value
			for _, name := range fields {
				key = append(key, rf.rows[r][name])
			}
			k := keyOf(key)
			if _, ok := groups[k]; !ok {
				order = append(order, k)
			}
			groups[k] = append(groups[k], r)
		}
		if len(fields) == 0 && len(order) == 0 {
			order = []string{""}
		}
		for _, k := range order {
			g := groups[k]
			var row []query.Value
			if len(g) > 0 {
				for _, name := range fields {
					row = append(row, rf.rows[g[0]][name])
				}
			}
			for _, id := range req.KPIs {
				row = append(row, rf.metric(metricOf(req, id), g))
			}
			out = append(out, row)
		}
		for _, id := range req.KPIs {
			res.Columns = append(res.Columns, query.ColumnHeader{Name: id, Type: rf.metricType(metricOf(req, id)), KPI: true})
		}
	} else {
		for _, r := range rows {
			var row []query.Value
			for _, name := range fields {
				row = append(row, rf.rows[r][name])
			}
			out = append(out, row)
		}
	}
	col := func(name string) int {
		return slices.IndexFunc(res.Columns, func(c query.ColumnHeader) bool { return c.Name == name })
	}
	slices.SortStableFunc(out, func(a, b []query.Value) int {
		for _, k := range req.Sort {
			if c := refCompareValues(a[col(k.Field)], b[col(k.Field)], k.Desc); c != 0 {
				return c
			}
		}
		return 0
	})
	if req.Distinct && len(req.KPIs) == 0 {
		seen := map[string]bool{}
		var d [][]query.Value
		for _, row := range out {
			if k := keyOf(row); !seen[k] {
				seen[k] = true
				d = append(d, row)
			}
		}
		out = d
	}
	if req.Count {
		res.Count = len(out)
	}
	res.Rows = [][]query.Value{}
	for i := req.Page * req.PageSize; i < len(out) && i < (req.Page+1)*req.PageSize; i++ {
		res.Rows = append(res.Rows, out[i])
	}
	return res
}

func (rf *refFrame) metricType(m query.Metric) query.Type {
	if a, ok := m.(*query.Aggregate); ok {
		switch a.Func {
		case query.AggCount, query.AggCountDistinct:
			return query.TypeInteger
		case query.AggMin, query.AggMax:
			return rf.types[a.Field]
		case query.AggSum:
			if rf.types[a.Field] == query.TypeInteger {
				return query.TypeInteger
			}
		}
	}
	return query.TypeFloat
}

func (rf *refFrame) metric(m query.Metric, g []int) query.Value {
	switch m := m.(type) {
	case *query.Number:
		return query.Float(m.V)
	case *query.Arith:
		l, r := rf.metric(m.L, g), rf.metric(m.R, g)
		if l.Null || r.Null {
			return query.Null(query.TypeFloat)
		}
		a, b := asFloat(l), asFloat(r)
		switch m.Op {
		case '+':
			return query.Float(a + b)
		case '-':
			return query.Float(a - b)
		case '*':
			return query.Float(a * b)
		}
		if b == 0 {
			return query.Null(query.TypeFloat)
		}
		return query.Float(a / b)
	}
	a := m.(*query.Aggregate)
	var rows []int
	for _, r := range g {
		if a.Filter == nil || a.Func == query.AggRatio || rf.eval(a.Filter, rf.rows[r]) == vTrue {
			rows = append(rows, r)
		}
	}
	if a.Func == query.AggRatio {
		if len(g) == 0 {
			return query.Null(query.TypeFloat)
		}
		n := 0
		for _, r := range g {
			if rf.eval(a.Filter, rf.rows[r]) == vTrue {
				n++
			}
		}
		return query.Float(float64(n) / float64(len(g)))
	}
	if a.Func == query.AggCount && a.Field == "" {
		return query.Int(int64(len(rows)))
	}
	var vals []query.Value
	for _, r := range rows {
		if v := rf.rows[r][a.Field]; !v.Null {
			vals = append(vals, v)
		}
	}
	switch a.Func {
	case query.AggCount:
		return query.Int(int64(len(vals)))
	case query.AggCountDistinct:
		seen := map[string]bool{}
		for _, v := range vals {
			if v.Type == query.TypeFloat && v.Float == 0 {
				v.Float = 0
			}
			seen[keyOf([]query.Value{v})] = true
		}
		return query.Int(int64(len(seen)))
	case query.AggMin, query.AggMax:
		if len(vals) == 0 {
			return query.Null(rf.types[a.Field])
		}
		best := vals[0]
		for _, v := range vals[1:] {
			c := refCompare(v, best)
			if (a.Func == query.AggMin && c < 0) || (a.Func == query.AggMax && c > 0) {
				best = v
			}
		}
		return best
	}
	if a.Func == query.AggSum && rf.types[a.Field] == query.TypeInteger {
		// Exactly; null beyond int64 (package km, "Numbers").
		s := new(big.Int)
		for _, v := range vals {
			s.Add(s, big.NewInt(v.Int))
		}
		if len(vals) == 0 || !s.IsInt64() {
			return query.Null(query.TypeInteger)
		}
		return query.Int(s.Int64())
	}
	if len(vals) == 0 {
		return query.Null(query.TypeFloat)
	}
	fs := make([]float64, len(vals))
	sum := 0.0
	for i, v := range vals {
		fs[i] = asFloat(v)
		sum += fs[i]
	}
	switch a.Func {
	case query.AggSum:
		return query.Float(sum)
	case query.AggAvg:
		return query.Float(sum / float64(len(fs)))
	}
	slices.Sort(fs)
	if len(fs)%2 == 1 {
		return query.Float(fs[len(fs)/2])
	}
	return query.Float((fs[len(fs)/2-1] + fs[len(fs)/2]) / 2)
}

// gen makes random tables, filters and requests.
type gen struct {
	r *rand.Rand
	// plan restricts requests to what a km.Plan states with the frame's semantics: filters
	// and KPIs name A's fields only (a plan places a predicate on B on B's rows and carries
	// it by semi-join, and aggregates B's fields at B's grain), min and max read numbers
	// (the KPI language's rule), fields are distinct and present unless KPIs are asked.
	plan bool
}

// names returns the fields a filter or a KPI may name.
func (g *gen) names(rf *refFrame) []string {
	if !g.plan {
		return rf.names
	}
	var out []string
	for _, n := range rf.names {
		if strings.HasPrefix(n, "A.") {
			out = append(out, n)
		}
	}
	return out
}

var words = []string{"Material", "material", "Raw Material", "München", "Munchen", "Köln", "DE", "FR", "", "Matter", "Order 1", "order 10", "Zürich", "x"}

func (g *gen) value(t query.Type) query.Value {
	r := g.r
	switch t {
	case query.TypeString:
		return query.String(words[r.IntN(len(words))])
	case query.TypeInteger:
		return query.Int(int64(r.IntN(21) - 10))
	case query.TypeFloat:
		if r.IntN(2) == 0 {
			return query.Float(float64(r.IntN(21) - 10))
		}
		return query.Float(float64(r.IntN(200)-100) / 8)
	case query.TypeBoolean:
		return query.Bool(r.IntN(2) == 0)
	case query.TypeDate:
		return query.Value{Type: t, Int: int64(r.IntN(10) - 5)}
	case query.TypeDateTime, query.TypeTimestamp:
		return query.Value{Type: t, Int: int64(r.IntN(10)-5)*query.MicrosPerDay + int64(r.IntN(3)-1)*int64(r.IntN(query.MicrosPerDay))}
	case query.TypeTime:
		return query.Value{Type: t, Int: int64(r.IntN(5)) * 3_600_000_000}
	}
	panic(t)
}

var allTypes = []query.Type{query.TypeString, query.TypeInteger, query.TypeFloat, query.TypeBoolean,
	query.TypeDate, query.TypeDateTime, query.TypeTimestamp, query.TypeTime}

// tables returns a base table and a table it joins (many-to-one on K), as column tables and
// as the reference frame of their join.
func (g *gen) tables(t *testing.T) (*Frame, *refFrame) {
	nKeys := 1 + g.r.IntN(6)
	// Joined table B: a unique string key, a string and a float, some nulls.
	bRows := make([][]query.Value, nKeys)
	for i := range bRows {
		bRows[i] = []query.Value{query.String(fmt.Sprintf("k%d", i)), g.maybeNull(query.TypeString), g.maybeNull(query.TypeFloat)}
	}
	bNames := []string{"K", "S", "F"}
	bTypes := []query.Type{query.TypeString, query.TypeString, query.TypeFloat}
	// Base table A: a column of every type and a foreign key into B (also dangling or null).
	aNames := []string{"FK"}
	aTypes := []query.Type{query.TypeString}
	for i, typ := range allTypes {
		aNames = append(aNames, fmt.Sprintf("C%d", i))
		aTypes = append(aTypes, typ)
	}
	n := g.r.IntN(60)
	aRows := make([][]query.Value, n)
	for i := range aRows {
		fk := query.String(fmt.Sprintf("k%d", g.r.IntN(nKeys+1)))
		if g.r.IntN(8) == 0 {
			fk = query.Null(query.TypeString)
		}
		aRows[i] = []query.Value{fk}
		for _, typ := range allTypes {
			aRows[i] = append(aRows[i], g.maybeNull(typ))
		}
	}
	a, b := build(t, aNames, aTypes, aRows), build(t, bNames, bTypes, bRows)
	f, err := NewFrame("A", a, Join{From: "A.FK", Record: "B", Table: b, Key: "K"})
	if err != nil {
		t.Fatal(err)
	}
	rf := &refFrame{types: map[string]query.Type{},
		o: kmOfRecords(t, []rt{{"A", "", a}, {"B", "K", b}}, [][2]string{{"A.FK", "B.K"}})}
	for i, name := range aNames {
		rf.names = append(rf.names, "A."+name)
		rf.types["A."+name] = aTypes[i]
	}
	for i, name := range bNames {
		rf.names = append(rf.names, "B."+name)
		rf.types["B."+name] = bTypes[i]
	}
	for _, ar := range aRows {
		row := map[string]query.Value{}
		for i, name := range aNames {
			row["A."+name] = ar[i]
		}
		var match []query.Value
		for _, br := range bRows {
			if !ar[0].Null && br[0].Str == ar[0].Str {
				match = br
			}
		}
		for i, name := range bNames {
			if match == nil {
				row["B."+name] = query.Null(bTypes[i])
			} else {
				row["B."+name] = match[i]
			}
		}
		rf.rows = append(rf.rows, row)
	}
	return f, rf
}

func build(t *testing.T, names []string, types []query.Type, rows [][]query.Value) *column.Table {
	cols := make([]column.Column, len(names))
	for i, typ := range types {
		b := column.NewBuilder(typ)
		for _, row := range rows {
			if err := b.Append(row[i]); err != nil {
				t.Fatal(err)
			}
		}
		cols[i] = b.Build()
	}
	tab, err := column.NewTable(names, cols)
	if err != nil {
		t.Fatal(err)
	}
	return tab
}

func (g *gen) maybeNull(t query.Type) query.Value {
	if g.r.IntN(6) == 0 {
		return query.Null(t)
	}
	return g.value(t)
}

// literal returns a literal for a comparison with a field of type t: mostly of type t,
// sometimes of a type the executor converts (float against integer, date against instant).
func (g *gen) literal(t query.Type) query.Literal {
	switch {
	case t == query.TypeInteger && g.r.IntN(3) == 0:
		return lit(g.value(query.TypeFloat))
	case t == query.TypeFloat && g.r.IntN(3) == 0:
		return lit(g.value(query.TypeInteger))
	case t.Temporal() && g.r.IntN(2) == 0:
		return lit(g.value(query.TypeDate))
	case t == query.TypeDate && g.r.IntN(3) == 0:
		return lit(g.value(query.TypeDateTime))
	case g.r.IntN(25) == 0:
		return lit(query.Null(query.TypeNull))
	}
	return lit(g.value(t))
}

func (g *gen) filter(rf *refFrame, depth int) query.Expr {
	r := g.r
	if depth > 0 && r.IntN(2) == 0 {
		switch r.IntN(3) {
		case 0:
			return not(g.filter(rf, depth-1))
		case 1:
			return and(g.filter(rf, depth-1), g.filter(rf, depth-1))
		default:
			return or(g.filter(rf, depth-1), g.filter(rf, depth-1))
		}
	}
	names := g.names(rf)
	name := names[r.IntN(len(names))]
	t := rf.types[name]
	fr := field(name, t)
	switch k := r.IntN(10); {
	case k == 0:
		return &query.IsNull{Field: fr, Negated: r.IntN(2) == 0}
	case k <= 2:
		var vals []query.Literal
		for range r.IntN(5) {
			vals = append(vals, g.literal(t))
		}
		return &query.In{Field: fr, Values: vals}
	case k == 3 && t == query.TypeString:
		w := words[r.IntN(len(words))]
		if len(w) > 1 {
			w = w[r.IntN(len(w)/2+1):]
		}
		return &query.Call{Func: query.FuncName(1 + r.IntN(3)), Field: fr, Arg: lit(query.String(w))}
	}
	return &query.Compare{Field: fr, Op: query.CompareOp(1 + r.IntN(6)), Value: g.literal(t)}
}

// request returns a random request on rf's KM (at KM level when rf's names are
// qualified): one filter entry or none, KPIs K<i> that are ad-hoc KPIs of random metrics.
func (g *gen) request(t testing.TB, rf *refFrame) *km.PlanRequest {
	t.Helper()
	r := g.r
	req := &km.PlanRequest{Record: rf.record(), PageSize: 1 + r.IntN(12), Page: r.IntN(4), Count: r.IntN(4) != 0}
	if r.IntN(5) != 0 {
		for range 1 + r.IntN(5) {
			name := rf.names[r.IntN(len(rf.names))]
			if g.plan && slices.Contains(req.Fields, name) {
				continue
			}
			req.Fields = append(req.Fields, name)
		}
	}
	if r.IntN(3) != 0 {
		req.Filters = []query.Expr{g.filter(rf, 3)}
	}
	if r.IntN(4) == 0 {
		terms := []string{"materail", "mat", "munchen", "xyz", "order", "k", ""}
		req.Search = &km.SearchRequest{Term: terms[r.IntN(len(terms))], Precision: 40 + r.IntN(61)}
		if r.IntN(3) == 0 {
			req.Search.Fields = []string{"A.C0", "B.S", "A.FK"}[:1+r.IntN(3)]
		}
	}
	if r.IntN(4) == 0 {
		for i := range 1 + r.IntN(3) {
			m := g.metric(rf, 1)
			for g.plan && !hasAggregate(m) { // a KM's KPI aggregates something
				m = g.metric(rf, 1)
			}
			k, err := rf.o.m.MetricKPI(fmt.Sprintf("K%d", i), m, "A")
			if err != nil {
				t.Fatalf("%v: %s", err, metricString(m))
			}
			req.KPIs = append(req.KPIs, k.ID)
			req.AdHocKPIs = append(req.AdHocKPIs, k)
		}
	} else {
		req.Distinct = r.IntN(3) == 0
	}
	if g.plan && len(req.Fields) == 0 && len(req.KPIs) == 0 {
		req.Fields = slices.Clone(rf.names)
	}
	if g.plan && len(req.KPIs) == 0 && !slices.ContainsFunc(req.Fields, func(f string) bool { return strings.HasPrefix(f, "A.") }) {
		// Rows of a plan are of the finest record selected: A's, as the frame's.
		a := g.names(rf)
		req.Fields = append(req.Fields, a[r.IntN(len(a))])
	}
	if g.plan && len(req.KPIs) > 0 && req.Search != nil {
		// With KPIs a plan searches the selected fields, which group the KPIs.
		// Without a field it has nothing to search.
		req.Search.Fields = slices.DeleteFunc(req.Search.Fields, func(f string) bool { return !slices.Contains(req.Fields, f) })
		if len(req.Fields) == 0 {
			req.Search = nil
		}
	}
	sortable := slices.Clone(req.Fields)
	if len(sortable) == 0 && len(req.KPIs) == 0 {
		sortable = rf.names
	}
	sortable = append(sortable, req.KPIs...)
	if len(sortable) > 0 && r.IntN(3) != 0 {
		for range 1 + r.IntN(2) {
			req.Sort = append(req.Sort, query.SortTerm{Field: sortable[r.IntN(len(sortable))], Desc: r.IntN(2) == 0})
		}
	}
	return req
}

// hasAggregate reports whether m holds an aggregate.
func hasAggregate(m query.Metric) bool {
	switch m := m.(type) {
	case *query.Aggregate:
		return true
	case *query.Arith:
		return hasAggregate(m.L) || hasAggregate(m.R)
	}
	return false
}

func (g *gen) metric(rf *refFrame, depth int) query.Metric {
	r := g.r
	if depth > 0 && r.IntN(4) == 0 {
		return &query.Arith{Op: "+-*/"[r.IntN(4)], L: g.metric(rf, depth-1), R: g.metric(rf, depth-1)}
	}
	if r.IntN(10) == 0 {
		return &query.Number{V: float64(r.IntN(5))}
	}
	numeric := []string{"A.C1", "A.C2", "B.F"}
	if g.plan {
		numeric = numeric[:2]
	}
	a := &query.Aggregate{Func: query.AggFunc(1 + r.IntN(8))}
	switch a.Func {
	case query.AggSum, query.AggAvg, query.AggMedian:
		a.Field = numeric[r.IntN(len(numeric))]
	case query.AggRatio:
		a.Filter = g.filter(rf, 1)
		return a
	case query.AggCount:
		if r.IntN(2) == 0 {
			break
		}
		fallthrough
	default:
		names := g.names(rf)
		a.Field = names[r.IntN(len(names))]
	}
	if r.IntN(3) == 0 {
		a.Filter = g.filter(rf, 1)
	}
	// Arithmetic needs numbers: min and max of other types stand alone only (and in a
	// plan, nowhere).
	if (depth == 0 || g.plan) && (a.Func == query.AggMin || a.Func == query.AggMax) && !rf.types[a.Field].Numeric() {
		a.Field = numeric[r.IntN(len(numeric))]
	}
	return a
}

func TestAgainstReference(t *testing.T) {
	g := &gen{r: rand.New(rand.NewPCG(1, 2)), plan: true}
	n := 3000
	if testing.Short() {
		n = 300
	}
	for i := range n {
		_, rf := g.tables(t)
		req := g.request(t, rf)
		want := rf.run(req)
		got, err := rf.plan(req)
		if err != nil {
			t.Fatalf("case %d: %v\nrequest %s", i, err, describe(req))
		}
		if d := gocmp.Diff(want, got, cmpopts.EquateApprox(1e-9, 1e-9), cmpopts.EquateEmpty()); d != "" {
			t.Fatalf("case %d: result differs from the reference (-want +got):\n%s\nrequest %s", i, d, describe(req))
		}
	}
}

func describe(req *km.PlanRequest) string {
	var b strings.Builder
	fmt.Fprintf(&b, "fields %v sort %v page %d/%d distinct %v count %v", req.Fields, req.Sort, req.Page, req.PageSize, req.Distinct, req.Count)
	for _, e := range req.Filters {
		fmt.Fprintf(&b, "\nfilter %s", exprString(e))
	}
	if req.Search != nil {
		fmt.Fprintf(&b, "\nsearch %+v", *req.Search)
	}
	for _, id := range req.KPIs {
		fmt.Fprintf(&b, "\nkpi %s %s", id, metricString(metricOf(req, id)))
	}
	return b.String()
}

func exprString(e query.Expr) string {
	switch e := e.(type) {
	case *query.Logical:
		return fmt.Sprintf("(%s %d %s)", exprString(e.L), e.Op, exprString(e.R))
	case *query.Not:
		return "not " + exprString(e.X)
	case *query.IsNull:
		return fmt.Sprintf("%s isnull(negated %v)", e.Field.Name, e.Negated)
	case *query.Compare:
		return fmt.Sprintf("%s op%d %+v", e.Field.Name, e.Op, e.Value.Value)
	case *query.In:
		var vs []string
		for _, l := range e.Values {
			vs = append(vs, fmt.Sprintf("%+v", l.Value))
		}
		return fmt.Sprintf("%s in (%s)", e.Field.Name, strings.Join(vs, ", "))
	case *query.Call:
		return fmt.Sprintf("fn%d(%s, %q)", e.Func, e.Field.Name, e.Arg.Value.Str)
	}
	return fmt.Sprintf("%T", e)
}

func metricString(m query.Metric) string {
	switch m := m.(type) {
	case *query.Number:
		return fmt.Sprint(m.V)
	case *query.Arith:
		return fmt.Sprintf("(%s %c %s)", metricString(m.L), m.Op, metricString(m.R))
	case *query.Aggregate:
		s := fmt.Sprintf("agg%d(%s)", m.Func, m.Field)
		if m.Filter != nil {
			s += " where " + exprString(m.Filter)
		}
		return s
	}
	return "?"
}

// FuzzAgainstReference runs the property test from fuzzer-chosen seeds.
func FuzzAgainstReference(f *testing.F) {
	f.Add(uint64(1), uint64(2))
	f.Add(uint64(42), uint64(0))
	f.Fuzz(func(t *testing.T, s1, s2 uint64) {
		g := &gen{r: rand.New(rand.NewPCG(s1, s2)), plan: true}
		_, rf := g.tables(t)
		req := g.request(t, rf)
		want := rf.run(req)
		got, err := rf.plan(req)
		if err != nil {
			t.Fatalf("%v\nrequest %s", err, describe(req))
		}
		if d := gocmp.Diff(want, got, cmpopts.EquateApprox(1e-9, 1e-9), cmpopts.EquateEmpty()); d != "" {
			t.Fatalf("result differs from the reference (-want +got):\n%s\nrequest %s", d, describe(req))
		}
	})
}
