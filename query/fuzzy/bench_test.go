package fuzzy

import (
	"fmt"
	"testing"
)

func benchValues() []string {
	adjectives := []string{"Steel", "Copper", "Plastic", "Raw", "Coated", "Brass", "Oak", "Glass"}
	nouns := []string{"Material", "Bolt", "Screw", "Washer", "Panel", "Pipe", "Valve", "Cable", "Hinge", "Bracket"}
	values := make([]string, 50_000)
	for i := range values {
		values[i] = fmt.Sprintf("%s %s %05d", adjectives[i%len(adjectives)], nouns[(i/8)%len(nouns)], i)
	}
	return values
}

// BenchmarkScoreAll scores a 50,000-value dictionary once; its peer scores each value with
// its own call (and its own run of the subsequence matcher).
func BenchmarkScoreAll(b *testing.B) {
	values := benchValues()
	m := New("materail")
	b.Run("ScoreAll", func(b *testing.B) {
		for b.Loop() {
			m.ScoreAll(values)
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(len(values)), "ns/value")
	})
	b.Run("Score", func(b *testing.B) {
		for b.Loop() {
			for _, v := range values {
				m.Score(v)
			}
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(len(values)), "ns/value")
	})
}

// BenchmarkScoreIndex scores terms at the default precision over the Index of a
// 50,000-value dictionary, built once (what a search of a new term costs on a warm
// store), next to ScoreAllAtLeast, which prepares the values for every term (what it cost
// before the Index), and reports the Index's build.
func BenchmarkScoreIndex(b *testing.B) {
	values := benchValues()
	terms := []string{"materail", "steel bolt 00017", "coper", "brass valve", "xyz"}
	ix := NewIndex(values)
	for _, term := range terms {
		m := New(term)
		b.Run("index/"+term, func(b *testing.B) {
			for b.Loop() {
				m.ScoreIndex(ix, DefaultPrecision, nil)
			}
		})
		b.Run("prepare-each/"+term, func(b *testing.B) {
			for b.Loop() {
				m.ScoreAllAtLeast(values, DefaultPrecision)
			}
		})
	}
	b.Run("build", func(b *testing.B) {
		for b.Loop() {
			NewIndex(values)
		}
	})
}
