package km

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/kmkit/kmkit/query"
	"github.com/kmkit/kmkit/stats"
)

// Summarizer is an optional interface of a Store: a store that can compute record
// statistics itself (in SQL, say) implements it, and the summary endpoint then asks it for
// the statistics instead of reading every filtered row.
//
// Summarize describes the rows of record p.Record that pass p.Filter. p is record-level:
// Record (= Grain) is set, Fields lists the fields to describe (at least one), Filter holds
// the conjuncts (possibly on other records, see Conjunct); KPIs, Search, Sort and Distinct
// are unset, and Page and PageSize mean nothing. The result holds Rows, the number of rows
// passing the filter, and Fields[i], the statistics of p.Fields[i], which must be what
// DescribeResult computes on the same rows in row order: pandas describe(include='all')
// (see package stats).
// A store may return an error wrapping ErrUnsupported to leave a query to the handler,
// which then reads the rows with Query and describes them itself.
type Summarizer interface {
	Summarize(ctx context.Context, p *Plan) (*Summary, error)
}

// ErrUnsupported is returned (possibly wrapped) by a Summarizer for a query it does not
// compute natively.
var ErrUnsupported = errors.New("km: not supported by this store")

// Summary is the statistics of the filtered rows of a record.
type Summary struct {
	// Rows is the number of rows that pass the filter.
	Rows int
	// Fields holds the statistics of each described field, in the order of the query's
	// fields.
	Fields []FieldSummary
}

// FieldSummary is the statistics of one field: Numeric for integer and float fields,
// Categorical for every other type (string, date, datetime, timestamp, boolean, time).
// Exactly one of the two is set.
type FieldSummary struct {
	Numeric     *stats.Numeric
	Categorical *stats.Categorical
}

// MarshalJSON encodes the set member: count, mean, std, min, 25_percentile,
// 50_percentile, 75_percentile and max for numbers; count, unique, top and freq otherwise.
func (s FieldSummary) MarshalJSON() ([]byte, error) {
	switch {
	case s.Numeric != nil:
		return json.Marshal(s.Numeric)
	case s.Categorical != nil:
		return json.Marshal(s.Categorical)
	}
	return nil, fmt.Errorf("km: FieldSummary with no statistics")
}

// DescribeResult computes the statistics of every column of res over all its rows, as
// pandas describe(include='all') does (package stats): integer and float columns get the
// numeric statistics, all others count, unique, top and freq, with top formatted as the
// data endpoints format values. Nulls are left out.
func DescribeResult(res *query.Result) []FieldSummary {
	out := make([]FieldSummary, len(res.Columns))
	for j, c := range res.Columns {
		out[j] = describeColumn(res.Rows, j, c.Type)
	}
	return out
}

// describeColumn gathers column j of rows into a typed slice and describes it.
func describeColumn(rows [][]query.Value, j int, t query.Type) FieldSummary {
	nulls := func(i int) bool { return rows[i][j].Null }
	ints := func() []int64 {
		vs := make([]int64, len(rows))
		for i, r := range rows {
			vs[i] = r[j].Int
		}
		return vs
	}
	var c stats.Categorical
	switch t {
	case query.TypeInteger:
		n := stats.DescribeInt(ints(), nulls)
		return FieldSummary{Numeric: &n}
	case query.TypeFloat:
		vs := make([]float64, len(rows))
		for i, r := range rows {
			vs[i] = r[j].Float
		}
		n := stats.DescribeFloat(vs, nulls)
		return FieldSummary{Numeric: &n}
	case query.TypeString:
		vs := make([]string, len(rows))
		for i, r := range rows {
			vs[i] = r[j].Str
		}
		c = stats.DescribeStrings(vs, nulls)
	case query.TypeDate:
		c = stats.DescribeDates(ints(), nulls)
	case query.TypeDateTime, query.TypeTimestamp:
		c = stats.DescribeInstants(ints(), nulls)
	case query.TypeTime:
		c = stats.DescribeCategorical(ints(), nulls, FormatTime)
	default: // boolean
		vs := make([]bool, len(rows))
		for i, r := range rows {
			vs[i] = r[j].Bool
		}
		c = stats.DescribeBools(vs, nulls)
	}
	return FieldSummary{Categorical: &c}
}

// FormatTime formats a time of day given as microseconds since midnight as the data
// endpoints show times: HH:MM:SS with fractional seconds only when there are any.
func FormatTime(micros int64) string {
	return time.UnixMicro(micros).UTC().Format("15:04:05.999999")
}
