package stats

import (
	"encoding/json"
	"maps"
	"math"
	"slices"
	"strconv"
	"time"
)

// Categorical describes a string, date or timestamp column. Top and Freq mean something only
// when Count > 0.
type Categorical struct {
	Count  int64  // non-null values
	Unique int64  // distinct non-null values
	Top    string // the most frequent value, the first in row order among equally frequent ones
	Freq   int64  // how often Top occurs
}

// categoricalJSON is the summary body form of a Categorical: freq is a string, as the API
// specification types it, and top and freq are null for a column without values.
type categoricalJSON struct {
	Count  int64   `json:"count"`
	Unique int64   `json:"unique"`
	Top    *string `json:"top"`
	Freq   *string `json:"freq"`
}

// MarshalJSON encodes c as {"count", "unique", "top", "freq"}, with freq a decimal string,
// and top and freq null when the column has no values.
func (c Categorical) MarshalJSON() ([]byte, error) {
	j := categoricalJSON{Count: c.Count, Unique: c.Unique}
	if c.Count > 0 {
		freq := strconv.FormatInt(c.Freq, 10)
		j.Top, j.Freq = &c.Top, &freq
	}
	return json.Marshal(j)
}

// DescribeCategorical describes a column of comparable keys as pandas describes an object or
// datetime Series: count, unique, and the most frequent key (formatted by format) with its
// frequency. Ties go to the key that occurs first in row order (see the package documentation
// for where pandas 1.5.3 differs).
func DescribeCategorical[K comparable](values []K, nulls Nulls, format func(K) string) Categorical {
	var f frequencies[K]
	f.index = make(map[K]int)
	head := values[:min(len(values), sizingSample)]
	f.add(head, 0, nulls)
	if rest := values[len(head):]; len(rest) > 0 {
		// Many distinct values in the head predict many in the rest: size the map for them
		// once, rather than let it double (and rehash) again and again.
		if distinct := len(f.keys); distinct > len(head)/4 {
			sized := make(map[K]int, min(len(values), distinct*(len(values)/len(head))))
			maps.Copy(sized, f.index)
			f.index = sized
		}
		f.add(rest, len(head), nulls)
	}
	c := Categorical{Count: f.count, Unique: int64(len(f.keys))}
	top := -1
	for k, n := range f.counts {
		if top < 0 || n > f.counts[top] {
			top = k
		}
	}
	if top >= 0 {
		c.Top, c.Freq = format(f.keys[top]), f.counts[top]
	}
	return c
}

// sizingSample is the number of leading values whose distinct count sizes the map of the rest.
const sizingSample = 1 << 16

// frequencies counts the non-null values of a column by key, keys in order of first
// occurrence.
type frequencies[K comparable] struct {
	index  map[K]int // key -> position in keys and counts
	keys   []K
	counts []int64
	count  int64 // non-null values
}

// add counts values, the rows from start on.
func (f *frequencies[K]) add(values []K, start int, nulls Nulls) {
	for i, v := range values {
		if nulls != nil && nulls(start+i) {
			continue
		}
		f.count++
		k, ok := f.index[v]
		if !ok {
			k = len(f.keys)
			f.index[v] = k
			f.keys = append(f.keys, v)
			f.counts = append(f.counts, 0)
		}
		f.counts[k]++
	}
}

// DescribeCodes describes a dictionary-encoded string column, where cell i is
// dict[codes[i]]: the form the memory store keeps strings in. The dictionary must hold
// distinct values and every code of a non-null cell must index it. Counting by code needs no
// hashing, which makes this several times faster than DescribeStrings.
func DescribeCodes[T ~uint8 | ~uint16 | ~uint32](codes []T, dict []string, nulls Nulls) Categorical {
	buf := takeWords(len(dict))
	defer giveWords(buf)
	counts := asInts(buf)
	clear(counts)
	var c Categorical
	for i, code := range codes {
		if nulls != nil && nulls(i) {
			continue
		}
		counts[code]++
		c.Count++
	}
	var top int
	c.Unique, top = topOf(counts, func(freq int64) int {
		for i, code := range codes {
			if counts[code] == freq && (nulls == nil || !nulls(i)) {
				return int(code)
			}
		}
		return -1
	})
	if top >= 0 {
		c.Top, c.Freq = dict[top], counts[top]
	}
	return c
}

// topOf returns how many counts are not zero and the index of the largest, or -1 when all
// are zero. When several are largest, first(freq) finds the one whose value comes first in
// row order, as in DescribeCategorical.
func topOf(counts []int64, first func(freq int64) int) (unique int64, top int) {
	top, tied := -1, 0
	for k, n := range counts {
		switch {
		case n == 0:
			continue
		case top < 0 || n > counts[top]:
			top, tied = k, 1
		case n == counts[top]:
			tied++
		}
		unique++
	}
	if tied > 1 {
		top = first(counts[top])
	}
	return unique, top
}

// DescribeBools describes a boolean column, as DescribeCategorical with strconv.FormatBool
// does, counting in two counters instead of a map.
func DescribeBools(values []bool, nulls Nulls) Categorical {
	var counts [2]int64 // false, true
	for i, v := range values {
		if nulls != nil && nulls(i) {
			continue
		}
		counts[b2i(v)]++
	}
	c := Categorical{Count: counts[0] + counts[1]}
	var top int
	c.Unique, top = topOf(counts[:], func(int64) int {
		for i, v := range values {
			if nulls == nil || !nulls(i) {
				return b2i(v)
			}
		}
		return -1
	})
	if top >= 0 {
		c.Top, c.Freq = strconv.FormatBool(top == 1), counts[top]
	}
	return c
}

