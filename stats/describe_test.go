package stats

import (
	"encoding/json"
	"math"
	"slices"
	"strconv"
	"testing"

	"github.com/google/go-cmp/cmp"
)

var nanN = Number(math.NaN())

// rows returns a Nulls that marks the given rows.
func rows(null ...int) Nulls {
	return func(i int) bool { return slices.Contains(null, i) }
}

func TestDescribeFloat(t *testing.T) {
	tests := []struct {
		name   string
		values []float64
		nulls  Nulls
		want   Numeric
	}{{
		name:   "four values",
		values: []float64{4, 1, 3, 2},
		// h = 0.75, 1.5, 2.25 over 1 2 3 4; std = sqrt(5/3)
		want: Numeric{Count: 4, Mean: 2.5, Std: 1.2909944487358056, Min: 1, P25: 1.75, P50: 2.5, P75: 3.25, Max: 4},
	}, {
		name:   "nulls by mask and NaN are left out",
		values: []float64{100, 1, math.NaN(), 2, -100, 3},
		nulls:  rows(0, 4),
		want:   Numeric{Count: 3, Mean: 2, Std: 1, Min: 1, P25: 1.5, P50: 2, P75: 2.5, Max: 3},
	}, {
		name:   "single value has no std",
		values: []float64{-0.5},
		want:   Numeric{Count: 1, Mean: -0.5, Std: nanN, Min: -0.5, P25: -0.5, P50: -0.5, P75: -0.5, Max: -0.5},
	}, {
		name:   "no rows",
		values: nil,
		want:   Numeric{Count: 0, Mean: nanN, Std: nanN, Min: nanN, P25: nanN, P50: nanN, P75: nanN, Max: nanN},
	}, {
		name:   "all null",
		values: []float64{1, 2},
		nulls:  rows(0, 1),
		want:   Numeric{Count: 0, Mean: nanN, Std: nanN, Min: nanN, P25: nanN, P50: nanN, P75: nanN, Max: nanN},
	}, {
		name:   "ties",
		values: []float64{2, 2, 2, 1, 2},
		want:   Numeric{Count: 5, Mean: 1.8, Std: 0.4472135954999579, Min: 1, P25: 2, P50: 2, P75: 2, Max: 2},
	}, {
		name: "lerp from above at t >= 0.5",
		// h = 0.75 between 0.1 and 0.7: numpy computes 0.7 - (0.7-0.1)*0.25, not 0.1 + 0.6*0.75
		values: []float64{0.1, 0.7},
		want: Numeric{Count: 2, Mean: 0.39999999999999997, Std: 0.42426406871192845, Min: 0.1,
			P25: 0.25, P50: 0.39999999999999997, P75: 0.5499999999999999, Max: 0.7},
	}, {
		name:   "infinities: numpy's NaN for inf-inf and inf*0",
		values: []float64{math.Inf(-1), 0, math.Inf(1)},
		want: Numeric{Count: 3, Mean: nanN, Std: nanN, Min: Number(math.Inf(-1)),
			P25: Number(math.Inf(-1)), P50: nanN, P75: nanN, Max: Number(math.Inf(1))},
	}, {
		name:   "single infinity: numpy's lerp at t = 1 gives NaN",
		values: []float64{math.Inf(1)},
		want: Numeric{Count: 1, Mean: Number(math.Inf(1)), Std: nanN, Min: Number(math.Inf(1)),
			P25: nanN, P50: nanN, P75: nanN, Max: Number(math.Inf(1))},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := DescribeFloat(tt.values, tt.nulls)
			if diff := cmp.Diff(tt.want, got, numberComparer); diff != "" {
				t.Errorf("DescribeFloat(%v) (-want +got):\n%s", tt.values, diff)
			}
		})
	}
}

func TestDescribeFloatKeepsInput(t *testing.T) {
	values := []float64{5, 3, 1, 4, 2}
	DescribeFloat(values, nil)
	if want := []float64{5, 3, 1, 4, 2}; !slices.Equal(values, want) {
		t.Errorf("DescribeFloat reordered its input: %v", values)
	}
}

