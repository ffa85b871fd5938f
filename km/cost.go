package km

import (
	"context"
	"fmt"

	"github.com/kmkit/kmkit/problem"
	"github.com/kmkit/kmkit/query"
)

// DefaultMaxQueryCost is the default of WithMaxQueryCost: about a few seconds of the
// memory executor's work on two cores.
const DefaultMaxQueryCost = 2_000_000_000

// DefaultMaxQueryMemory is the default of WithMaxQueryMemory: the memory one query may
// be estimated to hold (Cost.Memory), 1 GiB. The reference server sizes its default for
// the machine (-query-memory).
const DefaultMaxQueryMemory = 1 << 30

// AssumedRows is the row count the cost estimate takes for a record whose store does not
// report sizes (a Store that is not a RowCounter).
const AssumedRows = 100_000

// RowCounter is an optional interface of a Store: the number of rows of a record of a KM,
// for the cost estimate (Plan.Cost). ok false means unknown (AssumedRows is taken).
type RowCounter interface {
	RowCount(ctx context.Context, m *KnowledgeModel, record string) (n int64, ok bool)
}

// MemorySizer is an optional interface of a Store that runs plans in the server's own
// memory, as the memory backend does: CheckCost holds its plans to Limits.Memory. A store
// that runs plans in a database holds little in the server and is not held to it.
//
// DistinctCounts returns, for the KM m, the number of distinct values of a field of a
// record (an upper bound will do; ok false means unknown, and the record's rows are
// taken), or nil when the store does not run m's plans in memory (a wrapper over a store
// that is no MemorySizer).
type MemorySizer interface {
	DistinctCounts(ctx context.Context, m *KnowledgeModel) func(record, field string) (n int64, ok bool)
}

// Sizes are the sizes of a KM's data that Plan.Cost reads. A nil function is unknown.
type Sizes struct {
	// Rows is the row count of a record (unknown: AssumedRows).
	Rows func(record string) int64
	// Distinct is the number of distinct values of a field of a record (unknown: the
	// record's rows). It is set exactly when the store runs plans in memory (MemorySizer).
	Distinct func(record, field string) int64
}

// Cost is the estimated work of a plan, in row operations, and the memory it holds, in
// bytes.
//
// The work: Rows is the row count of the largest record the plan reads (Plan.Records,
// from the store's RowCounter, else AssumedRows). Every predicate of the filter and of
// the KPIs' conditions (a comparison, an in list, is null or a function call; an in list
// counts once, however long), and again of each conjunct a listed row's parent is tested
// against (Plan.RowChecks), is evaluated once per row: Filter = Rows x Predicates. Every
// aggregate groups its rows by every selected field: Grouping = Rows x max(1, Fields) x
// max(1, Aggregates). Total = Filter + Grouping.
//
// The memory, what an executor holding its intermediate results in memory needs: with
// KPIs, Groups is the product of the selected fields' distinct counts (each plus one for
// null, from the store's MemorySizer, else the record's rows; those of one record at most
// its rows plus one), at most Rows, and each
// group holds a value per field, aggregate and KPI (ValueBytes each, plus GroupBytes),
// while every join of rows the aggregates group holds PairBytes per row:
// Memory = Groups x (GroupBytes + ValueBytes x (Fields + Aggregates + KPIs)) +
// Rows x PairBytes x Joins. Rows without KPIs: a sort, search or distinct holds a
// selection of the rows (4 bytes each), distinct a key of 9 bytes a field and
// DistinctBytes more per row, a parent tested against the filter (Plan.RowChecks) an
// index of the rows (4 bytes each) for its record and every record joined through it, and
// the page PageSize x Fields values. Memory is an order of magnitude, measured against
// the memory executor; a SQL store holds far less in the server.
type Cost struct {
	Rows       int64
	Predicates int64
	Fields     int64
	Aggregates int64
	Filter     int64
	Grouping   int64
	Total      int64
	Groups     int64
	Memory     int64
}

// The memory the estimate counts: per value held in a result or an aggregate's groups (a
// query.Value), per group beside its values (its key in the map of groups, the slices
// holding it), per row of a join the aggregates group (the row numbers of each record,
// the group id), and per row a distinct list compares beside its key (its entry in the map
// of keys, its group id).
const (
	ValueBytes    = 56
	GroupBytes    = 96
	PairBytes     = 24
	DistinctBytes = 56
)

