package sqlstore

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/kmkit/kmkit/km"
	"github.com/kmkit/kmkit/query"
)

// ErrInvalidRequest is wrapped by errors about requests that cannot be translated: an
// unknown field, a sort key that is not selected, a literal of the wrong type.
var ErrInvalidRequest = errors.New("sqlstore: invalid request")

// frame is the FROM clause of a query: the record's source, or the root of a join plan
// with a LEFT JOIN per step. Every field name of the request resolves to a column of it.
type frame struct {
	from   string
	cols   map[string]frameCol
	names  []string // every field, in the order a request without fields selects them
	rowKey string   // the root's row-order column
}

type frameCol struct {
	expr string
	typ  query.Type
}

// newFrame builds the frame of q over m. Identifiers come only from the KM definition and
// are quoted.
func newFrame(m *km.KnowledgeModel, q *km.Query, rowColumn string) (*frame, error) {
	f := &frame{cols: map[string]frameCol{}}
	add := func(alias string, r *km.Record, prefix bool) {
		for _, fl := range r.Fields {
			name := fl.ID
			if prefix {
				name = r.ID + "." + fl.ID
			}
			f.cols[name] = frameCol{expr: alias + "." + quoteIdent(fl.ID), typ: fl.Type}
			f.names = append(f.names, name)
		}
	}
	if q.Join == nil {
		r := m.Record(q.Record)
		if r == nil {
			return nil, fmt.Errorf("%w: KM %s has no record %q", ErrInvalidRequest, m.ID, q.Record)
		}
		f.from = quoteIdent(r.Source) + " t0"
		f.rowKey = "t0." + quoteIdent(rowColumn)
		add("t0", r, false)
		return f, nil
	}
	root := m.Record(q.Join.Root)
	if root == nil {
		return nil, fmt.Errorf("%w: KM %s has no record %q", ErrInvalidRequest, m.ID, q.Join.Root)
	}
	alias := map[string]string{root.ID: "t0"}
	var b strings.Builder
	b.WriteString(quoteIdent(root.Source) + " t0")
	add("t0", root, true)
	for i, st := range q.Join.Steps {
		to := m.Record(st.To.Record)
		fromAlias, ok := alias[st.From.Record]
		if to == nil || !ok {
			return nil, fmt.Errorf("%w: join step %s > %s", ErrInvalidRequest, st.From, st.To)
		}
		a := "t" + strconv.Itoa(i+1)
		alias[to.ID] = a
		fmt.Fprintf(&b, " LEFT JOIN %s %s ON %s.%s = %s.%s", quoteIdent(to.Source), a,
			a, quoteIdent(st.To.Field), fromAlias, quoteIdent(st.From.Field))
		add(a, to, true)
	}
	f.from = b.String()
	f.rowKey = "t0." + quoteIdent(rowColumn)
	return f, nil
}

func (f *frame) lookup(name string) (frameCol, error) {
	c, ok := f.cols[name]
	if !ok {
		return frameCol{}, fmt.Errorf("%w: unknown field %q", ErrInvalidRequest, name)
	}
	return c, nil
}

// builder accumulates SQL text and its bound arguments. Values never enter the text.
type builder struct {
	d    dialect
	args []any
	// order is the row order aggregates add in (the executor's), set before metrics
	// are translated.
	order string
}

// arg binds v and returns its marker.
func (b *builder) arg(v any) string {
	b.args = append(b.args, v)
	return b.d.castParam(b.d.placeholder(len(b.args)), v)
}

// col returns the expression of a column for comparisons and sorting: strings compare
// byte by byte in both dialects.
func (b *builder) col(c frameCol) string {
	if c.typ == query.TypeString {
		return b.d.bytewise(c.expr)
	}
	return c.expr
}

// unknown is a condition that is null for every row.
const unknown = "(1 = NULL)"

// notNullIs returns a condition that is k for non-null values of expr and unknown for nulls.
func notNullIs(expr string, k bool) string {
	if k {
		return "(" + expr + " = " + expr + ")"
	}
	return "(" + expr + " <> " + expr + ")"
}

var sqlOps = [...]string{query.Eq: "=", query.Ne: "<>", query.Gt: ">", query.Ge: ">=", query.Lt: "<", query.Le: "<="}

