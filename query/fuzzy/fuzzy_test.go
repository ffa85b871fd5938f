package fuzzy

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
	sfuzzy "github.com/sahilm/fuzzy"
)

func TestScore(t *testing.T) {
	tests := []struct {
		term, value string
		want        int
	}{
		{"mat", "Material", 100},
		{"MATERIAL", "material", 100},
		{"", "anything", 100},
		{"straße", "STRASSE 5", 100}, // full case folding: ß folds to ss
		{"ΣΊΣΥΦΟΣ", "σίσυφος", 100},  // final sigma
		{"Munchen", "München", 95},
		{"munchén", "MÜNCHEN", 95},
		{"materail", "Material", 88}, // one transposition in 8 runes
		{"materal", "Material", 86},  // one deletion in 7
		{"matrial", "Raw Material", 86},
		{"mtrl", "Material", 70}, // subsequence over all 8 runes: 50+40*4/8
		{"xyz", "Material", 0},
		{"ab", "a long text before b", 56}, // subsequence a..b(efore): 50+40*2/13
		{"mi", "materials inc", 57},        // sahilm's match takes the i of "inc": 50+40*2/11, not /6
		{"zürich", "Zurich", 95},
		{"kln", "Köln", 80},   // subsequence k..n over 4 runes beats one deletion (67)
		{"ölk", "Kölner", 67}, // one deletion (substring "köl"), counted in runes
		{"köln", "Kln", 75},   // one deletion in 4 runes: the ö is one rune, not two bytes
		{"kiwi", "", 0},
		{"\u0301", "x", 95}, // only a combining mark: empty once accents are removed
		{strings.Repeat("a", MaxFuzzyRunes+1), strings.Repeat("a", MaxFuzzyRunes) + "b", 0},
		{strings.Repeat("a", MaxFuzzyRunes), strings.Repeat("a", MaxFuzzyRunes-1) + "b", 90},
	}
	for _, tt := range tests {
		got := New(tt.term).Score(tt.value)
		if got != tt.want {
			t.Errorf("Score(%q, %q) = %d, want %d", tt.term, tt.value, got, tt.want)
		}
	}
}

func TestDefaultPrecision(t *testing.T) {
	tests := []struct {
		term, value string
		found       bool
	}{
		{"materail", "Material", true},
		{"xyz", "Material", false},
		{"Munchen", "München", true},
		{"order", "Sales Order 4711", true},
		{"qty", "Material", false},
	}
	for _, tt := range tests {
		score := New(tt.term).Score(tt.value)
		if found := score >= DefaultPrecision; found != tt.found {
			t.Errorf("%q in %q: score %d, found %v at DefaultPrecision %d, want %v",
				tt.term, tt.value, score, found, DefaultPrecision, tt.found)
		}
	}
}

func TestScoreAll(t *testing.T) {
	values := []string{"Material", "München", "Raw material", "", "xyz", "Matter", "Mätérîäl"}
	m := New("materail")
	got := m.ScoreAll(values)
	want := make([]uint8, len(values))
	for i, v := range values {
		want[i] = uint8(m.Score(v))
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("ScoreAll differs from Score (-want +got):\n%s", d)
	}
	if d := cmp.Diff([]uint8{88, 13, 88, 0, 0, 50, 88}, got); d != "" {
		t.Errorf("ScoreAll (-want +got):\n%s", d)
	}
}

func FuzzScore(f *testing.F) {
	f.Add("materail", "Material")
	f.Add("Munchen", "München")
	f.Add("ß", "SS")
	f.Add("\xff\xfe", "a\x00b")
	f.Fuzz(func(t *testing.T, term, value string) {
		s := New(term).Score(value)
		if s < 0 || s > 100 {
			t.Fatalf("score %d out of range", s)
		}
		// Containment survives folding for ASCII (NFC may compose across the edge otherwise).
		if isASCII(term) && isASCII(value) && strings.Contains(value, term) && s != ExactScore {
			t.Fatalf("%q contains %q but scores %d", value, term, s)
		}
	})
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}

// semiGlobal is the textbook dynamic programme that bitPattern.distance must agree with.
// distance holds the rows of the dynamic programme.
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

