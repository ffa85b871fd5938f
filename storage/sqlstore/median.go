package sqlstore

import (
	"database/sql/driver"
	"fmt"
	"slices"

	"modernc.org/sqlite"
)

// kmkit_median is the median aggregate for SQLite, which has none built in: the middle
// value, or the mean of the middle two, nulls skipped; null over no value.
func init() {
	sqlite.MustRegisterFunction("kmkit_median", &sqlite.FunctionImpl{
		NArgs:         1,
		Deterministic: true,
		MakeAggregate: func(sqlite.FunctionContext) (sqlite.AggregateFunction, error) { return &medianAgg{}, nil },
	})
}

// kmkit_sum adds doubles naively in input order, as query/exec does: SQLite's sum
// compensates rounding and so differs from it in the last bits.
func init() {
	sqlite.MustRegisterFunction("kmkit_sum", &sqlite.FunctionImpl{
		NArgs:         1,
		Deterministic: true,
		MakeAggregate: func(sqlite.FunctionContext) (sqlite.AggregateFunction, error) { return &sumAgg{}, nil },
	})
}

type sumAgg struct {
	sum float64
	n   int64
}

func (a *sumAgg) Step(_ *sqlite.FunctionContext, args []driver.Value) error {
	switch v := args[0].(type) {
	case nil:
	case float64:
		a.sum += v
		a.n++
	case int64:
		a.sum += float64(v)
		a.n++
	default:
		return fmt.Errorf("kmkit_sum: %T value", v)
	}
	return nil
}

func (a *sumAgg) WindowInverse(*sqlite.FunctionContext, []driver.Value) error {
	return fmt.Errorf("kmkit_sum: not a window function")
}

func (a *sumAgg) WindowValue(*sqlite.FunctionContext) (driver.Value, error) {
	if a.n == 0 {
		return nil, nil
	}
	return a.sum, nil
}

func (a *sumAgg) Final(*sqlite.FunctionContext) {}

type medianAgg struct{ vals []float64 }

func (m *medianAgg) Step(_ *sqlite.FunctionContext, args []driver.Value) error {
	switch v := args[0].(type) {
	case nil:
	case float64:
		m.vals = append(m.vals, v)
	case int64:
		m.vals = append(m.vals, float64(v))
	default:
		return fmt.Errorf("kmkit_median: %T value", v)
	}
	return nil
}

func (m *medianAgg) WindowInverse(*sqlite.FunctionContext, []driver.Value) error {
	return fmt.Errorf("kmkit_median: not a window function")
}

func (m *medianAgg) WindowValue(*sqlite.FunctionContext) (driver.Value, error) {
	n := len(m.vals)
	if n == 0 {
		return nil, nil
	}
	vs := slices.Clone(m.vals)
	slices.Sort(vs)
	if n%2 == 1 {
		return vs[n/2], nil
	}
	return (vs[n/2-1] + vs[n/2]) / 2, nil
}

func (m *medianAgg) Final(*sqlite.FunctionContext) {}
