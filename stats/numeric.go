package stats

import (
	"math"
	"math/bits"
	"slices"

	"gonum.org/v1/gonum/floats"
)

// Nulls reports whether row i of a column is null. A nil Nulls means that no row is null.
type Nulls func(i int) bool

// Numeric describes an integer or float column. The JSON member names are those of the
// summary body of the Knowledge Model API.
type Numeric struct {
	Count int64  `json:"count"` // non-null values
	Mean  Number `json:"mean"`  // NaN without values
	Std   Number `json:"std"`   // sample standard deviation (n-1); NaN below two values
	Min   Number `json:"min"`
	P25   Number `json:"25_percentile"` // linear interpolation at h = (n-1)·0.25
	P50   Number `json:"50_percentile"`
	P75   Number `json:"75_percentile"`
	Max   Number `json:"max"`
}

// DescribeFloat describes a float column as pandas describes a float64 Series. Rows for
// which nulls reports true, and NaN values, are nulls.
func DescribeFloat(values []float64, nulls Nulls) Numeric {
	return describeAsFloat(values, nulls)
}

// describeAsFloat is DescribeFloat of the values converted to float64, converting each
// where it is read: an integer column is described without a float64 copy of it.
func describeAsFloat[T int64 | float64](values []T, nulls Nulls) Numeric {
	var nullRows bitmap
	buf := takeWords(len(values))
	defer giveWords(buf)
	compact := asFloats(buf)[:0]
	for i, v := range values {
		f := float64(v)
		if math.IsNaN(f) || nulls != nil && nulls(i) {
			nullRows = nullRows.set(i, len(values))
			continue
		}
		compact = append(compact, f)
	}
	d := Numeric{Count: int64(len(compact)), Mean: nan(), Std: nan(), Min: nan(), Max: nan()}
	mean, std := meanStd(values, nullRows, len(compact))
	d.Mean, d.Std = Number(mean), Number(std)
	if len(compact) > 0 {
		d.Min, d.Max = Number(floats.Min(compact)), Number(floats.Max(compact))
	}
	q := percentiles(compact, LerpFloat)
	d.P25, d.P50, d.P75 = Number(q[0]), Number(q[1]), Number(q[2])
	return d
}

// DescribeInt describes an integer column. Without nulls it is described as pandas describes
// an int64 Series (percentiles subtract neighbours as integers); with nulls, as the float64
// Series pandas makes of it. Either way the statistics are float64, min and max included,
// as pandas reports them.
func DescribeInt(values []int64, nulls Nulls) Numeric {
	if nulls != nil {
		for i := range values {
			if nulls(i) {
				return describeAsFloat(values, nulls)
			}
		}
	}
	d := Numeric{Count: int64(len(values)), Mean: nan(), Std: nan(), Min: nan(), Max: nan()}
	mean, std := meanStd(values, nil, len(values))
	d.Mean, d.Std = Number(mean), Number(std)
	if len(values) > 0 {
		d.Min, d.Max = Number(slices.Min(values)), Number(slices.Max(values))
	}
	buf := takeWords(len(values))
	defer giveWords(buf)
	sorted := asInts(buf)
	copy(sorted, values)
	q := percentiles(sorted, LerpInt)
	d.P25, d.P50, d.P75 = Number(q[0]), Number(q[1]), Number(q[2])
	return d
}

// meanStd returns pandas' mean and sample standard deviation of the count non-null values
// of values (nanops.nanmean and nanops.nanstd): the sum of all rows with null rows as zero,
// divided by count; then the square root of the sum of squared deviations from that mean,
// null rows again zero, divided by count-1. Both sums run chunk by chunk as numpy's do.
func meanStd[T int64 | float64](values []T, nullRows bitmap, count int) (mean, std float64) {
	if count == 0 {
		return math.NaN(), math.NaN()
	}
	buf := make([]float64, min(len(values), chunkSize))
	sum := 0.0
	for start := 0; start < len(values); start += chunkSize {
		chunk := values[start:min(start+chunkSize, len(values))]
		b := buf[:len(chunk)]
		for j, v := range chunk {
			b[j] = float64(v)
		}
		nullRows.zero(b, start)
		sum += pairwiseSum(b)
	}
	n := float64(count)
	mean = sum / n
	if count < 2 {
		return mean, math.NaN()
	}
	squares := 0.0
	for start := 0; start < len(values); start += chunkSize {
		chunk := values[start:min(start+chunkSize, len(values))]
		b := buf[:len(chunk)]
		for j, v := range chunk {
			dev := mean - float64(v)
			b[j] = dev * dev
		}
		nullRows.zero(b, start)
		squares += pairwiseSum(b)
	}
	return mean, math.Sqrt(squares / (n - 1))
}

// bitmap marks null rows; a nil bitmap marks none.
type bitmap []uint64

// set marks row i of an n-row column, allocating the bitmap at the first mark.
func (m bitmap) set(i, n int) bitmap {
	if m == nil {
		m = make(bitmap, (n+63)/64)
	}
	m[i/64] |= 1 << (i % 64)
	return m
}

// zero sets b[j] to 0 for every marked row start+j. It visits the marked rows only, a
// word of 64 rows at a time, so a column with few nulls costs a word test per 64 rows.
func (m bitmap) zero(b []float64, start int) {
	if m == nil {
		return
	}
	end := start + len(b)
	for w := start / 64; w*64 < end; w++ {
		for word := m[w]; word != 0; word &= word - 1 {
			if i := w*64 + bits.TrailingZeros64(word); i >= start && i < end {
				b[i-start] = 0
			}
		}
	}
}
