package km

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/kmkit/kmkit/internal/namelist"
	"github.com/kmkit/kmkit/problem"
	"github.com/kmkit/kmkit/query"
)

// CodeJoinAmbiguous is the problem code of a request that needs the join of two records
// for which the rule of KnowledgeModel.PathBetween leaves several paths; the detail names
// the candidates.
const CodeJoinAmbiguous = "KM_JOIN_AMBIGUOUS"

// Plan is one data request compiled against a KM: every name resolved to a typed column,
// every KPI typed with its aggregates at their grain, the filter split into conjuncts each
// placed on its home record with the paths that carry it, and sort, search, distinct and
// paging checked. NewPlan builds it; it is the only step that rejects a request, so a store
// executes a Plan without checking it again (a Plan is valid by construction). The
// semantics a store implements are those of the package documentation ("What a query
// means"), restated on each member below.
//
// Names: every column is a ColumnRef (record, field, type); every field of an expression
// (filter conjuncts, aggregate conditions) is named "RECORD.FIELD", also at record level.
// Output column names are as the request named them (bare field ids at record level).
//
// A Plan is immutable once built and may be shared between goroutines.
type Plan struct {
	// KM is the knowledge model the plan runs on.
	KM *KnowledgeModel
	// Record is the record of a record-level request (records/X/...), "" at KM level.
	Record string

	// Columns are the output columns in order: the selected fields, then the KPIs. A store's
	// Result.Columns must have these names and types, and each row these many values.
	Columns []Column
	// Fields are the selected fields: Fields[i] is Columns[i].Ref, the record's row key
	// (RowField) among them when the request asks for it. With KPIs they are the
	// dimensions (grouping keys).
	Fields []ColumnRef
	// KPIs are the requested KPIs: KPIs[i] is the column Columns[len(Fields)+i].
	KPIs []PlanKPI
	// Aggregates are the aggregates of all KPIs, each once, in order of appearance (KPI
	// order, left to right in each expression). Aggregates[i].Index is i. The order of
	// groups without sort refers to it. When fields are selected and no KPI aggregates
	// anything (constants such as "3"), it holds one count() of the row grain's rows that
	// no KPI reads: it makes the groups those the request lists without KPIs, as SQL's
	// SELECT f, 3 FROM t GROUP BY f does.
	Aggregates []*Aggregate

	// Grain is, for a request without KPIs, the record whose rows are listed (the row grain:
	// the coarsest record that reaches every record of the selected and searched fields
	// going only up; the record itself at record level). "" with KPIs.
	Grain string
	// RowJoin is, without KPIs, the tree of up steps from Grain to every other record of
	// the selected and searched fields: each step's From is Grain or the To of an earlier
	// step, each To appears once. A listed row of Grain reads the fields of another record
	// from its one related row reached along these steps, or null where a parent row is
	// missing (null or dangling foreign key) or does not pass the filter: the filter
	// restricts every record, so a parent that fails it is read as no parent, and so is
	// every row reached through it (the rows are the groups a KPI counting Grain's rows
	// would give the same request). Nil with KPIs.
	RowJoin []Step
	// RowChecks is, when some parent row may fail the filter although the grain row it
	// belongs to passes it, the conjuncts of Filter to test on the parent row of each
	// RowJoin step (RowChecks[i] for RowJoin[i], nil for none); nil when no parent row
	// needs a test. For the conjuncts left out a parent of a passing row passes by
	// construction: the path that carries the conjunct to the parent's record is the one
	// to the child's record followed by the step, or the one to the child's record is the
	// one to the parent's followed by the step down. The two disagree only where a record
	// is reached by paths of different length (PLANTS filtered, the LINES listed reached
	// by their delivery plant, their ORDERS by the order's plant).
	RowChecks [][]*Conjunct

	// Filter is the request's filter (every predefined filter, filterExpr entry, OData
	// $filter) split into its top-level AND conjuncts. A row of any record passes the
	// filter when it passes every conjunct (see Conjunct). The filter applies to every row
	// the query reads: the listed rows of Grain, the grain rows of every aggregate and every
	// row reached while expanding an aggregate's join. Nil: every row passes.
	Filter []*Conjunct
	// Records lists every record the plan reads rows of, each once: Grain and the To of
	// every RowJoin step (without KPIs); every aggregate's Grain and the To of each of its
	// Expand steps (with KPIs). Every Conjunct of Filter has a Reach path for each of them.
	Records []string

	// Search is the fuzzy search, or nil (see Search).
	Search *Search
	// Sort are the sort keys in priority order, by output column (see OutputOrder).
	Sort []OutputOrder
	// Distinct keeps, without KPIs, the first row of each distinct combination of the
	// selected fields in result order. With KPIs it changes nothing (groups are distinct).
	Distinct bool
	// Page (0-based) and PageSize (>= 1) select the page of rows or groups returned.
	Page, PageSize int
	// Count asks for Result.Count, the number of rows or groups before paging.
	Count bool
}

// RowField is the field id under which a plan names the row key of a record: the row's
// 1-based position in its record (the order of the record's rows in its source), an
// integer that is never null, and that no filter, sort or page changes. It is no field of
// the KM (field ids are identifiers, and "#" is none): only a record-level request that
// asks for it (PlanRequest.RowKey) may name it, as a field, a sort key or in a filter,
// where it is named "RECORD.#row" like any field; and the body of a quantified condition
// (query.Quantified) may name the row key of the rows it quantifies over, whatever the
// request. The OData service uses it as the
// generated key of records that declare no key; the KM API does not expose it.
//
// A store serves it from the row's position: the memory backend from the row index, the
// SQL backend from the source's row-order column plus one.
const RowField = "#row"

