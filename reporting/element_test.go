package reporting

import (
	"bytes"
	"encoding/json"
	"os"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestElementRoundTrip decodes an element with content, relations, children, a root path,
// variants that have their own versions, and versions, and checks that encoding gives back
// the same bytes and decoding those the same value.
func TestElementRoundTrip(t *testing.T) {
	raw, err := os.ReadFile("testdata/element.json")
	if err != nil {
		t.Fatal(err)
	}
	var want bytes.Buffer
	if err := json.Compact(&want, raw); err != nil {
		t.Fatal(err)
	}
	var e Element
	if err := strictUnmarshal(raw, &e); err != nil {
		t.Fatal(err)
	}
	if len(e.Variants) != 2 || len(e.Variants[0].Versions) != 1 || len(e.Versions) != 2 || len(e.Content) != 4 {
		t.Fatalf("fixture lost its nesting: %d variants, %d versions, %d content items", len(e.Variants), len(e.Versions), len(e.Content))
	}
	if e.Content[0].Element != nil || e.Content[0].Text == "" || e.Content[1].Element == nil {
		t.Fatalf("content = %+v, want a string then elements", e.Content[:2])
	}
	got, err := json.Marshal(&e)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want.String(), string(got)); diff != "" {
		t.Fatalf("JSON after a round trip (-want +got):\n%s", diff)
	}
	var again Element
	if err := strictUnmarshal(got, &again); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(e, again); diff != "" {
		t.Fatalf("element after a round trip (-want +got):\n%s", diff)
	}
}

// TestElementZeroJSON pins the members of an element that has only an id: every member is
// present and the collections are null.
func TestElementZeroJSON(t *testing.T) {
	got, err := json.Marshal(Element{Identity: Identity{ID: "x"}, Content: []Content{{Text: "t"}, {Element: &Element{}}}})
	if err != nil {
		t.Fatal(err)
	}
	const empty = `"containerPermaLink":"","creationId":"","facetName":"","id":"","ordering":0,"permaLink":"","state":"","stereotype":"","type":"","variantDefinitionId":"","variantId":"","versionId":"",` +
		`"attributes":null,"content":null,"related":null,"children":null,"isMasterVariant":false,"isRootNode":false,"rootPath":null,"supportsVariants":false,"supportsVersions":false,"variants":null,"versions":null`
	want := `{"containerPermaLink":"","creationId":"","facetName":"","id":"x","ordering":0,"permaLink":"","state":"","stereotype":"","type":"","variantDefinitionId":"","variantId":"","versionId":"",` +
		`"attributes":null,"content":["t",{` + empty + `}],"related":null,"children":null,"isMasterVariant":false,"isRootNode":false,"rootPath":null,"supportsVariants":false,"supportsVersions":false,"variants":null,"versions":null}`
	if diff := cmp.Diff(want, string(got)); diff != "" {
		t.Fatalf("JSON (-want +got):\n%s", diff)
	}
}

func TestContentUnmarshal(t *testing.T) {
	tests := []struct {
		in      string
		want    []Content
		wantErr string
	}{
		{in: `[]`, want: []Content{}},
		{in: `["a", "b"]`, want: []Content{{Text: "a"}, {Text: "b"}}},
		{in: `[{"id":"e"}, "x"]`, want: []Content{{Element: &Element{Identity: Identity{ID: "e"}}}, {Text: "x"}}},
		{in: `[1]`, wantErr: "content item must be an element object or a string"},
		{in: `[null]`, wantErr: "content item must be an element object or a string"},
		{in: `[["a"]]`, wantErr: "content item must be an element object or a string"},
		{in: `[true]`, wantErr: "content item must be an element object or a string"},
		{in: `[{"id":"e","nmae":"x"}]`, wantErr: `json: unknown field "nmae"`},
		{in: `[{"id":1}]`, wantErr: "json: cannot unmarshal number into Go struct field Element.Identity.id of type string"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			var got []Content
			err := json.Unmarshal([]byte(tt.in), &got)
			if tt.wantErr != "" {
				if err == nil || err.Error() != tt.wantErr {
					t.Fatalf("error = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Fatalf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestCompareElements(t *testing.T) {
	el := func(facet string, ordering int, id, variant, version string) Element {
		return Element{Identity: Identity{FacetName: facet, Ordering: ordering, ID: id, VariantID: variant, VersionID: version}}
	}
	ordered := []Element{
		el("Activities", 5, "z", "", ""),
		el("Processes", -1, "z", "", ""),
		el("Processes", 0, "a", "", "2"),
		el("Processes", 0, "a", "v", "1"),
		el("Processes", 0, "b", "", ""),
		el("Processes", 1, "a", "", ""),
		el("processes", 0, "a", "", ""),
	}
	for i := range ordered {
		for j := range ordered {
			got := CompareElements(&ordered[i], &ordered[j])
			if want := cmpInt(i, j); sign(got) != want {
				t.Errorf("CompareElements(%d, %d) = %d, want sign %d", i, j, got, want)
			}
		}
	}
}

func cmpInt(a, b int) int { return sign(a - b) }

func sign(n int) int {
	switch {
	case n < 0:
		return -1
	case n > 0:
		return 1
	}
	return 0
}
