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
//
// A dictionary searched for many terms is prepared once as an [Index]
// ([Matcher.ScoreIndex] scores a term over it, skipping most values in a few
// operations); [Matcher.ScoreAll] prepares its values for the one term.
package fuzzy

import (
	"slices"
	"strings"
	"sync"
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
// A value that contains a valid UTF-8 term holds it rune for rune, so c = n there too.
// It builds the values' Index (unsorted) and scores them with ScoreIndex; TestScoreIndex and
// FuzzScoreIndex hold both to a full scan of each value, tier by tier.
func (m *Matcher) ScoreAllAtLeast(values []string, least int) []uint8 {
	if m.folded == "" {
		return exactScores(len(values))
	}
	return m.ScoreIndex(newIndex(values, false), least, nil)
}

func exactScores(n int) []uint8 {
	scores := make([]uint8, n)
	for i := range scores {
		scores[i] = ExactScore
	}
	return scores
}

// progressEvery is how many values ScoreIndex scores between its calls of progress.
const progressEvery = 1 << 10

// ScoreIndex is ScoreAllAtLeast over the values of ix, with the work that depends on the
// values alone done once, in ix: their folded and accent-free forms; a runeSig of each
// form, from which sigBound bounds n - c from below in a few operations, so that only
// the values lacking none of the term's runes are searched for it (the substring tiers;
// every value, for a term that is not valid UTF-8), only those lacking at most dmax get
// a typo score, and only those lacking none a subsequence score; and their byte order
// with the prefix each shares with the one before, so that the typo distance runs only
// over the runes after the prefix a value shares with the last value scored (the
// distance's state after a prefix depends on the prefix alone). progress, unless nil, is
// called with the number of values scored since its last call, every progressEvery
// values and at the end: a caller stops the scoring by panicking in it.
func (m *Matcher) ScoreIndex(ix *Index, least int, progress func(values int)) []uint8 {
	if m.folded == "" {
		return exactScores(ix.Len())
	}
	scores := make([]uint8, ix.Len())
	fuzzyTerm := len(m.pattern) > 0 && len(m.pattern) <= MaxFuzzyRunes && least <= MaxTypoScore
	n, dmax := len(m.pattern), len(m.pattern)
	for least > 0 && dmax >= 0 && int(typoScore(n, dmax)) < least {
		dmax--
	}
	foldBound, bound := newSigBound([]rune(m.folded)), newSigBound(m.pattern)
	// A valid UTF-8 term occurs in a value only at the start of a rune (a lead byte is
	// never a continuation byte), so a value containing it holds every rune of it.
	validFolded, validPlain := utf8.ValidString(m.folded), utf8.ValidString(m.plain)
	var bp *bitPattern
	if fuzzyTerm {
		bp = newBitPattern(m.pattern)
	}
	cand := candidatesPool.Get().(*candidates)
	defer cand.release()
	plains, index := cand.plains, cand.index // the accent-free forms of the values that may match as a subsequence, their positions in ix
	// The distance's states after each rune of the last value scored, up to maxShared,
	// and where each rune ends; have of them hold.
	var states [maxShared + 1]distState
	var ends [maxShared + 1]int
	have := 0
	if fuzzyTerm {
		states[0] = bp.start()
	}
	shared := maxShared // runes the next value shares with the last value scored
	for j, i := range ix.order {
		if progress != nil && j%progressEvery == progressEvery-1 {
			progress(progressEvery)
		}
		shared = min(shared, int(ix.shared[j]))
		lacking := bound.lacking(ix.sig[j])
		exact := !validFolded || foldBound.lacking(ix.foldSig[j]) == 0 // may contain the folded term
		accent := !validPlain || lacking == 0                          // may contain the plain one
		if !exact && !accent && (!fuzzyTerm || lacking > dmax) {
			continue
		}
		if exact && strings.Contains(form(ix.folded, ix.foldEnd, j), m.folded) {
			scores[i] = ExactScore
			continue
		}
		p := form(ix.plain, ix.plainEnd, j)
		if accent && strings.Contains(p, m.plain) {
			scores[i] = AccentScore
			continue
		}
		if !fuzzyTerm || lacking > dmax {
			continue // n-c > dmax >= 0: neither a typo score of least nor a subsequence
		}
		k := min(shared, have)
		st := states[k]
		have = min(bp.resume(&st, p[ends[k]:], k, states[:], ends[:]), maxShared)
		shared = maxShared
		scores[i] = typoScore(n, st.best)
		if lacking == 0 { // else c < n: no subsequence
			plains = append(plains, p)
			index = append(index, i)
		}
	}
	if progress != nil {
		progress(len(ix.order) % progressEvery)
	}
	cand.plains, cand.index = plains, index // kept for the next search, grown
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

// candidates holds a search's values that may match as a subsequence (ScoreIndex):
// taken from candidatesPool and put back after it, so that searches reuse the memory
// instead of growing new slices, which a server with a large live heap pays in page
// faults on every search (about 60 of them for 50,000 values).
type candidates struct {
	plains []string
	index  []int32
}

var candidatesPool = sync.Pool{New: func() any { return new(candidates) }}

// release empties c and puts it back into candidatesPool.
func (c *candidates) release() {
	clear(c.plains) // no value's form kept alive
	c.plains, c.index = c.plains[:0], c.index[:0]
	candidatesPool.Put(c)
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
	st := p.start()
	p.resume(&st, s, 0, nil, nil)
	return st.best
}

// distState is the state of distance after a prefix of the text: the column of the
// dynamic programme as vertical deltas, the previous column's matches and the best
// distance so far. It depends on the prefix alone, so values sharing a prefix share it.
type distState struct {
	vp, vn, d0, prevEq uint64 // vertical deltas +1 / -1, the last d0 and match mask
	score, best        int    // the distance of a match ending here; the least so far
}

// start returns the state before any text.
func (p *bitPattern) start() distState {
	return distState{vp: ^uint64(0), score: p.n, best: p.n}
}

// resume runs st over the runes of s, which begin after k runes of the text. While the
// runes read are fewer than len(states), it records in states[j] and ends[j] the state
// after j runes and where rune j ends in the text (from the start of s's text, ends[k]
// being where s begins in it). It returns the runes of the text read so far, k and s's.
func (p *bitPattern) resume(st *distState, s string, k int, states []distState, ends []int) int {
	vp, vn, d0, prevEq, score, best := st.vp, st.vn, st.d0, st.prevEq, st.score, st.best
	base := 0
	if k < len(ends) {
		base = ends[k]
	}
	for i := 0; i < len(s); {
		r, size := rune(s[i]), 1
		if r >= utf8.RuneSelf {
			r, size = utf8.DecodeRuneInString(s[i:])
		}
		i += size
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
		if k++; k < len(states) {
			states[k] = distState{vp, vn, d0, prevEq, score, best}
			ends[k] = base + i
		}
	}
	*st = distState{vp, vn, d0, prevEq, score, best}
	return k
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
