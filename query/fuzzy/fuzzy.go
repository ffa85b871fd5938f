// Package fuzzy scores how well a search term matches a string value, from 0 (no match) to
// 100 (the term occurs in the value), for the fuzzy search of the data endpoints.
//
// A Matcher compares the case-folded term with the case-folded value (Unicode full case
// folding, NFC) and takes the first tier that applies:
//
//   - 100 ([ExactScore]): the term occurs in the value ("mat" in "Material").
//   - 95 ([AccentScore]): the term occurs in the value once accents and other combining
//     marks are removed from both ("Munchen" in "München", and "Munchén" too).
//   - otherwise the better of two scores below 95, computed on the accent-free forms:
//     typos: with d the smallest optimal-string-alignment distance (insertions, deletions,
//     substitutions and transpositions of adjacent runes) between the term and any substring
//     of the value, and n the term's length in runes, round(100*(n-d)/n), at most 90
//     ("materail" against "Material": n=8, d=1, 88);
//     subsequence: when every rune of the term occurs in the value in order (found by
//     github.com/sahilm/fuzzy, which prefers matches at word starts), 50 + 40*n/span, where
//     span is the number of runes from the first matched rune to the last ("mtrl" against
//     "Material": 70).
//
// Lengths are counted in runes, never bytes. An empty term matches every value with 100.
// Terms longer than [MaxFuzzyRunes] runes get only the two substring tiers: the
// subsequence matcher's adjacency bonus triples with each adjacent match and overflows int
// after about 40 of them, and the distance costs n times the value's length.
//
// [DefaultPrecision] (70) admits one typo in a term of 4 or more runes, two in 7 or more,
// and compact subsequences; "materail" finds "Material" and "xyz" does not.
package fuzzy

import (
	"strings"
	"unicode"
	"unicode/utf8"

	sfuzzy "github.com/sahilm/fuzzy"
	"golang.org/x/text/cases"
	"golang.org/x/text/runes"
	"golang.org/x/text/transform"
	"golang.org/x/text/unicode/norm"
)

// The score tiers and the default precision.
const (
	// ExactScore is the score of a value that contains the term (ignoring case).
	ExactScore = 100
	// AccentScore is the score of a value that contains the term once accents are removed.
	AccentScore = 95
	// MaxTypoScore bounds the score of a match with typos.
	MaxTypoScore = 90
	// DefaultPrecision is the precision a search uses when the request names none.
	DefaultPrecision = 70
	// MaxFuzzyRunes is the longest term that gets typo and subsequence scores.
	MaxFuzzyRunes = 32
)

// Matcher scores values against one term. It is immutable and safe for concurrent use.
type Matcher struct {
	folded  string // case-folded term
	plain   string // case-folded term without combining marks
	pattern []rune // plain as runes
}

// New returns a Matcher for term.
func New(term string) *Matcher {
	f := fold(term)
	p := stripMarks(f)
	return &Matcher{folded: f, plain: p, pattern: []rune(p)}
}

// Score returns the score of value (0..100).
func (m *Matcher) Score(value string) int {
	return int(m.ScoreAll([]string{value})[0])
}

// ScoreAll returns the score of each value; it runs the subsequence matcher once over all
// of them. The executor calls it with the dictionary of a string column.
func (m *Matcher) ScoreAll(values []string) []uint8 {
	scores := make([]uint8, len(values))
	if m.folded == "" {
		for i := range scores {
			scores[i] = ExactScore
		}
		return scores
	}
	fuzzyTerm := len(m.pattern) <= MaxFuzzyRunes
	var plains []string // accent-free forms of the values still below AccentScore
	var index []int     // their positions in values
	var d distance
	for i, v := range values {
		f := fold(v)
		if strings.Contains(f, m.folded) {
			scores[i] = ExactScore
			continue
		}
		p := stripMarks(f)
		if strings.Contains(p, m.plain) {
			scores[i] = AccentScore
			continue
		}
		if !fuzzyTerm {
			continue
		}
		scores[i] = typoScore(len(m.pattern), d.semiGlobal(m.pattern, p))
		plains = append(plains, p)
		index = append(index, i)
	}
	if len(plains) == 0 {
		return scores
	}
	for _, match := range sfuzzy.FindNoSort(m.plain, plains) {
		if len(match.MatchedIndexes) != len(m.pattern) {
			continue
		}
		s := plains[match.Index]
		first, last := match.MatchedIndexes[0], match.MatchedIndexes[len(match.MatchedIndexes)-1]
		span := utf8.RuneCountInString(s[first:last]) + 1
		score := uint8(50 + 40*len(m.pattern)/span)
		if i := index[match.Index]; score > scores[i] {
			scores[i] = score
		}
	}
	return scores
}

func typoScore(n, d int) uint8 {
	if d >= n {
		return 0
	}
	s := (100*(n-d) + n/2) / n
	return uint8(min(s, MaxTypoScore))
}

// fold returns s with Unicode full case folding, in NFC.
func fold(s string) string {
	ascii := true
	upper := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= utf8.RuneSelf {
			ascii = false
			break
		}
		upper = upper || ('A' <= c && c <= 'Z')
	}
	if ascii {
		if !upper {
			return s
		}
		b := []byte(s)
		for i, c := range b {
			if 'A' <= c && c <= 'Z' {
				b[i] = c + 'a' - 'A'
			}
		}
		return string(b)
	}
	f, _, err := transform.String(transform.Chain(norm.NFC, cases.Fold(), norm.NFC), s)
	if err != nil {
		return strings.ToLower(s)
	}
	return f
}

// stripMarks removes combining marks (accents) from s.
func stripMarks(s string) string {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			out, _, err := transform.String(transform.Chain(norm.NFD, runes.Remove(runes.In(unicode.Mn)), norm.NFC), s)
			if err != nil {
				return s
			}
			return out
		}
	}
	return s
}

// distance holds the rows of the dynamic programme, reused between values.
type distance struct {
	rows [3][]int
	text []rune
}

// semiGlobal returns the smallest optimal-string-alignment distance between pattern and
// any substring of s.
func (d *distance) semiGlobal(pattern []rune, s string) int {
	d.text = d.text[:0]
	for _, r := range s {
		d.text = append(d.text, r)
	}
	t := d.text
	m := len(t)
	for k := range d.rows {
		if cap(d.rows[k]) < m+1 {
			d.rows[k] = make([]int, m+1)
		}
		d.rows[k] = d.rows[k][:m+1]
	}
	prev2, prev, cur := d.rows[0], d.rows[1], d.rows[2]
	for j := range prev {
		prev[j] = 0 // a match may start anywhere in s
	}
	for i := 1; i <= len(pattern); i++ {
		pc := pattern[i-1]
		cur[0] = i
		for j := 1; j <= m; j++ {
			cost := 1
			if t[j-1] == pc {
				cost = 0
			}
			v := min(prev[j-1]+cost, prev[j]+1, cur[j-1]+1)
			if i > 1 && j > 1 && pc == t[j-2] && pattern[i-2] == t[j-1] {
				v = min(v, prev2[j-2]+1)
			}
			cur[j] = v
		}
		prev2, prev, cur = prev, cur, prev2
	}
	best := len(pattern)
	for _, v := range prev { // a match may end anywhere in s
		best = min(best, v)
	}
	return best
}
