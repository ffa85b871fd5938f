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

// errInternal wraps errors about a plan the translation does not expect. A plan is valid
// by construction (km.NewPlan), so such an error is a bug, answered with 500.
var errInternal = errors.New("sqlstore: unexpected plan")

// planner translates one km.Plan into SQL. Values are bound in b; identifiers come only
// from the KM definition and are quoted.
type planner struct {
	d dialect
	p *km.Plan
	b *builder
	n int // sub-query aliases handed out
	// cols is what is known of the columns of the grain's source; see orderBy.
	cols sourceColumns
	// citus says that the database is Citus (citusDialect) and the KM places some record
	// on it (a distributed or reference table): the statements take the shapes Citus
	// plans (see conjunct, leftJoin, aggregates). A KM without declarations has only
	// coordinator-local tables, which Citus leaves to PostgreSQL's planner.
	citus bool
	// quants places the Quantified nodes of the plan's conjuncts (km.Conjunct.Quantifiers,
	// those of their bodies included).
	quants map[*query.Quantified]*km.Quantifier
	// wide sums and averages in numeric (wideSum): the statement PostgreSQL runs again
	// when its sum of doubles refused a total beyond a double's range.
	wide bool
	// tables are the generation tables the store reads its sources from.
	tables tableNames
}

// tableNames maps the sources a KMStore imported to the generation tables it reads them
// from (see generationTable); another source is read by its own name.
type tableNames map[string]string

// of returns the table or view to read source from.
func (t tableNames) of(source string) string {
	if table, ok := t[source]; ok {
		return table
	}
	return source
}

func newPlanner(d dialect, p *km.Plan, tables tableNames) *planner {
	_, citus := d.(citusDialect)
	citus = citus && slices.ContainsFunc(p.KM.Records, func(r *km.Record) bool { return r.Distribution != "" || r.Reference })
	t := &planner{d: d, p: p, b: &builder{d: d}, citus: citus, tables: tables}
	var add func(cj *km.Conjunct)
	add = func(cj *km.Conjunct) {
		for x, q := range cj.Quantifiers {
			if t.quants == nil {
				t.quants = map[*query.Quantified]*km.Quantifier{}
			}
			t.quants[x] = q
			if q.Body != nil {
				add(q.Body)
			}
		}
	}
	for _, cj := range p.Filter {
		add(cj) // RowChecks hold conjuncts of Filter
	}
	if t.quants != nil {
		t.b.quantified = t.quantified
	}
	return t
}

// quantified translates a Quantified node (OData's any and all) whose Parent's columns r
// resolves: a correlated sub-query over the related rows, joined down from the parent's
// key, whose body reads its parents through LEFT JOINs and its columns dialect.probed,
// like the EXISTS of a conjunct reached down. any is EXISTS (a related row where the body
// is true), all is NOT EXISTS (a related row where it is not true: false or null). On
// Citus, which plans no correlated sub-query from a reference table into a distributed
// one, the sub-query is uncorrelated: the parent's key IN the keys of the related rows
// (nulls left out on both sides, so that the value is never unknown).
func (t *planner) quantified(x *query.Quantified, r resolver) (string, error) {
	q, ok := t.quants[x]
	if !ok || len(q.Down) == 0 {
		return "", fmt.Errorf("%w: %s/%s(...) without its quantifier", errInternal, x.Record, x.Operator())
	}
	first := q.Down[0]
	parentKey, err := r(first.From + "." + first.FromField)
	if err != nil {
		return "", err
	}
	sub := &scope{}
	var a0, cur string
	for i, s := range q.Down {
		src, err := t.source(s.To)
		if err != nil {
			return "", err
		}
		a := t.alias()
		if i == 0 {
			a0 = a
			sub.from.WriteString(src + " " + a)
		} else {
			fmt.Fprintf(&sub.from, " JOIN %s %s ON %s = %s", src, a, col(a, s.ToField), col(cur, s.FromField))
		}
		cur = a
	}
	if q.Body != nil {
		body, err := t.atHome(q.Body, cur, sub, !t.citus)
		if err != nil {
			return "", err
		}
		if x.All {
			body = "(" + body + ") IS NOT TRUE"
		}
		sub.where = append(sub.where, body)
	} else if x.All {
		return "(1 = 1)", nil // no related row fails no condition
	}
	not := ""
	if x.All {
		not = "NOT "
	}
	if t.citus {
		sub.where = append(sub.where, col(a0, first.ToField)+" IS NOT NULL")
		return "(" + not + "(" + parentKey.expr + " IS NOT NULL AND " + parentKey.expr + " IN (SELECT " + col(a0, first.ToField) +
			" FROM " + sub.from.String() + " WHERE " + sub.cond() + ")))", nil
	}
	sub.where = append([]string{col(a0, first.ToField) + " = " + parentKey.expr}, sub.where...)
	return "(" + not + "EXISTS (SELECT 1 FROM " + sub.from.String() + " WHERE " + sub.cond() + t.fence() + "))", nil
}

// alias returns a fresh alias for a record read inside a condition.
func (t *planner) alias() string {
	t.n++
	return "s" + strconv.Itoa(t.n)
}