// RowKeyRecord returns the record whose row key name (an expression's "RECORD.#row")
// names, or "" when name names no row key.
func RowKeyRecord(name string) string {
	rec, ok := strings.CutSuffix(name, "."+RowField)
	if !ok || rec == "" || strings.Contains(rec, ".") {
		return ""
	}
	return rec
}

// ColumnRef names a typed field of a record of the plan's KM, or the row key of a record
// (Field RowField, Type integer).
type ColumnRef struct {
	Record, Field string
	Type          query.Type
}

// Name returns "RECORD.FIELD", the name expressions of the plan use.
func (c ColumnRef) Name() string { return c.Record + "." + c.Field }

// Column is one output column: a selected field (KPI nil) or a KPI.
type Column struct {
	// Name is the column's name as the request named it: "FIELD" at record level,
	// "RECORD.FIELD" at KM level, the KPI id for a KPI.
	Name string
	// Type is the type of the column's values: the field's type, or the KPI's result type.
	Type query.Type
	// Ref is the field of a field column (zero for a KPI).
	Ref ColumnRef
	// Field is the field definition of a field column, nil for a KPI and for the row key
	// (Ref.Field RowField).
	Field *Field
	// KPI is the definition of a KPI column, nil for a field.
	KPI *KPI
}

// PlanKPI is a requested KPI: its metric with the request's parameter values, typed.
type PlanKPI struct {
	ID     string
	KPI    *KPI
	Metric Metric
	// Type is the type of the KPI's values: integer for a lone count, countdistinct or sum
	// of an integer field, the field's type for a lone min or max, float for everything
	// else (see MetricType).
	Type query.Type
}

// Metric is a node of a compiled KPI expression: *Aggregate, *Arith or *Number. Each group
// of the result evaluates it from the values its aggregates take in that group.
type Metric interface{ planMetric() }

// Arith is "L Op R", Op one of + - * /, computed in float64. A null operand or a division
// by zero gives null.
type Arith struct {
	Op   byte
	L, R Metric
}

// Number is a numeric constant of a KPI expression.
type Number struct{ V float64 }

// Aggregate is one aggregate of a KPI, at its grain record.
//
// Semantics, per group of the result: the grain rows paired with the group (see Expand)
// are taken each once (distinct rows of Grain); those failing Cond are dropped; then
//
//	count()        the number of rows                               (Field nil)
//	count(F)       the number of rows where F is not null
//	countdistinct  the number of distinct non-null values of F
//	sum, avg       sum and mean of the non-null values of F (float), null when none
//	min, max       the least / greatest non-null value of F (F's type), null when none
//	median         the median of the non-null values (mean of the middle two), null when none
//	ratio(cond)    (rows passing Cond) / (rows), before dropping; null when no rows
//
// A group with no grain rows paired: count and countdistinct 0, every other aggregate null.
type Aggregate struct {
	// Index is the aggregate's position in Plan.Aggregates.
	Index int
	Func  query.AggFunc
	// Field is the aggregated field, nil for count() and ratio. Its Record is Grain.
	Field *ColumnRef
	// Cond is the aggregate's condition (for ratio: the condition counted), or nil. It is
	// one conjunct (not split) with exactly one Reach path: Reach[Grain]. A row g of Grain
	// passes it when some row of Cond.Home connected to g passes Cond.Expr. The request's
	// filter does not restrict the rows of Cond.Home that are tested (it restricts the
	// grain rows g themselves).
	Cond *Conjunct
	// Grain is the record whose rows the aggregate counts: the record of Field; for ratio
	// the home of its condition; for count() the KPI's declared record, else the only
	// record the KPI's expression names.
	Grain string
	// Expand is the tree of steps of the join rooted at Grain that reaches the record of
	// every selected field (the union of the paths from Grain to each, chosen as
	// KnowledgeModel.PathBetween chooses): each step's From is Grain or the To of an
	// earlier step, each To appears once, in the order of the fields. A tuple starts at a grain row that passes the filter; a step up adds the one
	// related parent row, a step down every related child row; only rows that pass the
	// filter take part, and where none does (no parent, no child, none passing) the tuple
	// continues with one null row of To (left outer join). Each tuple gives a group (the
	// selected fields read from the tuple's rows, null where the row is null) paired with
	// its grain row. Empty when no field is selected (one group holding every grain row
	// that passes the filter, present even when there is none).
	Expand []Step
	// Type is the type of the aggregate's values.
	Type query.Type
}

// Conjunct is a filter condition placed on its home record.
//
// Evaluation on the home: for a row h of Home, Expr reads the fields of Home from h and
// the fields of every other record it names from the one row reached from h along Reads
// (null where a parent row is missing). SQL three-valued logic; h passes when Expr is true.
//
// Propagation: a row x of record X passes the conjunct when some row h of Home that is
// connected to x passes it; x and h are connected when a chain of pairwise related rows
// runs along Reach[X] (from Home to X; x = h when X is Home). Along a step up, that is "my
// parent passes" read from the child; a step down an EXISTS over the children.
type Conjunct struct {
	// Expr is the bound condition; every field is named "RECORD.FIELD".
	Expr query.Expr
	// Home is the record whose path (KnowledgeModel.PathBetween) to every other record
	// Expr names goes only up.
	Home string
	// Reads is the tree of up steps from Home to every other record Expr names (each step's
	// From is Home or the To of an earlier step), empty when Expr names Home only.
	Reads []Step
	// Reach holds, for every record of Plan.Records (for an aggregate condition: for its
	// grain), the path from Home to that record (KnowledgeModel.PathBetween; empty for
	// Home itself). Nil for the body of a Quantifier.
	Reach map[string]Path
	// Quantifiers places every query.Quantified node of Expr (outside the bodies of
	// others, which their own Body conjuncts hold): Expr names each node's Parent like a
	// field of it (Parent is Home or reached along Reads), and a row reads the node's
	// value from its row of Parent. Nil when Expr has none.
	Quantifiers map[*query.Quantified]*Quantifier
}

