package memory

import (
	"context"
	"fmt"

	"github.com/kmkit/kmkit/internal/parallel"
	"github.com/kmkit/kmkit/km"
	"github.com/kmkit/kmkit/query"
	"github.com/kmkit/kmkit/query/column"
	"github.com/kmkit/kmkit/stats"
)

// Summarize implements km.Summarizer: it describes the record's columns where they are,
// with package stats, instead of turning every filtered row into query.Values for the
// handler, one column per core at a time. Without a filter the columns are described in
// place; with one, the executor selects the rows (as it does for Query) and only their
// cells are gathered. The statistics are those km.DescribeResult computes on the same rows.
//
// KM-level plans, KPIs, searches and distinct are left to the handler (km.ErrUnsupported).
func (s *KMStore) Summarize(ctx context.Context, p *km.Plan) (*km.Summary, error) {
	if p.Record == "" || len(p.KPIs) > 0 || p.Search != nil || p.Distinct {
		return nil, fmt.Errorf("memory: summary of a KM-level, KPI, search or distinct query: %w", km.ErrUnsupported)
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	src, err := s.source(p.KM)
	if err != nil {
		return nil, err
	}
	rec := p.KM.Record(p.Record)
	if rec == nil {
		return nil, fmt.Errorf("memory: KM %s has no record %s", p.KM.ID, p.Record)
	}
	s.mu.RLock()
	t, ok := s.tables[rec.Source]
	s.mu.RUnlock()
	if !ok {
		return nil, fmt.Errorf("memory: no table for source %q of record %s", rec.Source, rec.ID)
	}
	cols := make([]column.Column, len(p.Fields))
	for i, f := range p.Fields {
		c, ok := t.Column(f.Field)
		if !ok {
			return nil, fmt.Errorf("memory: table %q has no column %s", rec.Source, f.Field)
		}
		cols[i] = c
	}
	sel, err := src.Selection(p) // nil: every row
	if err != nil {
		return nil, err
	}
	sum := &km.Summary{Rows: t.Rows(), Fields: make([]km.FieldSummary, len(cols))}
	if sel != nil {
		sum.Rows = len(sel)
	}
	// The columns are independent: described on the cores at once, each on one goroutine
	// (describe only reads the table and sel).
	parallel.For(len(cols), func(i int) {
		if ctx.Err() == nil {
			sum.Fields[i] = describe(cols[i], sel)
		}
	})
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return sum, nil
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
		switch codes := c.Codes; {
		case codes.U8 != nil:
			cat = stats.DescribeCodes(gather(codes.U8, sel), c.Dict, nulls)
		case codes.U16 != nil:
			cat = stats.DescribeCodes(gather(codes.U16, sel), c.Dict, nulls)
		default:
			cat = stats.DescribeCodes(gather(codes.U32, sel), c.Dict, nulls)
		}
	case *column.Bools:
		cat = stats.DescribeBools(gather(c.Vals, sel), nulls)
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
