package sqlstore

import (
	"context"
	"database/sql"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/kmkit/kmkit/km"
	"github.com/kmkit/kmkit/query"
	"github.com/kmkit/kmkit/stats"
)

// Summarize implements km.Summarizer for plans that list rows (record level, or KM level
// without KPIs), without search or distinct: the rows of the plan's grain that pass its
// filter (propagated from other records as for Query). Everything is computed by the
// database and every statement returns at most a few rows, whatever the number of rows
// described; nothing reads a column into the server.
//
// One statement computes the row count and, for every numeric field, the count of
// non-null values, the mean, minimum and maximum. Each string, date, date-time, time and
// boolean field is one grouped statement returning one row: its count, the number of
// groups, and the most frequent value (the one with the least row key among equally
// frequent ones) with its frequency. Numeric fields then differ by database:
//
//   - PostgreSQL computes the standard deviation (stddev_samp) and the three quartiles
//     (percentile_cont, which is pandas' linear method h = (n-1)p) in the same first
//     statement; integer columns are averaged and their deviation taken in numeric,
//     exactly, before the conversion to double.
//   - SQLite has neither: a second statement sums the squared deviations from the mean the
//     first one found (the two-pass formula pandas uses), and one statement per field
//     returns only the (at most six) values at the ranks the quartiles interpolate
//     between, which are then interpolated as numpy does (stats.QuartileRanks,
//     stats.LerpFloat, stats.LerpInt): ORDER BY x LIMIT 2 OFFSET rank, which walks an
//     index when x leads one, or else row_number() over one sort of the values. SQLite
//     sorts with its external sorter, which spills to temporary files: memory stays
//     bounded by its page cache.
//
// Each database sums in its own order, so means and deviations agree with pandas within
// 1e-9 relative, not to the last bit. Other plans are left to the handler
// (km.ErrUnsupported).
func (s *KMStore) Summarize(ctx context.Context, p *km.Plan) (*km.Summary, error) {
	if len(p.KPIs) > 0 || p.Search != nil || p.Distinct {
		return nil, fmt.Errorf("sqlstore: summary of a KPI, search or distinct query: %w", km.ErrUnsupported)
	}
	var sum *km.Summary
	err := s.read(ctx, p, func(db querier, tables tableNames) error {
		var err error
		sum, err = summarize(ctx, s.db.planDialect(ctx), dbQuerier{db}, p, tables)
		return err
	})
	return sum, err
}

// summaryQuerier runs the statements of a summary: the store's database (dbQuerier), or a
// test's recorder.
type summaryQuerier interface {
	query(ctx context.Context, stmt string, args []any) (resultRows, error)
}

// resultRows is what a summary reads of a statement's result: *sql.Rows, or a test's
// counting wrapper of it.
type resultRows interface {
	Next() bool
	Scan(dest ...any) error
	Err() error
	Close() error
}

// dbQuerier runs a summary's statements on a database.
type dbQuerier struct{ db querier }

func (q dbQuerier) query(ctx context.Context, stmt string, args []any) (resultRows, error) {
	return q.db.QueryContext(ctx, stmt, args...)
}

// rowSet is the FROM clause, condition and arguments of the rows a summary describes,
// and their row key.
type rowSet struct {
	from, where string
	args        []any
	rowKey      string
}

// statement returns SELECT items FROM the rows WHERE their condition and extra.
func (f *rowSet) statement(items []string, extra string) string {
	return "SELECT " + strings.Join(items, ", ") + " FROM " + f.from + " WHERE " + f.where + extra
}