// Quantifier is the plan of a query.Quantified node q: the related rows of a row of
// q.Parent are the rows of q.Record connected to it along Down, and each of them passes
// or fails Body, a conjunct whose Home is q.Record (Body.Expr is q.Body, evaluated on
// the related row as a conjunct's Expr on its home row; Body.Reach is nil). Any is true
// when some related row passes; all when every related row passes (Body.Expr true),
// which holds when there is none; neither is ever unknown.
type Quantifier struct {
	// Down is the path from q.Parent to q.Record (KnowledgeModel.PathBetween), steps
	// down only, at least one.
	Down Path
	// Body is q.Body placed on q.Record, nil for any() without a body.
	Body *Conjunct
}

// Search is a fuzzy search (package query/fuzzy): a row (or group) matches when the best
// score of Term over Fields reaches Precision (0..100); a null cell scores 0, and so does
// every row when Fields is empty. A request naming no search field searches the selected
// string fields.
//
// Without KPIs, Fields are fields of Grain or of records of RowJoin; rows that pass the
// filter are scored and, without sort keys, come best score first, ties in row order; with
// Distinct a distinct row keeps its best-scoring row's place.
//
// With KPIs, Fields are among the selected fields (dimensions): a group matches when the
// best score over its values reaches Precision, and without sort keys groups come best
// score first, ties in the natural group order.
type Search struct {
	Term      string
	Fields    []ColumnRef
	Precision int
}

// OutputOrder orders the rows or groups by output column Column (an index into
// Plan.Columns), descending when Desc. Nulls sort last in both directions; strings compare
// byte-wise. Ties: the next key, then the natural order (row order of Grain; for groups
// the order described in Plan.Aggregates' documentation in the package doc).
//
// Expr, when set, is a value expression (OData's $orderby tolower(NAME)) over fields of
// the record of a record-level plan without KPIs ("RECORD.FIELD"), computed for each
// listed row (null reading null where its function says so); Column is then -1. The plan
// has no Distinct then.
type OutputOrder struct {
	Column int
	Desc   bool
	Expr   query.Scalar
}

func (*Aggregate) planMetric() {}
func (*Arith) planMetric()     {}
func (*Number) planMetric()    {}

// MetricType is the result type of a metric: integer for count, countdistinct and the
// sum of an integer field (see IntegerSum), the field's type for min and max, float for
// everything else (avg of integers and arithmetic included).
func MetricType(m Metric) query.Type {
	if a, ok := m.(*Aggregate); ok {
		return a.Type
	}
	return query.TypeFloat
}

// PlanRequest is what NewPlan compiles: km's portable request (what the Service makes of a
// Request once it has checked its text, set its KPIs' parameters and bound its filters)
// and the scope it runs in.
//
// Fields, Search.Fields and Sort keys are named as the endpoint names them ("FIELD" at
// record level, "RECORD.FIELD" at KM level). Filters are one entry per predefined filter
// (Filter.Bound()) or filterExpr entry, each bound against m.FilterSchema(Record): at
// record level a filter may name Record's fields bare or "RECORD.FIELD" of any record.
type PlanRequest struct {
	// Record is the record of a record-level endpoint, "" at KM level.
	Record string
	// Fields are the selected fields, in output order; none at record level: every field
	// of Record. With KPIs they are the grouping keys.
	Fields []string
	// KPIs are the ids of the requested KPIs (KM level only), computed per distinct
	// combination of Fields (one row when Fields is empty). An id is looked up among
	// AdHocKPIs first, then among m's KPIs.
	KPIs []string
	// AdHocKPIs are KPIs m does not define (KnowledgeModel.AdHocKPI, MetricKPI) or m's KPIs
	// with other parameter values, for KPIs to name.
	AdHocKPIs []*KPI
	// Filters are bound filter expressions, ANDed; none matches every row.
	Filters []query.Expr
	// Search is the fuzzy search, or nil. Without Fields it looks at the selected string
	// and time fields; a negative Precision takes DefaultSearchPrecision.
	Search *SearchRequest
	// Sort keys in priority order, each a selected field or KPI (or, at record level
	// without KPIs, a bound value expression). Nulls sort last in both directions; ties
	// keep row order.
	Sort []query.SortTerm
	// Page is 0-based; PageSize is at least 1.
	Page, PageSize int
	// Distinct removes duplicate rows of the selected columns before paging.
	Distinct bool
	// Count asks the store for Result.Count, the number of rows (or groups) before paging.
	Count bool
	// RowKey lets a record-level request name the record's row key as RowField in Fields,
	// Sort and Filters (bound against RowKeySchema). It is ignored at KM level.
	RowKey bool
	// Related lets a record-level request name, in Fields and Sort, the fields
	// "RECORD.FIELD" of the records its record reaches going up (the OData service's
	// $orderby by a to-one navigation path): a listed row reads them from its one related
	// row along the KM's path, null where there is none or where it fails the filter, as
	// a KM-level request's row does. It is ignored at KM level.
	Related bool
}