// source returns the quoted table or view of a record.
func (t *planner) source(rec string) (string, error) {
	r := t.p.KM.Record(rec)
	if r == nil {
		return "", fmt.Errorf("%w: KM %s has no record %s", errInternal, t.p.KM.ID, rec)
	}
	return quoteIdent(t.tables.of(r.Source)), nil
}

// scope is a FROM clause under construction and the conditions of its WHERE clause.
type scope struct {
	from  strings.Builder
	where []string
	joins int // LEFT JOINs added to from
	// parents maps "alias|step" to the alias of the parent a conjunct's Reads joined
	// (steps up lead to one row, so every conjunct of the scope may share it).
	parents map[string]string
}

// maxScopeJoins bounds the LEFT JOINs a filter adds to one FROM clause (SQLite joins at
// most 64 tables in one SELECT); past it, a conjunct reads its parents in a sub-query.
const maxScopeJoins = 32

// cond is the conjunction of the conditions, a balanced tree (many filterExpr entries
// stay within SQLite's expression depth).
func (s *scope) cond() string {
	if len(s.where) == 0 {
		return "1 = 1"
	}
	return balanced(s.where, " AND ")
}

// col returns the expression of a field of the record read as alias; the row key
// (km.RowField) is RowColumn + 1, the row's 1-based position when RowColumn numbers the
// rows from 0 in row order, as Import does.
func col(alias, field string) string {
	if field == km.RowField {
		return "(" + alias + "." + quoteIdent(RowColumn) + " + 1)"
	}
	return alias + "." + quoteIdent(field)
}

// resolve returns the resolver of "RECORD.FIELD" names over the records read as aliases.
func (t *planner) resolve(aliases map[string]string) resolver {
	return func(name string) (frameCol, error) {
		if rec := km.RowKeyRecord(name); rec != "" {
			a, ok := aliases[rec]
			if !ok {
				return frameCol{}, fmt.Errorf("%w: row key of a record the condition does not read: %s", errInternal, name)
			}
			return frameCol{expr: col(a, km.RowField), typ: query.TypeInteger}, nil
		}
		r, f := t.p.KM.Field(name)
		if f == nil {
			return frameCol{}, fmt.Errorf("%w: unknown field %s", errInternal, name)
		}
		a, ok := aliases[r.ID]
		if !ok {
			return frameCol{}, fmt.Errorf("%w: field %s of a record the condition does not read", errInternal, name)
		}
		return frameCol{expr: col(a, f.ID), typ: f.Type}, nil
	}
}

// leftJoin adds "LEFT JOIN To ON related [AND on...]" for step s to sc, the From record
// being read as aliases[s.From], and records the alias of To.
func (t *planner) leftJoin(sc *scope, s km.Step, a string, aliases map[string]string, on ...string) error {
	src, err := t.source(s.To)
	if err != nil {
		return err
	}
	from, ok := aliases[s.From]
	if !ok {
		return fmt.Errorf("%w: step %s starts at a record not read yet", errInternal, s)
	}
	if t.citus && len(on) > 0 {
		// Citus plans no sub-query in a join condition: the parents that pass are a
		// derived table, which is the same join (the conditions read only the parent).
		src = "(SELECT * FROM " + src + " " + a + " WHERE " + balanced(on, " AND ") + ")"
		on = nil
	}
	conds := append([]string{col(a, s.ToField) + " = " + col(from, s.FromField)}, on...)
	fmt.Fprintf(&sc.from, " LEFT JOIN %s %s ON %s", src, a, strings.Join(conds, " AND "))
	sc.joins++
	aliases[s.To] = a
	return nil
}

// atHome returns the condition that the row of cj.Home read as alias passes cj.Expr,
// reading the other records it names through their parent rows (null where a parent is
// missing). With a scope, the parents are LEFT JOINs added to it; without (a join
// condition, or a scope that has maxScopeJoins already), a one-row sub-query joins them.
// probed: the condition is checked inside a correlated sub-query, row by row of the
// outer query, so its columns must not lead the database to an index of their own
// (dialect.probed).
func (t *planner) atHome(cj *km.Conjunct, alias string, sc *scope, probed bool) (string, error) {
	aliases := map[string]string{cj.Home: alias}
	resolve := t.resolve(aliases)
	if probed {
		resolve = func(name string) (frameCol, error) {
			c, err := t.resolve(aliases)(name)
			c.expr = t.d.probed(c.expr)
			return c, err
		}
	}
	if len(cj.Reads) == 0 {
		return t.b.filter(resolve, cj.Expr)
	}
	if sc != nil && sc.joins+len(cj.Reads) > maxScopeJoins {
		sc = nil
	}
	into := sc
	if sc == nil {
		into = &scope{}
		into.from.WriteString("(SELECT 1 AS one) " + t.alias())
	}
	for _, s := range cj.Reads {
		key := aliases[s.From] + "|" + s.String()
		if a, ok := into.parents[key]; ok {
			aliases[s.To] = a
			continue
		}
		a := t.alias()
		if err := t.leftJoin(into, s, a, aliases); err != nil {
			return "", err
		}
		if into.parents == nil {
			into.parents = map[string]string{}
		}
		into.parents[key] = a
	}
	e, err := t.b.filter(resolve, cj.Expr)
	if err != nil || sc != nil {
		return e, err
	}
	return "EXISTS (SELECT 1 FROM " + into.from.String() + " WHERE " + e + t.fence() + ")", nil
}