// filter translates a bound filter into a condition with SQL's three-valued logic, which
// is the filter language's.
func (b *builder) filter(f *frame, e query.Expr) (string, error) {
	switch e := e.(type) {
	case *query.Logical:
		l, err := b.filter(f, e.L)
		if err != nil {
			return "", err
		}
		r, err := b.filter(f, e.R)
		if err != nil {
			return "", err
		}
		op := " AND "
		if e.Op == query.Or {
			op = " OR "
		}
		return "(" + l + op + r + ")", nil
	case *query.Not:
		x, err := b.filter(f, e.X)
		if err != nil {
			return "", err
		}
		return "(NOT " + x + ")", nil
	case *query.IsNull:
		c, err := f.lookup(e.Field.Name)
		if err != nil {
			return "", err
		}
		if e.Negated {
			return "(" + c.expr + " IS NOT NULL)", nil
		}
		return "(" + c.expr + " IS NULL)", nil
	case *query.Compare:
		c, err := f.lookup(e.Field.Name)
		if err != nil {
			return "", err
		}
		return b.compare(c, e.Field.Name, e.Op, e.Value.Value)
	case *query.In:
		c, err := f.lookup(e.Field.Name)
		if err != nil {
			return "", err
		}
		return b.in(c, e.Field.Name, e.Values)
	case *query.Call:
		c, err := f.lookup(e.Field.Name)
		if err != nil {
			return "", err
		}
		return b.call(c, e)
	case nil:
	}
	return "", fmt.Errorf("%w: filter node %T", ErrInvalidRequest, e)
}

func typeError(name string, col query.Type, lit query.Value) error {
	return fmt.Errorf("%w: cannot compare %v field %q with a %v literal", ErrInvalidRequest, col, name, lit.Type)
}

// compare translates "field op literal" with the executor's conversions: an integer field
// against a float literal and a date field against an instant compare exactly (the literal
// becomes an integer bound), an instant field against a date literal compares the day.
func (b *builder) compare(c frameCol, name string, op query.CompareOp, lit query.Value) (string, error) {
	if op < query.Eq || op > query.Le {
		return "", fmt.Errorf("%w: comparison operator %d", ErrInvalidRequest, op)
	}
	if lit.Null || lit.Type == query.TypeNull {
		return unknown, nil
	}
	ct, lt := c.typ, lit.Type
	simple := func(op query.CompareOp, v any) string {
		return "(" + b.col(c) + " " + sqlOps[op] + " " + b.arg(v) + ")"
	}
	switch {
	case ct == query.TypeString:
		if lt != query.TypeString {
			return "", typeError(name, ct, lit)
		}
		return simple(op, lit.Str), nil
	case ct == query.TypeFloat:
		switch lt {
		case query.TypeFloat:
			return simple(op, lit.Float), nil
		case query.TypeInteger:
			return simple(op, float64(lit.Int)), nil
		}
		return "", typeError(name, ct, lit)
	case ct == query.TypeBoolean:
		if lt != query.TypeBoolean {
			return "", typeError(name, ct, lit)
		}
		return simple(op, lit.Bool), nil
	case ct == lt, ct.Temporal() && lt.Temporal():
		return simple(op, lit.Int), nil
	case ct == query.TypeInteger && lt == query.TypeFloat:
		ic := query.CompareIntegerWithFloat(op, lit.Float)
		if ic.Constant {
			return notNullIs(c.expr, ic.Result), nil
		}
		return simple(ic.Op, ic.X), nil
	case ct == query.TypeDate && lt.Temporal():
		// The day d compares as the instant of its midnight: d*day op x.
		ic := query.CompareDayWithInstant(op, lit.Int)
		if ic.Constant {
			return notNullIs(c.expr, ic.Result), nil
		}
		return simple(ic.Op, ic.X), nil
	case ct.Temporal() && lt == query.TypeDate:
		lo, hi := lit.Int*query.MicrosPerDay, (lit.Int+1)*query.MicrosPerDay
		switch op {
		case query.Eq:
			return "(" + c.expr + " >= " + b.arg(lo) + " AND " + c.expr + " < " + b.arg(hi) + ")", nil
		case query.Ne:
			return "(" + c.expr + " < " + b.arg(lo) + " OR " + c.expr + " >= " + b.arg(hi) + ")", nil
		case query.Gt:
			return simple(query.Ge, hi), nil
		case query.Ge:
			return simple(query.Ge, lo), nil
		case query.Lt:
			return simple(query.Lt, lo), nil
		default:
			return simple(query.Lt, hi), nil
		}
	}
	return "", typeError(name, ct, lit)
}

