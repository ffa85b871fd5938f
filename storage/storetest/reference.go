package storetest

import (
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"math/big"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/kmkit/kmkit/internal/kmparams"
	"github.com/kmkit/kmkit/km"
	"github.com/kmkit/kmkit/query"
)

// Reference is the reference evaluator of KM queries: a row-at-a-time interpreter of the
// rules of issue 12 ("What a KM query means") and of issue 29 (SPEC-NOTES: one rule for
// join paths in every form; a listed row's parent that fails the filter reads as null),
// written from their text and sharing no code with the backends, the query executor or
// the km handler's planner. It is slow on
// purpose: joins are nested loops over every row, filters are evaluated one row at a time,
// groups are maps. Use it on small data only.
//
// It takes the KM as km.Load returns it and parses filters with query.Parse and KPI
// expressions with query.ParseKPI (ASTs only: typing of literals, name resolution, paths,
// propagation and aggregation are its own). Its fuzzy search scores values with refScore,
// written from the documented tiers.
type Reference struct {
	// KM is the Knowledge Model.
	KM *km.KnowledgeModel
	// Rows holds the rows of every record by record id, in row order, each row holding the
	// values of the record's fields in the order of Record.Fields.
	Rows map[string][][]query.Value
}

// RefRequest is a data request as the API takes it, before any checking.
type RefRequest struct {
	// Record is the record of a record-level request; "" at KM level.
	Record string
	// Fields are the selected fields: "FIELD" at record level, "RECORD.FIELD" at KM level.
	// At record level, none means every field of the record.
	Fields []string
	// KPIs are KPI ids (KM level only).
	KPIs []string
	// KPIParams overrides KPI parameter values: KPI id -> parameter id -> value.
	KPIParams map[string]map[string]string
	// Filters are predefined filter ids; FilterExprs are filter expression texts.
	Filters, FilterExprs []string
	// Sort is the sort parameter as written: "+A,-B".
	Sort string
	// Page is 0-based; PageSize 0 means no paging.
	Page, PageSize int
	// Distinct is options=distinct.
	Distinct bool
	// Search is the fuzzy search, or nil.
	Search *RefSearch
	// RowKey is, at record level, the name under which the request names the record's row
	// key (the OData service's generated key of a record without a key): the row's 1-based
	// position among all rows of the record, an integer that can be selected, filtered
	// and sorted. "" for none.
	RowKey string
	// ODataFilter is an OData $filter text (record level), read with query.ODataSyntax:
	// it may use the canonical functions and arithmetic.
	ODataFilter string
	// ODataOrderBy is an OData $orderby text (record level, without Sort and Distinct):
	// items "expression [asc|desc]", the expressions over the record's fields.
	ODataOrderBy string
}

// RefResult is the answer: column names (headers' ids) and rows whose cells are as
// query.Value.Format renders them (nil, string, int64, float64 or bool).
type RefResult struct {
	Columns []string
	Rows    [][]any
}

// RefError is a request the rules refuse (the API answers 400).
type RefError struct{ Msg string }

// Error returns the message.
func (e *RefError) Error() string { return e.Msg }

func refErr(format string, args ...any) error {
	return &RefError{Msg: fmt.Sprintf(format, args...)}
}

// LoadReference loads the KM with id kmID from fsys (models/*.yaml and data/<source>.csv,
// the layout the stores load) and reads the CSV files of its records.
func LoadReference(fsys fs.FS, kmID string) (*Reference, error) {
	models, err := km.Load(fsys)
	if err != nil {
		return nil, err
	}
	var m *km.KnowledgeModel
	for _, x := range models {
		if x.ID == kmID {
			m = x
		}
	}
	if m == nil {
		return nil, fmt.Errorf("reference: no KM %s", kmID)
	}
	ref := &Reference{KM: m, Rows: map[string][][]query.Value{}}
	for _, r := range m.Records {
		f, err := fsys.Open("data/" + r.Source + ".csv")
		if err != nil {
			return nil, err
		}
		rows, err := readCSV(f, r)
		f.Close()
		if err != nil {
			return nil, fmt.Errorf("reference: %s: %w", r.Source, err)
		}
		ref.Rows[r.ID] = rows
	}
	return ref, nil
}

// readCSV reads a data file: a header row naming the record's fields in any order, an
// empty cell for null.
func readCSV(rd io.Reader, r *km.Record) ([][]query.Value, error) {
	cr := csv.NewReader(rd)
	head, err := cr.Read()
	if err != nil {
		return nil, err
	}
	pos := make([]int, len(r.Fields)) // field index -> column
	for i, f := range r.Fields {
		pos[i] = slices.Index(head, f.ID)
		if pos[i] < 0 {
			return nil, fmt.Errorf("no column %s", f.ID)
		}
	}
	var rows [][]query.Value
	for {
		rec, err := cr.Read()
		if err == io.EOF {
			return rows, nil
		}
		if err != nil {
			return nil, err
		}
		row := make([]query.Value, len(r.Fields))
		for i, f := range r.Fields {
			v, err := parseCell(rec[pos[i]], f.Type)
			if err != nil {
				return nil, fmt.Errorf("line %d field %s: %w", len(rows)+2, f.ID, err)
			}
			row[i] = v
		}
		rows = append(rows, row)
	}
}

func parseCell(s string, t query.Type) (query.Value, error) {
	if s == "" {
		return query.Null(t), nil
	}
	v := query.Value{Type: t}
	var err error
	switch t {
	case query.TypeString:
		v.Str = s
	case query.TypeInteger:
		v.Int, err = strconv.ParseInt(s, 10, 64)
	case query.TypeFloat:
		v.Float, err = strconv.ParseFloat(s, 64)
	case query.TypeBoolean:
		v.Bool, err = strconv.ParseBool(s)
	case query.TypeDate:
		var d time.Time
		d, err = time.Parse(time.DateOnly, s)
		v.Int = query.DaysFromTime(d)
	case query.TypeDateTime, query.TypeTimestamp:
		var d time.Time
		d, err = time.Parse(time.RFC3339Nano, s)
		v.Int = d.UnixMicro()
	case query.TypeTime:
		v.Int, err = parseTimeOfDay(s)
	default:
		err = fmt.Errorf("type %v", t)
	}
	return v, err
}

func parseTimeOfDay(s string) (int64, error) {
	d, err := time.Parse("15:04:05.999999999", s)
	if err != nil {
		return 0, err
	}
	return int64(d.Hour())*3600e6 + int64(d.Minute())*60e6 + int64(d.Second())*1e6 + int64(d.Nanosecond()/1000), nil
}

// ---- relationships and paths ----

// step is one relationship taken in one direction: up from the child record to the
// parent, or down.
type step struct {
	rel      km.Relationship
	up       bool
	from, to string
}

func (s step) String() string { return s.from + "-" + s.to }

// paths returns every shortest path from a to b in the relationship graph taken as
// undirected.
func (ev *evaluation) paths(a, b string) [][]step {
	if a == b {
		return [][]step{nil}
	}
	// Breadth first: distance of every record from a.
	dist := map[string]int{a: 0}
	frontier := []string{a}
	for len(frontier) > 0 {
		var next []string
		for _, r := range frontier {
			for _, s := range ev.steps(r) {
				if _, ok := dist[s.to]; !ok {
					dist[s.to] = dist[r] + 1
					next = append(next, s.to)
				}
			}
		}
		frontier = next
	}
	if _, ok := dist[b]; !ok {
		return nil
	}
	// Every path that gains one at each step and ends at b.
	var out [][]step
	var walk func(r string, acc []step)
	walk = func(r string, acc []step) {
		if r == b {
			out = append(out, slices.Clone(acc))
			return
		}
		for _, s := range ev.steps(r) {
			if d, ok := dist[s.to]; ok && d == dist[r]+1 && d <= dist[b] {
				walk(s.to, append(acc, s))
			}
		}
	}
	walk(a, nil)
	return out
}