// Cost estimates the work and memory of p with the sizes of its KM's data.
func (p *Plan) Cost(sz Sizes) Cost {
	rows := func(rec string) int64 {
		if sz.Rows == nil {
			return AssumedRows
		}
		return sz.Rows(rec)
	}
	var c Cost
	for _, rec := range p.Records {
		c.Rows = max(c.Rows, rows(rec))
	}
	for _, cj := range p.Filter {
		c.Predicates += predicates(cj.Expr)
		for x := range cj.Quantifiers {
			// A quantifier reads the related rows (those of its nested ones alike).
			c.Rows = max(c.Rows, rows(x.Record))
		}
	}
	for _, cjs := range p.RowChecks {
		for _, cj := range cjs {
			c.Predicates += predicates(cj.Expr)
		}
	}
	for _, a := range p.Aggregates {
		if a.Cond != nil {
			c.Predicates += predicates(a.Cond.Expr)
		}
	}
	c.Fields, c.Aggregates = int64(len(p.Fields)), int64(len(p.Aggregates))
	c.Filter = satMul(c.Rows, c.Predicates)
	c.Grouping = satMul(satMul(c.Rows, max(1, c.Fields)), max(1, c.Aggregates))
	c.Total = c.Filter + c.Grouping
	if c.Total < 0 {
		c.Total = 1<<63 - 1
	}
	c.Memory = p.memory(&c, rows, sz.Distinct)
	return c
}

// reindexedRecords counts the records of RowJoin whose rows a listed row reads through an
// index of its own request: those tested against the filter (RowChecks) and those joined
// through them.
func (p *Plan) reindexedRecords() int64 {
	if p.RowChecks == nil {
		return 0
	}
	var n int64
	tested := map[string]bool{}
	for i, s := range p.RowJoin {
		if len(p.RowChecks[i]) > 0 || tested[s.From] {
			tested[s.To] = true
			n++
		}
	}
	return n
}

// memory is Cost.Memory of p; it sets c.Groups.
func (p *Plan) memory(c *Cost, rows func(string) int64, distinct func(record, field string) int64) int64 {
	if len(p.KPIs) == 0 {
		var m int64
		if len(p.Sort) > 0 || p.Search != nil || p.Distinct {
			m = satMul(c.Rows, 4)
		}
		if p.Distinct {
			m = satAdd(m, satMul(c.Rows, DistinctBytes+9*int64(len(p.Fields))))
		}
		m = satAdd(m, satMul(c.Rows, 4*p.reindexedRecords()))
		return satAdd(m, satMul(int64(p.PageSize), satMul(int64(len(p.Columns)), ValueBytes)))
	}
	// The fields of one record take at most one combination per row of it (and one of
	// nulls, for a row without a related one).
	perRecord := map[string]int64{}
	for _, f := range p.Fields {
		n := rows(f.Record)
		if distinct != nil {
			n = min(n, distinct(f.Record, f.Field))
		}
		if _, ok := perRecord[f.Record]; !ok {
			perRecord[f.Record] = 1
		}
		perRecord[f.Record] = min(satMul(perRecord[f.Record], n+1), rows(f.Record)+1)
	}
	c.Groups = 1
	for _, n := range perRecord {
		c.Groups = satMul(c.Groups, n)
	}
	c.Groups = min(c.Groups, max(c.Rows, 1))
	joins := map[string]bool{}
	for _, a := range p.Aggregates {
		key := a.Grain
		for _, st := range a.Expand {
			key += " " + st.String()
		}
		joins[key] = true
	}
	values := int64(len(p.Fields) + len(p.Aggregates) + len(p.KPIs))
	m := satMul(c.Groups, GroupBytes+satMul(values, ValueBytes))
	if len(p.Fields) > 0 {
		m = satAdd(m, satMul(satMul(c.Rows, PairBytes), int64(len(joins))))
	}
	return m
}

// satAdd adds non-negative a and b, saturating at the largest int64.
func satAdd(a, b int64) int64 {
	if a > 1<<63-1-b {
		return 1<<63 - 1
	}
	return a + b
}

// satMul multiplies non-negative a and b, saturating at the largest int64.
func satMul(a, b int64) int64 {
	if a != 0 && b > (1<<63-1)/a {
		return 1<<63 - 1
	}
	return a * b
}

