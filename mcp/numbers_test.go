package mcp

import (
	"encoding/json"
	"math/big"
	"regexp"
	"testing"
	"time"
)

// jsonNumber is the grammar of a JSON number (RFC 8259 section 6).
var jsonNumber = regexp.MustCompile(`^-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][-+]?[0-9]+)?$`)

// exponent holds the significant digits of a number's exponent; plainNumber matches an
// integer written without fraction or exponent.
var exponent, plainNumber = regexp.MustCompile(`[eE][-+]?0*([0-9]*)$`), regexp.MustCompile(`^-?[0-9]+$`)

// checkPlainInteger holds plainInteger(s) to math/big's exact reading of the number s:
// it rewrites s exactly when s has a fraction or an exponent and its value is an integer
// of at most maxIntegerDigits digits, and then writes that integer.
func checkPlainInteger(t *testing.T, s string) {
	t.Helper()
	n, ok := plainInteger(s)
	if !jsonNumber.MatchString(s) {
		if ok {
			t.Errorf("plainInteger(%q) = %q for no JSON number", s, n)
		}
		return
	}
	if exp := exponent.FindStringSubmatch(s); exp != nil && len(exp[1]) > 4 {
		return // beyond what big.Rat reads quickly; the table covers these
	}
	r, rok := new(big.Rat).SetString(s)
	if !rok {
		t.Fatalf("big.Rat does not read %q", s)
	}
	plain := plainNumber.MatchString(s)
	want := !plain && r.IsInt() && len(new(big.Int).Abs(r.Num()).String()) <= maxIntegerDigits
	if ok != want {
		t.Fatalf("plainInteger(%q) reports %v, want %v (value %s)", s, ok, want, r.RatString())
	}
	if ok && n != r.Num().String() {
		t.Errorf("plainInteger(%q) = %q, want %s", s, n, r.Num())
	}
}

func TestPlainInteger(t *testing.T) {
	for _, s := range []string{
		"2.0", "2", "-2.0", "-0.0", "0.0", "0e0", "0.000e-99999999", "0e99999999",
		"2.5", "250e-2", "20e-1", "1E1", "1e+1", "1.5e1", "0.001e3", "0.0015e3", "120.0", "-120.00e0",
		"1e17", "1e18", "123456789012345678.0", "1234567890123456789.0", "1e400", "1e-400", "5e9999999", "5e-9999999",
		"2.0000000000000001", "9007199254740993.0", "1.", ".5", "1e", "--1", "1.2.3", "1e1e1", "+1.0", "00.0", "01e1", "1e+-1",
	} {
		checkPlainInteger(t, s)
	}
	for s, want := range map[string]string{"0e99999999": "0", "2.0": "2", "-0.0": "0", "1.5e1": "15", "-120.00e0": "-120"} {
		if n, ok := plainInteger(s); !ok || n != want {
			t.Errorf("plainInteger(%q) = %q, %v, want %s", s, n, ok, want)
		}
	}
	for _, s := range []string{"5e9999999", "5e-9999999", "1e400"} {
		if n, ok := plainInteger(s); ok {
			t.Errorf("plainInteger(%q) = %q", s, n)
		}
	}
}

func FuzzPlainInteger(f *testing.F) {
	for _, s := range []string{"2.0", "250e-2", "1E1", "-0.0", "0.001e3", "1e18"} {
		f.Add(s)
	}
	f.Fuzz(checkPlainInteger)
}

// TestIntegerArguments: only numbers are rewritten, never text in strings, and JSON
// that reads the same as before (every value equal) comes out.
func TestIntegerArguments(t *testing.T) {
	for in, want := range map[string]string{
		`{"pageSize":2.0,"page":1e0}`:                    `{"pageSize":2,"page":1}`,
		`{"pageSize": 2.5 , "filterExpr":["A eq 2.0"]}`:  `{"pageSize": 2.5 , "filterExpr":["A eq 2.0"]}`,
		`{"f":"a\"2.0","g":[3.00,-4e1,true,null,false]}`: `{"f":"a\"2.0","g":[3,-40,true,null,false]}`,
		`{"km":"x"}`: `{"km":"x"}`,
	} {
		got := string(integerArguments([]byte(in)))
		if got != want {
			t.Errorf("integerArguments(%s) = %s, want %s", in, got, want)
		}
		var a, b any
		if json.Unmarshal([]byte(in), &a) != nil || json.Unmarshal([]byte(got), &b) != nil || string(mustMarshal(a)) != string(mustMarshal(b)) {
			t.Errorf("integerArguments(%s) = %s reads otherwise", in, got)
		}
	}
}

func mustMarshal(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}

// BenchmarkIntegerArguments times integerArguments on the arguments of a query call
// (BenchmarkQueryToolVsKMAPI's, and the same with pageSize 50.0) next to the decoding of
// the same arguments into QueryArgs by encoding/json that follows it on the planning path,
// alternately in one loop, each timed over 100 calls: the ratio scan/decode is the share
// the rewrite adds to the decoding.
func BenchmarkIntegerArguments(b *testing.B) {
	for _, pageSize := range []string{"50", "50.0"} {
		args := []byte(`{"km":"o2c","record":"ORDERS","fields":["ORDER_ID","NET_VALUE","STATUS"],"filterExpr":["NET_VALUE gt 1000"],"sort":["-NET_VALUE"],"pageSize":` + pageSize + `}`)
		b.Run("pageSize="+pageSize, func(b *testing.B) {
			var scan, decode time.Duration
			var out []byte
			for b.Loop() {
				t0 := time.Now()
				for range 100 {
					out = integerArguments(args)
				}
				t1 := time.Now()
				for range 100 {
					var q QueryArgs
					if err := json.Unmarshal(out, &q); err != nil {
						b.Fatal(err)
					}
				}
				decode += time.Since(t1)
				scan += t1.Sub(t0)
			}
			n := float64(b.N) * 100
			b.ReportMetric(float64(scan.Nanoseconds())/n, "scan-ns")
			b.ReportMetric(float64(decode.Nanoseconds())/n, "decode-ns")
			b.ReportMetric(float64(scan)/float64(decode), "scan/decode")
		})
	}
}