// NewPlan compiles r against m. Every error it returns is a client error: a
// *problem.Problem (400) or a *query.Error (400).
func NewPlan(m *KnowledgeModel, r *PlanRequest) (*Plan, error) {
	p, err := newPlan(m, r)
	if pe, ok := err.(*PathError); ok {
		return nil, badRequest(pe.Code(), "%v", pe)
	}
	return p, err
}

func newPlan(m *KnowledgeModel, r *PlanRequest) (*Plan, error) {
	c := &compiler{m: m, p: &Plan{KM: m, Record: r.Record, Page: r.Page, PageSize: r.PageSize, Distinct: r.Distinct, Count: r.Count}}
	if r.Page < 0 || r.PageSize < 1 {
		return nil, badRequest(problem.CodeConstraint, "page %d and pageSize %d: want page >= 0 and pageSize >= 1", r.Page, r.PageSize)
	}
	var rec *Record
	if r.Record != "" {
		if rec = m.Record(r.Record); rec == nil {
			return nil, problem.New(404, CodeRecordNotFound, "knowledge model "+m.ID+" has no record "+r.Record+DidYouMean([]string{r.Record}, m.SuggestRecord))
		}
		if len(r.KPIs) > 0 {
			return nil, badRequest(problem.CodeParameterIllegal, "kpis are only accepted by the knowledge model endpoints")
		}
	}
	c.rec = rec
	c.rowKey = r.RowKey && rec != nil
	c.related = r.Related && rec != nil
	fields := r.Fields
	if rec != nil && len(fields) == 0 {
		for _, f := range rec.Fields {
			fields = append(fields, f.ID)
		}
	}
	c.p.Fields = make([]ColumnRef, 0, len(fields))
	c.p.Columns = make([]Column, 0, len(fields)+len(r.KPIs))
	if err := c.fields(fields); err != nil {
		return nil, err
	}
	c.adHoc = r.AdHocKPIs
	if err := c.kpis(r.KPIs); err != nil {
		return nil, err
	}
	if rec == nil && len(c.p.Fields) == 0 && len(c.p.KPIs) == 0 {
		return nil, badRequest(problem.CodeParameterMissing, "name at least one field (RECORD.FIELD) in fields or one KPI in kpis")
	}
	if err := c.search(r.Search); err != nil {
		return nil, err
	}
	if err := c.sort(r.Sort); err != nil {
		return nil, err
	}
	if err := c.shape(); err != nil {
		return nil, err
	}
	if err := c.filter(r.Filters); err != nil {
		return nil, err
	}
	c.rowChecks()
	return c.p, nil
}

type compiler struct {
	m      *KnowledgeModel
	rec    *Record // record-level scope, or nil
	rowKey bool    // RowField names the row key of rec
	// related: a field may be RECORD.FIELD of a record rec reaches going up
	related bool
	p       *Plan
	adHoc   []*KPI // KPIs of the request that m does not define
}

// ref resolves a field as the scope names it: bare at record level, RECORD.FIELD at KM
// level; RowField, when the request asks for it, is the row key (no *Field).
func (c *compiler) ref(name string) (ColumnRef, *Field, bool) {
	if c.rowKey && name == RowField {
		return ColumnRef{Record: c.rec.ID, Field: RowField, Type: query.TypeInteger}, nil, true
	}
	if c.rec != nil {
		f := c.rec.Field(name)
		if f == nil {
			if r, f := c.m.Field(name); c.related && f != nil && r != c.rec && c.m.reachesUp(c.rec.ID, r.ID) {
				return ColumnRef{Record: r.ID, Field: f.ID, Type: f.Type}, f, true
			}
			return ColumnRef{}, nil, false
		}
		return ColumnRef{Record: c.rec.ID, Field: f.ID, Type: f.Type}, f, true
	}
	r, f := c.m.Field(name)
	if f == nil {
		return ColumnRef{}, nil, false
	}
	return ColumnRef{Record: r.ID, Field: f.ID, Type: f.Type}, f, true
}

func (c *compiler) fields(names []string) error {
	if len(names) > MaxFields {
		return badRequest(problem.CodeConstraint, "%d fields requested: at most %d are allowed", len(names), MaxFields)
	}
	var unknown []string
	for _, name := range names {
		ref, f, ok := c.ref(name)
		if !ok {
			unknown = append(unknown, name)
			continue
		}
		c.p.Fields = append(c.p.Fields, ref)
		c.p.Columns = append(c.p.Columns, Column{Name: name, Type: ref.Type, Ref: ref, Field: f})
	}
	if len(unknown) > 0 {
		return badRequest(query.CodeFieldNotFound, "unknown field%s: %s%s%s", namelist.Plural(len(unknown)), namelist.Join(unknown), FieldHint(c.rec), c.m.fieldHints(c.rec, unknown, true))
	}
	return nil
}

func (c *compiler) kpis(ids []string) error {
	var unknown []string
	for _, id := range ids {
		k := adHocKPI(c.adHoc, id)
		if k == nil {
			k = c.m.KPI(id)
		}
		if k == nil {
			unknown = append(unknown, id)
			continue
		}
		pm, err := c.metric(k, k.metric)
		if err != nil {
			return err
		}
		t := MetricType(pm)
		c.p.KPIs = append(c.p.KPIs, PlanKPI{ID: k.ID, KPI: k, Metric: pm, Type: t})
		c.p.Columns = append(c.p.Columns, Column{Name: k.ID, Type: t, KPI: k})
	}
	if len(unknown) > 0 {
		return badRequest(query.CodeFieldNotFound, "unknown KPI%s: %s%s", namelist.Plural(len(unknown)), namelist.Join(unknown), DidYouMean(unknown, c.m.SuggestKPI))
	}
	return nil
}