func TestDescribeInt(t *testing.T) {
	tests := []struct {
		name   string
		values []int64
		nulls  Nulls
		want   Numeric
	}{{
		name:   "no nulls",
		values: []int64{10, 40, 20, 30},
		want:   Numeric{Count: 4, Mean: 25, Std: 12.909944487358056, Min: 10, P25: 17.5, P50: 25, P75: 32.5, Max: 40},
	}, {
		name:   "nulls: described as floats",
		values: []int64{10, 999, 20, 30},
		nulls:  rows(1),
		want:   Numeric{Count: 3, Mean: 20, Std: 10, Min: 10, P25: 15, P50: 20, P75: 25, Max: 30},
	}, {
		name: "neighbours differing beyond 2^53 subtract as integers",
		// b-a = 255 in integers but 256 in floats; the median is float(b) - 127.5 = 2^60+256,
		// where a float difference would give 2^60+128, rounded to even: 2^60
		values: []int64{1 << 60, 1<<60 + 255},
		want: Numeric{Count: 2, Mean: 1 << 60, Std: 256, Min: 1 << 60,
			P25: 1 << 60, P50: 1<<60 + 256, P75: 1<<60 + 256, Max: 1<<60 + 256},
	}, {
		name: "neighbours more than 2^63 apart: difference in float64, not wrapped",
		// h = 0.25: -2^63 + 2^64*0.25; h = 0.5: 2^63 - 2^64*0.5; h = 0.75: 2^63 - 2^64*0.25
		values: []int64{math.MaxInt64, math.MinInt64},
		want: Numeric{Count: 2, Mean: 0, Std: 1.3043817825332783e19, Min: -1 << 63,
			P25: -1 << 62, P50: 0, P75: 1 << 62, Max: 1 << 63},
	}, {
		name:   "all null",
		values: []int64{7},
		nulls:  rows(0),
		want:   Numeric{Count: 0, Mean: nanN, Std: nanN, Min: nanN, P25: nanN, P50: nanN, P75: nanN, Max: nanN},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := DescribeInt(tt.values, tt.nulls)
			if diff := cmp.Diff(tt.want, got, numberComparer); diff != "" {
				t.Errorf("DescribeInt(%v) (-want +got):\n%s", tt.values, diff)
			}
		})
	}
}

func TestDescribeCategorical(t *testing.T) {
	tests := []struct {
		name   string
		values []string
		nulls  Nulls
		want   Categorical
	}{{
		name:   "most frequent",
		values: []string{"b", "a", "b", "c", "b", "a"},
		want:   Categorical{Count: 6, Unique: 3, Top: "b", Freq: 3},
	}, {
		name:   "tie: first in row order",
		values: []string{"x", "y", "y", "x", "z"},
		want:   Categorical{Count: 5, Unique: 3, Top: "x", Freq: 2},
	}, {
		name:   "tie decided after nulls are left out",
		values: []string{"x", "y", "y", "x", "x"},
		nulls:  rows(0, 4),
		want:   Categorical{Count: 3, Unique: 2, Top: "y", Freq: 2},
	}, {
		name:   "empty string is a value",
		values: []string{"", "a", ""},
		want:   Categorical{Count: 3, Unique: 2, Top: "", Freq: 2},
	}, {
		name:   "all null",
		values: []string{"a", "b"},
		nulls:  rows(0, 1),
		want:   Categorical{},
	}, {
		name: "no rows",
		want: Categorical{},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, DescribeStrings(tt.values, tt.nulls)); diff != "" {
				t.Errorf("DescribeStrings(%q) (-want +got):\n%s", tt.values, diff)
			}
			codes, dict := encode(tt.values)
			if diff := cmp.Diff(tt.want, DescribeCodes(codes, dict, tt.nulls)); diff != "" {
				t.Errorf("DescribeCodes(%q) (-want +got):\n%s", tt.values, diff)
			}
		})
	}
}

func TestDescribeCodesUnusedAndUnorderedDictionary(t *testing.T) {
	// "c" (code 0) is only in a null row; the tie between "b" and "a" goes to row order, not
	// code order.
	dict := []string{"c", "a", "b"}
	codes := []uint32{0, 2, 1, 1, 2}
	want := Categorical{Count: 4, Unique: 2, Top: "b", Freq: 2}
	if diff := cmp.Diff(want, DescribeCodes(codes, dict, rows(0))); diff != "" {
		t.Errorf("DescribeCodes (-want +got):\n%s", diff)
	}
}

