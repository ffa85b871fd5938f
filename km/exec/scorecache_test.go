package exec

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"

	"github.com/kmkit/kmkit/km"
	"github.com/kmkit/kmkit/query"
	"github.com/kmkit/kmkit/query/column"
	"github.com/kmkit/kmkit/query/fuzzy"
)

func stringsColumn(t *testing.T, vals ...string) *column.Strings {
	t.Helper()
	b := column.NewBuilder(query.TypeString)
	for _, v := range vals {
		b.AppendString(v)
	}
	return b.Build().(*column.Strings)
}

// TestScoreCache: a cached entry is the scoring of its own column and term (never
// another's), serves again until evicted, and the cache keeps within its bytes, dropping
// the least recently used entry first.
func TestScoreCache(t *testing.T) {
	a := stringsColumn(t, "Material", "Steel", "Materials", "Mat")
	b := stringsColumn(t, "Schmidt Logistik", "Material", "Iron")
	c := newScoreCache(2 * 4) // room for two entries of a's 4 values
	want := func(col *column.Strings, term string) []uint8 { return fuzzy.New(term).ScoreAll(col.Dict) }
	get := func(col *column.Strings, term string) []uint8 {
		t.Helper()
		got := c.scores(col, term, fuzzy.New(term), 0, nil)
		if !slices.Equal(got, want(col, term)) {
			t.Fatalf("scores of %v against %q: %v, want %v", col.Dict, term, got, want(col, term))
		}
		return got
	}
	first := get(a, "materail")
	get(b, "materail") // another column, the same term
	if again := get(a, "materail"); &again[0] != &first[0] {
		t.Fatal("a repeated (column, term) was scored again, not found in the cache")
	}
	get(a, "steel") // a third entry: b's, the least recently used, goes
	if _, ok := c.byKey[scoreKey{b, "materail"}]; ok {
		t.Error("the least recently used entry was kept past the bound")
	}
	if _, ok := c.byKey[scoreKey{a, "materail"}]; !ok {
		t.Error("the most recently used entry was dropped")
	}
	if c.bytes > c.maxBytes || c.bytes != 8 || c.lru.Len() != 2 {
		t.Errorf("cache holds %d bytes in %d entries, bound %d", c.bytes, c.lru.Len(), c.maxBytes)
	}
	// An entry scored for precision 80 serves 90, not 60, which takes its place.
	f := newScoreCache(100)
	hi := f.scores(a, "matrial", fuzzy.New("matrial"), 80, nil)
	if again := f.scores(a, "matrial", fuzzy.New("matrial"), 90, nil); &again[0] != &hi[0] {
		t.Error("an entry of precision 80 was not used for 90")
	}
	lo := f.scores(a, "matrial", fuzzy.New("matrial"), 60, nil)
	if &lo[0] == &hi[0] || f.byKey[scoreKey{a, "matrial"}].Value.(*scoreEntry).floor != 60 || f.lru.Len() != 1 {
		t.Error("precision 60 did not score again into the entry")
	}
	// A dictionary larger than the whole cache is scored and not kept.
	big := newScoreCache(2)
	big.scores(a, "mat", fuzzy.New("mat"), 0, nil)
	if big.lru.Len() != 0 || big.bytes != 0 {
		t.Errorf("an entry larger than the cache was kept: %d bytes", big.bytes)
	}
}

// TestSearchRepeated runs searches with random terms and precisions, many repeating, on
// one score cache (warm, and evicting) and checks each against the row-by-row score.
func TestSearchRepeated(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	words := []string{"Material", "Steel", "Schmidt", "Logistik", "München", "Iron", "Mat"}
	var vals []string
	for range 400 {
		vals = append(vals, fmt.Sprintf("%s %s %d", words[r.IntN(len(words))], words[r.IntN(len(words))], r.IntN(30)))
	}
	col := stringsColumn(t, vals...)
	tab, err := column.NewTable([]string{"NAME"}, []column.Column{col})
	if err != nil {
		t.Fatal(err)
	}
	f := FromTable(tab)
	cache := newScoreCache(3 * len(col.Dict)) // evictions happen among the 6 terms
	terms := []string{"materail", "stel", "munchen", "logistk", "xyz", "iron 2"}
	// Four searchers share the cache, as a store's concurrent requests do (run with -race).
	var wg sync.WaitGroup
	for w := range 4 {
		r := rand.New(rand.NewPCG(7, uint64(w)))
		wg.Go(func() {
			for i := range 100 {
				s := &km.Search{Term: terms[r.IntN(len(terms))], Precision: 40 + r.IntN(61)}
				got, score := search(f.rows, rowRange(0, f.rows), []ref{{col: col}}, s, cache, nil, nil)
				m := fuzzy.New(s.Term)
				var want []int32
				for row, v := range vals {
					sc := m.Score(v)
					if sc >= s.Precision {
						want = append(want, int32(row))
						if int(score[row]) != sc {
							t.Errorf("search %d (%q, %d): row %d scored %d, want %d", i, s.Term, s.Precision, row, score[row], sc)
							return
						}
					}
				}
				if !slices.Equal(got, want) {
					t.Errorf("search %d (%q, %d): rows %v, want %v", i, s.Term, s.Precision, got, want)
					return
				}
			}
		})
	}
	wg.Wait()
}