// metric compiles a KPI's (bound) metric.
func (c *compiler) metric(k *KPI, mt query.Metric) (Metric, error) {
	grains, err := c.m.metricGrains(k, mt)
	if err != nil {
		return nil, badRequest(problem.CodeParameterIllegal, "KPI %s: %v", k.ID, err)
	}
	var conv func(query.Metric) Metric
	conv = func(mt query.Metric) Metric {
		switch x := mt.(type) {
		case *query.Arith:
			return &Arith{Op: x.Op, L: conv(x.L), R: conv(x.R)}
		case *query.Number:
			return &Number{V: x.V}
		case *query.Aggregate:
			a := grains[x]
			a.Index = len(c.p.Aggregates)
			c.p.Aggregates = append(c.p.Aggregates, a)
			return a
		}
		return &Number{V: 0} // unreachable: metrics are built by the KPI parser
	}
	return conv(mt), nil
}

// metricGrains places every aggregate of a (bound) metric of k on its grain record and
// types it; errors say why a definition cannot be computed (the loader reports them with
// file and line, NewPlan as 400s for parameter overrides).
func (m *KnowledgeModel) metricGrains(k *KPI, mt query.Metric) (map[*query.Aggregate]*Aggregate, error) {
	out := map[*query.Aggregate]*Aggregate{}
	var named []string
	addNamed := func(name string) {
		if r, _ := m.Field(name); r != nil && !slices.Contains(named, r.ID) {
			named = append(named, r.ID)
		}
	}
	MetricFields(mt, addNamed)
	var walk func(query.Metric) error
	walk = func(mt query.Metric) error {
		switch x := mt.(type) {
		case *query.Arith:
			for _, side := range []query.Metric{x.L, x.R} {
				if err := walk(side); err != nil {
					return err
				}
				if a, ok := side.(*query.Aggregate); ok && !out[a].Type.Numeric() {
					return fmt.Errorf("%s of %s is %s and cannot take part in arithmetic", a.Func, a.Field, article(out[a].Type))
				}
			}
			return nil
		case *query.Aggregate:
			a := &Aggregate{Func: x.Func}
			switch {
			case x.Field != "":
				r, f := m.Field(x.Field)
				if f == nil {
					return fmt.Errorf("unknown field %s", x.Field)
				}
				a.Field = &ColumnRef{Record: r.ID, Field: f.ID, Type: f.Type}
				a.Grain = r.ID
			case x.Func == query.AggRatio:
				home, _, err := m.home(x.Filter)
				if err != nil {
					return fmt.Errorf("ratio: %v", err)
				}
				a.Grain = home
			case k != nil && k.Record != "":
				a.Grain = k.Record
			case len(named) == 1:
				a.Grain = named[0]
			case len(named) == 0:
				return fmt.Errorf("count() names no record: declare the record it counts (record: RECORD_ID)")
			default:
				return fmt.Errorf("count() could count the rows of %s: declare the record it counts (record: RECORD_ID)", strings.Join(named, " or "))
			}
			switch x.Func {
			case query.AggCount, query.AggCountDistinct:
				a.Type = query.TypeInteger
			case query.AggMin, query.AggMax:
				a.Type = a.Field.Type
			case query.AggSum:
				a.Type = query.TypeFloat
				if a.Field.Type == query.TypeInteger {
					a.Type = query.TypeInteger // exact: the package doc, "Numbers"
				}
			default:
				a.Type = query.TypeFloat
			}
			if x.Filter != nil {
				cj, err := m.conjunct(x.Filter, []string{a.Grain})
				if err != nil {
					return fmt.Errorf("condition: %v", err)
				}
				a.Cond = cj
			}
			out[x] = a
		}
		return nil
	}
	return out, walk(mt)
}

// home finds the home of a bound expression: the record among those it names whose path
// to every other one goes only up. It returns the home and the records named (the
// Parent of a Quantified node counts as named, its body does not).
func (m *KnowledgeModel) home(e query.Expr) (string, []string, error) {
	named := m.named(e)
	if len(named) == 0 {
		return "", nil, fmt.Errorf("the condition names no field")
	}
	for _, cand := range m.Records {
		if !slices.Contains(named, cand.ID) {
			continue
		}
		ok := true
		for _, o := range named {
			if !m.reachesUp(cand.ID, o) {
				ok = false
				break
			}
		}
		if ok {
			return cand.ID, named, nil
		}
	}
	return "", named, fmt.Errorf("%s names fields of records %s, and no one of them reaches the others through relationships from the many side to the one side; write the conditions on each record as separate filter expressions", quoteExpr(e), strings.Join(named, ", "))
}

// article returns "a string", "an integer" ...
func article(t query.Type) string {
	if t == query.TypeInteger {
		return "an integer"
	}
	return "a " + t.String()
}

// quoteExpr formats an expression for an error detail, shortened.
func quoteExpr(e query.Expr) string {
	s := query.Format(e)
	if len(s) > 120 {
		s = s[:117] + "..."
	}
	return "the condition " + s
}