func TestDescribeDatesAndInstants(t *testing.T) {
	days := []int64{19723, -1, 19723, 0}
	if diff := cmp.Diff(Categorical{Count: 4, Unique: 3, Top: "2024-01-01", Freq: 2}, DescribeDates(days, nil)); diff != "" {
		t.Errorf("DescribeDates (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(Categorical{Count: 2, Unique: 2, Top: "1969-12-31", Freq: 1}, DescribeDates(days, rows(0, 2))); diff != "" {
		t.Errorf("DescribeDates with nulls (-want +got):\n%s", diff)
	}
	micros := []int64{1_700_000_000_000_000, -1, -1, 1_700_000_000_000_000, 1_700_000_000_123_400}
	want := Categorical{Count: 5, Unique: 3, Top: "2023-11-14T22:13:20Z", Freq: 2}
	if diff := cmp.Diff(want, DescribeInstants(micros, nil)); diff != "" {
		t.Errorf("DescribeInstants (-want +got):\n%s", diff)
	}
	want = Categorical{Count: 3, Unique: 2, Top: "1969-12-31T23:59:59.999999Z", Freq: 2}
	if diff := cmp.Diff(want, DescribeInstants(micros, rows(0, 4))); diff != "" {
		t.Errorf("DescribeInstants with nulls (-want +got):\n%s", diff)
	}
	// Ties go to the first in row order, not the least; the extremes' span overflows int64.
	micros = []int64{math.MaxInt64 / 2, 5, math.MinInt64, 5, math.MaxInt64 / 2, -7, -7, 0}
	want = Categorical{Count: 8, Unique: 5, Top: FormatInstant(math.MaxInt64 / 2), Freq: 2}
	if diff := cmp.Diff(want, DescribeInstants(micros, nil)); diff != "" {
		t.Errorf("DescribeInstants, ties and extremes (-want +got):\n%s", diff)
	}
	want = Categorical{Count: 6, Unique: 4, Top: "1970-01-01T00:00:00.000005Z", Freq: 2}
	if diff := cmp.Diff(want, DescribeInstants(micros, rows(0, 7))); diff != "" {
		t.Errorf("DescribeInstants, ties after a null (-want +got):\n%s", diff)
	}
	if got, want := FormatInstant(1_700_000_000_123_400), "2023-11-14T22:13:20.1234Z"; got != want {
		t.Errorf("FormatInstant = %q, want %q", got, want)
	}
}

func TestJSON(t *testing.T) {
	tests := []struct {
		name string
		v    any
		want string
	}{{
		name: "numeric",
		v:    Numeric{Count: 4, Mean: 2.5, Std: 1.2909944487358056, Min: 1, P25: 1.75, P50: 2.5, P75: 3.25, Max: 4},
		want: `{"count":4,"mean":2.5,"std":1.2909944487358056,"min":1,"25_percentile":1.75,"50_percentile":2.5,"75_percentile":3.25,"max":4}`,
	}, {
		name: "NaN and Inf as null, -0 as 0 (which zero a backend keeps is not shown)",
		v:    Numeric{Count: 1, Mean: Number(math.Inf(1)), Std: nanN, Min: 1e-7, P25: 1e21, P50: Number(math.Copysign(0, -1)), P75: 123456789, Max: Number(math.Inf(-1))},
		want: `{"count":1,"mean":null,"std":null,"min":1e-7,"25_percentile":1e+21,"50_percentile":0,"75_percentile":123456789,"max":null}`,
	}, {
		name: "categorical: freq as a string",
		v:    Categorical{Count: 5, Unique: 3, Top: "x", Freq: 2},
		want: `{"count":5,"unique":3,"top":"x","freq":"2"}`,
	}, {
		name: "categorical without values: top and freq null",
		v:    Categorical{},
		want: `{"count":0,"unique":0,"top":null,"freq":null}`,
	}, {
		name: "in a summary map",
		v:    map[string]any{"S": Categorical{Count: 1, Unique: 1, Top: `"q"`, Freq: 1}, "N": Numeric{Count: 0, Mean: nanN, Std: nanN, Min: nanN, P25: nanN, P50: nanN, P75: nanN, Max: nanN}},
		want: `{"N":{"count":0,"mean":null,"std":null,"min":null,"25_percentile":null,"50_percentile":null,"75_percentile":null,"max":null},"S":{"count":1,"unique":1,"top":"\"q\"","freq":"1"}}`,
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := json.Marshal(tt.v)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, string(got)); diff != "" {
				t.Errorf("json.Marshal (-want +got):\n%s", diff)
			}
		})
	}
}