// fence returns what ends an EXISTS sub-query of a filter: with many conjuncts, the
// dialect's fence against turning it into a join (each conjunct's sub-query is then
// probed per row, which is the cost the plan estimates; as semi-joins, a hundred of them
// took PostgreSQL's planner tens of seconds).
func (t *planner) fence() string {
	if len(t.p.Filter) > maxJoinedConjuncts {
		return t.d.subqueryFence()
	}
	return ""
}

// maxJoinedConjuncts is the most filter conjuncts whose EXISTS sub-queries the database
// may turn into joins.
const maxJoinedConjuncts = 8

// conjunct returns the condition that the row of rec read as alias passes cj: some row of
// cj.Home connected to it along cj.Reach[rec] passes cj.Expr. The walk back from rec to
// the home starts with an IN sub-query when its first step goes up (a semi-join on the
// parent key) and with a correlated EXISTS when it goes down (over the children), which
// finds them through the relationship's index and stops at the first that passes; the
// rest of the path is joined inside, and in an EXISTS the condition's own columns are
// dialect.probed. On Citus the walk down is an uncorrelated IN sub-query too (see
// planner.citus). sc is the scope of alias, or nil in a join condition.
func (t *planner) conjunct(cj *km.Conjunct, rec, alias string, sc *scope) (string, error) {
	path, ok := cj.Reach[rec]
	if !ok {
		return "", fmt.Errorf("%w: the filter has no path to record %s", errInternal, rec)
	}
	if len(path) == 0 {
		return t.atHome(cj, alias, sc, false)
	}
	sub := &scope{}
	cur, first := "", ""
	for i := len(path) - 1; i >= 0; i-- {
		s := path[i]
		src, err := t.source(s.From)
		if err != nil {
			return "", err
		}
		a := t.alias()
		if first == "" {
			first = a
			sub.from.WriteString(src + " " + a)
		} else {
			fmt.Fprintf(&sub.from, " JOIN %s %s ON %s = %s", src, a, col(a, s.FromField), col(cur, s.ToField))
			if t.citus && s.Up {
				// The parent of a along s is cur's row (the relationship's To field is
				// cur's key): the condition reads it there rather than joining it again,
				// which Citus could not do when both are distributed but joined on
				// another column than their distribution columns.
				if sub.parents == nil {
					sub.parents = map[string]string{}
				}
				sub.parents[a+"|"+s.String()] = cur
			}
		}
		cur = a
	}
	last := path[len(path)-1] // its To is rec
	e, err := t.atHome(cj, cur, sub, last.Up && !t.citus)
	if err != nil {
		return "", err
	}
	sub.where = append(sub.where, e)
	if last.Up && t.citus {
		// Citus plans no sub-query correlated from a reference table (a dimension) into
		// a distributed one, nor a join condition that holds one: the keys of the
		// parents that some passing child holds, as an uncorrelated semi-join, which
		// Citus pushes down with the children when they are co-located on that key and
		// otherwise runs once on the workers and hands to the outer statement.
		return "(" + col(alias, last.ToField) + " IN (SELECT " + col(first, last.FromField) + " FROM " + sub.from.String() +
			" WHERE " + sub.cond() + "))", nil
	}
	if last.Up {
		// rec is the parent: some child passes, probed through the relationship.
		sub.where = append([]string{col(first, last.FromField) + " = " + col(alias, last.ToField)}, sub.where...)
		return "EXISTS (SELECT 1 FROM " + sub.from.String() + " WHERE " + sub.cond() + t.fence() + ")", nil
	}
	// rec is the child: its parent passes.
	return "(" + col(alias, last.ToField) + " IN (SELECT " + col(first, last.FromField) + " FROM " + sub.from.String() +
		" WHERE " + sub.cond() + "))", nil
}