// steps lists the relationships leaving record r, either way.
func (ev *evaluation) steps(r string) []step {
	var out []step
	for _, rel := range ev.m.Relationships {
		if rel.From.Record == r {
			out = append(out, step{rel: rel, up: true, from: r, to: rel.To.Record})
		}
		if rel.To.Record == r {
			out = append(out, step{rel: rel, up: false, from: r, to: rel.From.Record})
		}
	}
	return out
}

// oneWay reports whether every step of p goes the same way: read from one of its ends,
// p is a chain of many-to-one lookups.
func oneWay(p []step) bool {
	for _, s := range p {
		if s.up != p[0].up {
			return false
		}
	}
	return true
}

// chosen returns the paths from a to b that the rule for join paths keeps (SPEC-NOTES,
// "KPIs: every aggregate at its own grain", last rule): the shortest ones, and when
// several are equally short and some of them are chains of many-to-one lookups (all
// steps one way, read from either end, so that the path from b to a is the same one
// backwards), only those chains. One path is the answer; several are a tie.
func (ev *evaluation) chosen(a, b string) [][]step {
	ps := ev.paths(a, b)
	if len(ps) < 2 {
		return ps
	}
	var chains [][]step
	for _, p := range ps {
		if oneWay(p) {
			chains = append(chains, p)
		}
	}
	if len(chains) == 0 {
		return ps
	}
	return chains
}

// path is the one path from a to b the rule chooses, or a RefError.
func (ev *evaluation) path(a, b string) ([]step, error) {
	ps := ev.chosen(a, b)
	switch len(ps) {
	case 0:
		return nil, refErr("records %s and %s are not related by any path", a, b)
	case 1:
		return ps[0], nil
	}
	var names []string
	for _, p := range ps {
		n := a
		for _, s := range p {
			n += "-" + s.to
		}
		names = append(names, n)
	}
	return nil, refErr("the path between %s and %s is ambiguous: %s", a, b, strings.Join(names, " or "))
}

// joinedOnce refuses paths from one record to several others that reach one record by two
// different steps: the join would not be one tree (the rule chose each path on its own).
func joinedOnce(paths [][]step) error {
	by := map[string]step{}
	for _, p := range paths {
		for _, s := range p {
			if prev, ok := by[s.to]; ok && prev != s {
				return refErr("record %s is reached from %s along two different paths", s.to, p[0].from)
			}
			by[s.to] = s
		}
	}
	return nil
}

// reachesUp reports whether the path the rule chooses from a to b goes only up (a itself
// included). When the rule leaves several paths and one goes up, it reports true and
// path, called next, reports the ambiguity.
func (ev *evaluation) reachesUp(a, b string) bool {
	for _, p := range ev.chosen(a, b) {
		up := true
		for _, s := range p {
			up = up && s.up
		}
		if up {
			return true
		}
	}
	return false
}

func (ev *evaluation) fieldIndex(rec, field string) int {
	return slices.IndexFunc(ev.m.Record(rec).Fields, func(f *km.Field) bool { return f.ID == field })
}

// related reports whether row a of s.from and row b of s.to are related by s's
// relationship: the child's foreign key equals the parent's key, both non-null.
func (ev *evaluation) related(s step, a, b int) bool {
	child, parent := a, b
	if !s.up {
		child, parent = b, a
	}
	fk := ev.rows[s.rel.From.Record][child][ev.fieldIndex(s.rel.From.Record, s.rel.From.Field)]
	k := ev.rows[s.rel.To.Record][parent][ev.fieldIndex(s.rel.To.Record, s.rel.To.Field)]
	return !fk.Null && !k.Null && fk.Type == k.Type && equalValues(fk, k)
}

// neighbours returns the rows of s.to related to row a of s.from, in row order.
func (ev *evaluation) neighbours(s step, a int) []int {
	var out []int
	for b := range ev.rows[s.to] {
		if ev.related(s, a, b) {
			out = append(out, b)
		}
	}
	return out
}

// connected returns the rows at the end of the path connected to row x of its start.
func (ev *evaluation) connected(p []step, x int) []int {
	cur := []int{x}
	for _, s := range p {
		seen := map[int]bool{}
		for _, a := range cur {
			for _, b := range ev.neighbours(s, a) {
				seen[b] = true
			}
		}
		cur = cur[:0:0]
		for b := range seen {
			cur = append(cur, b)
		}
		sort.Ints(cur)
	}
	return cur
}

// ---- evaluation state ----

type evaluation struct {
	m    *km.KnowledgeModel
	rows map[string][][]query.Value
	// scope is the record of a record-level request (bare field names), or "".
	scope string
	// rowKey names the scope's row key (RefRequest.RowKey), or "".
	rowKey    string
	conjuncts []*conjunct
	passCache map[string][]bool // record -> rows passing the whole filter
	// lambdas holds, for each OData lambda of the filter, whether it holds on each row of
	// scope; lambdaRow is the row of scope a condition holding lambdas is evaluated on.
	lambdas   map[*query.Lambda][]bool
	lambdaRow int
}

// fieldRef is a resolved field of a condition.
type fieldRef struct {
	rec   string
	index int // in Record.Fields; -1 for the row key
	typ   query.Type
	name  string // as written
}

// of returns the value of the field in row x of rows, the rows of its record; the row key
// is x+1.
func (r fieldRef) of(rows [][]query.Value, x int) query.Value {
	if r.index < 0 {
		return query.Int(int64(x) + 1)
	}
	return rows[x][r.index]
}

// conjunct is a condition with its home record.
type conjunct struct {
	expr  query.Expr
	refs  map[string]fieldRef // name as written -> field
	home  string
	up    map[string][]step // home -> every other record it names, going up
	homeP []bool            // rows of home passing
	cache map[string][]bool // record -> rows passing by propagation
}

// resolve finds a field named as a request names it.
func (ev *evaluation) resolve(name string) (fieldRef, error) {
	if ev.scope != "" && ev.rowKey != "" && name == ev.rowKey {
		return fieldRef{rec: ev.scope, index: -1, typ: query.TypeInteger, name: name}, nil
	}
	if rec := km.RowKeyRecord(name); rec != "" && ev.m.Record(rec) != nil {
		return fieldRef{rec: rec, index: -1, typ: query.TypeInteger, name: name}, nil
	}
	if ev.scope != "" {
		if i := ev.fieldIndex(ev.scope, name); i >= 0 {
			return fieldRef{rec: ev.scope, index: i, typ: ev.m.Record(ev.scope).Fields[i].Type, name: name}, nil
		}
	}
	rec, field, ok := strings.Cut(name, ".")
	if ok && ev.m.Record(rec) != nil {
		if i := ev.fieldIndex(rec, field); i >= 0 {
			return fieldRef{rec: rec, index: i, typ: ev.m.Record(rec).Fields[i].Type, name: name}, nil
		}
	}
	return fieldRef{}, refErr("unknown field %s", name)
}

func exprFieldNames(e query.Expr, add func(string)) {
	switch x := e.(type) {
	case *query.Logical:
		exprFieldNames(x.L, add)
		exprFieldNames(x.R, add)
	case *query.Not:
		exprFieldNames(x.X, add)
	case *query.Compare:
		add(x.Field.Name)
	case *query.In:
		add(x.Field.Name)
	case *query.Call:
		add(x.Field.Name)
	case *query.IsNull:
		add(x.Field.Name)
	case *query.ScalarCompare:
		scalarFieldNames(x.L, add)
		scalarFieldNames(x.R, add)
	case *query.ScalarMatch:
		scalarFieldNames(x.X, add)
		scalarFieldNames(x.Arg, add)
	}
}

func scalarFieldNames(s query.Scalar, add func(string)) {
	query.ScalarFields(s, func(f query.FieldRef) { add(f.Name) })
}

