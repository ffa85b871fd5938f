package stats

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"math"
	"slices"
	"strings"
	"testing"
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
				q := Number(lerpFloat(valid[lo], valid[hi], t))
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
