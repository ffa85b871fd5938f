package fuzzy

import (
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
		{"zürich", "Zurich", 95},
		{"kln", "Köln", 80},   // subsequence k..n over 4 runes beats one deletion (67)
		{"ölk", "Kölner", 67}, // one deletion (substring "köl"), counted in runes
		{"köln", "Kln", 75},   // one deletion in 4 runes: the ö is one rune, not two bytes
		{"kiwi", "", 0},
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
