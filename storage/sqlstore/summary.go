package sqlstore

import (
	"context"
	"fmt"
	"strconv"

	"github.com/kmkit/kmkit/km"
	"github.com/kmkit/kmkit/query"
	"github.com/kmkit/kmkit/stats"
)

// Summarize implements km.Summarizer for record-level queries. The row count and the
// statistics of string, date, date-time, time and boolean fields are computed by the
// database (count, count of distinct values, and the most frequent value with the least
// row key among equally frequent ones). Numeric fields need pandas' pairwise summation in
// row order for the mean and the standard deviation: their values are read in row order,
// one column at a time, and described by package stats, as the memory backend does.
// Other queries are left to the handler (km.ErrUnsupported). It runs the plan's legacy
// form (km.Plan.Legacy).
func (s *KMStore) Summarize(ctx context.Context, p *km.Plan) (*km.Summary, error) {
	q, err := p.Legacy()
	if err != nil {
		return nil, err
	}
	return s.summarize(ctx, p.KM, q)
}

func (s *KMStore) summarize(ctx context.Context, m *km.KnowledgeModel, q *km.Query) (*km.Summary, error) {
	if q.Join != nil || q.Record == "" || len(q.KPIs) > 0 || q.Search != nil || q.Distinct {
		return nil, fmt.Errorf("sqlstore: summary of a KM-level, KPI, search or distinct query: %w", km.ErrUnsupported)
	}
	f, err := newFrame(m, q, RowColumn)
	if err != nil {
		return nil, err
	}
	b := &builder{d: s.db.d}
	where := "1 = 1"
	if q.Filter != nil {
		if where, err = b.filter(f, q.Filter); err != nil {
			return nil, err
		}
	}
	sum := &km.Summary{Fields: make([]km.FieldSummary, len(q.Fields))}
	if err := s.db.sql.QueryRowContext(ctx, "SELECT count(*) FROM "+f.from+" WHERE "+where, b.args...).Scan(&sum.Rows); err != nil {
		return nil, fmt.Errorf("sqlstore: summary: %w", err)
	}
	for i, name := range q.Fields {
		c, err := f.lookup(name)
		if err != nil {
			return nil, err
		}
		if c.typ.Numeric() {
			n, err := s.describeNumeric(ctx, f, c, where, b.args)
			if err != nil {
				return nil, err
			}
			sum.Fields[i].Numeric = n
			continue
		}
		cat, err := s.describeCategorical(ctx, f, c, where, b.args)
		if err != nil {
			return nil, err
		}
		sum.Fields[i].Categorical = cat
	}
	return sum, nil
}

// describeNumeric reads the column's values of the filtered rows in row order.
func (s *KMStore) describeNumeric(ctx context.Context, f *frame, c frameCol, where string, args []any) (*stats.Numeric, error) {
	rows, err := s.db.sql.QueryContext(ctx, "SELECT "+c.expr+" FROM "+f.from+" WHERE "+where+" ORDER BY "+f.rowKey, args...)
	if err != nil {
		return nil, fmt.Errorf("sqlstore: summary: %w", err)
	}
	defer rows.Close()
	var (
		ints   []int64
		floats []float64
		nulls  []bool
		cell   any
	)
	for rows.Next() {
		if err := rows.Scan(&cell); err != nil {
			return nil, err
		}
		v, err := toValue(cell, c.typ)
		if err != nil {
			return nil, err
		}
		nulls = append(nulls, v.Null)
		if c.typ == query.TypeInteger {
			ints = append(ints, v.Int)
		} else {
			floats = append(floats, v.Float)
		}
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	isNull := func(i int) bool { return nulls[i] }
	var n stats.Numeric
	if c.typ == query.TypeInteger {
		n = stats.DescribeInt(ints, isNull)
	} else {
		n = stats.DescribeFloat(floats, isNull)
	}
	return &n, nil
}

// describeCategorical computes count, unique, top and freq in the database.
func (s *KMStore) describeCategorical(ctx context.Context, f *frame, c frameCol, where string, args []any) (*stats.Categorical, error) {
	var cat stats.Categorical
	err := s.db.sql.QueryRowContext(ctx, "SELECT count("+c.expr+"), count(DISTINCT "+c.expr+") FROM "+f.from+" WHERE "+where, args...).
		Scan(&cat.Count, &cat.Unique)
	if err != nil {
		return nil, fmt.Errorf("sqlstore: summary: %w", err)
	}
	if cat.Count == 0 {
		return &cat, nil
	}
	var (
		top  any
		rowN int64
	)
	err = s.db.sql.QueryRowContext(ctx, "SELECT "+c.expr+", count(*) AS n, min("+f.rowKey+") AS r FROM "+f.from+
		" WHERE "+where+" AND "+c.expr+" IS NOT NULL GROUP BY "+c.expr+" ORDER BY n DESC, r ASC LIMIT 1", args...).
		Scan(&top, &cat.Freq, &rowN)
	if err != nil {
		return nil, fmt.Errorf("sqlstore: summary: %w", err)
	}
	v, err := toValue(top, c.typ)
	if err != nil {
		return nil, err
	}
	switch c.typ {
	case query.TypeString:
		cat.Top = v.Str
	case query.TypeDate:
		cat.Top = stats.FormatDate(v.Int)
	case query.TypeDateTime, query.TypeTimestamp:
		cat.Top = stats.FormatInstant(v.Int)
	case query.TypeTime:
		cat.Top = km.FormatTime(v.Int)
	default:
		cat.Top = strconv.FormatBool(v.Bool)
	}
	return &cat, nil
}

var _ km.Summarizer = (*KMStore)(nil)