// predicates counts the predicates (leaves) of a filter expression.
func predicates(e query.Expr) int64 {
	switch e := e.(type) {
	case *query.Logical:
		return predicates(e.L) + predicates(e.R)
	case *query.Not:
		return predicates(e.X)
	case *query.Quantified:
		return 1 + predicates(e.Body)
	case nil:
		return 0
	}
	return 1
}

// Limits bound the estimate of a plan (CheckCost). A negative limit refuses nothing.
type Limits struct {
	// Cost bounds Cost.Total, in row operations (DefaultMaxQueryCost).
	Cost int64
	// Memory bounds Cost.Memory, in bytes (DefaultMaxQueryMemory).
	Memory int64
}

// StoreSizes returns the sizes of m's data as store reports them (RowCounter,
// MemorySizer); what it does not report is unknown.
func StoreSizes(ctx context.Context, store Store, m *KnowledgeModel) Sizes {
	var sz Sizes
	if rc, ok := store.(RowCounter); ok {
		sz.Rows = func(rec string) int64 {
			if n, ok := rc.RowCount(ctx, m, rec); ok {
				return n
			}
			return AssumedRows
		}
	}
	if ms, ok := store.(MemorySizer); ok {
		if counts := ms.DistinctCounts(ctx, m); counts != nil {
			sz.Distinct = func(rec, field string) int64 {
				if n, ok := counts(rec, field); ok {
					return n
				}
				return 1<<63 - 1
			}
		}
	}
	return sz
}

// CheckCost refuses p with a 400 GENERAL_CONSTRAINT_VIOLATION problem when its estimate
// (Plan.Cost, with the sizes store reports: StoreSizes) is beyond a limit, naming the
// part that is too large and what to change, before the store allocates anything for it.
// The memory limit applies to stores that run plans in memory (MemorySizer). Every front
// end (the KM API, OData, MCP) applies the same limits.
func CheckCost(ctx context.Context, store Store, p *Plan, lim Limits) error {
	if lim.Cost < 0 && lim.Memory < 0 {
		return nil
	}
	sz := StoreSizes(ctx, store, p.KM)
	c := p.Cost(sz)
	if lim.Memory >= 0 && sz.Distinct != nil && c.Memory > lim.Memory {
		part := fmt.Sprintf("%d rows", c.Rows)
		hint := "filter the rows first, or drop distinct or the sort"
		if len(p.KPIs) > 0 {
			part = fmt.Sprintf("about %d groups of %d values", c.Groups, len(p.Fields)+len(p.Aggregates)+len(p.KPIs))
			hint = "group by fewer or coarser fields (each distinct combination is a group), select fewer KPIs, or filter the rows first"
		}
		return problem.New(400, problem.CodeConstraint, fmt.Sprintf(
			"the query would hold about %s in memory, beyond the limit of %s: %s; %s",
			byteSize(c.Memory), byteSize(lim.Memory), part, hint))
	}
	if lim.Cost < 0 || c.Total <= lim.Cost {
		return nil
	}
	budget := lim.Cost
	part := fmt.Sprintf("the filters are too large: %d predicates over %d rows", c.Predicates, c.Rows)
	hint := "use fewer comparisons (an in list counts once, or'ed eq comparisons each) or fewer filterExpr entries"
	switch {
	case c.Grouping > c.Filter && len(p.KPIs) == 0 && len(p.Aggregates) == 0:
		// A listing: no group and no aggregate to name.
		part = fmt.Sprintf("the listing is too large: %d rows by %d fields", c.Rows, max(1, c.Fields))
		hint = "select fewer fields, or filter the rows first"
	case c.Grouping > c.Filter:
		part = fmt.Sprintf("the grouping is too large: %d rows by %d fields for %d aggregates", c.Rows, max(1, c.Fields), max(1, c.Aggregates))
		hint = "select fewer fields or KPIs, or filter the rows first"
	}
	return problem.New(400, problem.CodeConstraint, fmt.Sprintf(
		"the query is estimated at %d row operations, beyond the budget of %d: %s; %s",
		c.Total, budget, part, hint))
}

// byteSize writes n bytes for a message: "512 MB", "1.5 GB".
func byteSize(n int64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.1f GB", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%d MB", n>>20)
	case n >= 1<<10:
		return fmt.Sprintf("%d KB", n>>10)
	}
	return fmt.Sprintf("%d bytes", n)
}
