package stats

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"math"
	"math/big"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// FuzzNumberUnmarshalJSON checks the JSON number parser: it never panics, accepts exactly
// what encoding/json accepts as a number or null, and what it accepts marshals back to a
// number that decodes to the same value.
func FuzzNumberUnmarshalJSON(f *testing.F) {
	for _, s := range []string{"0", "-0", "1.5", "-12.5e-3", "1E+2", "null", "1e400", "01", "1.",
		".5", "+1", "NaN", "--1", "1e", "0x1p3", `"1"`, " 7 ", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		var n Number
		err := n.UnmarshalJSON([]byte(s))
		var std *float64
		stdErr := json.Unmarshal([]byte(s), &std)
		var rangeErr *json.UnmarshalTypeError
		// encoding/json rejects a well-formed number beyond the float64 range, which
		// UnmarshalJSON takes as ±Inf.
		outOfRange := errors.As(stdErr, &rangeErr) && strings.HasPrefix(rangeErr.Value, "number")
		if stdAccepts := stdErr == nil || outOfRange; (err == nil) != stdAccepts {
			t.Fatalf("UnmarshalJSON(%q) error %v, encoding/json error %v", s, err, stdErr)
		}
		if err != nil {
			return
		}
		b, err := n.MarshalJSON()
		if err != nil {
			t.Fatal(err)
		}
		var back Number
		if err := back.UnmarshalJSON(b); err != nil {
			t.Fatalf("UnmarshalJSON(MarshalJSON(%q) = %s): %v", s, b, err)
		}
		if n.Valid() && back != n {
			t.Fatalf("%q decoded to %v, marshalled to %s, decoded to %v", s, n, b, back)
		}
	})
}

// FuzzDescribeFloat checks selection-based percentiles and the other order statistics
// against a full sort, on columns decoded from the fuzz input: 8 bytes per value, the low bit
// of a ninth byte per value marking a null.
func FuzzDescribeFloat(f *testing.F) {
	f.Add([]byte{})
	f.Add(floatBytes(1, 2, 3, 4, 5))
	f.Add(floatBytes(3, 3, 3, 1, 1, math.Inf(1), math.NaN(), math.Copysign(0, -1), 0, 7))
	f.Add(floatBytes(1e308, -1e308, 5e-324, 1, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 9))
	f.Fuzz(func(t *testing.T, data []byte) {
		var values []float64
		var nullRows []bool
		for len(data) >= 9 {
			values = append(values, math.Float64frombits(binary.LittleEndian.Uint64(data)))
			nullRows = append(nullRows, data[8]&1 == 1)
			data = data[9:]
		}
		got := DescribeFloat(values, func(i int) bool { return nullRows[i] })

		var valid []float64
		for i, v := range values {
			if !nullRows[i] && !math.IsNaN(v) {
				valid = append(valid, v)
			}
		}
		slices.Sort(valid)
		want := Numeric{Count: int64(len(valid)), Min: nanN, Max: nanN, P25: nanN, P50: nanN, P75: nanN}
		if n := len(valid); n > 0 {
			want.Min, want.Max = Number(valid[0]), Number(valid[n-1])
			for i, p := range quartiles {
				h := float64(n-1) * p
				lo, hi, t := int(math.Floor(h)), int(math.Floor(h))+1, h-math.Floor(h)
				if h >= float64(n-1) {
					lo, hi, t = n-1, n-1, h+1
				}
				q := Number(LerpFloat(valid[lo], valid[hi], t))
				*[]*Number{&want.P25, &want.P50, &want.P75}[i] = q
			}
		}
		// Selection may leave -0 where a sort leaves +0 among equal zeros, as numpy's
		// partition may; the order statistics are equal as numbers.
		same := func(a, b Number) bool { return a == b || a != a && b != b }
		for _, c := range []struct {
			name      string
			got, want Number
		}{{"min", got.Min, want.Min}, {"max", got.Max, want.Max}, {"25%", got.P25, want.P25},
			{"50%", got.P50, want.P50}, {"75%", got.P75, want.P75}} {
			if !same(c.got, c.want) {
				t.Errorf("%s = %v, want %v (sorted valid values %v)", c.name, c.got, c.want, valid)
			}
		}
		if got.Count != want.Count {
			t.Errorf("count = %d, want %d", got.Count, want.Count)
		}
	})
}