func TestBitParallelDistance(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	alphabet := []rune("abcä")
	word := func(max int) string {
		rs := make([]rune, r.IntN(max+1))
		for i := range rs {
			rs[i] = alphabet[r.IntN(len(alphabet))]
		}
		return string(rs)
	}
	var d distance
	for range 20000 {
		term := []rune(word(9))
		if len(term) == 0 {
			continue
		}
		s := word(12)
		want := d.semiGlobal(term, s)
		if got := newBitPattern(term).distance(s); got != want {
			t.Fatalf("distance(%q, %q) = %d, want %d", string(term), s, got, want)
		}
	}
}

// fullScore is the score of value by the definition of the package documentation, tier
// by tier, on its own: the full scan that ScoreIndex must agree with (the folding is held
// to Python's by TestFolderReuse, the distance computed by the textbook dynamic
// programme, the subsequence match sahilm's for the value alone).
func fullScore(term, value string) uint8 {
	t, f := fold(term), fold(value)
	if strings.Contains(f, t) {
		return ExactScore
	}
	tp, p := stripMarks(t), stripMarks(f)
	if strings.Contains(p, tp) {
		return AccentScore
	}
	pattern := []rune(tp)
	if len(pattern) > MaxFuzzyRunes {
		return 0
	}
	var d distance
	score := typoScore(len(pattern), d.semiGlobal(pattern, p))
	for _, match := range sfuzzy.Find(tp, []string{p}) {
		if len(match.MatchedIndexes) == len(pattern) {
			first, last := match.MatchedIndexes[0], match.MatchedIndexes[len(match.MatchedIndexes)-1]
			score = max(score, uint8(50+40*len(pattern)/(utf8.RuneCountInString(p[first:last])+1)))
		}
	}
	return score
}

// fullScores is fullScore of each value.
func fullScores(term string, values []string) []uint8 {
	out := make([]uint8, len(values))
	for i, v := range values {
		out[i] = fullScore(term, v)
	}
	return out
}

// checkScores holds got, a scoring of values from least on, to want, their full scores:
// a value of full score least or more has it, one below stays below (least 0: every
// score).
func checkScores(t *testing.T, term string, values []string, least int, got, want []uint8) {
	t.Helper()
	for i, v := range values {
		if int(want[i]) >= least && got[i] != want[i] || int(want[i]) < least && int(got[i]) >= least {
			t.Fatalf("%q against %q at least %d: %d, full score %d", term, v, least, got[i], want[i])
		}
	}
}

// TestScoreIndex holds ScoreAll, ScoreAllAtLeast and ScoreIndex over one Index reused for
// many terms to the full scan, on random dictionaries whose values share prefixes (the
// distance's states taken over from one value to the next, beyond maxShared runes too),
// with runes of several cases and foldings (ß, ſ, the Kelvin sign, accents, a combining
// mark, a Hangul jamo), invalid UTF-8 and NULs, and terms near values.
func TestScoreIndex(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	alphabet := []rune("abcdeklmorstSKMABCüéÉſßK \u0301\u1100\u1161\x00")
	word := func(n int) string {
		var b strings.Builder
		for range n {
			if r.IntN(40) == 0 {
				b.WriteByte(0xc3) // a lead byte without its continuation, or with one
				continue
			}
			b.WriteRune(alphabet[r.IntN(len(alphabet))])
		}
		return b.String()
	}
	for range 100 {
		stems := []string{word(r.IntN(6)), word(3 + r.IntN(6)), strings.Repeat("ab", 100+r.IntN(60))}
		values := make([]string, 80)
		for i := range values {
			values[i] = stems[r.IntN(len(stems))] + word(r.IntN(12))
			if r.IntN(3) == 0 {
				values[i] = word(r.IntN(16))
			}
		}
		ix := NewIndex(values)
		for range 8 {
			term := word(1 + r.IntN(9))
			if r.IntN(2) == 0 { // a term near a value: a substring with a few edits
				v := []rune(values[r.IntN(len(values))] + word(4))
				lo := r.IntN(len(v))
				rs := slices.Clone(v[lo:min(len(v), lo+1+r.IntN(12))])
				for range r.IntN(3) {
					rs[r.IntN(len(rs))] = alphabet[r.IntN(len(alphabet))]
				}
				term = string(rs)
			}
			m := New(term)
			want := fullScores(term, values)
			checkScores(t, term, values, 0, m.ScoreAll(values), want)
			for _, least := range []int{1, 30, 50, 60, 70, 80, 88, 90, 91, 95, 100} {
				checkScores(t, term, values, least, m.ScoreIndex(ix, least, nil), want)
			}
			checkScores(t, term, values, 70, m.ScoreAllAtLeast(values, 70), want)
		}
	}
}