// newConjunct resolves the fields of e and finds its home.
func (ev *evaluation) newConjunct(e query.Expr) (*conjunct, error) {
	c := &conjunct{expr: e, refs: map[string]fieldRef{}, cache: map[string][]bool{}}
	var err error
	var recs []string
	exprFieldNames(e, func(name string) {
		if err != nil {
			return
		}
		if _, ok := c.refs[name]; ok {
			return
		}
		var r fieldRef
		if r, err = ev.resolve(name); err == nil {
			c.refs[name] = r
			if !slices.Contains(recs, r.rec) {
				recs = append(recs, r.rec)
			}
		}
	})
	if err != nil {
		return nil, err
	}
	if hasLambda(e) && !slices.Contains(recs, ev.scope) {
		recs = append(recs, ev.scope) // a lambda reads the scope's row
	}
	// Literals must be values of their fields' types.
	if err := ev.checkLiterals(e, c.refs); err != nil {
		return nil, err
	}
	var homes []string
	for _, h := range recs {
		ok := true
		for _, r := range recs {
			if !ev.reachesUp(h, r) {
				ok = false
			}
		}
		if ok {
			homes = append(homes, h)
		}
	}
	if len(homes) != 1 {
		return nil, refErr("a condition on records %s has no record from which all are reached going up: write them as separate filter expressions", strings.Join(recs, ", "))
	}
	c.home = homes[0]
	if hasLambda(e) && c.home != ev.scope {
		return nil, refErr("a condition with a lambda on %s names fields of %s, which %s does not reach going up", ev.scope, c.home, ev.scope)
	}
	c.up = map[string][]step{}
	var reads [][]step
	for _, r := range recs {
		if c.up[r], err = ev.path(c.home, r); err != nil {
			return nil, err
		}
		reads = append(reads, c.up[r])
	}
	if err := joinedOnce(reads); err != nil {
		return nil, err
	}
	// Evaluate on every row of the home.
	c.homeP = make([]bool, len(ev.rows[c.home]))
	for h := range ev.rows[c.home] {
		get := func(ref fieldRef) query.Value {
			row := h
			for _, s := range c.up[ref.rec] {
				ps := ev.neighbours(s, row)
				if len(ps) == 0 {
					return query.Null(ref.typ)
				}
				row = ps[0]
			}
			return ref.of(ev.rows[ref.rec], row)
		}
		ev.lambdaRow = h
		c.homeP[h] = ev.eval(e, c.refs, get) == yes
	}
	return c, nil
}

// passes reports whether row x of record rec passes c: some connected row of the home
// passes it.
func (ev *evaluation) passes(c *conjunct, rec string, x int) (bool, error) {
	if rec == c.home {
		return c.homeP[x], nil
	}
	ps, ok := c.cache[rec]
	if !ok {
		p, err := ev.path(rec, c.home)
		if err != nil {
			return false, err
		}
		ps = make([]bool, len(ev.rows[rec]))
		for y := range ps {
			for _, h := range ev.connected(p, y) {
				if c.homeP[h] {
					ps[y] = true
					break
				}
			}
		}
		c.cache[rec] = ps
	}
	return ps[x], nil
}

// passing returns, per row of rec, whether it passes every conjunct of the filter.
func (ev *evaluation) passing(rec string) ([]bool, error) {
	if p, ok := ev.passCache[rec]; ok {
		return p, nil
	}
	// Every conjunct must reach rec, whether rec has rows or not.
	for _, c := range ev.conjuncts {
		if _, err := ev.path(rec, c.home); err != nil {
			return nil, err
		}
	}
	p := make([]bool, len(ev.rows[rec]))
	for x := range p {
		p[x] = true
		for _, c := range ev.conjuncts {
			ok, err := ev.passes(c, rec, x)
			if err != nil {
				return nil, err
			}
			if !ok {
				p[x] = false
				break
			}
		}
	}
	ev.passCache[rec] = p
	return p, nil
}

// ---- three-valued logic ----

type truth uint8

const (
	no truth = iota
	yes
	unknown
)

func (ev *evaluation) eval(e query.Expr, refs map[string]fieldRef, get func(fieldRef) query.Value) truth {
	switch x := e.(type) {
	case *query.Logical:
		l, r := ev.eval(x.L, refs, get), ev.eval(x.R, refs, get)
		if x.Op == query.And {
			switch {
			case l == no || r == no:
				return no
			case l == yes && r == yes:
				return yes
			}
			return unknown
		}
		switch {
		case l == yes || r == yes:
			return yes
		case l == no && r == no:
			return no
		}
		return unknown
	case *query.Not:
		switch ev.eval(x.X, refs, get) {
		case yes:
			return no
		case no:
			return yes
		}
		return unknown
	case *query.IsNull:
		v := get(refs[x.Field.Name])
		if v.Null != x.Negated {
			return yes
		}
		return no
	case *query.Compare:
		ref := refs[x.Field.Name]
		v := get(ref)
		if isEmptyQuoted(x.Value, ref.typ) { // ne '' on a non-string field: is not null
			if v.Null {
				return no
			}
			return yes
		}
		if v.Null {
			return unknown
		}
		return opHolds(x.Op, compareLiteral(v, x.Value))
	case *query.In:
		v := get(refs[x.Field.Name])
		if v.Null {
			return unknown
		}
		out := no
		for _, l := range x.Values {
			if l.Kind == query.LitNull {
				out = unknown
				continue
			}
			if compareLiteral(v, l) == 0 {
				return yes
			}
		}
		return out
	case *query.Call:
		v := refAsText(get(refs[x.Field.Name]))
		if v.Null {
			return unknown
		}
		arg := x.Arg.Raw
		var ok bool
		switch x.Func {
		case query.Contains:
			ok = strings.Contains(v.Str, arg)
		case query.StartsWith:
			ok = strings.HasPrefix(v.Str, arg)
		case query.EndsWith:
			ok = strings.HasSuffix(v.Str, arg)
		}
		if ok {
			return yes
		}
		return no
	case *query.ScalarCompare:
		return ev.evalScalarCompare(x, refs, get)
	case *query.ScalarMatch:
		return ev.evalScalarMatch(x, refs, get)
	case *query.Lambda:
		if ev.lambdas[x][ev.lambdaRow] {
			return yes
		}
		return no
	}
	panic(fmt.Sprintf("reference: unknown expression %T", e))
}

func isEmptyQuoted(l query.Literal, t query.Type) bool {
	return l.Kind == query.LitString && l.Raw == "" && t != query.TypeString
}

// checkLiterals refuses literals that are not values of their field's type.
func (ev *evaluation) checkLiterals(e query.Expr, refs map[string]fieldRef) error {
	var err error
	check := func(ref fieldRef, l query.Literal, op query.CompareOp) {
		if err != nil || l.Kind == query.LitNull {
			return
		}
		if l.Kind == query.LitString && l.Raw == "" && ref.typ != query.TypeString {
			if op != query.Ne {
				err = refErr("'' is not a value of %s field %s", ref.typ, ref.name)
			}
			return
		}
		if _, ok := literalAs(l, ref.typ); !ok {
			err = refErr("field %s is %s: %q is not a value of it", ref.name, ref.typ, l.Raw)
		}
	}
	var walk func(query.Expr)
	walk = func(e query.Expr) {
		switch x := e.(type) {
		case *query.Logical:
			walk(x.L)
			walk(x.R)
		case *query.Not:
			walk(x.X)
		case *query.Compare:
			check(refs[x.Field.Name], x.Value, x.Op)
		case *query.In:
			for _, l := range x.Values {
				check(refs[x.Field.Name], l, query.Eq)
			}
		case *query.Call:
			// A time is presented as a string, and read as its text.
			if t := refs[x.Field.Name].typ; t != query.TypeString && t != query.TypeTime {
				err = refErr("%s needs a string field", x.Field.Name)
			}
		}
	}
	walk(e)
	return err
}

