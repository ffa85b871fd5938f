package memory

import (
	"context"
	"fmt"
	"math"
	"strconv"

	"github.com/kmkit/kmkit/km"
	"github.com/kmkit/kmkit/query"
	"github.com/kmkit/kmkit/query/column"
	"github.com/kmkit/kmkit/query/exec"
	"github.com/kmkit/kmkit/stats"
)

// Summarize implements km.Summarizer: it describes the record's columns where they are,
// with package stats, instead of turning every filtered row into query.Values for the
// handler. Without a filter the columns are described in place; with one, the executor
// selects the rows (as it does for Query) and only their cells are gathered. The
// statistics are those km.DescribeResult computes on the same rows.
//
// KM-level queries, KPIs and searches are left to the handler (km.ErrUnsupported).
func (s *KMStore) Summarize(ctx context.Context, p *km.Plan) (*km.Summary, error) {
	q, err := p.Legacy()
	if err != nil {
		return nil, err
	}
	m := p.KM
	if q.Join != nil || q.Record == "" || len(q.KPIs) > 0 || q.Search != nil || q.Distinct {
		return nil, fmt.Errorf("memory: summary of a KM-level, KPI, search or distinct query: %w", km.ErrUnsupported)
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	rec := m.Record(q.Record)
	if rec == nil {
		return nil, fmt.Errorf("memory: KM %s has no record %s", m.ID, q.Record)
	}
	s.mu.RLock()
	t, ok := s.tables[rec.Source]
	s.mu.RUnlock()
	if !ok {
		return nil, fmt.Errorf("memory: no table for source %q of record %s", rec.Source, rec.ID)
	}
	cols := make([]column.Column, len(q.Fields))
	for i, name := range q.Fields {
		c, ok := t.Column(name)
		if !ok {
			return nil, fmt.Errorf("memory: table %q has no column %s", rec.Source, name)
		}
		cols[i] = c
	}
	var sel []int32 // nil: every row
	if q.Filter != nil {
		var err error
		if sel, err = selectRows(t, q.Filter); err != nil {
			return nil, err
		}
	}
	sum := &km.Summary{Rows: t.Rows(), Fields: make([]km.FieldSummary, len(cols))}
	if sel != nil {
		sum.Rows = len(sel)
	}
	for i, c := range cols {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		sum.Fields[i] = describe(c, sel)
	}
	return sum, nil
}

// rowColumn names the row-number column selectRows adds; no field id can take it (ids
// are identifiers).
const rowColumn = "\x00row"

// selectRows returns the rows of t that pass filter, ascending. It runs the executor over
// t plus a column of row numbers and reads that column back, so the filter has exactly
// the semantics of Query.
func selectRows(t *column.Table, filter query.Expr) ([]int32, error) {
	n := t.Rows()
	rows := make([]int64, n)
	for i := range rows {
		rows[i] = int64(i)
	}
	names := append(append(make([]string, 0, len(t.Names())+1), t.Names()...), rowColumn)
	cols := append(append(make([]column.Column, 0, len(names)), t.Columns()...), &column.Int64s{T: query.TypeInteger, Vals: rows})
	withRows, err := column.NewTable(names, cols)
	if err != nil {
		return nil, err
	}
	res, err := exec.Run(exec.FromTable(withRows), &query.Request{Fields: []string{rowColumn}, Filter: filter, PageSize: math.MaxInt32})
	if err != nil {
		return nil, err
	}
	sel := make([]int32, len(res.Rows))
	for i, r := range res.Rows {
		sel[i] = int32(r[0].Int)
	}
	return sel, nil
}

// describe computes the statistics of the cells sel of c (every cell when sel is nil).
func describe(c column.Column, sel []int32) km.FieldSummary {
	var nulls stats.Nulls
	if !hasNoNulls(c) {
		if sel == nil {
			nulls = c.IsNull
		} else {
			nulls = func(i int) bool { return c.IsNull(int(sel[i])) }
		}
	}
	var cat stats.Categorical
	switch c := c.(type) {
	case *column.Float64s:
		n := stats.DescribeFloat(gather(c.Vals, sel), nulls)
		return km.FieldSummary{Numeric: &n}
	case *column.Int64s:
		vals := gather(c.Vals, sel)
		switch c.T {
		case query.TypeInteger:
			n := stats.DescribeInt(vals, nulls)
			return km.FieldSummary{Numeric: &n}
		case query.TypeDate:
			cat = stats.DescribeDates(vals, nulls)
		case query.TypeDateTime, query.TypeTimestamp:
			cat = stats.DescribeInstants(vals, nulls)
		default: // time
			cat = stats.DescribeCategorical(vals, nulls, km.FormatTime)
		}
	case *column.Strings:
		cat = stats.DescribeCodes(gather(c.Codes, sel), c.Dict, nulls)
	case *column.Bools:
		cat = stats.DescribeCategorical(gather(c.Vals, sel), nulls, strconv.FormatBool)
	}
	return km.FieldSummary{Categorical: &cat}
}

// hasNoNulls reports whether c has no null bitmap (a column without nulls).
func hasNoNulls(c column.Column) bool {
	switch c := c.(type) {
	case *column.Float64s:
		return c.Nulls == nil
	case *column.Int64s:
		return c.Nulls == nil
	case *column.Strings:
		return c.Nulls == nil
	case *column.Bools:
		return c.Nulls == nil
	}
	return false
}

// gather returns vals itself when sel is nil, else the values at sel, in order. The stats
// functions only read the slice they are given (DescribeInt sorts a copy).
func gather[T any](vals []T, sel []int32) []T {
	if sel == nil {
		return vals
	}
	out := make([]T, len(sel))
	for i, r := range sel {
		out[i] = vals[r]
	}
	return out
}