// TestScoreIndexProgress: progress is told of every value once, in steps of at most
// progressEvery, and a panic in it stops the scoring.
func TestScoreIndexProgress(t *testing.T) {
	values := make([]string, 2*progressEvery+5)
	for i := range values {
		values[i] = fmt.Sprintf("Material %d", i)
	}
	ix := NewIndex(values)
	total, calls := 0, 0
	New("materail").ScoreIndex(ix, 70, func(n int) {
		if n > progressEvery {
			t.Errorf("progress told of %d values at once", n)
		}
		total += n
		calls++
	})
	if total != len(values) || calls != 3 {
		t.Errorf("progress told of %d values in %d calls, want %d in 3", total, calls, len(values))
	}
	defer func() {
		if recover() != "stop" {
			t.Error("a panic in progress did not stop the scoring")
		}
	}()
	New("materail").ScoreIndex(ix, 70, func(int) { panic("stop") })
}

// FuzzScoreIndex holds ScoreIndex to the full scan on small dictionaries of related
// values (the values, their concatenation, their prefixes).
func FuzzScoreIndex(f *testing.F) {
	f.Add("materail", "Material", "Raw Material 7", uint8(70))
	f.Add("Munchen", "München", "Münchner", uint8(90))
	f.Add("ß", "SS", "ſs", uint8(1))
	f.Add("\xc3", "a\xc3\xa4b", "a\xc3b", uint8(50))
	f.Fuzz(func(t *testing.T, term, a, b string, least uint8) {
		values := []string{a, b, a + b, b + a, a[:len(a)/2], a[:len(a)/2] + b}
		checkScores(t, term, values, int(least%101), New(term).ScoreIndex(NewIndex(values), int(least%101), nil), fullScores(term, values))
	})
}

// TestFolderReuse: one folder's transformers, reused across a dictionary's values (as
// ScoreAllAtLeast does), fold and strip each value as Python's unicodedata does
// (NFC of the case fold of NFC; NFC of NFD without the nonspacing marks), in any order.
func TestFolderReuse(t *testing.T) {
	py, err := exec.LookPath("/usr/bin/python3")
	if err != nil {
		t.Skip("no /usr/bin/python3: the oracle of the folding")
	}
	values := []string{"München", "Straße", "ÉCOLE", "Ǆemal", "İstanbul", "Åland Øre", "a\u0301b", "ΣΊΣΥΦΟΣ", "plain", "Mätérîäl", "ﬁle", "Ωmega"}
	script := `import json, sys, unicodedata as u
vals = json.load(sys.stdin)
nfc = lambda s: u.normalize('NFC', s)
print(json.dumps([[nfc(nfc(v).casefold()), nfc(''.join(c for c in u.normalize('NFD', v) if u.category(c) != 'Mn'))] for v in vals]))`
	in, _ := json.Marshal(values)
	cmd := exec.Command(py, "-c", script)
	cmd.Stdin = bytes.NewReader(in)
	out, err := cmd.Output()
	if err != nil {
		t.Fatal(err)
	}
	var want [][2]string
	if err := json.Unmarshal(out, &want); err != nil {
		t.Fatal(err)
	}
	var fo folder
	for round := range 2 { // the second round reuses transformers already used
		for i, v := range values {
			if got := fo.fold(v); got != want[i][0] {
				t.Errorf("round %d: fold(%q) = %q, want %q", round, v, got, want[i][0])
			}
			if got := fo.stripMarks(v); got != want[i][1] {
				t.Errorf("round %d: stripMarks(%q) = %q, want %q", round, v, got, want[i][1])
			}
		}
	}
}