// typedLiteral is a literal read for a field type: a value, and for an instant field
// compared with a day, the day.
type typedLiteral struct {
	v         query.Value
	isDay     bool // a date against a datetime field: compare the field's UTC day
	isInstant bool // a date-time against a date field: compare the date's midnight UTC
	rat       *big.Rat
}

// literalAs reads l as a value to compare with a field of type t.
func literalAs(l query.Literal, t query.Type) (typedLiteral, bool) {
	kind, raw, val := l.Kind, l.Raw, l.Value
	if kind == query.LitString && t != query.TypeString {
		// A quoted literal is read as the field's type when its text is a value of it.
		var ok bool
		kind, val, ok = readQuoted(raw, t)
		if !ok {
			return typedLiteral{}, false
		}
	}
	switch t {
	case query.TypeString:
		if kind == query.LitString || kind == query.LitBare {
			return typedLiteral{v: query.String(raw)}, true
		}
	case query.TypeInteger, query.TypeFloat:
		if kind == query.LitInteger || kind == query.LitDecimal {
			// A decimal is the float64 nearest its text, as a float field holds the same
			// text (0.1 eq 0.1, as pandas compares them); the comparison with the field's
			// value is then exact, an int64 against that float64 included.
			r := new(big.Rat)
			if kind == query.LitInteger {
				r.SetInt64(val.Int)
			} else {
				r.SetFloat64(val.Float)
			}
			return typedLiteral{rat: r}, true
		}
	case query.TypeBoolean:
		if kind == query.LitBoolean {
			return typedLiteral{v: val}, true
		}
	case query.TypeDate:
		if kind == query.LitDate {
			return typedLiteral{v: val}, true
		}
		if kind == query.LitDateTime {
			return typedLiteral{v: val, isInstant: true}, true
		}
	case query.TypeDateTime, query.TypeTimestamp:
		if kind == query.LitDateTime {
			return typedLiteral{v: val}, true
		}
		if kind == query.LitDate {
			return typedLiteral{v: val, isDay: true}, true
		}
	case query.TypeTime:
		if kind == query.LitTime {
			return typedLiteral{v: val}, true
		}
	}
	return typedLiteral{}, false
}

// readQuoted reads the text of a quoted literal as a literal of type t.
func readQuoted(s string, t query.Type) (query.LiteralKind, query.Value, bool) {
	switch t {
	case query.TypeBoolean:
		if s == "true" || s == "false" {
			return query.LitBoolean, query.Bool(s == "true"), true
		}
	case query.TypeInteger, query.TypeFloat:
		if i, err := strconv.ParseInt(s, 10, 64); err == nil {
			return query.LitInteger, query.Int(i), true
		}
		if f, err := strconv.ParseFloat(s, 64); err == nil && !math.IsInf(f, 0) && !math.IsNaN(f) &&
			!strings.ContainsAny(s, "xXpP_") && !strings.EqualFold(s, "inf") {
			return query.LitDecimal, query.Float(f), true
		}
	case query.TypeDate:
		if d, err := time.Parse(time.DateOnly, s); err == nil {
			return query.LitDate, query.Date(d), true
		}
		if d, err := time.Parse(time.RFC3339Nano, s); err == nil {
			return query.LitDateTime, query.DateTime(d), true
		}
	case query.TypeDateTime, query.TypeTimestamp:
		if d, err := time.Parse(time.DateOnly, s); err == nil {
			return query.LitDate, query.Date(d), true
		}
		if d, err := time.Parse(time.RFC3339Nano, s); err == nil {
			return query.LitDateTime, query.DateTime(d), true
		}
	case query.TypeTime:
		if us, err := parseTimeOfDay(s); err == nil {
			return query.LitTime, query.Value{Type: query.TypeTime, Int: us}, true
		}
	}
	return 0, query.Value{}, false
}

// compareLiteral compares a non-null field value with a literal of a checked kind:
// -1, 0 or 1. A date-time or time literal with digits past the microsecond (OData writes
// up to 12) lies after the microsecond it is read as, and after every value equal to it.
func compareLiteral(v query.Value, l query.Literal) int {
	c := compareRead(v, l)
	temporal := v.Type == query.TypeDate || v.Type == query.TypeDateTime || v.Type == query.TypeTimestamp || v.Type == query.TypeTime
	if c == 0 && temporal && pastMicros(l.Raw) {
		return -1
	}
	return c
}

// pastMicros reports whether the date-time or time text s has a fraction of a second
// with a digit other than 0 after its sixth.
func pastMicros(s string) bool {
	_, frac, ok := strings.Cut(s, ".")
	if !ok {
		return false
	}
	for i := 0; i < len(frac) && frac[i] >= '0' && frac[i] <= '9'; i++ {
		if i >= 6 && frac[i] != '0' {
			return true
		}
	}
	return false
}

// compareRead compares a non-null field value with a literal of a checked kind as the
// literal is read, to the microsecond: -1, 0 or 1.
func compareRead(v query.Value, l query.Literal) int {
	tl, _ := literalAs(l, v.Type)
	switch v.Type {
	case query.TypeString:
		return strings.Compare(v.Str, tl.v.Str)
	case query.TypeInteger:
		return new(big.Rat).SetInt64(v.Int).Cmp(tl.rat)
	case query.TypeFloat:
		r := new(big.Rat)
		r.SetFloat64(v.Float)
		return r.Cmp(tl.rat)
	case query.TypeBoolean:
		return cmpBool(v.Bool, tl.v.Bool)
	case query.TypeDate:
		if tl.isInstant {
			// The date stands for its midnight UTC.
			midnight := time.Unix(v.Int*24*60*60, 0)
			return midnight.Compare(time.UnixMicro(tl.v.Int))
		}
		return cmpInt(v.Int, tl.v.Int)
	case query.TypeDateTime, query.TypeTimestamp:
		if tl.isDay {
			return cmpInt(query.DayOfMicros(v.Int), tl.v.Int)
		}
		return cmpInt(v.Int, tl.v.Int)
	case query.TypeTime:
		return cmpInt(v.Int, tl.v.Int)
	}
	return 0
}

