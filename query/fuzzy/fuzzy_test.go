package fuzzy

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"os/exec"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
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

// TestScoreAllAtLeast holds the prefilter of ScoreAllAtLeast to the full scores on random
// values and terms (runes of several cases and foldings: ß, ſ, the Kelvin sign, accents):
// a value scoring at least the floor keeps its score, one below it stays below.
func TestScoreAllAtLeast(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	alphabet := []rune("abcdeklmorstSKMABCüéÉſßK ")
	word := func(n int) string {
		rs := make([]rune, n)
		for i := range rs {
			rs[i] = alphabet[r.IntN(len(alphabet))]
		}
		return string(rs)
	}
	for c := range 400 {
		values := make([]string, 60)
		for i := range values {
			values[i] = word(r.IntN(16))
		}
		term := word(1 + r.IntN(9))
		if r.IntN(2) == 0 { // a term near a value: a substring with a few edits
			v := []rune(values[r.IntN(len(values))] + word(4))
			lo := r.IntN(len(v))
			rs := slices.Clone(v[lo:min(len(v), lo+1+r.IntN(8))])
			for range r.IntN(3) {
				rs[r.IntN(len(rs))] = alphabet[r.IntN(len(alphabet))]
			}
			term = string(rs)
		}
		m := New(term)
		full := m.ScoreAll(values)
		for _, least := range []int{1, 30, 50, 60, 70, 80, 88, 90, 91, 95, 100} {
			got := m.ScoreAllAtLeast(values, least)
			for i, v := range values {
				if int(full[i]) >= least && got[i] != full[i] || int(full[i]) < least && int(got[i]) >= least {
					t.Fatalf("case %d: %q against %q at least %d: %d, full score %d", c, term, v, least, got[i], full[i])
				}
			}
		}
	}
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