// in translates "field in (...)": a disjunction of equalities, with an unknown term when
// the list holds null, so that rows matching no other value are unknown as in SQL.
func (b *builder) in(c frameCol, name string, lits []query.Literal) (string, error) {
	var parts []string
	hasNull := false
	for _, l := range lits {
		v := l.Value
		if v.Null || v.Type == query.TypeNull {
			hasNull = true
			continue
		}
		if c.typ == query.TypeInteger && v.Type == query.TypeFloat &&
			(v.Float != math.Trunc(v.Float) || v.Float < math.MinInt64 || v.Float >= math.MaxInt64) {
			continue // matches no integer
		}
		if c.typ == query.TypeDate && v.Type.Temporal() && v.Int%query.MicrosPerDay != 0 {
			continue // matches no midnight
		}
		p, err := b.compare(c, name, query.Eq, v)
		if err != nil {
			return "", err
		}
		parts = append(parts, p)
	}
	if hasNull {
		parts = append(parts, unknown)
	}
	if len(parts) == 0 {
		return notNullIs(c.expr, false), nil
	}
	return "(" + strings.Join(parts, " OR ") + ")", nil
}

// call translates contains, startswith and endswith, case-sensitive in both dialects
// (never LIKE, which SQLite folds for ASCII).
func (b *builder) call(c frameCol, e *query.Call) (string, error) {
	if c.typ != query.TypeString {
		return "", fmt.Errorf("%w: function on %v field %q", ErrInvalidRequest, c.typ, e.Field.Name)
	}
	lit := e.Arg.Value
	if lit.Null || lit.Type == query.TypeNull {
		return unknown, nil
	}
	if lit.Type != query.TypeString {
		return "", typeError(e.Field.Name, c.typ, lit)
	}
	switch e.Func {
	case query.Contains:
		return b.d.contains(c.expr, b.arg(lit.Str)), nil
	case query.StartsWith:
		return b.d.startsWith(c.expr, b.arg(lit.Str)), nil
	case query.EndsWith:
		// length counts characters in both dialects, and so does substr.
		p := b.arg(lit.Str)
		return "(length(" + c.expr + ") >= length(" + p + ") AND substr(" + c.expr + ", length(" + c.expr +
			") - length(" + p + ") + 1) = " + p + ")", nil
	}
	return "", fmt.Errorf("%w: function %d", ErrInvalidRequest, e.Func)
}

// metric translates a KPI expression into an aggregate expression and its result type.
func (b *builder) metric(f *frame, m query.Metric) (string, query.Type, error) {
	switch m := m.(type) {
	case *query.Number:
		return b.arg(m.V), query.TypeFloat, nil
	case *query.Arith:
		l, lt, err := b.metric(f, m.L)
		if err != nil {
			return "", 0, err
		}
		r, rt, err := b.metric(f, m.R)
		if err != nil {
			return "", 0, err
		}
		if !lt.Numeric() || !rt.Numeric() {
			return "", 0, fmt.Errorf("%w: arithmetic on a %v and a %v KPI value", ErrInvalidRequest, lt, rt)
		}
		l, r = b.d.toFloat(l), b.d.toFloat(r)
		switch m.Op {
		case '+', '-', '*':
			return "(" + l + " " + string(m.Op) + " " + r + ")", query.TypeFloat, nil
		case '/':
			return "(" + l + " / NULLIF(" + r + ", 0))", query.TypeFloat, nil
		}
		return "", 0, fmt.Errorf("%w: arithmetic operator %q", ErrInvalidRequest, m.Op)
	case *query.Aggregate:
		if m != nil {
			return b.aggregate(f, m)
		}
	}
	return "", 0, fmt.Errorf("%w: KPI expression %T", ErrInvalidRequest, m)
}