func cmpInt(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

func cmpBool(a, b bool) int {
	switch {
	case a == b:
		return 0
	case !a:
		return -1
	}
	return 1
}

// compareValues orders two non-null values of one type.
func compareValues(a, b query.Value) int {
	switch a.Type {
	case query.TypeString:
		return strings.Compare(a.Str, b.Str)
	case query.TypeFloat:
		switch {
		case a.Float < b.Float:
			return -1
		case a.Float > b.Float:
			return 1
		}
		return 0
	case query.TypeBoolean:
		return cmpBool(a.Bool, b.Bool)
	}
	return cmpInt(a.Int, b.Int)
}

func equalValues(a, b query.Value) bool {
	if a.Null || b.Null {
		return a.Null == b.Null
	}
	return a.Type == b.Type && compareValues(a, b) == 0
}

// compareNullsLast orders values ascending with nulls after every value.
func compareNullsLast(a, b query.Value) int {
	switch {
	case a.Null && b.Null:
		return 0
	case a.Null:
		return 1
	case b.Null:
		return -1
	}
	return compareValues(a, b)
}

// key is a map key for a tuple of values.
func key(vs []query.Value) string {
	var b strings.Builder
	for _, v := range vs {
		if v.Null {
			b.WriteString("N|")
			continue
		}
		fmt.Fprintf(&b, "%d:%q:%d:%v:%v|", v.Type, v.Str, v.Int, math.Float64bits(v.Float), v.Bool)
	}
	return b.String()
}

// ---- requests ----

// Eval answers the request as the API would (the rows of the requested page), or a
// *RefError for a request the rules refuse.
func (r *Reference) Eval(req RefRequest) (*RefResult, error) {
	ev := &evaluation{m: r.KM, rows: r.Rows, scope: req.Record, rowKey: req.RowKey, passCache: map[string][]bool{}}
	if req.Record != "" && r.KM.Record(req.Record) == nil {
		return nil, refErr("unknown record %s", req.Record)
	}
	if req.Record != "" && len(req.KPIs) > 0 {
		return nil, refErr("kpis at record level")
	}
	// The filter: every predefined filter and filterExpr entry, split into conjuncts.
	var exprs []query.Expr
	for _, id := range req.Filters {
		f := r.KM.Filter(id)
		if f == nil {
			return nil, refErr("unknown filter %s", id)
		}
		e, err := query.Parse(f.Expr)
		if err != nil {
			return nil, err
		}
		exprs = append(exprs, e)
	}
	for _, value := range req.FilterExprs {
		// One value may hold several expressions joined by top-level commas.
		for _, text := range kmparams.SplitTopLevel(value) {
			e, err := query.Parse(text)
			if err != nil {
				return nil, refErr("%v", err)
			}
			exprs = append(exprs, e)
		}
	}
	if req.ODataFilter != "" {
		e, err := query.Parse(req.ODataFilter, query.ODataSyntax())
		if err != nil {
			return nil, refErr("%v", err)
		}
		exprs = append(exprs, e)
	}
	var conj []query.Expr
	var split func(query.Expr)
	split = func(e query.Expr) {
		if l, ok := e.(*query.Logical); ok && l.Op == query.And {
			split(l.L)
			split(l.R)
			return
		}
		conj = append(conj, e)
	}
	for _, e := range exprs {
		split(e)
	}
	for _, e := range conj {
		if err := ev.evalLambdas(e); err != nil {
			return nil, err
		}
		c, err := ev.newConjunct(e)
		if err != nil {
			return nil, err
		}
		ev.conjuncts = append(ev.conjuncts, c)
	}
	// Fields.
	fields := dedup(req.Fields)
	if req.Record != "" && len(fields) == 0 {
		for _, f := range r.KM.Record(req.Record).Fields {
			fields = append(fields, f.ID)
		}
	}
	refs := make([]fieldRef, len(fields))
	for i, name := range fields {
		var err error
		if req.Record != "" {
			if req.RowKey != "" && name == req.RowKey {
				refs[i] = fieldRef{rec: req.Record, index: -1, typ: query.TypeInteger, name: name}
				continue
			}
			if j := ev.fieldIndex(req.Record, name); j >= 0 {
				refs[i] = fieldRef{rec: req.Record, index: j, typ: r.KM.Record(req.Record).Fields[j].Type, name: name}
				continue
			}
			return nil, refErr("unknown field %s", name)
		}
		if refs[i], err = ev.resolve(name); err != nil {
			return nil, err
		}
	}
	kpis := dedup(req.KPIs)
	columns := append(slices.Clone(fields), kpis...)
	if req.Record == "" && len(fields) == 0 && len(kpis) == 0 {
		return nil, refErr("no fields and no KPIs")
	}
	// The searched fields: without KPIs they join the listed rows' fields (so they take
	// part in choosing the row grain) and leave once the rows are scored.
	search := req.Search
	if search != nil && search.Term == "" && len(search.Fields) == 0 {
		search = nil // no searchTerm and no searchField: no search
	}
	searched, err := ev.searchedFields(search, refs, len(kpis) > 0)
	if err != nil {
		return nil, err
	}
	listed := slices.Clone(refs)
	scored := make([]int, len(searched)) // the searched fields' columns in the rows
	for i, ref := range searched {
		if scored[i] = slices.IndexFunc(listed, ref.same); scored[i] < 0 {
			scored[i] = len(listed)
			listed = append(listed, ref)
		}
	}
	var rows [][]query.Value
	switch {
	case req.Record != "":
		rows, err = ev.recordRows(req.Record, listed)
	case len(kpis) == 0:
		rows, err = ev.kmRows(listed)
	default:
		rows, err = ev.kpiRows(listed, kpis, req.KPIParams)
	}
	if err != nil {
		return nil, err
	}
	if search != nil {
		rows = searchRows(rows, search, scored, req.Sort == "" && req.ODataOrderBy == "")
		for i, row := range rows {
			rows[i] = row[:len(columns)]
		}
	}
	if req.Distinct {
		seen := map[string]bool{}
		out := rows[:0:0]
		for _, row := range rows {
			if k := key(row); !seen[k] {
				seen[k] = true
				out = append(out, row)
			}
		}
		rows = out
	}
	if req.ODataOrderBy != "" {
		if req.Record == "" || req.Sort != "" || req.Distinct {
			return nil, refErr("$orderby at record level only, without sort and distinct")
		}
		if rows, err = ev.orderByExpressions(req.Record, rows, req.ODataOrderBy); err != nil {
			return nil, err
		}
	}
	if req.Sort != "" {
		keys, err := kmparams.ParseSort(req.Sort)
		if err != nil {
			return nil, refErr("%v", err)
		}
		idx := make([]int, len(keys))
		for i, k := range keys {
			idx[i] = slices.Index(columns, k.Field)
			if idx[i] < 0 {
				return nil, refErr("sort key %s is not selected", k.Field)
			}
		}
		slices.SortStableFunc(rows, func(a, b []query.Value) int {
			for i, k := range keys {
				x, y := a[idx[i]], b[idx[i]]
				var c int
				switch {
				case x.Null && y.Null:
				case x.Null:
					c = 1
				case y.Null:
					c = -1
				default:
					c = compareValues(x, y)
					if k.Desc {
						c = -c
					}
				}
				if c != 0 {
					return c
				}
			}
			return 0
		})
	}
	if req.PageSize > 0 {
		lo := min(len(rows), req.Page*req.PageSize)
		hi := min(len(rows), lo+req.PageSize)
		rows = rows[lo:hi]
	}
	res := &RefResult{Columns: columns, Rows: make([][]any, len(rows))}
	for i, row := range rows {
		res.Rows[i] = make([]any, len(row))
		for j, v := range row {
			res.Rows[i][j] = v.Format()
		}
	}
	return res, nil
}

func dedup(s []string) []string {
	var out []string
	for _, v := range s {
		if !slices.Contains(out, v) {
			out = append(out, v)
		}
	}
	return out
}

// recordRows lists the rows of rec that pass the filter.
func (ev *evaluation) recordRows(rec string, refs []fieldRef) ([][]query.Value, error) {
	pass, err := ev.passing(rec)
	if err != nil {
		return nil, err
	}
	var out [][]query.Value
	for x := range ev.rows[rec] {
		if !pass[x] {
			continue
		}
		vals := make([]query.Value, len(refs))
		for i, ref := range refs {
			vals[i] = ref.of(ev.rows[rec], x)
		}
		out = append(out, vals)
	}
	return out, nil
}

// kmRows lists the rows of the row grain that pass the filter with the fields of their
// parent chains: null where a parent is missing or does not pass the filter (and then
// for every record reached through it).
func (ev *evaluation) kmRows(refs []fieldRef) ([][]query.Value, error) {
	var dims []string
	for _, ref := range refs {
		if !slices.Contains(dims, ref.rec) {
			dims = append(dims, ref.rec)
		}
	}
	grain, err := ev.rowGrain(dims)
	if err != nil {
		return nil, err
	}
	var paths [][]step
	for _, ref := range refs {
		p, err := ev.path(grain, ref.rec)
		if err != nil {
			return nil, err
		}
		paths = append(paths, p)
	}
	if err := joinedOnce(paths); err != nil {
		return nil, err
	}
	pass, err := ev.passing(grain)
	if err != nil {
		return nil, err
	}
	// The filter restricts every record: a parent that does not pass it is no parent.
	for _, ref := range refs {
		p, _ := ev.path(grain, ref.rec)
		for _, s := range p {
			if _, err := ev.passing(s.to); err != nil {
				return nil, err
			}
		}
	}
	var out [][]query.Value
	for x := range ev.rows[grain] {
		if !pass[x] {
			continue
		}
		vals := make([]query.Value, len(refs))
		for i, ref := range refs {
			p, _ := ev.path(grain, ref.rec)
			row := x
			for _, s := range p {
				ps := ev.neighbours(s, row)
				sp, _ := ev.passing(s.to)
				if len(ps) == 0 || !sp[ps[0]] {
					row = -1
					break
				}
				row = ps[0]
			}
			if row < 0 {
				vals[i] = query.Null(ref.typ)
			} else {
				vals[i] = ref.of(ev.rows[ref.rec], row)
			}
		}
		out = append(out, vals)
	}
	return out, nil
}

// RowGrain returns the record whose rows a KM-level request listing the fields (named
// "RECORD.FIELD") without KPIs lists: the coarsest record whose path to the record of
// every field goes only up. A RefError when there is none.
func (r *Reference) RowGrain(fields []string) (string, error) {
	ev := &evaluation{m: r.KM, rows: r.Rows, passCache: map[string][]bool{}}
	var dims []string
	for _, name := range fields {
		ref, err := ev.resolve(name)
		if err != nil {
			return "", err
		}
		if !slices.Contains(dims, ref.rec) {
			dims = append(dims, ref.rec)
		}
	}
	return ev.rowGrain(dims)
}

// rowGrain is RowGrain over the records of the fields.
func (ev *evaluation) rowGrain(dims []string) (string, error) {
	var cands []string
	for _, r := range ev.m.Records {
		ok := true
		for _, d := range dims {
			if !ev.reachesUp(r.ID, d) {
				ok = false
			}
		}
		if ok {
			cands = append(cands, r.ID)
		}
	}
	var grains []string
	for _, r := range cands {
		ok := true
		for _, c := range cands {
			if !ev.reachesUp(c, r) {
				ok = false
			}
		}
		if ok {
			grains = append(grains, r)
		}
	}
	if len(grains) != 1 {
		return "", refErr("the rows of records %s cannot be listed together; KPIs can combine them", strings.Join(dims, ", "))
	}
	return grains[0], nil
}

// ---- KPIs ----

// aggregate is one aggregate of a requested KPI with its grain and condition.
type aggregate struct {
	a     *query.Aggregate
	grain string
	field fieldRef // when a.Field != ""
	cond  *conjunct
	// groups: group key -> grain rows paired with it (ascending).
	groups map[string][]int
}

// kpiMetric parses the KPI's expression with its parameters (overridden by params).
func kpiMetric(k *km.KPI, params map[string]string) (query.Metric, error) {
	text := k.Expr
	for _, p := range k.Parameters {
		v := p.Value
		if o, ok := params[p.ID]; ok {
			v = o
		}
		// Inside quotes the value is text with its quotes doubled; outside, as written.
		var b strings.Builder
		inQuote := false
		for i := 0; i < len(text); i++ {
			if text[i] == '\'' {
				inQuote = !inQuote
			}
			ph := "${" + p.ID + "}"
			if strings.HasPrefix(text[i:], ph) {
				if inQuote {
					b.WriteString(strings.ReplaceAll(v, "'", "''"))
				} else {
					b.WriteString(v)
				}
				i += len(ph) - 1
				continue
			}
			b.WriteByte(text[i])
		}
		text = b.String()
	}
	for id := range params {
		if !slices.ContainsFunc(k.Parameters, func(p km.Parameter) bool { return p.ID == id }) {
			return nil, refErr("KPI %s has no parameter %s", k.ID, id)
		}
	}
	return query.ParseKPI(text)
}

func metricAggregates(m query.Metric, add func(*query.Aggregate)) {
	switch x := m.(type) {
	case *query.Aggregate:
		add(x)
	case *query.Arith:
		metricAggregates(x.L, add)
		metricAggregates(x.R, add)
	}
}

// kpiRows computes the KPIs per group of the selected fields.
func (ev *evaluation) kpiRows(refs []fieldRef, ids []string, params map[string]map[string]string) ([][]query.Value, error) {
	var dims []string
	for _, ref := range refs {
		if !slices.Contains(dims, ref.rec) {
			dims = append(dims, ref.rec)
		}
	}
	for id := range params {
		if !slices.Contains(ids, id) {
			return nil, refErr("kpiParam of unselected KPI %s", id)
		}
	}
	metrics := make([]query.Metric, len(ids))
	var aggs []*aggregate
	byPtr := map[*query.Aggregate]*aggregate{}
	for i, id := range ids {
		k := ev.m.KPI(id)
		if k == nil {
			return nil, refErr("unknown KPI %s", id)
		}
		mt, err := kpiMetric(k, params[id])
		if err != nil {
			return nil, err
		}
		metrics[i] = mt
		// Records the whole expression names (for a bare count()).
		var named []string
		metricAggregates(mt, func(a *query.Aggregate) {
			if a.Field != "" {
				rec, _, _ := strings.Cut(a.Field, ".")
				if !slices.Contains(named, rec) {
					named = append(named, rec)
				}
			}
			if a.Filter != nil {
				exprFieldNames(a.Filter, func(name string) {
					rec, _, _ := strings.Cut(name, ".")
					if !slices.Contains(named, rec) {
						named = append(named, rec)
					}
				})
			}
		})
		var failure error
		metricAggregates(mt, func(a *query.Aggregate) {
			if failure != nil {
				return
			}
			ag := &aggregate{a: a, groups: map[string][]int{}}
			if a.Filter != nil {
				c, err := ev.newConjunct(a.Filter)
				if err != nil {
					failure = err
					return
				}
				ag.cond = c
			}
			switch {
			case a.Func == query.AggRatio:
				ag.grain = ag.cond.home
			case a.Field != "":
				f, err := ev.resolve(a.Field)
				if err != nil {
					failure = err
					return
				}
				ag.field, ag.grain = f, f.rec
			case k.Record != "":
				ag.grain = k.Record
			case len(named) == 1:
				ag.grain = named[0]
			default:
				failure = refErr("KPI %s: count() names no single record", id)
				return
			}
			if ag.cond != nil {
				if _, err := ev.path(ag.grain, ag.cond.home); err != nil {
					failure = err
					return
				}
			}
			aggs = append(aggs, ag)
			byPtr[a] = ag
		})
		if failure != nil {
			return nil, failure
		}
	}
	// Groups: key -> dimension values.
	groups := map[string][]query.Value{}
	if len(refs) == 0 {
		groups[""] = nil
	}
	for _, ag := range aggs {
		if err := ev.expand(ag, refs, groups); err != nil {
			return nil, err
		}
	}
	// Order: by aggregate, groups first found by it, by smallest grain row, then values.
	var order []string
	placed := map[string]bool{}
	// KPIs that aggregate nothing (constants) have the groups the same request lists
	// without KPIs, in their order, as SQL's SELECT f, 3 FROM t GROUP BY f does.
	if len(aggs) == 0 && len(refs) > 0 {
		listed, err := ev.kmRows(refs)
		if err != nil {
			return nil, err
		}
		for _, vals := range listed {
			if k := key(vals); !placed[k] {
				placed[k] = true
				groups[k] = vals
				order = append(order, k)
			}
		}
	}
	for _, ag := range aggs {
		var fresh []string
		for k := range ag.groups {
			if !placed[k] {
				fresh = append(fresh, k)
			}
		}
		slices.SortFunc(fresh, func(a, b string) int {
			if c := cmpInt(int64(ag.groups[a][0]), int64(ag.groups[b][0])); c != 0 {
				return c
			}
			return compareTuples(groups[a], groups[b])
		})
		for _, k := range fresh {
			placed[k] = true
			order = append(order, k)
		}
	}
	var rest []string
	for k := range groups {
		if !placed[k] {
			rest = append(rest, k)
		}
	}
	slices.SortFunc(rest, func(a, b string) int { return compareTuples(groups[a], groups[b]) })
	order = append(order, rest...)

	var out [][]query.Value
	for _, k := range order {
		row := slices.Clone(groups[k])
		for _, mt := range metrics {
			row = append(row, ev.metricValue(mt, byPtr, k))
		}
		out = append(out, row)
	}
	return out, nil
}

func compareTuples(a, b []query.Value) int {
	for i := range a {
		if c := compareNullsLast(a[i], b[i]); c != 0 {
			return c
		}
	}
	return 0
}

// expand enumerates the tuples of the join rooted at the aggregate's grain along the
// paths to the dimension records and records, per group, the grain rows paired with it.
func (ev *evaluation) expand(ag *aggregate, refs []fieldRef, groups map[string][]query.Value) error {
	// The tree: every step of the paths from the grain to the dimension records.
	var edges []step
	var paths [][]step
	for _, ref := range refs {
		p, err := ev.path(ag.grain, ref.rec)
		if err != nil {
			return err
		}
		paths = append(paths, p)
		for _, s := range p {
			if !slices.ContainsFunc(edges, func(e step) bool { return e.to == s.to }) {
				edges = append(edges, s)
			}
		}
	}
	if err := joinedOnce(paths); err != nil {
		return err
	}
	// Parents before children: a step's start is the grain or an earlier step's end.
	slices.SortStableFunc(edges, func(a, b step) int {
		da, _ := ev.path(ag.grain, a.to)
		db, _ := ev.path(ag.grain, b.to)
		return cmpInt(int64(len(da)), int64(len(db)))
	})
	gpass, err := ev.passing(ag.grain)
	if err != nil {
		return err
	}
	for _, s := range edges {
		if _, err := ev.passing(s.to); err != nil {
			return err
		}
	}
	for g := range ev.rows[ag.grain] {
		if !gpass[g] {
			continue
		}
		tuples := []map[string]int{{ag.grain: g}}
		for _, s := range edges {
			pass, err := ev.passing(s.to)
			if err != nil {
				return err
			}
			var next []map[string]int
			for _, t := range tuples {
				n := t[s.from]
				var cands []int
				if n >= 0 {
					for _, b := range ev.neighbours(s, n) {
						if pass[b] {
							cands = append(cands, b)
						}
					}
				}
				if len(cands) == 0 {
					cands = []int{-1}
				}
				for _, b := range cands {
					nt := map[string]int{}
					for k, v := range t {
						nt[k] = v
					}
					nt[s.to] = b
					next = append(next, nt)
				}
			}
			tuples = next
		}
		for _, t := range tuples {
			vals := make([]query.Value, len(refs))
			for i, ref := range refs {
				if row := t[ref.rec]; row >= 0 {
					vals[i] = ref.of(ev.rows[ref.rec], row)
				} else {
					vals[i] = query.Null(ref.typ)
				}
			}
			k := key(vals)
			groups[k] = vals
			if rows := ag.groups[k]; len(rows) == 0 || rows[len(rows)-1] != g {
				ag.groups[k] = append(rows, g)
			}
		}
	}
	return nil
}

// metricValue computes a KPI for the group with key k: a number (int64 for counts), or
// a null value.
func (ev *evaluation) metricValue(m query.Metric, aggs map[*query.Aggregate]*aggregate, k string) query.Value {
	switch x := m.(type) {
	case *query.Number:
		return query.Float(x.V)
	case *query.Aggregate:
		return ev.aggregateValue(aggs[x], k)
	case *query.Arith:
		l, r := ev.metricValue(x.L, aggs, k), ev.metricValue(x.R, aggs, k)
		if l.Null || r.Null {
			return query.Null(query.TypeFloat)
		}
		a, b := asFloat(l), asFloat(r)
		switch x.Op {
		case '+':
			return query.Float(a + b)
		case '-':
			return query.Float(a - b)
		case '*':
			return query.Float(a * b)
		case '/':
			if b == 0 {
				return query.Null(query.TypeFloat)
			}
			return query.Float(a / b)
		}
	}
	panic(fmt.Sprintf("reference: unknown metric %T", m))
}

func asFloat(v query.Value) float64 {
	if v.Type == query.TypeFloat {
		return v.Float
	}
	return float64(v.Int)
}

func (ev *evaluation) aggregateValue(ag *aggregate, k string) query.Value {
	rows := ag.groups[k]
	condOK := func(g int) bool {
		ok, err := ev.passes(ag.cond, ag.grain, g)
		return err == nil && ok
	}
	if ag.a.Func == query.AggRatio {
		if len(rows) == 0 {
			return query.Null(query.TypeFloat)
		}
		n := 0
		for _, g := range rows {
			if condOK(g) {
				n++
			}
		}
		return query.Float(float64(n) / float64(len(rows)))
	}
	var vals []query.Value
	count := 0
	for _, g := range rows {
		if ag.cond != nil && !condOK(g) {
			continue
		}
		count++
		if ag.a.Field != "" {
			if v := ev.rows[ag.grain][g][ag.field.index]; !v.Null {
				vals = append(vals, v)
			}
		}
	}
	switch ag.a.Func {
	case query.AggCount:
		if ag.a.Field == "" {
			return query.Int(int64(count))
		}
		return query.Int(int64(len(vals)))
	case query.AggCountDistinct:
		seen := map[string]bool{}
		for _, v := range vals {
			seen[key([]query.Value{v})] = true
		}
		return query.Int(int64(len(seen)))
	}
	if len(vals) == 0 {
		if ag.a.Func == query.AggMin || ag.a.Func == query.AggMax {
			return query.Null(ag.field.typ)
		}
		return query.Null(query.TypeFloat)
	}
	switch ag.a.Func {
	case query.AggSum, query.AggAvg:
		if ag.a.Func == query.AggSum && ag.field.typ == query.TypeInteger {
			// An integer sum is the exact sum, null where no int64 holds it.
			s := new(big.Int)
			for _, v := range vals {
				s.Add(s, big.NewInt(v.Int))
			}
			if !s.IsInt64() {
				return query.Null(query.TypeInteger)
			}
			return query.Int(s.Int64())
		}
		// Exactly, in rational arithmetic, rounded once at the end: the double nearest
		// to the true sum (or mean) of the values.
		s := new(big.Rat)
		for _, v := range vals {
			var x big.Rat
			if v.Type == query.TypeFloat {
				x.SetFloat64(v.Float)
			} else {
				x.SetInt64(v.Int)
			}
			s.Add(s, &x)
		}
		if ag.a.Func == query.AggAvg {
			s.Quo(s, new(big.Rat).SetInt64(int64(len(vals))))
		}
		f, _ := s.Float64()
		return query.Float(f)
	case query.AggMin, query.AggMax:
		best := vals[0]
		for _, v := range vals[1:] {
			c := compareValues(v, best)
			if (ag.a.Func == query.AggMin && c < 0) || (ag.a.Func == query.AggMax && c > 0) {
				best = v
			}
		}
		return best
	case query.AggMedian:
		fs := make([]float64, len(vals))
		for i, v := range vals {
			fs[i] = asFloat(v)
		}
		slices.Sort(fs)
		n := len(fs)
		if n%2 == 1 {
			return query.Float(fs[n/2])
		}
		// The mean of the middle two, exactly, then rounded once: finite where their
		// sum in doubles overflows.
		mid := new(big.Rat).Add(new(big.Rat).SetFloat64(fs[n/2-1]), new(big.Rat).SetFloat64(fs[n/2]))
		f, _ := mid.Quo(mid, big.NewRat(2, 1)).Float64()
		return query.Float(f)
	}
	panic(errors.New("reference: unknown aggregate"))
}

// orderByExpressions sorts the listed rows of rec (in row order) by the $orderby items of
// text, each an expression over rec's fields and an optional asc or desc: nulls last in
// both directions, ties in row order.
func (ev *evaluation) orderByExpressions(rec string, rows [][]query.Value, text string) ([][]query.Value, error) {
	fields := ev.m.Record(rec).Fields
	all := make([]fieldRef, len(fields))
	refs := map[string]fieldRef{}
	for i, f := range fields {
		all[i] = fieldRef{rec: rec, index: i, typ: f.Type, name: f.ID}
		refs[f.ID] = all[i]
	}
	full, err := ev.recordRows(rec, all)
	if err != nil {
		return nil, err
	}
	type item struct {
		expr query.Scalar
		desc bool
	}
	var items []item
	for _, part := range kmparams.SplitTopLevel(text) {
		it := item{}
		words := strings.Fields(part)
		switch strings.ToLower(words[len(words)-1]) {
		case "desc":
			it.desc = true
			words = words[:len(words)-1]
		case "asc":
			words = words[:len(words)-1]
		}
		e, err := query.ParseScalar(strings.Join(words, " "))
		if err != nil {
			return nil, refErr("%v", err)
		}
		it.expr = e
		items = append(items, it)
	}
	keys := make([][]query.Value, len(full))
	for i, row := range full {
		get := func(r fieldRef) query.Value { return row[r.index] }
		for _, it := range items {
			keys[i] = append(keys[i], ev.scalarValue(it.expr, refs, get))
		}
	}
	order := make([]int, len(rows))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int {
		for k, it := range items {
			x, y := keys[a][k], keys[b][k]
			var c int
			switch xn, yn := isNullValue(x), isNullValue(y); {
			case xn && yn:
			case xn:
				c = 1
			case yn:
				c = -1
			default:
				c = cmpComputed(x, y)
				if it.desc {
					c = -c
				}
			}
			if c != 0 {
				return c
			}
		}
		return 0
	})
	out := make([][]query.Value, len(rows))
	for i, j := range order {
		out[i] = rows[j]
	}
	return out, nil
}

