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

// AssumedRows is the row count the cost estimate takes for a record whose store does not
// report sizes (a Store that is not a RowCounter).
const AssumedRows = 100_000

// RowCounter is an optional interface of a Store: the number of rows of a record of a KM,
// for the cost estimate (Plan.Cost). ok false means unknown (AssumedRows is taken).
type RowCounter interface {
	RowCount(ctx context.Context, m *KnowledgeModel, record string) (n int64, ok bool)
}

// Cost is the estimated work of a plan, in row operations.
//
// The model: Rows is the row count of the largest record the plan reads (Plan.Records,
// from the store's RowCounter, else AssumedRows). Every predicate of the filter and of
// the KPIs' conditions (a comparison, an in list, is null or a function call; an in list
// counts once, however long) is evaluated once per row: Filter = Rows x Predicates. Every
// aggregate groups its rows by every selected field: Grouping = Rows x max(1, Fields) x
// max(1, Aggregates). Total = Filter + Grouping.
type Cost struct {
	Rows       int64
	Predicates int64
	Fields     int64
	Aggregates int64
	Filter     int64
	Grouping   int64
	Total      int64
}

// Cost estimates the work of p with the record sizes of rows (nil: AssumedRows each).
func (p *Plan) Cost(rows func(record string) int64) Cost {
	var c Cost
	for _, rec := range p.Records {
		n := int64(AssumedRows)
		if rows != nil {
			n = rows(rec)
		}
		c.Rows = max(c.Rows, n)
	}
	for _, cj := range p.Filter {
		c.Predicates += predicates(cj.Expr)
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
	return c
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
	case nil:
		return 0
	}
	return 1
}

// CheckCost refuses p with a 400 GENERAL_CONSTRAINT_VIOLATION problem when its estimated
// cost (Plan.Cost, with the record sizes of store when it is a RowCounter, else
// AssumedRows) is beyond budget, naming the part that is too large. A negative budget
// refuses nothing. Front ends other than the handler (OData) apply the same budget.
func CheckCost(ctx context.Context, store Store, p *Plan, budget int64) error {
	if budget < 0 {
		return nil
	}
	var rows func(string) int64
	if rc, ok := store.(RowCounter); ok {
		rows = func(rec string) int64 {
			if n, ok := rc.RowCount(ctx, p.KM, rec); ok {
				return n
			}
			return AssumedRows
		}
	}
	c := p.Cost(rows)
	if c.Total <= budget {
		return nil
	}
	part := fmt.Sprintf("the filters are too large: %d predicates over %d rows", c.Predicates, c.Rows)
	hint := "use fewer comparisons (an in list counts once, or'ed eq comparisons each) or fewer filterExpr entries"
	if c.Grouping > c.Filter {
		part = fmt.Sprintf("the grouping is too large: %d rows by %d fields for %d aggregates", c.Rows, max(1, c.Fields), max(1, c.Aggregates))
		hint = "select fewer fields or KPIs, or filter the rows first"
	}
	return problem.New(400, problem.CodeConstraint, fmt.Sprintf(
		"the query is estimated at %d row operations, beyond the budget of %d: %s; %s",
		c.Total, budget, part, hint))
}
