package sqlstore

import (
	"database/sql/driver"
	"fmt"
	"slices"

	"modernc.org/sqlite"

	"github.com/kmkit/kmkit/stats"
)

// kmkit_median is the median aggregate for SQLite, which has none built in: the middle
// value, or the mean of the middle two (stats.Midpoint: finite also where their sum
// overflows), nulls skipped; null over no value.
//
// It is the one place where the SQLite backend holds values in the server: a median needs
// all the values of its group, so it keeps each group's non-null values (8 bytes each) until
// the group ends and sorts them in place. SQLite aggregates one group at a time, so the
// memory is that of the largest group: for a KPI without dimensions, every filtered row.
// PostgreSQL computes medians itself (dialect.median). The summary does not use it (see
// Summarize).
func init() {
	sqlite.MustRegisterFunction("kmkit_median", &sqlite.FunctionImpl{
		NArgs:         1,
		Deterministic: true,
		MakeAggregate: func(sqlite.FunctionContext) (sqlite.AggregateFunction, error) { return &medianAgg{}, nil },
	})
}

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
	// Sorting in place is safe: the median of the values does not depend on their order.
	vs := m.vals
	slices.Sort(vs)
	if n%2 == 1 {
		return vs[n/2], nil
	}
	return stats.Midpoint(vs[n/2-1], vs[n/2]), nil
}

func (m *medianAgg) Final(*sqlite.FunctionContext) {}