// ---- OData lambdas ----

// evalLambdas evaluates the OData lambdas of a record-level ODataFilter condition, which
// may stand anywhere in it (under and, or and not), on every row of the request's record
// (see lambdaHolds).
func (ev *evaluation) evalLambdas(e query.Expr) error { return ev.lambdasIn(e, ev.scope, "") }

// lambdasIn evaluates the lambdas of e, a condition on the rows of scope: the request's
// record, or inside the body of a lambda with variable v the record of its related rows.
func (ev *evaluation) lambdasIn(e query.Expr, scope, v string) error {
	switch x := e.(type) {
	case *query.Logical:
		if err := ev.lambdasIn(x.L, scope, v); err != nil {
			return err
		}
		return ev.lambdasIn(x.R, scope, v)
	case *query.Not:
		return ev.lambdasIn(x.X, scope, v)
	case *query.Lambda:
		holds, err := ev.lambdaHolds(x, scope, v)
		if err != nil {
			return err
		}
		if ev.lambdas == nil {
			ev.lambdas = map[*query.Lambda][]bool{}
		}
		ev.lambdas[x] = holds
	}
	return nil
}

// odataRowNumber is the property under which the OData service names the generated key
// of a record without a key: the row's 1-based position in its record. A lambda's body
// names it of the related rows as x/ROW_NUMBER.
const odataRowNumber = "ROW_NUMBER"