func b2i(v bool) int {
	if v {
		return 1
	}
	return 0
}

// DescribeStrings describes a string column.
func DescribeStrings(values []string, nulls Nulls) Categorical {
	return DescribeCategorical(values, nulls, func(s string) string { return s })
}

// DescribeDates describes a date column given as days since 1970-01-01; top is YYYY-MM-DD.
// Dates span few days next to the rows of a large column (a century is 36,525 days): the
// days are counted in an array over their range, as DescribeCodes counts codes, without
// hashing; a column whose range is wide next to its rows is counted by DescribeCategorical.
func DescribeDates(days []int64, nulls Nulls) Categorical {
	lo, hi, any := int64(0), int64(0), false
	for i, d := range days {
		if nulls != nil && nulls(i) {
			continue
		}
		if !any {
			lo, hi, any = d, d, true
		}
		lo, hi = min(lo, d), max(hi, d)
	}
	if !any {
		return Categorical{}
	}
	if span := hi - lo; span < 0 || span >= int64(len(days))+denseSlack {
		return DescribeCategorical(days, nulls, FormatDate)
	}
	counts := make([]int64, hi-lo+1)
	var c Categorical
	for i, d := range days {
		if nulls != nil && nulls(i) {
			continue
		}
		counts[d-lo]++
		c.Count++
	}
	var top int
	c.Unique, top = topOf(counts, func(freq int64) int {
		for i, d := range days {
			if (nulls == nil || !nulls(i)) && counts[d-lo] == freq {
				return int(d - lo)
			}
		}
		return -1
	})
	c.Top, c.Freq = FormatDate(lo+int64(top)), counts[top]
	return c
}

// denseSlack is how much wider than its rows a date column's range may be and still be
// counted in an array (a small column of far-apart dates allocates at most this many
// counters more than it has rows).
const denseSlack = 1 << 16

// DescribeInstants describes a datetime or timestamp column given as microseconds since the
// Unix epoch; top is RFC 3339 in UTC.
//
// Instants are mostly distinct in a large column, which makes a hash map of them slow: the
// non-null instants are sorted instead (a radix sort of their offsets from the least) and
// counted in runs.
func DescribeInstants(micros []int64, nulls Nulls) Categorical {
	keysBuf, sortBuf := takeWords(len(micros)), takeWords(len(micros))
	defer giveWords(keysBuf)
	defer giveWords(sortBuf)
	keys := keysBuf[:0]
	lo := int64(math.MaxInt64)
	for i, v := range micros {
		if nulls != nil && nulls(i) {
			continue
		}
		keys = append(keys, uint64(v))
		lo = min(lo, v)
	}
	if len(keys) == 0 {
		return Categorical{}
	}
	var span uint64
	for i, k := range keys {
		keys[i] = k - uint64(lo) // v - lo, exact in uint64 even where it overflows int64
		span = max(span, keys[i])
	}
	sorted := radixSort(keys, span, sortBuf[:len(keys)])
	c := Categorical{Count: int64(len(sorted))}
	var top uint64
	tied := 0
	for i := 0; i < len(sorted); {
		j := i + 1
		for j < len(sorted) && sorted[j] == sorted[i] {
			j++
		}
		switch n := int64(j - i); {
		case n > c.Freq:
			c.Freq, top, tied = n, sorted[i], 1
		case n == c.Freq:
			tied++
		}
		c.Unique++
		i = j
	}
	if tied > 1 { // the first in row order of the instants that occur Freq times
		for i, v := range micros {
			if nulls != nil && nulls(i) {
				continue
			}
			k := uint64(v) - uint64(lo)
			at, _ := slices.BinarySearch(sorted, k)
			if end := at + int(c.Freq) - 1; end < len(sorted) && sorted[end] == k {
				top = k
				break
			}
		}
	}
	c.Top = FormatInstant(int64(top + uint64(lo)))
	return c
}

// radixSort sorts keys, all at most span, a byte at a time from the least significant
// (skipping the bytes in which all keys agree), through buf (as long as keys); it
// reorders keys and returns keys or buf, whichever holds the result.
func radixSort(keys []uint64, span uint64, buf []uint64) []uint64 {
	for shift := uint(0); shift < 64 && span>>shift != 0; shift += 8 {
		var offsets [256]int
		for _, k := range keys {
			offsets[byte(k>>shift)]++
		}
		if offsets[byte(keys[0]>>shift)] == len(keys) {
			continue
		}
		sum := 0
		for d, n := range offsets {
			offsets[d], sum = sum, sum+n
		}
		for _, k := range keys {
			d := byte(k >> shift)
			buf[offsets[d]] = k
			offsets[d]++
		}
		keys, buf = buf, keys
	}
	return keys
}

// FormatDate formats a day given as days since 1970-01-01 as YYYY-MM-DD, as the data
// endpoints show dates.
func FormatDate(days int64) string {
	return time.Unix(days*24*60*60, 0).UTC().Format(time.DateOnly)
}

// FormatInstant formats an instant given as microseconds since the Unix epoch in RFC 3339
// in UTC, with fractional seconds only when there are any, as the data endpoints show
// instants.
func FormatInstant(micros int64) string {
	return time.UnixMicro(micros).UTC().Format(time.RFC3339Nano)
}