// summarize computes the summary of p's rows with the statements of dialect d, run by q.
func summarize(ctx context.Context, d dialect, q summaryQuerier, p *km.Plan, tables tableNames) (*km.Summary, error) {
	t := newPlanner(d, p, tables)
	sc, err := t.rows()
	if err != nil {
		return nil, err
	}
	f := &rowSet{from: sc.from.String(), where: sc.cond(), args: t.b.args, rowKey: "r0." + quoteIdent(RowColumn)}
	if f.from, f.where, f.args, err = fitRows(d, f.from, f.where, f.args); err != nil {
		return nil, err
	}
	cols := make([]frameCol, len(p.Fields))
	for i, ref := range p.Fields {
		cols[i] = frameCol{expr: col(t.rowAlias(ref.Record), ref.Field), typ: ref.Type}
	}
	pg := d.name() == "postgres"

	// The first statement: the row count, then the aggregates of each numeric field in order.
	// PostgreSQL's avg and stddev_samp of doubles refuse a sum of squares beyond a double's
	// range (values beyond about 1e154): then the statement runs again with those two
	// computed in numeric, as pandas' sums in doubles give them: the mean ±Infinity (inf,
	// written null) where the sum is beyond a double's range, the deviation +Infinity
	// where the sum of squares is, and 0 where that is below the least double.
	first := func(wide bool) ([]any, error) {
		items := []string{"count(*)"}
		for _, c := range cols {
			if !c.typ.Numeric() {
				continue // described by describeCategorical
			}
			x := c.expr
			mean, std := "avg("+x+")", "stddev_samp("+x+")"
			if wide {
				wx := "CAST(" + x + " AS numeric)"
				squares := "var_samp(" + wx + ") * (count(" + x + ") - 1)"
				// A sum beyond a double's range overflows pandas' mean too: ±inf.
				mean = "CASE WHEN abs(sum(" + wx + ")) > 1.7976931348623157e308 THEN sign(sum(" + wx + ")) * CAST('Infinity' AS DOUBLE PRECISION) ELSE " + d.toFloat("avg("+wx+")") + " END"
				std = "CASE WHEN " + squares + " > 1.7976931348623157e308 THEN CAST('Infinity' AS DOUBLE PRECISION)" +
					" WHEN " + squares + " < 4.9e-324 THEN 0 ELSE " + d.toFloat("stddev_samp("+wx+")") + " END"
			}
			items = append(items, "count("+x+")", d.toFloat(mean), "min("+x+")", "max("+x+")")
			if pg {
				quartiles := "percentile_cont(ARRAY[0.25, 0.5, 0.75]) WITHIN GROUP (ORDER BY " + d.toFloat(x) + ")"
				items = append(items, d.toFloat(std),
					"("+quartiles+")[1]", "("+quartiles+")[2]", "("+quartiles+")[3]")
			}
		}
		cells := make([]any, len(items))
		return cells, queryRow(ctx, q, f.statement(items, ""), f.args, cells)
	}
	cells, err := first(false)
	if pg && isOutOfRange(err) {
		cells, err = first(true)
	}
	if err != nil {
		return nil, err
	}
	sum := &km.Summary{Fields: make([]km.FieldSummary, len(cols))}
	sum.Rows = int(asInt(cells[0]))
	next := cells[1:]
	var numeric []int // fields with a mean and at least two values, whose std SQLite computes
	for i, c := range cols {
		if !c.typ.Numeric() {
			cat, err := describeCategorical(ctx, q, f, c)
			if err != nil {
				return nil, err
			}
			sum.Fields[i].Categorical = cat
			continue
		}
		n := &stats.Numeric{Count: asInt(next[0]), Mean: asFloat(next[1]), Min: asFloat(next[2]), Max: asFloat(next[3]),
			Std: stats.Number(math.NaN()), P25: stats.Number(math.NaN()), P50: stats.Number(math.NaN()), P75: stats.Number(math.NaN())}
		next = next[4:]
		if pg {
			n.Std, n.P25, n.P50, n.P75 = asFloat(next[0]), asFloat(next[1]), asFloat(next[2]), asFloat(next[3])
			next = next[4:]
		} else if n.Count > 0 {
			// pandas describes an integer column without nulls as int64 (the percentiles
			// subtract neighbours as integers), with nulls as float64.
			asInts := c.typ == query.TypeInteger && n.Count == int64(sum.Rows)
			ref := p.Fields[i]
			if err := quartiles(ctx, q, d, f, c, tables.of(p.KM.Record(ref.Record).Source), ref.Field, asInts, n); err != nil {
				return nil, err
			}
			if n.Count > 1 {
				numeric = append(numeric, i)
			}
		}
		sum.Fields[i].Numeric = n
	}
	if len(numeric) > 0 {
		if err := deviations(ctx, q, d, f, cols, numeric, sum); err != nil {
			return nil, err
		}
	}
	return sum, nil
}