// named returns the records whose fields a bound expression reads, in order of
// appearance: the records of its fields and the Parent of each Quantified node (outside
// the bodies of others).
func (m *KnowledgeModel) named(e query.Expr) []string {
	var named []string
	add := func(id string) {
		if id != "" && !slices.Contains(named, id) {
			named = append(named, id)
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
		case *query.Quantified:
			if m.Record(x.Parent) != nil {
				add(x.Parent)
			}
		default:
			ExprFields(e, func(name string) {
				id := RowKeyRecord(name)
				if r, _ := m.Field(name); r != nil {
					id = r.ID
				} else if m.Record(id) == nil {
					id = ""
				}
				add(id)
			})
		}
	}
	walk(e)
	return named
}

// conjunct places a bound expression (fields RECORD.FIELD) on its home and computes the
// paths to the given records.
func (m *KnowledgeModel) conjunct(e query.Expr, reach []string) (*Conjunct, error) {
	home, named, err := m.home(e)
	if err != nil {
		return nil, err
	}
	cj, err := m.placed(e, home, named)
	if err != nil {
		return nil, err
	}
	cj.Reach = make(map[string]Path, len(reach))
	for _, r := range reach {
		p, err := m.PathBetween(home, r)
		if err != nil {
			return nil, err
		}
		cj.Reach[r] = p
	}
	return cj, nil
}

// placed returns e placed on home, which reaches every record of named (m.named(e))
// going up: its Reads and its Quantifiers.
func (m *KnowledgeModel) placed(e query.Expr, home string, named []string) (*Conjunct, error) {
	cj := &Conjunct{Expr: e, Home: home}
	var ups []Path
	for _, r := range named {
		if r == home {
			continue
		}
		p, err := m.upPath(home, r)
		if err != nil {
			return nil, err
		}
		ups = append(ups, p)
	}
	var err error
	if cj.Reads, err = tree(home, ups); err != nil {
		return nil, err
	}
	var walk func(query.Expr) error
	walk = func(e query.Expr) error {
		switch x := e.(type) {
		case *query.Logical:
			if err := walk(x.L); err != nil {
				return err
			}
			return walk(x.R)
		case *query.Not:
			return walk(x.X)
		case *query.Quantified:
			q, err := m.quantifier(x)
			if err != nil {
				return err
			}
			if cj.Quantifiers == nil {
				cj.Quantifiers = map[*query.Quantified]*Quantifier{}
			}
			cj.Quantifiers[x] = q
		}
		return nil
	}
	return cj, walk(e)
}

// quantifier places a Quantified node: the path down from its Parent to its Record, and
// its body on Record.
func (m *KnowledgeModel) quantifier(x *query.Quantified) (*Quantifier, error) {
	if m.Record(x.Parent) == nil || m.Record(x.Record) == nil {
		return nil, fmt.Errorf("%s/%s(...): unknown record %s or %s", x.Record, x.Operator(), x.Parent, x.Record)
	}
	down, err := m.PathBetween(x.Parent, x.Record)
	if err != nil {
		return nil, err
	}
	if len(down) == 0 || slices.ContainsFunc(down, func(s Step) bool { return s.Up }) {
		return nil, fmt.Errorf("%s/%s(...): %s is not a collection of %s: the knowledge model joins them along %s, which is not one-to-many all along", x.Record, x.Operator(), x.Record, x.Parent, down)
	}
	q := &Quantifier{Down: down}
	if x.Body == nil {
		return q, nil
	}
	named := m.named(x.Body)
	for _, r := range named {
		if !m.reachesUp(x.Record, r) {
			return nil, fmt.Errorf("%s/%s(...): the condition reads %s, which a row of %s does not reach through relationships from the many side to the one side", x.Record, x.Operator(), r, x.Record)
		}
	}
	if q.Body, err = m.placed(x.Body, x.Record, named); err != nil {
		return nil, err
	}
	return q, nil
}

func (c *compiler) search(s *SearchRequest) error {
	if s == nil {
		return nil
	}
	ps := &Search{Term: s.Term, Precision: s.Precision}
	if ps.Precision < 0 {
		ps.Precision = DefaultSearchPrecision
	}
	for _, name := range s.Fields {
		ref, _, ok := c.ref(name)
		if !ok {
			return badRequest(query.CodeFieldNotFound, "unknown searchField %s%s%s", name, FieldHint(c.rec), c.m.fieldHints(c.rec, []string{name}, true))
		}
		if !ref.Type.Searchable() {
			return badRequest(problem.CodeParameterIllegal, "searchField %s is %s field; fuzzy search needs a string field", name, article(ref.Type))
		}
		if len(c.p.KPIs) > 0 && !slices.Contains(c.p.Fields, ref) {
			return badRequest(problem.CodeParameterIllegal, "searchField %s is not a selected field: with KPIs the search looks at the selected fields, which group the KPIs", name)
		}
		if slices.Contains(ps.Fields, ref) {
			continue // a field named twice scores as once
		}
		ps.Fields = append(ps.Fields, ref)
	}
	if len(s.Fields) == 0 {
		for _, f := range c.p.Fields {
			if f.Type.Searchable() && !slices.Contains(ps.Fields, f) {
				ps.Fields = append(ps.Fields, f)
			}
		}
	}
	c.p.Search = ps
	return nil
}