// lambdaHolds evaluates an OData lambda of a record-level ODataFilter, PATH/any(x:
// BODY), PATH/all(x: BODY) or PATH/any(), on the rows of the request's record: PATH is
// one to-many navigation property, named after the related record (the plain form of
// the OData service's naming). In BODY x/FIELD is the related row's field, a bare name
// the outer row's, RECORD.FIELD a record reached going up from the related row. With
// three-valued logic a related row counts for any when BODY is true; all holds when
// BODY is true for every related row, and so when there is none (OData's rule). The
// value is true or false, never unknown.
//
// A lambda inside the body of a lambda with variable v (v non-empty) quantifies over the
// rows related to v's: its path is v/RECORD, and scope is v's record. In its body, v/FIELD
// is v's row's field (read going up from the inner related row) and a bare name the
// request's row's.
func (ev *evaluation) lambdaHolds(l *query.Lambda, scope, v string) ([]bool, error) {
	child := l.Path
	if v != "" {
		var ok bool
		if child, ok = strings.CutPrefix(l.Path, v+"/"); !ok {
			return nil, refErr("lambda %s inside the lambda of %s: its path does not start at %s", l.Path, v, v)
		}
	}
	if scope == "" || ev.m.Record(child) == nil {
		return nil, refErr("lambda %s: not a record related to %s", l.Path, scope)
	}
	p, err := ev.path(scope, child)
	if err != nil {
		return nil, err
	}
	for _, st := range p {
		if st.up {
			return nil, refErr("lambda %s: the path from %s to %s is not one-to-many all along", l.Path, scope, child)
		}
	}
	childP := make([]truth, len(ev.rows[child]))
	if l.Body == nil {
		for h := range childP {
			childP[h] = yes
		}
	} else {
		body, err := query.MapFields(l.Body, func(r query.FieldRef) (query.FieldRef, error) {
			// Names of an inner lambda's variable are left to it.
			if v, f, ok := strings.Cut(r.Name, "/"); ok && v == l.Var {
				r.Name = child + "." + f
				if rec := ev.m.Record(child); f == odataRowNumber && rec.Key == "" && ev.fieldIndex(child, f) < 0 {
					r.Name = child + "." + km.RowField
				}
			} else if !strings.ContainsAny(r.Name, "./") {
				r.Name = ev.scope + "." + r.Name
			}
			return r, nil
		})
		if err != nil {
			return nil, err
		}
		if err := ev.lambdasIn(body, child, l.Var); err != nil {
			return nil, err
		}
		defer func(row int) { ev.lambdaRow = row }(ev.lambdaRow)
		refs := map[string]fieldRef{}
		up := map[string][]step{}
		exprFieldNames(body, func(name string) {
			if err != nil {
				return
			}
			var r fieldRef
			if r, err = ev.resolve(name); err != nil {
				return
			}
			refs[name] = r
			if !ev.reachesUp(child, r.rec) {
				err = refErr("lambda %s: %s is not reached going up from %s", l.Path, name, child)
				return
			}
			up[r.rec], err = ev.path(child, r.rec)
		})
		if err != nil {
			return nil, err
		}
		if err := ev.checkLiterals(body, refs); err != nil {
			return nil, err
		}
		for h := range childP {
			ev.lambdaRow = h
			childP[h] = ev.eval(body, refs, func(ref fieldRef) query.Value {
				row := h
				for _, s := range up[ref.rec] {
					ps := ev.neighbours(s, row)
					if len(ps) == 0 {
						return query.Null(ref.typ)
					}
					row = ps[0]
				}
				return ref.of(ev.rows[ref.rec], row)
			})
		}
	}
	holds := make([]bool, len(ev.rows[scope]))
	for x := range holds {
		pass := l.All
		for _, h := range ev.connected(p, x) {
			if l.All && childP[h] != yes {
				pass = false
				break
			}
			if !l.All && childP[h] == yes {
				pass = true
				break
			}
		}
		holds[x] = pass
	}
	return holds, nil
}

// hasLambda reports whether e holds an OData lambda.
func hasLambda(e query.Expr) bool {
	switch x := e.(type) {
	case *query.Logical:
		return hasLambda(x.L) || hasLambda(x.R)
	case *query.Not:
		return hasLambda(x.X)
	case *query.Lambda:
		return true
	}
	return false
}