// deviations sets the standard deviation of the numeric fields listed (each with at least
// two values and its mean known) with one statement that sums each field's squared
// deviations from its mean, as pandas does: sqrt(Σ(mean-x)² / (n-1)).
func deviations(ctx context.Context, q summaryQuerier, d dialect, f *rowSet, cols []frameCol, fields []int, sum *km.Summary) error {
	b := &builder{d: d, args: slices.Clone(f.args)}
	items := make([]string, len(fields))
	for j, i := range fields {
		mean := b.arg(float64(sum.Fields[i].Numeric.Mean))
		dev := "(" + mean + " - " + cols[i].expr + ")"
		items[j] = "sum(" + dev + " * " + dev + ")"
	}
	cells := make([]any, len(items))
	if err := queryRow(ctx, q, f.statement(items, ""), b.args, cells); err != nil {
		return err
	}
	for j, i := range fields {
		n := sum.Fields[i].Numeric
		n.Std = stats.Number(math.Sqrt(float64(asFloat(cells[j])) / float64(n.Count-1)))
	}
	return nil
}

// quartiles sets the three quartiles of a numeric field with n.Count > 0 non-null values:
// the database finds the values at the ranks numpy interpolates between, which are then
// interpolated as numpy does (as int64 neighbours when asInts). When the field's column
// leads an index of table, each pair of neighbours is read by walking the index
// (ORDER BY x LIMIT 2 OFFSET rank, three in one statement); otherwise one sort numbers the
// values with row_number() and only the wanted ranks are returned.
func quartiles(ctx context.Context, q summaryQuerier, d dialect, f *rowSet, c frameCol, table, column string, asInts bool, n *stats.Numeric) error {
	lo, hi, weight := stats.QuartileRanks(int(n.Count))
	indexed, err := leadsIndex(ctx, q, table, column)
	if err != nil {
		return err
	}
	b := &builder{d: d, args: slices.Clone(f.args)}
	notNull := " AND " + c.expr + " IS NOT NULL"
	var stmt string
	if indexed {
		firsts := slices.Compact(slices.Clone(lo[:]))
		parts := make([]string, len(firsts))
		for i, r := range firsts {
			parts[i] = "SELECT * FROM (" + f.statement([]string{c.expr + " AS x", b.arg(int64(r)) + " AS i"},
				notNull+" ORDER BY "+c.expr+" LIMIT 2 OFFSET "+b.arg(int64(r))) + ")"
		}
		// Rows of one offset come in order; the outer ORDER BY keeps them so.
		stmt = "SELECT i, x FROM (" + strings.Join(parts, " UNION ALL ") + ") AS neighbours ORDER BY i, x"
	} else {
		ranks := append(lo[:], hi[:]...)
		slices.Sort(ranks)
		ranks = slices.Compact(ranks)
		marks := make([]string, len(ranks))
		for i, r := range ranks {
			marks[i] = b.arg(int64(r))
		}
		inner := f.statement([]string{c.expr + " AS x", "row_number() OVER (ORDER BY " + c.expr + ") - 1 AS i"}, notNull)
		stmt = "SELECT i, x FROM (" + inner + ") AS ranked WHERE i IN (" + strings.Join(marks, ", ") + ") ORDER BY i"
	}
	rows, err := q.query(ctx, stmt, b.args)
	if err != nil {
		return fmt.Errorf("sqlstore: summary: %w", err)
	}
	defer rows.Close()
	at := make(map[int]any, 6)
	group, pos := int64(-1), 0
	for rows.Next() {
		var (
			i int64
			x any
		)
		if err := rows.Scan(&i, &x); err != nil {
			return fmt.Errorf("sqlstore: summary: %w", err)
		}
		r := int(i)
		if indexed { // the rows of LIMIT 2 OFFSET i are the values at ranks i and i+1
			if i != group {
				group, pos = i, 0
			}
			r += pos
			pos++
		}
		at[r] = x
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("sqlstore: summary: %w", err)
	}
	var out [3]stats.Number
	for k := range out {
		a, aok := at[lo[k]]
		z, zok := at[hi[k]]
		if !aok || !zok {
			return fmt.Errorf("sqlstore: summary: the values at ranks %d and %d of %d are missing", lo[k], hi[k], n.Count)
		}
		if asInts {
			out[k] = stats.Number(stats.LerpInt(asInt(a), asInt(z), weight[k]))
		} else {
			out[k] = stats.Number(stats.LerpFloat(float64(asFloat(a)), float64(asFloat(z)), weight[k]))
		}
	}
	n.P25, n.P50, n.P75 = out[0], out[1], out[2]
	return nil
}