func TestNumberMarshalMatchesEncodingJSON(t *testing.T) {
	for _, f := range []float64{0, 1, -1, 0.1, 1e-6, 9.99e-7, 1e20, 1e21, 123456.789, -2.5e-300, 5e-324, math.MaxFloat64, 1 << 62} {
		want, _ := json.Marshal(f)
		got, _ := json.Marshal(Number(f))
		if string(got) != string(want) {
			t.Errorf("Number(%v) marshals as %s, encoding/json as %s", f, got, want)
		}
	}
}

func TestNumberUnmarshalJSON(t *testing.T) {
	tests := []struct {
		in      string
		want    Number
		wantErr bool
	}{
		{in: "1.5", want: 1.5},
		{in: " -0.25e2 ", want: -25},
		{in: "null", want: nanN},
		{in: "1e400", want: Number(math.Inf(1))},
		{in: "-1e400", want: Number(math.Inf(-1))},
		{in: `"1"`, wantErr: true},
		{in: "NaN", wantErr: true},
		{in: "Infinity", wantErr: true},
		{in: "01", wantErr: true},
		{in: "1.", wantErr: true},
		{in: ".5", wantErr: true},
		{in: "+1", wantErr: true},
		{in: "1e", wantErr: true},
		{in: "0x10", wantErr: true},
		{in: "", wantErr: true},
	}
	for _, tt := range tests {
		var got Number
		err := got.UnmarshalJSON([]byte(tt.in))
		if (err != nil) != tt.wantErr {
			t.Errorf("UnmarshalJSON(%q) error = %v, want error %v", tt.in, err, tt.wantErr)
			continue
		}
		if !tt.wantErr {
			if diff := cmp.Diff(tt.want, got, numberComparer); diff != "" {
				t.Errorf("UnmarshalJSON(%q) (-want +got):\n%s", tt.in, diff)
			}
		}
	}
}

func TestSummaryRoundTrip(t *testing.T) {
	in := DescribeFloat([]float64{0.1, 0.2, 0.3, 1e-9}, nil)
	b, err := json.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	var out Numeric
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(in, out, numberComparer); diff != "" {
		t.Errorf("Numeric through JSON (-before +after):\n%s", diff)
	}
}

func TestPairwiseSum(t *testing.T) {
	tests := []struct {
		name string
		in   []float64
		want float64
	}{
		{"empty", nil, 0},
		{"lone negative zero sums to +0", []float64{math.Copysign(0, -1)}, 0},
		// Eight accumulators combined as ((r0+r1)+(r2+r3))+((r4+r5)+(r6+r7)): 1e16+1 rounds
		// back to 1e16 (half an ulp, to even), then +2 and +4 are exact.
		{"accumulators", []float64{1e16, 1, 1, 1, 1, 1, 1, 1}, 1e16 + 6},
		// r0 = 1e16+1 = 1e16 again, r1..r7 = 2: 1e16 + 2 + 4 + 8. Left to right every 1 would
		// round away and the sum would stay 1e16.
		{"sixteen", append([]float64{1e16}, slices.Repeat([]float64{1}, 15)...), 1e16 + 14},
		// Above 128 values the halves split at a multiple of 8 (64 | 65 of 129): the lone 1e16
		// at the end of the second half is added to its tree last.
		{"split", append(slices.Repeat([]float64{1}, 128), 1e16), 1e16 + 128},
	}
	for _, tt := range tests {
		got := pairwiseSum(tt.in)
		if math.Float64bits(got) != math.Float64bits(tt.want) {
			t.Errorf("%s: pairwiseSum = %v, want %v", tt.name, got, tt.want)
		}
	}
}