func (b *builder) aggregate(f *frame, a *query.Aggregate) (string, query.Type, error) {
	cond := ""
	if a.Filter != nil {
		c, err := b.filter(f, a.Filter)
		if err != nil {
			return "", 0, err
		}
		cond = c
	}
	// only keeps the value for the rows where the aggregate's filter is true.
	only := func(x string) string {
		if cond == "" {
			return x
		}
		return "CASE WHEN " + cond + " THEN " + x + " END"
	}
	if a.Func == query.AggRatio {
		if cond == "" {
			return "", 0, fmt.Errorf("%w: ratio without a condition", ErrInvalidRequest)
		}
		return "avg(" + b.d.toFloat("CASE WHEN "+cond+" THEN 1 ELSE 0 END") + ")", query.TypeFloat, nil
	}
	if a.Func == query.AggCount && a.Field == "" {
		if cond == "" {
			return "count(*)", query.TypeInteger, nil
		}
		return "count(" + only("1") + ")", query.TypeInteger, nil
	}
	c, err := f.lookup(a.Field)
	if err != nil {
		return "", 0, err
	}
	x := only(c.expr)
	numeric := func() error {
		if !c.typ.Numeric() {
			return fmt.Errorf("%w: aggregate of the %v field %q", ErrInvalidRequest, c.typ, a.Field)
		}
		return nil
	}
	switch a.Func {
	case query.AggCount:
		return "count(" + x + ")", query.TypeInteger, nil
	case query.AggCountDistinct:
		return "count(DISTINCT " + x + ")", query.TypeInteger, nil
	case query.AggMin, query.AggMax:
		fn := "min("
		if a.Func == query.AggMax {
			fn = "max("
		}
		return fn + only(b.col(c)) + ")", c.typ, nil
	case query.AggSum:
		if err := numeric(); err != nil {
			return "", 0, err
		}
		return b.d.sum(b.d.toFloat(x), b.order), query.TypeFloat, nil
	case query.AggAvg:
		if err := numeric(); err != nil {
			return "", 0, err
		}
		// The executor's average is its ordered sum over the count; written so, a sum and
		// an average of one field share one ordered aggregate.
		return "(" + b.d.sum(b.d.toFloat(x), b.order) + " / " + b.d.toFloat("NULLIF(count("+x+"), 0)") + ")", query.TypeFloat, nil
	case query.AggMedian:
		if err := numeric(); err != nil {
			return "", 0, err
		}
		return b.d.median(b.d.toFloat(x)), query.TypeFloat, nil
	}
	return "", 0, fmt.Errorf("%w: aggregate function %d", ErrInvalidRequest, a.Func)
}

// statement is a translated request: the page query, the count query, and how to read
// the rows.
type statement struct {
	page      string
	pageArgs  []any
	count     string
	countArgs []any
	cols      []query.Column
	empty     bool // the page is known to be empty (beyond the end of any result)
	// pageCounts says that the page's rows end with the total number of rows.
	pageCounts bool
}

// searchScore is the score expression of a search: per searched column, a CASE over the
// buckets of distinct values with the same score, the best over the columns.
type searchScore struct {
	cols    []frameCol
	buckets [][]scoreBucket // per column
}

type scoreBucket struct {
	score  int
	values []string
}

func (b *builder) scoreExpr(s *searchScore) string {
	if len(s.cols) == 0 {
		return "0" // nothing searched: every row scores 0, as in the executor
	}
	var exprs []string
	for i, c := range s.cols {
		if len(s.buckets[i]) == 0 {
			exprs = append(exprs, "0")
			continue
		}
		var e strings.Builder
		e.WriteString("(CASE")
		for _, bk := range s.buckets[i] {
			e.WriteString(" WHEN " + b.d.inArray(c.expr, b.arg(b.d.arrayArg(bk.values))) + " THEN " + strconv.Itoa(bk.score))
		}
		e.WriteString(" ELSE 0 END)")
		exprs = append(exprs, e.String())
	}
	return b.d.greatest(exprs)
}

// rowShift combines a search score and a row key into one order key,
// (100-score)*rowShift + row, for row keys below 2^44.
const rowShift = 1 << 44

