// Package stats describes one column of a record the way pandas' DataFrame.describe does, so
// that the summary endpoint of the Knowledge Model API gives exactly the numbers an analyst gets
// from describe(include='all') on the same rows.
//
// Numeric columns (DescribeFloat, DescribeInt) give count, mean, std, min, the 25th, 50th and
// 75th percentiles and max; string, date and timestamp columns (DescribeStrings, DescribeCodes,
// DescribeDates, DescribeInstants, DescribeCategorical) give count, unique, top and freq. Nulls are left out
// of every statistic.
//
// A column is a plain slice holding the rows to describe, in row order, with a Nulls function
// marking the null rows. To describe the rows a filter keeps, gather them into one slice
// first, nulls included: pandas describes the filtered frame, and where each value sits in it
// (null rows as zeros, see below) decides the last bit of the mean.
//
// The results are bit-for-bit those of pandas 1.5.3 on numpy 1.24 with bottleneck off, which
// the oracle test checks by running pandas itself. That takes reproducing three numpy details:
//
//   - Sums are numpy's pairwise summation (eight accumulators, blocks of at most 128 values,
//     halving above that), applied to consecutive chunks of 8192 values (numpy's reduction
//     buffer) whose partial sums are added in order. Null rows count as zero where pandas
//     fills them with zero, so they still occupy their place in the chunks.
//   - The standard deviation is pandas' two-pass formula: sqrt(sum((mean-x)²) / (n-1)), with
//     the mean computed as above.
//   - Percentiles interpolate linearly at h = (n-1)p between the order statistics x[⌊h⌋] and
//     x[⌊h⌋+1] as numpy's lerp does: a + (b-a)t when t < 0.5, else b - (b-a)(1-t), each
//     product rounded on its own (never fused into an FMA).
//
// gonum computes none of these three the same way: its sums and means add in another order,
// its Variance adds a compensation term (both differ from pandas by about 1e-15 relative), its
// Quantile offers Hyndman and Fan's methods 1 and 4 where numpy's linear method is their
// method 7 (h = (n-1)p), and its Mode breaks ties at random. So they are written here, in a few
// lines each; gonum's floats.Min and floats.Max give numpy's minimum and maximum of the
// non-null values (up to the sign of a zero, below) and are used for those.
//
// Choices where pandas or the API specification leave room:
//
//   - NaN in a float column is a null, as it is for pandas.
//   - Statistics pandas reports as NaN (everything but count of an all-null column, std of a
//     single value) or ±Inf (a sum that overflows) have no JSON form: Number marshals them as
//     null.
//   - An integer column without nulls is described as pandas describes an int64 Series, one
//     with nulls as the float64 Series pandas makes of it. Every statistic is a float64, as
//     pandas 1.5 reports them (min and max included). Where numpy's int64 subtraction between
//     percentile neighbours would wrap around (neighbours more than 2⁶³ apart) the difference
//     is taken in float64 instead of reproducing the overflow.
//   - top is the most frequent value, the first one in row order among equally frequent ones;
//     freq is its count. pandas 1.5.3 agrees while a column has at most 16 distinct values;
//     beyond that it sorts the counts with numpy's unstable quicksort and may pick any of the
//     tied values, so the rule above is the API's, not an accident of a sort.
//   - In JSON, freq is a string, as the API specification has it, and top is a string: dates
//     as YYYY-MM-DD and instants as RFC 3339 in UTC, as the data endpoints show them (pandas
//     prints a Timestamp, "2024-01-05 00:00:00"; the instant is the same). An all-null column
//     has top and freq null, as pandas has them NaN.
//   - Between -0 and +0, which compare equal, a minimum, maximum or percentile may pick the
//     other sign than numpy does (numpy's choice follows its SIMD reduction and partition
//     order); the number is the same, and JSON shows it as 0 either way, as pandas'
//     to_json does, so that every backend's answer reads alike.
//   - pandas' describe of a timestamp column also reports first and last; the API has no
//     members for them, so they are not computed.
//
// Every function is safe for concurrent use; none keeps state between calls.
package stats