// leadsIndex reports whether column is the first column of an index of SQLite table.
func leadsIndex(ctx context.Context, q summaryQuerier, table, column string) (bool, error) {
	cells := make([]any, 1)
	err := queryRow(ctx, q, "SELECT count(*) FROM pragma_index_list(?1) AS l, pragma_index_info(l.name) AS c WHERE c.seqno = 0 AND c.name = ?2",
		[]any{table, column}, cells)
	return asInt(cells[0]) > 0, err
}

// describeCategorical computes the count, the number of distinct values and the most
// frequent value of a categorical field with its frequency (the one with the least row key
// among equally frequent ones) by one grouped statement returning one row: one hash or
// sorted grouping of the values, where count(DISTINCT) would sort them once more.
func describeCategorical(ctx context.Context, q summaryQuerier, f *rowSet, c frameCol) (*stats.Categorical, error) {
	groups := f.statement([]string{c.expr + " AS x", "count(*) AS n", "min(" + f.rowKey + ") AS r"},
		" AND "+c.expr+" IS NOT NULL GROUP BY "+c.expr)
	stmt := "SELECT x, n, count(*) OVER (), CAST(sum(n) OVER () AS BIGINT) FROM (" + groups + ") AS g ORDER BY n DESC, r ASC LIMIT 1"
	rows, err := q.query(ctx, stmt, f.args)
	if err != nil {
		return nil, fmt.Errorf("sqlstore: summary: %w", err)
	}
	defer rows.Close()
	cat := &stats.Categorical{}
	if !rows.Next() { // no value
		return cat, rows.Err()
	}
	cells := make([]any, 4)
	if err := rows.Scan(&cells[0], &cells[1], &cells[2], &cells[3]); err != nil {
		return nil, fmt.Errorf("sqlstore: summary: %w", err)
	}
	cat.Freq, cat.Unique, cat.Count = asInt(cells[1]), asInt(cells[2]), asInt(cells[3])
	v, err := toValue(cells[0], c.typ)
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
	return cat, rows.Close()
}

// queryRow runs a statement that returns one row and scans its cells into cells.
func queryRow(ctx context.Context, q summaryQuerier, stmt string, args []any, cells []any) error {
	rows, err := q.query(ctx, stmt, args)
	if err != nil {
		return fmt.Errorf("sqlstore: summary: %w", err)
	}
	defer rows.Close()
	if !rows.Next() {
		if err := rows.Err(); err != nil {
			return fmt.Errorf("sqlstore: summary: %w", err)
		}
		return fmt.Errorf("sqlstore: summary: %w", sql.ErrNoRows)
	}
	dest := make([]any, len(cells))
	for i := range cells {
		dest[i] = &cells[i]
	}
	if err := rows.Scan(dest...); err != nil {
		return fmt.Errorf("sqlstore: summary: %w", err)
	}
	return rows.Close()
}

// asInt reads a count or an integer cell; null reads as 0.
func asInt(v any) int64 {
	switch v := v.(type) {
	case int64:
		return v
	case float64:
		return int64(v)
	}
	return 0
}

// asFloat reads a numeric cell as a statistic; null (no value) reads as NaN.
func asFloat(v any) stats.Number {
	switch v := v.(type) {
	case int64:
		return stats.Number(v)
	case float64:
		return stats.Number(v)
	}
	return stats.Number(math.NaN())
}

var _ km.Summarizer = (*KMStore)(nil)