func (c *compiler) sort(keys []query.SortTerm) error {
	allowed := make([]string, len(c.p.Columns))
	for i, col := range c.p.Columns {
		allowed[i] = col.Name
	}
	var fieldKeys []query.SortTerm
	for _, k := range keys {
		if k.Expr == nil {
			fieldKeys = append(fieldKeys, k)
		}
	}
	if err := query.CheckSort(fieldKeys, allowed); err != nil {
		var qe *query.Error
		if errors.As(err, &qe) {
			// The first unknown key, as CheckSort names it, with the closest sortable names.
			for _, k := range fieldKeys {
				if !slices.Contains(allowed, k.Field) {
					qe.Msg += DidYouMean([]string{k.Field}, func(name string) []string { return closest(name, allowed) })
					break
				}
			}
		}
		return err
	}
	c.p.Sort = make([]OutputOrder, 0, len(keys))
	for _, k := range keys {
		if k.Expr != nil {
			e, err := c.sortExpr(k)
			if err != nil {
				return err
			}
			c.p.Sort = append(c.p.Sort, OutputOrder{Column: -1, Desc: k.Desc, Expr: e})
			continue
		}
		c.p.Sort = append(c.p.Sort, OutputOrder{Column: slices.Index(allowed, k.Field), Desc: k.Desc})
	}
	return nil
}

// sortExpr checks a sort key that is a value expression and names its fields RECORD.FIELD:
// only at record level, without KPIs and distinct, over the record's own fields.
func (c *compiler) sortExpr(k query.SortTerm) (query.Scalar, error) {
	switch {
	case c.rec == nil:
		return nil, badRequest(problem.CodeParameterIllegal, "sorting by %s: expressions sort the rows of one record only", k.Field)
	case len(c.p.KPIs) > 0 || c.p.Distinct:
		return nil, badRequest(problem.CodeParameterIllegal, "sorting by %s: expressions sort listed rows, not KPI groups or distinct rows", k.Field)
	}
	return query.MapScalarFields(k.Expr, func(r query.FieldRef) (query.FieldRef, error) {
		f := c.rec.Field(r.Name)
		if f == nil || f.Type != r.Type {
			return r, &query.Error{Kind: query.KindType, Code: query.CodeFieldNotFound, Param: "sort", Pos: query.NoPos,
				Msg: fmt.Sprintf("sorting by %s: %s is not a field of %s", k.Field, r.Name, c.rec.ID)}
		}
		r.Name = c.rec.ID + "." + r.Name
		return r, nil
	})
}

// shape computes the row grain and its joins (without KPIs) or every aggregate's
// expansion (with KPIs), and Plan.Records.
func (c *compiler) shape() error {
	p := c.p
	var dims []string
	addDim := func(r string) {
		if !slices.Contains(dims, r) {
			dims = append(dims, r)
		}
	}
	for _, f := range p.Fields {
		addDim(f.Record)
	}
	addRecord := func(r string) {
		if !slices.Contains(p.Records, r) {
			p.Records = append(p.Records, r)
		}
	}
	if len(p.KPIs) == 0 {
		if p.Search != nil {
			for _, f := range p.Search.Fields {
				addDim(f.Record)
			}
		}
		if c.rec != nil {
			p.Grain = c.rec.ID
		} else {
			g, err := c.m.rowGrain(dims)
			if err != nil {
				return err
			}
			p.Grain = g
		}
		var ups []Path
		for _, d := range dims {
			up, err := c.m.upPath(p.Grain, d)
			if err != nil {
				return err
			}
			ups = append(ups, up)
		}
		var err error
		if p.RowJoin, err = tree(p.Grain, ups); err != nil {
			return err
		}
		addRecord(p.Grain)
		for _, s := range p.RowJoin {
			addRecord(s.To)
		}
		return nil
	}
	if len(p.Aggregates) == 0 && len(dims) > 0 {
		// The KPIs aggregate nothing (constants): their groups are the rows the request
		// lists without KPIs, which a count() of the row grain's rows gives, in their order.
		g, err := c.m.rowGrain(dims)
		if err != nil {
			return badRequest(CodeJoinNotPossible, "the KPIs requested aggregate nothing, so their groups are the rows the selected fields list, and the rows of records %s cannot be listed together: add a KPI that aggregates over them", strings.Join(dims, ", "))
		}
		p.Aggregates = []*Aggregate{{Func: query.AggCount, Grain: g, Type: query.TypeInteger}}
	}
	for _, a := range p.Aggregates {
		var paths []Path
		for _, d := range dims {
			path, err := c.m.PathBetween(a.Grain, d)
			if err != nil {
				return err
			}
			paths = append(paths, path)
		}
		var err error
		if a.Expand, err = tree(a.Grain, paths); err != nil {
			return err
		}
		addRecord(a.Grain)
		for _, s := range a.Expand {
			addRecord(s.To)
		}
	}
	return nil
}

// rowChecks computes Plan.RowChecks: a conjunct needs a test on the parent row of RowJoin
// step s (From F, To T) unless a row of F that passes it implies that its parent along s
// passes it, which holds when Reach[T] is Reach[F] followed by s (the chain that connects
// the child to a passing home row continues to the parent) or Reach[F] is Reach[T]
// followed by s taken down (the child's chain passes through its only parent). A parent
// row that passes every conjunct makes the induction go on to its own parents.
func (c *compiler) rowChecks() {
	p := c.p
	if len(p.KPIs) > 0 || len(p.RowJoin) == 0 || len(p.Filter) == 0 {
		return
	}
	checks := make([][]*Conjunct, len(p.RowJoin))
	needed := false
	for i, s := range p.RowJoin {
		down := s.Reverse()
		for _, cj := range p.Filter {
			from, to := cj.Reach[s.From], cj.Reach[s.To]
			if len(to) == len(from)+1 && slices.Equal(to[:len(from)], from) && to[len(from)] == s {
				continue
			}
			if len(from) == len(to)+1 && slices.Equal(from[:len(to)], to) && from[len(to)] == down {
				continue
			}
			checks[i] = append(checks[i], cj)
			needed = true
		}
	}
	if needed {
		p.RowChecks = checks
	}
}