// filter returns the conditions that the row of rec read as alias passes the plan's filter.
func (t *planner) filter(rec, alias string, sc *scope) ([]string, error) {
	var out []string
	for _, cj := range mergeUp(t.p.Filter, rec) {
		c, err := t.conjunct(cj, rec, alias, sc)
		if err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	return out, nil
}

// mergeUp merges the conjuncts that reach rec from the same home along the same path of
// steps down (so that rec's row has at most one row of the home, its ancestor) and read
// the same parents: the row passes each of them when that one ancestor passes them all,
// so they are one sub-query with the conjunction of their expressions instead of one
// sub-query each (a hundred filterExpr entries would be a hundred semi-joins to plan).
// Order is kept, a merged conjunct at the place of its first member.
func mergeUp(cjs []*km.Conjunct, rec string) []*km.Conjunct {
	out := make([]*km.Conjunct, 0, len(cjs))
	merged := map[string]int{} // key -> index in out
	for _, cj := range cjs {
		path, ok := cj.Reach[rec]
		if !ok || len(path) == 0 || slices.ContainsFunc(path, func(s km.Step) bool { return s.Up }) {
			out = append(out, cj)
			continue
		}
		key := cj.Home + "|" + fmt.Sprint([]km.Step(path)) + "|" + fmt.Sprint(cj.Reads) // steps name their fields
		i, ok := merged[key]
		if !ok {
			merged[key] = len(out)
			out = append(out, cj)
			continue
		}
		m := *out[i]
		m.Expr = &query.Logical{Op: query.And, L: m.Expr, R: cj.Expr}
		out[i] = &m
	}
	return out
}

// rowAlias is the alias of a record in the statement that lists rows: the grain is r0
// and the record of RowJoin step i is r<i+1>.
func (t *planner) rowAlias(rec string) string {
	if rec == t.p.Grain {
		return "r0"
	}
	for i, s := range t.p.RowJoin {
		if s.To == rec {
			return "r" + strconv.Itoa(i+1)
		}
	}
	return "r?" // unreachable for a valid plan: every field's record is the grain or joined
}

// rows returns the scope of the rows a plan without KPIs lists: the grain's rows that
// pass the filter, with a LEFT JOIN up to every record of RowJoin. A parent row that must
// pass conjuncts of the filter (RowChecks) joins only when it does: the conditions are
// part of the join's ON clause, so a failing parent is no parent, and the LEFT JOINs
// from it find none either.
func (t *planner) rows() (*scope, error) {
	src, err := t.source(t.p.Grain)
	if err != nil {
		return nil, err
	}
	sc := &scope{}
	sc.from.WriteString(src + " r0")
	aliases := map[string]string{t.p.Grain: "r0"}
	for i, s := range t.p.RowJoin {
		a := "r" + strconv.Itoa(i+1)
		var on []string
		if t.p.RowChecks != nil {
			for _, cj := range t.p.RowChecks[i] {
				c, err := t.conjunct(cj, s.To, a, nil)
				if err != nil {
					return nil, err
				}
				on = append(on, c)
			}
		}
		if err := t.leftJoin(sc, s, a, aliases, on...); err != nil {
			return nil, err
		}
	}
	if sc.where, err = t.filter(t.p.Grain, "r0", sc); err != nil {
		return nil, err
	}
	return sc, nil
}

// output returns the expression of a field as a statement returns, groups and sorts it:
// strings byte by byte.
func (t *planner) output(expr string, typ query.Type) string {
	if typ == query.TypeString {
		return t.d.bytewise(expr)
	}
	return expr
}

// orderBy returns the ORDER BY items of the plan's sort keys over output columns c<i>:
// nulls last in both directions (dialect.sortDir). rows: the statement lists the grain's
// rows, so a key that is a field of the grain whose column is NOT NULL holds no null (a
// field of a parent may be null where the LEFT JOIN finds no parent, and so may a group
// key of KPIs).
//
// A key that is an expression (row statements only) is computed from the row's columns;
// its constants are parameters, so the caller takes the count statement's arguments
// before calling orderBy.
func (t *planner) orderBy(rows bool) ([]string, error) {
	var out []string
	for _, k := range t.p.Sort {
		notNull := false
		if rows && k.Expr == nil && k.Column >= 0 && k.Column < len(t.p.Fields) {
			f := t.p.Fields[k.Column]
			notNull = f.Record == t.p.Grain && (f.Field == km.RowField || t.cols.notNull[f.Field])
		}
		dir := t.d.sortDir(k.Desc, notNull)
		if k.Expr != nil {
			e, err := t.b.scalar(t.rowResolver, k.Expr)
			if err != nil {
				return nil, err
			}
			out = append(out, t.output(e.expr, e.typ)+dir)
			continue
		}
		out = append(out, "c"+strconv.Itoa(k.Column)+dir)
	}
	return out, nil
}

// rowOrder returns the ORDER BY of a statement of rows: the sort keys (orderBy) and then
// order, the ties' order. A sort key on a column of the grain that ascends in row order
// (sourceColumns.rowOrdered) is written as RowColumn, in its direction, and ends the list:
// the two orders are the same, RowColumn is unique, and every index of an imported table
// ends with it, so that an index on the keys before it serves the page in order where the
// column itself (a record's key breaking the ties of a sort) would make the database
// read and sort each run of equal values.
func (t *planner) rowOrder(keys []string, order string) []string {
	for i, k := range t.p.Sort {
		if k.Expr != nil || k.Column < 0 || k.Column >= len(t.p.Fields) {
			continue
		}
		if f := t.p.Fields[k.Column]; f.Record == t.p.Grain && t.cols.rowOrdered[f.Field] {
			return append(keys[:i:i], t.rowAlias(f.Record)+"."+quoteIdent(RowColumn)+t.d.sortDir(k.Desc, true))
		}
	}
	return append(keys, order)
}

// rowResolver resolves a field "RECORD.FIELD" of the row statement.
func (t *planner) rowResolver(name string) (frameCol, error) {
	r, f := t.p.KM.Field(name)
	if f == nil {
		return frameCol{}, fmt.Errorf("%w: unknown field %s", errInternal, name)
	}
	return frameCol{expr: col(t.rowAlias(r.ID), f.ID), typ: f.Type}, nil
}

// page appends LIMIT and OFFSET; it reports false when the page lies beyond any result.
//
// The two are written as integer literals, not parameters: a planner that sees the page
// size costs the page as an index read stopping after it. PostgreSQL caches the plan of a
// prepared statement (pgx prepares each statement text once per connection) only when
// its generic plan costs no more than the custom ones, and with a bound LIMIT and OFFSET
// the generic plan assumes a tenth of the rows is skipped and returned, so every
// execution was planned afresh (about 0.3 ms for a page of 1M orders, more than reading
// it); SQLite plans with a known LIMIT too.
func (t *planner) page(sql string) (string, bool) {
	p := t.p
	if p.Page > (math.MaxInt64-p.PageSize)/p.PageSize {
		return "", false
	}
	return sql + " LIMIT " + strconv.FormatInt(int64(p.PageSize), 10) + " OFFSET " + strconv.FormatInt(int64(p.Page)*int64(p.PageSize), 10), true
}

// translate builds the statements of a plan, reading its sources from tables. score is
// its search, already scored (nil without one); cols is what is known of the columns of
// the grain's source; wide sums and averages in numeric (see wideSum).
func translate(d dialect, p *km.Plan, tables tableNames, score *searchScore, cols sourceColumns, wide bool) (*statement, error) {
	t := newPlanner(d, p, tables)
	t.cols, t.wide = cols, wide
	st := &statement{}
	for _, c := range p.Columns {
		st.cols = append(st.cols, query.ColumnHeader{Name: c.Name, Type: c.Type, KPI: c.KPI != nil})
	}
	if len(p.KPIs) > 0 {
		return t.kpiStatement(st, score)
	}
	return t.rowStatement(st, score)
}

// rowStatement lists rows (a plan without KPIs): the grain's passing rows in row order,
// or by the sort keys with ties in row order; with a search and no sort, best score
// first. Distinct keeps the first row of each combination: SELECT DISTINCT when the sort
// keys order every selected column (ties between distinct rows are then impossible),
// else a GROUP BY ordered by the least order key of each combination's rows.
func (t *planner) rowStatement(st *statement, score *searchScore) (*statement, error) {
	p := t.p
	sc, err := t.rows()
	if err != nil {
		return nil, err
	}
	exprs := make([]string, len(p.Fields))
	sel := make([]string, len(p.Fields))
	for i, f := range p.Fields {
		exprs[i] = t.output(col(t.rowAlias(f.Record), f.Field), f.Type)
		sel[i] = exprs[i] + " AS c" + strconv.Itoa(i)
	}
	where := sc.cond()
	order := "r0." + quoteIdent(RowColumn)
	if score != nil {
		s := t.b.scoreExpr(score)
		where += " AND " + s + " >= " + t.b.arg(int64(p.Search.Precision))
		if len(p.Sort) == 0 {
			order = "((100 - " + s + ") * " + strconv.Itoa(rowShift) + " + " + order + ")"
		}
	}
	from := " FROM " + sc.from.String() + " WHERE " + where
	countArgs := slices.Clone(t.b.args)
	keys, err := t.orderBy(true)
	if err != nil {
		return nil, err
	}
	sorted := make([]bool, len(p.Fields))
	for _, k := range p.Sort {
		if k.Column >= 0 {
			sorted[k.Column] = true
		}
	}
	if len(sel) == 0 {
		// A plan without columns lists rows of no values: SQL selects one constant.
		exprs, sel, st.pad = []string{"1"}, []string{"1 AS c0"}, true
	}
	total := ""
	if p.Count && (p.Distinct || score != nil) {
		// Groups and searches: the total rides along with the page, so the grouping or the
		// scoring runs once (the count statement runs only when the page is empty). Plain
		// rows are counted apart, which an index can answer without reading the rows.
		total = ", count(*) OVER () AS total"
		st.pageCounts = true
	}
	var page, count string
	switch {
	case p.Distinct && score == nil && len(p.Sort) > 0 && !slices.Contains(sorted, false):
		page = "SELECT DISTINCT " + strings.Join(sel, ", ") + from + " ORDER BY " + strings.Join(keys, ", ")
		count = "SELECT count(*) FROM (SELECT DISTINCT " + strings.Join(exprs, ", ") + from + ") q"
		if total != "" {
			page = "SELECT q.*" + total + " FROM (" + page + ") q ORDER BY " + strings.Join(keys, ", ")
		}
	case p.Distinct:
		page = "SELECT " + strings.Join(sel, ", ") + total + from + " GROUP BY " + strings.Join(exprs, ", ") +
			" ORDER BY " + strings.Join(append(keys, "min("+order+")"), ", ")
		count = "SELECT count(*) FROM (SELECT 1 AS one" + from + " GROUP BY " + strings.Join(exprs, ", ") + ") q"
		if len(p.Sort) == 0 && score == nil && t.d.groupsBySorting() {
			count = t.firstSeen(st, sel, exprs, from, order)
		}
	default:
		page = "SELECT " + strings.Join(sel, ", ") + total + from + " ORDER BY " + strings.Join(t.rowOrder(keys, order), ", ")
		count = "SELECT count(*)" + from
	}
	st.count, st.countArgs = count, countArgs
	var ok bool
	if st.page, ok = t.page(page); !ok {
		st.empty = true
	}
	st.pageArgs = t.b.args
	return st, nil
}

// firstSeen sets st.firstSeen, the page of a distinct without sort keys (its rows in
// the order of their first appearance) over the first rows only, on a database that
// groups by sorting, and returns the statement that counts the distinct rows.
//
// SQLite groups by sorting every row (no hash aggregation): the GROUP BY ordered by the
// least row of each combination sorts all the rows the filter passes, 2.8 s for two
// columns of 1,000,000 orders, where SELECT DISTINCT dedups them in a temporary B-tree
// of the distinct combinations at a seventh of the cost. The combinations that appear
// among the first n passing rows (in row order) are exactly those whose first
// appearance is among them, each with its least row, and every other combination
// appears after all of them. So once those n rows hold at least as many combinations
// as the page needs (its end, or the number of distinct rows when smaller), the page
// of the grouping of the n rows is the page of the grouping of all of them; the count
// is a SELECT DISTINCT of all the rows (see KMStore.firstSeenPage). Its columns are
// written with SQLite's unary plus, which keeps each value and rules out an index scan
// in the order of one of them: SQLite otherwise reads a column's index for the
// DISTINCT and looks each row's other columns up in the table (8x slower than
// scanning the table when the other column is in no index with it).
func (t *planner) firstSeen(st *statement, sel, exprs []string, from, order string) string {
	cols := make([]string, len(sel))
	for i := range sel {
		cols[i] = "c" + strconv.Itoa(i)
	}
	list := strings.Join(cols, ", ")
	inner := "SELECT " + strings.Join(sel, ", ") + ", " + order + " AS r" + from + " ORDER BY " + order + " LIMIT "
	p := t.p
	st.firstSeen = func(rows int64) string {
		return "SELECT " + list + ", count(*) OVER () AS found FROM (SELECT " + list + ", min(r) AS r FROM (" +
			inner + strconv.FormatInt(rows, 10) + ") q GROUP BY " + list + ") q ORDER BY r LIMIT " +
			strconv.FormatInt(int64(p.PageSize), 10) + " OFFSET " + strconv.FormatInt(int64(p.Page)*int64(p.PageSize), 10)
	}
	plus := make([]string, len(exprs))
	for i, e := range exprs {
		plus[i] = "+" + e
	}
	return "SELECT count(*) FROM (SELECT DISTINCT " + strings.Join(plus, ", ") + from + ") q"
}

// grainGroup is the aggregates of one grain record: they share the join that expands it
// (Expand depends only on the grain and the selected fields).
type grainGroup struct {
	grain  string
	expand []km.Step
	aggs   []*km.Aggregate
}

func grainGroups(p *km.Plan) []*grainGroup {
	var out []*grainGroup
	for _, a := range p.Aggregates {
		i := slices.IndexFunc(out, func(g *grainGroup) bool { return g.grain == a.Grain })
		if i < 0 {
			out = append(out, &grainGroup{grain: a.Grain, expand: a.Expand})
			i = len(out) - 1
		}
		out[i].aggs = append(out[i].aggs, a)
	}
	return out
}

// aggregates returns the statement that computes the aggregates of one grain per group:
// columns k<i> (the selected fields), x<j> (aggregate j of the plan) and o (the least
// grain row of the group). Its input is the distinct (group, grain row) pairs of the join
// rooted at the grain, expanded along the aggregate's steps with LEFT JOINs of the rows
// that pass the filter; DISTINCT only when a step goes down (steps up add one row each).
func (t *planner) aggregates(g *grainGroup) (string, error) {
	p := t.p
	src, err := t.source(g.grain)
	if err != nil {
		return "", err
	}
	sc := &scope{}
	sc.from.WriteString(src + " g0")
	aliases := map[string]string{g.grain: "g0"}
	distinct := ""
	for i, s := range g.expand {
		a := "e" + strconv.Itoa(i+1)
		on, err := t.filter(s.To, a, nil)
		if err != nil {
			return "", err
		}
		if err := t.leftJoin(sc, s, a, aliases, on...); err != nil {
			return "", err
		}
		if !s.Up {
			distinct = "DISTINCT "
		}
	}
	if sc.where, err = t.filter(g.grain, "g0", sc); err != nil {
		return "", err
	}
	var sel, keys []string
	for i, f := range p.Fields {
		k := "k" + strconv.Itoa(i)
		sel = append(sel, t.output(col(aliases[f.Record], f.Field), f.Type)+" AS "+k)
		keys = append(keys, k)
	}
	sel = append(sel, "g0."+quoteIdent(RowColumn)+" AS gr")
	if r := p.KM.Record(g.grain); t.citus && distinct != "" && r != nil && r.Distribution != "" {
		// The grain's distribution column, a function of its row: the tuples stay the
		// same, and Citus sees that equal tuples are on one shard, so that it takes the
		// DISTINCT on the workers instead of pulling the join to the coordinator.
		sel = append(sel, col("g0", r.Distribution)+" AS gd")
	}
	var aggs []string
	for _, a := range g.aggs {
		j := strconv.Itoa(a.Index)
		v := ""
		if a.Field != nil {
			v = "v" + j
			sel = append(sel, t.output(col("g0", a.Field.Field), a.Field.Type)+" AS "+v)
		}
		flag := ""
		if a.Cond != nil {
			c, err := t.conjunct(a.Cond, g.grain, "g0", sc)
			if err != nil {
				return "", err
			}
			flag = "f" + j
			sel = append(sel, "CASE WHEN "+c+" THEN 1 ELSE 0 END AS "+flag)
		}
		e, err := t.aggregate(a, v, flag)
		if err != nil {
			return "", err
		}
		aggs = append(aggs, e+" AS x"+j)
	}
	tuples := "SELECT " + distinct + strings.Join(sel, ", ") + " FROM " + sc.from.String() + " WHERE " + sc.cond()
	out := "SELECT " + strings.Join(append(append(slices.Clone(keys), aggs...), "min(gr) AS o"), ", ") + " FROM (" + tuples + ") q"
	if len(keys) > 0 {
		out += " GROUP BY " + strings.Join(keys, ", ")
	}
	return out, nil
}

// aggregate returns the SQL aggregate of a over the distinct grain rows of a group: v is
// the column of its field, flag the column that is 1 where its condition holds ("" when
// it has none).
func (t *planner) aggregate(a *km.Aggregate, v, flag string) (string, error) {
	only := func(x string) string {
		if flag == "" {
			return x
		}
		return "CASE WHEN " + flag + " = 1 THEN " + x + " END"
	}
	if a.Func == query.AggRatio {
		if flag == "" {
			return "", fmt.Errorf("%w: ratio without a condition", errInternal)
		}
		return "avg(" + t.d.toFloat("CASE WHEN "+flag+" = 1 THEN 1 ELSE 0 END") + ")", nil
	}
	if v == "" {
		if a.Func != query.AggCount {
			return "", fmt.Errorf("%w: aggregate %d without a field", errInternal, a.Func)
		}
		if flag == "" {
			return "count(*)", nil
		}
		return "count(" + only("1") + ")", nil
	}
	x := only(v)
	switch a.Func {
	case query.AggCount:
		return "count(" + x + ")", nil
	case query.AggCountDistinct:
		return "count(DISTINCT " + x + ")", nil
	case query.AggMin:
		return t.d.minMax(false, x, a.Field.Type), nil
	case query.AggMax:
		return t.d.minMax(true, x, a.Field.Type), nil
	case query.AggSum:
		if a.Field.Type == query.TypeInteger {
			return t.d.intSum(x), nil
		}
		if t.wide {
			return wideSum(t.d.toFloat(x), false), nil
		}
		return t.d.sum(t.d.toFloat(x)), nil
	case query.AggAvg:
		if a.Field.Type == query.TypeInteger {
			return t.d.intAvg(x), nil
		}
		if t.wide {
			return wideSum(t.d.toFloat(x), true), nil
		}
		return t.d.avg(t.d.toFloat(x)), nil
	case query.AggMedian:
		return t.d.median(t.d.toFloat(x)), nil
	}
	return "", fmt.Errorf("%w: aggregate function %d", errInternal, a.Func)
}

// wideSum is PostgreSQL's sum (or average) of the double expression x computed in numeric,
// which has no overflow: a total beyond a double's range is ±Infinity, as the memory
// backend's and SQLite's sums of doubles give it (JSON null), where sum of doubles
// refuses it. Slower than the dialect's sum, it serves the statement run again after
// that refusal (KMStore.query).
func wideSum(x string, avg bool) string {
	total := "sum(CAST(" + x + " AS numeric))"
	value := total
	if avg {
		value = "avg(CAST(" + x + " AS numeric))"
	}
	return "CASE WHEN abs(" + total + ") > " + maxDouble + " THEN sign(" + total + ") * CAST('Infinity' AS DOUBLE PRECISION)" +
		" ELSE CAST(" + value + " AS DOUBLE PRECISION) END"
}

// wideArith is PostgreSQL's l op r of doubles without its refusals (22003) of a finite
// result beyond a double's range or too small for one: the operation is taken in numeric
// first (the operands as numeric, ±Infinity and NaN included), and a result beyond the
// range is ±Infinity, a nonzero one below half the least double ±0, as IEEE 754 rounds
// them (the memory backend and SQLite); other results are l op r in doubles. The numeric
// operands are the doubles to 15 digits (PostgreSQL's cast), so a result within 1e-15 of
// either bound may fall on the other side. It serves the statement run again after a
// refusal (KMStore.query), with wideSum.
func wideArith(l string, op byte, r string) string {
	n := "(CAST(" + l + " AS numeric) " + string(op) + " CAST(" + r + " AS numeric))"
	sign := "CAST(sign(" + n + ") AS DOUBLE PRECISION)"
	return "(CASE WHEN abs(" + n + ") > " + maxDouble + " THEN " + sign + " * CAST('Infinity' AS DOUBLE PRECISION)" +
		" WHEN " + n + " <> 0 AND abs(" + n + ") < " + halfLeastDouble + " THEN " + sign + " * 0" +
		" ELSE " + l + " " + string(op) + " " + r + " END)"
}

// maxDouble is the greatest finite double, halfLeastDouble half the least positive one
// (2^-1075, to 17 digits): numeric literals that bound the results a double holds.
const (
	maxDouble       = "1.7976931348623157e308"
	halfLeastDouble = "2.4703282292062327e-324"
)

// metric translates a KPI's metric over the aggregate columns x<j> of the groups.
func (t *planner) metric(m km.Metric) (string, error) {
	switch m := m.(type) {
	case *km.Number:
		return t.b.arg(m.V), nil
	case *km.Aggregate:
		return "x" + strconv.Itoa(m.Index), nil
	case *km.Arith:
		l, err := t.metric(m.L)
		if err != nil {
			return "", err
		}
		r, err := t.metric(m.R)
		if err != nil {
			return "", err
		}
		l, r = t.d.toFloat(l), t.d.toFloat(r)
		switch m.Op {
		case '+', '-', '*':
		case '/':
			r = "NULLIF(" + r + ", 0)"
		default:
			return "", fmt.Errorf("%w: arithmetic operator %q", errInternal, m.Op)
		}
		if t.wide {
			return wideArith(l, m.Op, r), nil
		}
		return "(" + l + " " + string(m.Op) + " " + r + ")", nil
	}
	return "", fmt.Errorf("%w: metric %T", errInternal, m)
}

// kpiStatement computes the KPIs per group. Each grain's aggregates are grouped on their
// own (see aggregates); with several grains, their groups are united (UNION ALL, then a
// GROUP BY on the keys, which treats nulls as equal) and each aggregate taken from the
// one branch that has it, counts 0 where no branch does. Groups come in the natural
// order: by the first grain (in aggregate order) that has the group, then its least grain
// row, then the keys ascending with nulls last; sort keys come first, and with a search
// and no sort, the best score.
func (t *planner) kpiStatement(st *statement, score *searchScore) (*statement, error) {
	p := t.p
	groups := grainGroups(p)
	var keys []string
	for i := range p.Fields {
		keys = append(keys, "k"+strconv.Itoa(i))
	}
	var src string
	switch {
	case len(groups) == 0:
		// No KPI aggregates anything and no field is selected (the plan gives constants
		// with fields a count() that makes their groups): the one group, also over no rows.
		src = "SELECT 0 AS o"
	case len(groups) == 1:
		s, err := t.aggregates(groups[0])
		if err != nil {
			return nil, err
		}
		src = s
	default:
		var branches []string
		for gi, g := range groups {
			s, err := t.aggregates(g)
			if err != nil {
				return nil, err
			}
			cols := slices.Clone(keys)
			for _, a := range p.Aggregates {
				x := "x" + strconv.Itoa(a.Index)
				if !slices.Contains(g.aggs, a) {
					x = t.d.typedNull(a.Type) + " AS " + x
				}
				cols = append(cols, x)
			}
			cols = append(cols, "("+strconv.Itoa(gi)+" * "+strconv.Itoa(rowShift)+" + o) AS o")
			branches = append(branches, "SELECT "+strings.Join(cols, ", ")+" FROM ("+s+") b"+strconv.Itoa(gi))
		}
		cols := slices.Clone(keys)
		for _, a := range p.Aggregates {
			x := "x" + strconv.Itoa(a.Index)
			e := t.d.minMax(true, x, a.Type)
			if a.Func == query.AggCount || a.Func == query.AggCountDistinct {
				e = "COALESCE(" + e + ", 0)"
			}
			cols = append(cols, e+" AS "+x)
		}
		cols = append(cols, "min(o) AS o")
		src = "SELECT " + strings.Join(cols, ", ") + " FROM (" + strings.Join(branches, " UNION ALL ") + ") u"
		if len(keys) > 0 {
			src += " GROUP BY " + strings.Join(keys, ", ")
		}
	}
	// The count statement reads only src and the search's condition: their arguments come
	// first, those of the KPIs' constants and the sort after them.
	from := " FROM (" + src + ") q"
	var scoreExpr string
	if score != nil {
		scoreExpr = t.b.scoreExpr(score)
		from += " WHERE " + scoreExpr + " >= " + t.b.arg(int64(p.Search.Precision))
	}
	st.count = "SELECT count(*)" + from
	st.countArgs = slices.Clone(t.b.args)
	var sel []string
	for i, k := range keys {
		sel = append(sel, "q."+k+" AS c"+strconv.Itoa(i))
	}
	for i, k := range p.KPIs {
		e, err := t.metric(k.Metric)
		if err != nil {
			return nil, err
		}
		sel = append(sel, e+" AS c"+strconv.Itoa(len(keys)+i))
	}
	order, err := t.orderBy(false)
	if err != nil {
		return nil, err
	}
	if score != nil && len(p.Sort) == 0 {
		order = append(order, "(100 - "+scoreExpr+")")
	}
	order = append(order, "q.o")
	for _, k := range keys {
		order = append(order, "q."+k+" ASC NULLS LAST")
	}
	cols := strings.Join(sel, ", ")
	if p.Count {
		st.pageCounts = true
		cols += ", count(*) OVER () AS total"
	}
	var ok bool
	if st.page, ok = t.page("SELECT " + cols + from + " ORDER BY " + strings.Join(order, ", ")); !ok {
		st.empty = true
	}
	st.pageArgs = t.b.args
	return st, nil
}