// translate builds the statements of req over f. score is the search, already scored
// (nil without one).
func translate(d dialect, f *frame, req *query.Request, score *searchScore) (*statement, error) {
	if req.Page < 0 || req.PageSize < 1 {
		return nil, fmt.Errorf("%w: page %d, page size %d", ErrInvalidRequest, req.Page, req.PageSize)
	}
	// conditions returns the WHERE condition of the request and the score expression of
	// its search, with their arguments bound in b.
	conditions := func(b *builder) (where, scoreSQL string, err error) {
		where = "1 = 1"
		if req.Filter != nil {
			if where, err = b.filter(f, req.Filter); err != nil {
				return "", "", err
			}
		}
		if score != nil {
			scoreSQL = b.scoreExpr(score)
			where += " AND " + scoreSQL + " >= " + b.arg(int64(req.Search.Precision))
		}
		return where, scoreSQL, nil
	}
	b := &builder{d: d}
	where, scoreSQL, err := conditions(b)
	if err != nil {
		return nil, err
	}
	fields := req.Fields
	if len(fields) == 0 && len(req.KPIs) == 0 {
		fields = f.names
	}
	st := &statement{}
	sel := make([]string, len(fields))
	for i, name := range fields {
		c, err := f.lookup(name)
		if err != nil {
			return nil, err
		}
		sel[i] = c.expr
		st.cols = append(st.cols, query.Column{Name: name, Type: c.typ})
	}
	// order is the row order before any sort key: best score first with a search and no
	// sort, then the root's row order, as one integer.
	order := f.rowKey
	if score != nil && len(req.Sort) == 0 {
		order = "((100 - " + scoreSQL + ") * " + strconv.Itoa(rowShift) + " + " + f.rowKey + ")"
	}
	b.order = order
	var metrics []string
	for _, k := range req.KPIs {
		e, t, err := b.metric(f, k.Metric)
		if err != nil {
			return nil, fmt.Errorf("%w (KPI %s)", err, k.ID)
		}
		metrics = append(metrics, e)
		st.cols = append(st.cols, query.Column{Name: k.ID, Type: t, KPI: true})
	}
	sortCols := make([]int, len(req.Sort))
	for i, k := range req.Sort {
		j := slices.IndexFunc(st.cols, func(c query.Column) bool { return c.Name == k.Field })
		if j < 0 {
			if _, ok := f.cols[k.Field]; !ok {
				return nil, fmt.Errorf("%w: unknown field %q", ErrInvalidRequest, k.Field)
			}
			return nil, fmt.Errorf("%w: sort field %q is not selected", ErrInvalidRequest, k.Field)
		}
		sortCols[i] = j
	}
	// Output column i of the inner query is c<i>; o is the order key.
	var inner strings.Builder
	inner.WriteString("SELECT ")
	var outCols []string
	for i := range st.cols {
		outCols = append(outCols, "c"+strconv.Itoa(i))
	}
	sortBy := func() string {
		var parts []string
		for i, k := range req.Sort {
			c := "c" + strconv.Itoa(sortCols[i])
			dir := " ASC"
			if k.Desc {
				dir = " DESC"
			}
			parts = append(parts, "("+c+" IS NULL) ASC", c+dir)
		}
		parts = append(parts, "o ASC")
		return strings.Join(parts, ", ")
	}
	switch {
	case len(req.KPIs) > 0:
		for i, e := range sel {
			fmt.Fprintf(&inner, "%s AS c%d, ", b.exprForOutput(e, st.cols[i].Type), i)
		}
		for i, e := range metrics {
			fmt.Fprintf(&inner, "%s AS c%d, ", e, len(sel)+i)
		}
		inner.WriteString("min(" + order + ") AS o FROM " + f.from + " WHERE " + where)
		if len(sel) > 0 {
			inner.WriteString(" GROUP BY " + strings.Join(sel, ", "))
		}
	case req.Distinct:
		// The first row of each combination in the result order represents it: the
		// smallest order key of its rows (with sort keys, duplicates tie on all of them).
		for i, e := range sel {
			fmt.Fprintf(&inner, "%s AS c%d, ", b.exprForOutput(e, st.cols[i].Type), i)
		}
		inner.WriteString("min(" + order + ") AS o FROM " + f.from + " WHERE " + where + " GROUP BY " + strings.Join(sel, ", "))
	default:
		for i, e := range sel {
			fmt.Fprintf(&inner, "%s AS c%d, ", b.exprForOutput(e, st.cols[i].Type), i)
		}
		inner.WriteString(order + " AS o FROM " + f.from + " WHERE " + where)
	}
	innerSQL := inner.String()
	st.count = "SELECT count(*) FROM (" + innerSQL + ") q"
	st.countArgs = slices.Clone(b.args)
	if len(sel) > 0 && (req.Distinct || len(req.KPIs) > 0) {
		// Groups are counted without computing their aggregates.
		cb := &builder{d: d}
		cwhere, _, err := conditions(cb)
		if err != nil {
			return nil, err
		}
		st.count = "SELECT count(*) FROM (SELECT 1 AS one FROM " + f.from + " WHERE " + cwhere + " GROUP BY " + strings.Join(sel, ", ") + ") q"
		st.countArgs = cb.args
	}
	if req.Page > (math.MaxInt64-req.PageSize)/req.PageSize {
		st.empty = true
		return st, nil
	}
	counted := ""
	if req.Count && (score != nil || len(sel) > 0 && (req.Distinct || len(req.KPIs) > 0)) {
		// Groups and searches: the total rides along with the page, so the grouping or
		// the scoring runs once (the count statement is needed only when the page is
		// empty). Plain rows are counted apart, which an index can answer without reading
		// the rows.
		counted = ", count(*) OVER () AS total"
		st.pageCounts = true
	}
	st.page = "SELECT " + strings.Join(outCols, ", ") + counted + " FROM (" + innerSQL + ") q ORDER BY " + sortBy() +
		" LIMIT " + b.arg(int64(req.PageSize)) + " OFFSET " + b.arg(int64(req.Page)*int64(req.PageSize))
	st.pageArgs = b.args
	return st, nil
}

// exprForOutput returns the expression of a selected column as it is returned.
func (b *builder) exprForOutput(e string, t query.Type) string {
	if t == query.TypeString {
		return b.d.bytewise(e)
	}
	return e
}