// rowGrain returns the coarsest record that reaches every record of dims going only up.
func (m *KnowledgeModel) rowGrain(dims []string) (string, error) {
	var cands []string
	for _, r := range m.Records {
		all := true
		for _, d := range dims {
			if !m.reachesUp(r.ID, d) {
				all = false
				break
			}
		}
		if all {
			cands = append(cands, r.ID)
		}
	}
	var coarsest []string
	for _, c := range cands {
		all := true
		for _, o := range cands {
			if !m.reachesUp(o, c) {
				all = false
				break
			}
		}
		if all {
			coarsest = append(coarsest, c)
		}
	}
	if len(coarsest) == 1 {
		return coarsest[0], nil
	}
	return "", badRequest(CodeJoinNotPossible, "the rows of records %s cannot be listed together: no one record has a row for each combination of theirs through relationships from the many side to the one side; KPIs can combine them (select the fields of one and a KPI over the other)", strings.Join(dims, ", "))
}

// bodyRowKeys adds to keys the row keys (RECORD.#row, RowField) that the bodies of e's
// Quantified nodes name of their own related record (Quantified.Record), at any depth: a
// quantified condition may read the row key of the rows it quantifies over (OData's
// generated key of a record without a key, x/ROW_NUMBER), whether or not the request
// names its own.
func bodyRowKeys(e query.Expr, keys map[string]bool) {
	switch x := e.(type) {
	case *query.Logical:
		bodyRowKeys(x.L, keys)
		bodyRowKeys(x.R, keys)
	case *query.Not:
		bodyRowKeys(x.X, keys)
	case *query.Quantified:
		if x.Body == nil {
			return
		}
		ExprFields(x.Body, func(name string) {
			if RowKeyRecord(name) == x.Record {
				keys[name] = true
			}
		})
		bodyRowKeys(x.Body, keys)
	}
}

// filter binds, splits and places the request's filters.
func (c *compiler) filter(filters []query.Expr) error {
	sch := planSchema{m: c.m, rec: c.rec, rowKey: c.rowKey}
	for _, e := range filters {
		keys := map[string]bool{}
		bodyRowKeys(e, keys)
		b, err := query.MapFields(e, func(r query.FieldRef) (query.FieldRef, error) {
			if keys[r.Name] && r.Type == query.TypeInteger {
				return r, nil
			}
			if _, ok := sch.FieldType(r.Name); !ok || r.Type == query.TypeInvalid {
				return r, &query.Error{Kind: query.KindType, Code: query.CodeFieldNotFound, Pos: r.At, Msg: fmt.Sprintf("unknown field %q", r.Name) + c.m.fieldHints(c.rec, []string{r.Name}, false)}
			}
			r.Name = sch.qualify(r.Name)
			return r, nil
		})
		if err != nil {
			return err
		}
		for _, part := range conjuncts(b) {
			cj, err := c.m.conjunct(part, c.p.Records)
			if err != nil {
				var pe *PathError
				if asPathError(err, &pe) {
					return badRequest(pe.Code(), "filter %s: %v", query.Format(part), err)
				}
				return badRequest(problem.CodeParameterIllegal, "%v", err)
			}
			c.p.Filter = append(c.p.Filter, cj)
		}
	}
	return nil
}

func asPathError(err error, pe **PathError) bool {
	p, ok := err.(*PathError)
	if ok {
		*pe = p
	}
	return ok
}

// conjuncts splits e at its top-level ANDs.
func conjuncts(e query.Expr) []query.Expr {
	if l, ok := e.(*query.Logical); ok && l.Op == query.And {
		return append(conjuncts(l.L), conjuncts(l.R)...)
	}
	return []query.Expr{e}
}

// FilterSchema returns the schema filters of a request at the given record level ("": KM
// level) are bound against: "RECORD.FIELD" of any record, and at record level also the
// record's bare field ids.
func (m *KnowledgeModel) FilterSchema(record string) query.Schema {
	return planSchema{m: m, rec: m.Record(record)}
}

// RowKeySchema is FilterSchema(record) for a request that names the record's row key
// (PlanRequest.RowKey): it also resolves RowField, an integer.
func (m *KnowledgeModel) RowKeySchema(record string) query.Schema {
	rec := m.Record(record)
	return planSchema{m: m, rec: rec, rowKey: rec != nil}
}

// planSchema resolves the field names of a filter: RECORD.FIELD of any record, and at
// record level also the record's bare field ids (and RowField with rowKey).
type planSchema struct {
	m      *KnowledgeModel
	rec    *Record
	rowKey bool
}

// FieldType implements query.Schema.
func (s planSchema) FieldType(name string) (query.Type, bool) {
	if s.rowKey && (name == RowField || name == s.rec.ID+"."+RowField) {
		return query.TypeInteger, true
	}
	if s.rec != nil {
		if f := s.rec.Field(name); f != nil {
			return f.Type, true
		}
	}
	if _, f := s.m.Field(name); f != nil {
		return f.Type, true
	}
	return query.TypeInvalid, false
}

// qualify returns the RECORD.FIELD form of a name FieldType accepted.
func (s planSchema) qualify(name string) string {
	if s.rec != nil && (s.rec.Field(name) != nil || (s.rowKey && name == RowField)) {
		return s.rec.ID + "." + name
	}
	return name
}