func floatBytes(values ...float64) []byte {
	var b []byte
	for i, v := range values {
		b = binary.LittleEndian.AppendUint64(b, math.Float64bits(v))
		b = append(b, byte(i%5/4)) // every fifth value null
	}
	return b
}

// FuzzDescribeInt checks the integer path the same way: 8 bytes per value and a ninth whose
// low bit marks a null. With a null the column is described as floats.
func FuzzDescribeInt(f *testing.F) {
	f.Add([]byte{})
	f.Add(floatBytes(1, 2, 3, 4, 5)) // any 8 bytes are an int64 too
	f.Add(intBytes(math.MinInt64, math.MaxInt64, 0, 0, -1, 1<<60, 1<<60+255))
	f.Fuzz(func(t *testing.T, data []byte) {
		var values []int64
		var nullRows []bool
		anyNull := false
		for len(data) >= 9 {
			values = append(values, int64(binary.LittleEndian.Uint64(data)))
			nullRows = append(nullRows, data[8]&1 == 1)
			anyNull = anyNull || data[8]&1 == 1
			data = data[9:]
		}
		got := DescribeInt(values, func(i int) bool { return nullRows[i] })
		if anyNull {
			floats := make([]float64, len(values))
			for i, v := range values {
				floats[i] = float64(v)
			}
			want := DescribeFloat(floats, func(i int) bool { return nullRows[i] })
			if !cmp.Equal(got, want, numberComparer) {
				t.Fatalf("DescribeInt with nulls = %+v, DescribeFloat of the same = %+v", got, want)
			}
			return
		}
		sorted := slices.Sorted(slices.Values(values))
		want := [5]Number{nanN, nanN, nanN, nanN, nanN}
		if n := len(sorted); n > 0 {
			want[0], want[4] = Number(sorted[0]), Number(sorted[n-1])
			for i, p := range quartiles {
				h := float64(n-1) * p
				lo, hi, t := int(math.Floor(h)), int(math.Floor(h))+1, h-math.Floor(h)
				if h >= float64(n-1) {
					lo, hi, t = n-1, n-1, h+1
				}
				want[i+1] = Number(LerpInt(sorted[lo], sorted[hi], t))
			}
		}
		if g := [5]Number{got.Min, got.P25, got.P50, got.P75, got.Max}; !cmp.Equal(g, want, numberComparer) {
			t.Errorf("min, quartiles, max = %v, want %v (sorted %v)", g, want, sorted)
		}
		if got.Count != int64(len(values)) {
			t.Errorf("count = %d, want %d", got.Count, len(values))
		}
	})
}

func intBytes(values ...int64) []byte {
	var b []byte
	for _, v := range values {
		b = binary.LittleEndian.AppendUint64(b, uint64(v))
		b = append(b, 0)
	}
	return b
}

// FuzzMidpoint holds Midpoint to the exact mean of two finite doubles (math/big) rounded
// once, and to numpy's (a+b)/2 wherever that does not overflow.
func FuzzMidpoint(f *testing.F) {
	for _, p := range [][2]float64{{1, 2}, {1.5e308, 1.7e308}, {-1.5e308, 1.5e308}, {-math.MaxFloat64, -math.MaxFloat64},
		{5e-324, 1e-323}, {0.1, 0.2}, {math.Copysign(0, -1), 0}, {1 << 62, 3}, {0.75, 1e300}, {2.2250738585072014e-308, 4.9e-324}} {
		f.Add(p[0], p[1])
	}
	f.Fuzz(func(t *testing.T, a, b float64) {
		if math.IsNaN(a) || math.IsNaN(b) || math.IsInf(a, 0) || math.IsInf(b, 0) {
			return
		}
		sum := new(big.Rat).Add(new(big.Rat).SetFloat64(a), new(big.Rat).SetFloat64(b))
		want, _ := sum.Quo(sum, big.NewRat(2, 1)).Float64()
		got := Midpoint(a, b)
		if got != want {
			t.Fatalf("Midpoint(%v, %v) = %v, the exact mean rounded is %v", a, b, got, want)
		}
		if numpy := (a + b) / 2; !math.IsInf(numpy, 0) && numpy != got {
			t.Fatalf("Midpoint(%v, %v) = %v, numpy's (a+b)/2 %v", a, b, got, numpy)
		}
	})
}
