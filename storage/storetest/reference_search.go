package storetest

import (
	"math"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	sfuzzy "github.com/sahilm/fuzzy"
	"golang.org/x/text/cases"
	"golang.org/x/text/runes"
	"golang.org/x/text/transform"
	"golang.org/x/text/unicode/norm"

	"github.com/kmkit/kmkit/query"
)

// RefSearch is a fuzzy search as the API takes it: searchTerm, searchField (none: the
// selected string and time fields) and searchPrecision.
type RefSearch struct {
	Term      string
	Fields    []string
	Precision int
}

// refScore is the reference's fuzzy score of value for term, written from the rule of
// SPEC-NOTES ("Fuzzy search") and the tiers query/fuzzy's package doc lists, sharing no
// code with it: the first tier that applies among
//
//	100  the case-folded term occurs in the case-folded value
//	 95  it occurs once combining marks are removed from both
//	 the better of, on the mark-free forms, for terms of 1 to 32 runes:
//	     typo: round(100*(n-d)/n), at most 90, d the least optimal-string-alignment
//	           distance from the term to any substring of the value, n the term's runes
//	     subsequence: 50 + 40*n/span (integer division), span the runes from the first to
//	           the last rune of the match github.com/sahilm/fuzzy returns
//
// and 0 when none does. The span is the one step the reference takes from a library: the
// doc names sahilm's choice of occurrence (it prefers word starts, so the span is not
// always the shortest), and the reference asks sahilm for it rather than copy its
// scoring rules. Every other step is a plain loop or table.
func refScore(term, value string) int {
	t, v := refFold(term), refFold(value)
	if strings.Contains(v, t) {
		return 100
	}
	t, v = refPlain(t), refPlain(v)
	if strings.Contains(v, t) {
		return 95
	}
	n := utf8.RuneCountInString(t)
	if n == 0 || n > 32 {
		return 0
	}
	tr, vr := []rune(t), []rune(v)
	d := n // the empty substring
	for i := 0; i <= len(vr); i++ {
		for j := i; j <= len(vr); j++ {
			d = min(d, osaDistance(tr, vr[i:j]))
		}
	}
	score := min(int(math.Round(100*float64(n-d)/float64(n))), 90)
	for _, m := range sfuzzy.Find(t, []string{v}) {
		if len(m.MatchedIndexes) != n {
			continue
		}
		first, last := m.MatchedIndexes[0], m.MatchedIndexes[n-1]
		span := utf8.RuneCountInString(v[first:last]) + 1
		score = max(score, 50+40*n/span)
	}
	return score
}

// osaDistance is the optimal-string-alignment distance between a and b: the least number
// of insertions, deletions, substitutions and transpositions of two adjacent runes, no
// substring edited twice (the textbook table).
func osaDistance(a, b []rune) int {
	d := make([][]int, len(a)+1)
	for i := range d {
		d[i] = make([]int, len(b)+1)
		d[i][0] = i
	}
	for j := range d[0] {
		d[0][j] = j
	}
	for i := 1; i <= len(a); i++ {
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			d[i][j] = min(d[i-1][j]+1, d[i][j-1]+1, d[i-1][j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				d[i][j] = min(d[i][j], d[i-2][j-2]+1)
			}
		}
	}
	return d[len(a)][len(b)]
}

// refFold is s with Unicode full case folding, in NFC.
func refFold(s string) string {
	out, _, err := transform.String(transform.Chain(norm.NFC, cases.Fold(), norm.NFC), s)
	if err != nil {
		panic(err) // these transformers accept every string
	}
	return out
}

// refPlain is s without combining marks (decomposed, marks removed, recomposed).
func refPlain(s string) string {
	out, _, err := transform.String(transform.Chain(norm.NFD, runes.Remove(runes.In(unicode.Mn)), norm.NFC), s)
	if err != nil {
		panic(err)
	}
	return out
}

// same reports whether r and o are the same field (or row key), however each was named.
func (r fieldRef) same(o fieldRef) bool { return r.rec == o.rec && r.index == o.index }

// searchedFields resolves the fields a search scores: those it names, each once, or
// without names the selected string and time fields (none is refused, as the API
// refuses it, and so is a searchField without a term). At record level a named field is one of the record's; with KPIs it must be
// selected (the groups are what is searched).
func (ev *evaluation) searchedFields(s *RefSearch, selected []fieldRef, kpis bool) ([]fieldRef, error) {
	if s == nil {
		return nil, nil
	}
	if s.Term == "" {
		return nil, refErr("searchField without a searchTerm")
	}
	if s.Precision < 0 || s.Precision > 100 {
		return nil, refErr("searchPrecision %d is not within 0..100", s.Precision)
	}
	var out []fieldRef
	add := func(ref fieldRef) {
		if !slices.ContainsFunc(out, ref.same) {
			out = append(out, ref)
		}
	}
	for _, name := range s.Fields {
		ref, err := ev.resolve(name)
		if err != nil {
			return nil, err
		}
		if ev.scope != "" && ref.rec != ev.scope {
			// The rows listed are the record's: a search reads its fields only.
			return nil, refErr("searchField %s is no field of record %s", name, ev.scope)
		}
		if ref.typ != query.TypeString && ref.typ != query.TypeTime {
			return nil, refErr("searchField %s is a %s field", name, ref.typ)
		}
		if kpis && !slices.ContainsFunc(selected, ref.same) {
			return nil, refErr("searchField %s is not selected", name)
		}
		add(ref)
	}
	if len(s.Fields) == 0 {
		for _, ref := range selected {
			if ref.typ == query.TypeString || ref.typ == query.TypeTime {
				add(ref)
			}
		}
	}
	if len(out) == 0 {
		return nil, refErr("no string field to search")
	}
	return out, nil
}

// searchRows keeps the rows whose best score over the columns cols reaches the search's
// precision (a null cell scores 0), and with
// byScore orders them best score first, ties in their order.
func searchRows(rows [][]query.Value, s *RefSearch, cols []int, byScore bool) [][]query.Value {
	type scoredRow struct {
		row   []query.Value
		score int
	}
	var kept []scoredRow
	for _, row := range rows {
		best := 0
		for _, c := range cols {
			if v := row[c]; !v.Null {
				best = max(best, refScore(s.Term, v.Format().(string)))
			}
		}
		if best >= s.Precision {
			kept = append(kept, scoredRow{row, best})
		}
	}
	if byScore {
		slices.SortStableFunc(kept, func(a, b scoredRow) int { return b.score - a.score })
	}
	out := make([][]query.Value, len(kept))
	for i, k := range kept {
		out[i] = k.row
	}
	return out
}
