package sqlstore

import (
	"context"
	"fmt"
	"strconv"

	"github.com/kmkit/kmkit/km"
	"github.com/kmkit/kmkit/query"
	"github.com/kmkit/kmkit/stats"
)

// Summarize implements km.Summarizer for plans that list rows (record level, or KM level
// without KPIs), without search or distinct: the rows of the plan's grain that pass its
// filter (propagated from other records as for Query). The row count and the statistics
// of string, date, date-time, time and boolean fields are computed by the database
// (count, count of distinct values, and the most frequent value with the least row key
// among equally frequent ones). Numeric fields need pandas' pairwise summation in row
// order for the mean and the standard deviation: their values are read in row order, one
// column at a time, and described by package stats, as the memory backend does. Other
// plans are left to the handler (km.ErrUnsupported).
func (s *KMStore) Summarize(ctx context.Context, p *km.Plan) (*km.Summary, error) {
	if len(p.KPIs) > 0 || p.Search != nil || p.Distinct {
		return nil, fmt.Errorf("sqlstore: summary of a KPI, search or distinct query: %w", km.ErrUnsupported)
	}
	t := newPlanner(s.db.d, p)
	sc, err := t.rows()
	if err != nil {
		return nil, err
	}
	f := &rowSet{from: sc.from.String(), where: sc.cond(), args: t.b.args, rowKey: "r0." + quoteIdent(RowColumn)}
	if f.from, f.where, f.args, err = s.db.fitRows(f.from, f.where, f.args); err != nil {
		return nil, err
	}
	sum := &km.Summary{Fields: make([]km.FieldSummary, len(p.Fields))}
	if err := s.db.sql.QueryRowContext(ctx, "SELECT count(*) FROM "+f.from+" WHERE "+f.where, f.args...).Scan(&sum.Rows); err != nil {
		return nil, fmt.Errorf("sqlstore: summary: %w", err)
	}
	for i, ref := range p.Fields {
		c := frameCol{expr: col(t.rowAlias(ref.Record), ref.Field), typ: ref.Type}
		if c.typ.Numeric() {
			n, err := s.describeNumeric(ctx, f, c)
			if err != nil {
				return nil, err
			}
			sum.Fields[i].Numeric = n
			continue
		}
		cat, err := s.describeCategorical(ctx, f, c)
		if err != nil {
			return nil, err
		}
		sum.Fields[i].Categorical = cat
	}
	return sum, nil
}

// rowSet is the FROM clause, condition and arguments of the rows a summary describes,
// and their row order.
type rowSet struct {
	from, where string
	args        []any
	rowKey      string
}

// describeNumeric reads the column's values of the filtered rows in row order.
func (s *KMStore) describeNumeric(ctx context.Context, f *rowSet, c frameCol) (*stats.Numeric, error) {
	rows, err := s.db.sql.QueryContext(ctx, "SELECT "+c.expr+" FROM "+f.from+" WHERE "+f.where+" ORDER BY "+f.rowKey, f.args...)
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
func (s *KMStore) describeCategorical(ctx context.Context, f *rowSet, c frameCol) (*stats.Categorical, error) {
	var cat stats.Categorical
	err := s.db.sql.QueryRowContext(ctx, "SELECT count("+c.expr+"), count(DISTINCT "+c.expr+") FROM "+f.from+" WHERE "+f.where, f.args...).
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
		" WHERE "+f.where+" AND "+c.expr+" IS NOT NULL GROUP BY "+c.expr+" ORDER BY n DESC, r ASC LIMIT 1", f.args...).
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