func TestSelectNth(t *testing.T) {
	inputs := map[string][]int{
		"sorted":   {1, 2, 3, 4, 5, 6, 7, 8, 9},
		"reversed": {9, 8, 7, 6, 5, 4, 3, 2, 1},
		"equal":    slices.Repeat([]int{4}, 40),
		"two":      {2, 1},
		"organ":    {1, 3, 5, 7, 9, 8, 6, 4, 2, 0},
		"dups":     {3, 1, 3, 1, 3, 1, 2, 2, 3, 1, 0, 3},
	}
	for name, in := range inputs {
		want := slices.Sorted(slices.Values(in))
		for k := range in {
			x := slices.Clone(in)
			selectNth(x, k)
			if x[k] != want[k] {
				t.Errorf("%s: selectNth(k=%d) put %d at k, want %d", name, k, x[k], want[k])
			}
			for i := range x {
				if i < k && x[i] > x[k] || i > k && x[i] < x[k] {
					t.Errorf("%s: selectNth(k=%d) left %d at %d on the wrong side of %d", name, k, x[i], i, x[k])
				}
			}
		}
	}
}

func TestSelectNthLarge(t *testing.T) {
	const n = 1 << 14
	patterns := map[string]func(i int) int{
		"sorted":       func(i int) int { return i },
		"reversed":     func(i int) int { return n - i },
		"organ pipe":   func(i int) int { return min(i, n-i) },
		"few distinct": func(i int) int { return i * 7919 % 5 },
		"sawtooth":     func(i int) int { return i % 64 },
		"pseudorandom": func(i int) int { return i * 2654435761 % 1000003 },
	}
	for name, f := range patterns {
		in := make([]int, n)
		for i := range in {
			in[i] = f(i)
		}
		want := slices.Sorted(slices.Values(in))
		for _, k := range []int{0, 1, n / 4, n/4 + 1, n / 2, 3 * n / 4, n - 2, n - 1} {
			x := slices.Clone(in)
			selectNth(x, k)
			if x[k] != want[k] {
				t.Errorf("%s: selectNth(k=%d) put %d at k, want %d", name, k, x[k], want[k])
			}
			if m := slices.Max(x[:k+1]); k > 0 && m != x[k] {
				t.Errorf("%s: selectNth(k=%d) left %d before %d", name, k, m, x[k])
			}
		}
	}
}

// TestDescribeBools checks the two counters against DescribeCategorical with
// strconv.FormatBool (the map it replaces) on every column of up to six values with and
// without nulls, and a few answers by hand: ties go to the first value in row order.
func TestDescribeBools(t *testing.T) {
	for _, c := range []struct {
		vals  []bool
		nulls Nulls
		want  Categorical
	}{
		{[]bool{true, false, false, true}, nil, Categorical{Count: 4, Unique: 2, Top: "true", Freq: 2}},
		{[]bool{true, false, false, true}, rows(0), Categorical{Count: 3, Unique: 2, Top: "false", Freq: 2}},
		{[]bool{false, true, true}, rows(1, 2), Categorical{Count: 1, Unique: 1, Top: "false", Freq: 1}},
		{[]bool{true}, rows(0), Categorical{}},
		{nil, nil, Categorical{}},
	} {
		if diff := cmp.Diff(c.want, DescribeBools(c.vals, c.nulls)); diff != "" {
			t.Errorf("DescribeBools(%v) (-want +got):\n%s", c.vals, diff)
		}
	}
	for n := range 7 {
		for bits := range 1 << n {
			for nullBits := range 1 << n {
				vals := make([]bool, n)
				for i := range vals {
					vals[i] = bits>>i&1 == 1
				}
				nulls := func(i int) bool { return nullBits>>i&1 == 1 }
				want := DescribeCategorical(vals, nulls, strconv.FormatBool)
				if diff := cmp.Diff(want, DescribeBools(vals, nulls)); diff != "" {
					t.Fatalf("DescribeBools(%v, nulls %b) (-want +got):\n%s", vals, nullBits, diff)
				}
			}
		}
	}
}
