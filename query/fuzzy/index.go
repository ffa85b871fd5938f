package fuzzy

import (
	"math/bits"
	"slices"
	"strings"
	"unicode/utf8"
)

// Index is a list of values (a string column's dictionary) prepared once for scoring many
// terms (Matcher.ScoreIndex): each value's folded and accent-free forms; a 64-bit
// summary of the runes of each form (runeSig), from which a term skips, in a few
// operations, the values that lack too many of its runes to reach a precision; and the
// values in the byte order of their accent-free forms, with the runes each shares as a
// prefix with the one before, so that a search computes the typo distance of a shared
// prefix once.
//
// Building it costs one to two times what scoring one term over the values costs without
// it (the folding, and a sort). It holds the folded forms and, where any value has accents or
// other combining marks, the accent-free ones (ASCII text folds to itself), plus per
// value 8 bytes of offsets, 8 of summary and 5 of sort order, and where accents are found
// 16 more: 21 to 37 bytes per value besides one or two copies of its text. An Index is
// immutable and safe for concurrent use.
type Index struct {
	folded   string    // the values' folded forms, end to end in order's order
	plain    string    // their accent-free forms, end to end in order's order (folded itself where they agree)
	foldEnd  []int     // where the folded form of value order[j] ends in folded, at j
	plainEnd []int     // where its accent-free form ends in plain (foldEnd where they agree)
	accents  bool      // plain differs from folded
	order    []int32   // the values by accent-free form, in byte order
	sig      []runeSig // the runeSig of each accent-free form, in order's order
	foldSig  []runeSig // of each folded form (sig itself where they agree)
	shared   []uint8   // runes order[j]'s accent-free form shares as a prefix with order[j-1]'s, at most maxShared
}

// maxShared bounds the prefix a value's typo score takes over from the value before it in
// Index.order: the runes of the distance's state a search keeps.
const maxShared = 255

// NewIndex returns the Index of values.
func NewIndex(values []string) *Index { return newIndex(values, true) }

// newIndex returns the Index of values, in their byte order with their shared prefixes
// if sorted, else in their own order sharing none (for one term, sorting costs more
// than the distance it saves).
func newIndex(values []string, sorted bool) *Index {
	var fo folder
	folded := foldAll(values, &fo)
	plains := make([]string, len(values))
	accents := false // some value's accent-free form differs from its folded one
	ix := &Index{}
	for i, f := range folded {
		plains[i] = fo.stripMarks(f)
		accents = accents || plains[i] != f
	}
	ix.order = make([]int32, len(values))
	for i := range ix.order {
		ix.order[i] = int32(i)
	}
	if sorted {
		slices.SortFunc(ix.order, func(a, b int32) int { return strings.Compare(plains[a], plains[b]) })
	}
	// The forms in order's order, so that a search reads them front to back.
	ix.folded, ix.foldEnd = endToEnd(ix.order, folded)
	ix.plain, ix.plainEnd = ix.folded, ix.foldEnd
	if accents {
		ix.plain, ix.plainEnd = endToEnd(ix.order, plains)
		ix.accents = true
	}
	ix.shared = make([]uint8, len(values))
	ix.sig = make([]runeSig, len(values))
	ix.foldSig = ix.sig
	if accents {
		ix.foldSig = make([]runeSig, len(values))
	}
	for j, i := range ix.order {
		ix.sig[j] = signature(plains[i])
		if accents {
			ix.foldSig[j] = signature(folded[i])
		}
		if sorted && j > 0 {
			ix.shared[j] = uint8(sharedRunes(plains[ix.order[j-1]], plains[i]))
		}
	}
	return ix
}

// sharedRunes returns how many runes, at most maxShared, a and b begin with that decode
// the same from their bytes in both: runes within their common prefix of bytes, where
// an invalid byte's rune counts only when the 4 bytes a decoder may read lie within it.
func sharedRunes(a, b string) int {
	common := 0
	for common < len(a) && common < len(b) && a[common] == b[common] {
		common++
	}
	n := 0
	for i := 0; i < common && n < maxShared; n++ {
		r, size := utf8.DecodeRuneInString(a[i:])
		if i+size > common || r == utf8.RuneError && i+utf8.UTFMax > common {
			break
		}
		i += size
	}
	return n
}

