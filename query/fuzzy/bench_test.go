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
