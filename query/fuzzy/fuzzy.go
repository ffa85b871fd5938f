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
//     subsequence: when every rune of the term occurs in the value in order, 50 + 40*n/span
//     rounded down, where span is the number of runes from the first to the last rune of
//     the match github.com/sahilm/fuzzy returns ("mtrl" against "Material": 70). That
//     match is not always the shortest: sahilm takes each term rune at its best-scoring
//     place before the next term rune's first occurrence, and prefers word starts and
//     adjacent runes ("mi" against "materials inc" takes the i of "inc": span 11, 57, not
//     63); it reads a value only up to its first NUL.
//
// Lengths are counted in runes, never bytes. An empty term matches every value with 100.
// Terms longer than [MaxFuzzyRunes] runes get only the two substring tiers: the
// subsequence matcher's adjacency bonus triples with each adjacent match and overflows int
// after about 40 of them, and the distance is computed bit-parallel (Myers' algorithm with
// Hyyrö's transposition step) in one 64-bit word per text rune, which holds 64 term runes.
//
// [DefaultPrecision] (70) admits one typo in a term of 4 or more runes, two in 7 or more,
// and compact subsequences; "materail" finds "Material" and "xyz" does not.
package fuzzy

import (
	"slices"
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
func (m *Matcher) ScoreAll(values []string) []uint8 { return m.ScoreAllAtLeast(values, 0) }

// ScoreAllAtLeast is ScoreAll for a search that keeps the values scoring at least least:
// every score of least or more is the value's score; a value below it may get 0 instead
// of its score. It skips the typo and subsequence scores of values that cannot reach it,
// known from the runes they share with the term:
//
// Let c be the number of the term's runes that the value holds, counted as multisets, two
// runes the same when Unicode simple case folding makes them equal (the subsequence
// matcher's equality). The typo score needs d <= dmax, the largest distance whose score
// reaches least. In an optimal alignment of the term with a substring of the value, each
// rune of the term either is a rune of the substring (kept, or one of a transposed pair)
// or comes from an insertion or a substitution, one operation each; the kept and
// transposed runes are a sub-multiset of the value's runes, so d >= n - c, and a value
// with n - c > dmax cannot reach least by typos. A subsequence match pairs every rune of the
// term with a distinct rune of the value that folds equal to it, so it needs c = n. Both
// scores are at most MaxTypoScore, so for least above it only the substring tiers count.
// TestScoreAllAtLeast holds this to the full scores on random values.
func (m *Matcher) ScoreAllAtLeast(values []string, least int) []uint8 {
	scores := make([]uint8, len(values))
	if m.folded == "" {
		for i := range scores {
			scores[i] = ExactScore
		}
		return scores
	}
	fuzzyTerm := len(m.pattern) > 0 && len(m.pattern) <= MaxFuzzyRunes && least <= MaxTypoScore
	var plains []string // accent-free forms of the values still below AccentScore
	var index []int     // their positions in values
	var bp *bitPattern
	var shared *runeCounter
	n, dmax := len(m.pattern), len(m.pattern)
	if fuzzyTerm {
		bp = newBitPattern(m.pattern)
		if least > 0 {
			shared = newRuneCounter(m.pattern)
			for dmax >= 0 && int(typoScore(n, dmax)) < least {
				dmax--
			}
		}
	}
	var fo folder
	for i, f := range foldAll(values, &fo) {
		if strings.Contains(f, m.folded) {
			scores[i] = ExactScore
			continue
		}
		p := fo.stripMarks(f)
		if strings.Contains(p, m.plain) {
			scores[i] = AccentScore
			continue
		}
		if !fuzzyTerm {
			continue
		}
		if shared != nil {
			c := shared.common(p)
			if n-c <= dmax {
				scores[i] = typoScore(n, bp.distance(p))
			}
			if c < n {
				continue // no subsequence match
			}
		} else {
			scores[i] = typoScore(n, bp.distance(p))
		}
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

// foldAll returns fold of each value, folding the non-ASCII ones with fo. ASCII values
// are lowered into one shared buffer, so a dictionary costs two allocations, not one per
// value.
func foldAll(values []string, fo *folder) []string {
	size := 0
	for _, v := range values {
		size += len(v)
	}
	arena := make([]byte, 0, size)
	ends := make([]int, len(values))
	out := make([]string, len(values))
	for i, v := range values {
		ascii := true
		for j := 0; j < len(v); j++ {
			if v[j] >= utf8.RuneSelf {
				ascii = false
				break
			}
		}
		if !ascii {
			out[i] = fo.fold(v)
			ends[i] = -1
			continue
		}
		for j := 0; j < len(v); j++ {
			c := v[j]
			if 'A' <= c && c <= 'Z' {
				c += 'a' - 'A'
			}
			arena = append(arena, c)
		}
		ends[i] = len(arena)
	}
	all := string(arena)
	start := 0
	for i, end := range ends {
		if end >= 0 {
			out[i] = all[start:end]
			start = end
		}
	}
	return out
}

// folder folds and strips values with transformers it makes on first need and reuses
// (transform.String resets them), so that a dictionary's non-ASCII values do not each
// allocate a chain and its buffers (about 8 KiB a call: a fresh server's first search
// took its pages one fault at a time). A folder is not safe for concurrent use.
type folder struct {
	folding, stripping transform.Transformer
}

// fold returns s with Unicode full case folding, in NFC.
func fold(s string) string { return new(folder).fold(s) }

// stripMarks removes combining marks (accents) from s.
func stripMarks(s string) string { return new(folder).stripMarks(s) }

// fold returns s with Unicode full case folding, in NFC.
func (fo *folder) fold(s string) string {
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
	if fo.folding == nil {
		fo.folding = transform.Chain(norm.NFC, cases.Fold(), norm.NFC)
	}
	f, _, err := transform.String(fo.folding, s)
	if err != nil {
		return strings.ToLower(s)
	}
	return f
}

// stripMarks removes combining marks (accents) from s.
func (fo *folder) stripMarks(s string) string {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			if fo.stripping == nil {
				fo.stripping = transform.Chain(norm.NFD, runes.Remove(runes.In(unicode.Mn)), norm.NFC)
			}
			out, _, err := transform.String(fo.stripping, s)
			if err != nil {
				return s
			}
			return out
		}
	}
	return s
}

// bitPattern is a term prepared for the bit-parallel edit distance of Myers (1999) with
// Hyyrö's (2003) transposition step: bit i of a mask stands for rune i of the term.
type bitPattern struct {
	n     int
	high  uint64 // bit n-1
	ascii [utf8.RuneSelf]uint64
	other []runeMask
}

type runeMask struct {
	r rune
	m uint64
}

func newBitPattern(term []rune) *bitPattern {
	p := &bitPattern{n: len(term), high: 1 << (len(term) - 1)}
	for i, r := range term {
		if r < utf8.RuneSelf {
			p.ascii[r] |= 1 << i
			continue
		}
		j := slices.IndexFunc(p.other, func(o runeMask) bool { return o.r == r })
		if j < 0 {
			p.other = append(p.other, runeMask{r: r})
			j = len(p.other) - 1
		}
		p.other[j].m |= 1 << i
	}
	return p
}

// eq returns the positions of r in the term.
func (p *bitPattern) eq(r rune) uint64 {
	if r < utf8.RuneSelf {
		return p.ascii[r]
	}
	for _, o := range p.other {
		if o.r == r {
			return o.m
		}
	}
	return 0
}

// distance returns the smallest optimal-string-alignment distance (insertions, deletions,
// substitutions, transpositions of adjacent runes) between the term and any substring of
// s, in O(len(s)) word operations. The term has 1 to 64 runes.
func (p *bitPattern) distance(s string) int {
	vp, vn := ^uint64(0), uint64(0) // vertical deltas +1 / -1 of the current column
	var d0, prevEq uint64
	score, best := p.n, p.n
	for _, r := range s {
		eq := p.eq(r)
		tr := ((^d0 & eq) << 1) & prevEq
		d0 = (((eq & vp) + vp) ^ vp) | eq | vn | tr
		hp := vn | ^(d0 | vp)
		hn := vp & d0
		if hp&p.high != 0 {
			score++
		} else if hn&p.high != 0 {
			score--
		}
		// Row 0 is all zeros (a match may start anywhere): shift in no horizontal delta.
		hp <<= 1
		hn <<= 1
		vp = hn | ^(d0 | hp)
		vn = d0 & hp
		prevEq = eq
		best = min(best, score)
	}
	return best
}

// runeCounter counts the runes a value shares with a term, as multisets of runes under
// simple case folding (see ScoreAllAtLeast).
type runeCounter struct {
	ascii [utf8.RuneSelf]int32 // the term's count of each ASCII fold key
	other map[rune]int32       // of the other fold keys
	left  [utf8.RuneSelf]int32 // scratch: what is left to match of ascii
	n     int
}

func newRuneCounter(term []rune) *runeCounter {
	c := &runeCounter{n: len(term)}
	for _, r := range term {
		if k := foldKey(r); k < utf8.RuneSelf {
			c.ascii[k]++
		} else {
			if c.other == nil {
				c.other = map[rune]int32{}
			}
			c.other[k]++
		}
	}
	return c
}

// common returns how many of the term's runes s holds (at most the term's length).
func (c *runeCounter) common(s string) int {
	c.left = c.ascii
	var other map[rune]int32
	shared := 0
	for _, r := range s {
		k := foldKey(r)
		if k < utf8.RuneSelf {
			if c.left[k] > 0 {
				c.left[k]--
				shared++
			}
		} else if c.other[k] > 0 {
			if other == nil {
				other = make(map[rune]int32, len(c.other))
			}
			if other[k] < c.other[k] {
				other[k]++
				shared++
			}
		}
		if shared == c.n {
			break
		}
	}
	return shared
}

// foldKey returns the least rune that Unicode simple case folding makes equal to r: equal
// keys for the runes the subsequence matcher takes as equal.
func foldKey(r rune) rune {
	if r < utf8.RuneSelf {
		if 'a' <= r && r <= 'z' {
			return r - 'a' + 'A'
		}
		return r
	}
	k := r
	for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
		k = min(k, f)
	}
	return k
}