// endToEnd returns forms[order[0]], forms[order[1]], ... laid end to end and where each
// ends.
func endToEnd(order []int32, forms []string) (string, []int) {
	size := 0
	for _, f := range forms {
		size += len(f)
	}
	var b strings.Builder
	b.Grow(size)
	ends := make([]int, len(forms))
	for j, i := range order {
		b.WriteString(forms[i])
		ends[j] = b.Len()
	}
	return b.String(), ends
}

// Len returns the number of values.
func (ix *Index) Len() int { return len(ix.order) }

// form returns the j-th form in text, whose forms end at ends.
func form(text string, ends []int, j int) string {
	start := 0
	if j > 0 {
		start = ends[j-1]
	}
	return text[start:ends[j]]
}

// runeSig summarises the runes of a value: for each of 32 buckets of fold keys (see
// sigBucket), how many of its runes fall in it, as 2 bits, 3 standing for 3 or more.
type runeSig uint64

// sigBucket returns the bucket of a fold key (foldKey): A to Z one each, the space, the
// digits, then two buckets of the other ASCII keys and two of the others.
func sigBucket(k rune) uint {
	switch {
	case 'A' <= k && k <= 'Z':
		return uint(k - 'A')
	case k == ' ':
		return 26
	case '0' <= k && k <= '9':
		return 27
	case k < utf8.RuneSelf:
		return 28 + uint(k)&1
	default:
		return 30 + uint(k)&1
	}
}

// signature returns the runeSig of s.
func signature(s string) runeSig {
	var sig runeSig
	for _, r := range s {
		shift := 2 * sigBucket(foldKey(r))
		if (sig>>shift)&3 != 3 {
			sig += 1 << shift
		}
	}
	return sig
}

// sigBound bounds from below the number of a term's runes a value lacks, n - c (see
// Matcher.ScoreAllAtLeast), from the value's runeSig alone: the sum over the buckets of
// how many more of the bucket's runes the term has than the value (none where the value
// has 3 or more). Within a bucket the value holds at most its own runes of the term's, so
// the term lacks at least the difference. The sum is taken a level at a time: the
// buckets where the term has at least t runes and the value fewer than t, for t = 1, 2,
// and for each t >= 3 those where the value has fewer than 3, three popcounts for most
// terms. Levels past MaxFuzzyRunes are left out: the bound is compared with at most
// MaxFuzzyRunes, or with 0, which the first three levels decide.
type sigBound struct {
	one, two uint64   // the buckets where the term has at least 1 and 2 runes, at bit 2b
	more     []uint64 // for each t >= 3, those where it has at least t runes
}

const sigLow = 0x5555_5555_5555_5555 // the low bit of each bucket of a runeSig

func newSigBound(term []rune) *sigBound {
	var count [32]int
	for _, r := range term {
		count[sigBucket(foldKey(r))]++
	}
	b := &sigBound{}
	for bucket, c := range count {
		bit := uint64(1) << (2 * bucket)
		if c >= 1 {
			b.one |= bit
		}
		if c >= 2 {
			b.two |= bit
		}
		for t := 3; t <= min(c, MaxFuzzyRunes); t++ {
			for len(b.more) <= t-3 {
				b.more = append(b.more, 0)
			}
			b.more[t-3] |= bit
		}
	}
	return b
}

// lacking returns the bound for a value of runeSig sig.
func (b *sigBound) lacking(sig runeSig) int {
	lo, hi := uint64(sig)&sigLow, uint64(sig)>>1&sigLow
	n := bits.OnesCount64(b.one&^(lo|hi)) + bits.OnesCount64(b.two&^hi)
	for _, m := range b.more {
		n += bits.OnesCount64(m &^ (lo & hi))
	}
	return n
}
