package reporting

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
)

// Identity holds the identity members shared by an Element and a Reference.
type Identity struct {
	ContainerPermaLink  string `json:"containerPermaLink"`
	CreationID          string `json:"creationId"`
	FacetName           string `json:"facetName"`
	ID                  string `json:"id"`
	Ordering            int    `json:"ordering"`
	PermaLink           string `json:"permaLink"`
	State               string `json:"state"`
	Stereotype          string `json:"stereotype"`
	Type                string `json:"type"`
	VariantDefinitionID string `json:"variantDefinitionId"`
	VariantID           string `json:"variantId"`
	VersionID           string `json:"versionId"`
}

// Reference points at another element: its identity members plus isReference and isRootNode.
type Reference struct {
	Identity
	IsReference bool `json:"isReference"`
	IsRootNode  bool `json:"isRootNode"`
}

// Attributes maps an attribute name to its values, each keyed by a language or qualifier
// (for example {"name": {"en": "Order handling", "de": "Auftragsabwicklung"}}).
type Attributes map[string]map[string]string

// Element is one element of a tenant's landscape.
//
// Collections that the data leaves out are nil and encode as JSON null, so an element
// decoded from JSON encodes back to the same members.
type Element struct {
	Identity
	Attributes Attributes `json:"attributes"`
	Content    []Content  `json:"content"`
	// Related maps a relation name to the elements at its other end.
	Related          map[string][]Reference `json:"related"`
	Children         []Reference            `json:"children"`
	IsMasterVariant  bool                   `json:"isMasterVariant"`
	IsRootNode       bool                   `json:"isRootNode"`
	RootPath         []Reference            `json:"rootPath"`
	SupportsVariants bool                   `json:"supportsVariants"`
	SupportsVersions bool                   `json:"supportsVersions"`
	// Variants are elements of their own, each with its own Versions.
	Variants []Element `json:"variants"`
	Versions []Element `json:"versions"`
}

// Content is one item of an element's content: a nested element or a string.
// Exactly one of Element and Text is meaningful: Element when it is not nil, else Text.
type Content struct {
	Element *Element
	Text    string
}

// MarshalJSON encodes c as its element object or as a JSON string.
func (c Content) MarshalJSON() ([]byte, error) {
	if c.Element != nil {
		return json.Marshal(c.Element)
	}
	return json.Marshal(c.Text)
}

// errContentKind is returned for a content item that is neither an object nor a string.
var errContentKind = errors.New("content item must be an element object or a string")

// UnmarshalJSON decodes a JSON object into Element and a JSON string into Text; any other
// JSON value is an error, and so is a member the element type has no field for (as in
// element files, which DecodeElements reads strictly).
func (c *Content) UnmarshalJSON(data []byte) error {
	data = bytes.TrimLeft(data, " \t\r\n")
	if len(data) == 0 {
		return errContentKind
	}
	switch data[0] {
	case '"':
		*c = Content{}
		return json.Unmarshal(data, &c.Text)
	case '{':
		var e Element
		if err := strictUnmarshal(data, &e); err != nil {
			return err
		}
		*c = Content{Element: &e}
		return nil
	default:
		return errContentKind
	}
}

// strictUnmarshal decodes data into v and refuses members v has no field for, so that a
// misspelt member name in a nested element is reported rather than dropped.
func strictUnmarshal(data []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	return dec.Decode(v)
}

// Facet is a facet of a tenant's landscape: the name its elements carry in facetName.
type Facet struct {
	Name string `json:"name"`
}

// List is the response of both endpoints. Items holds exactly one inner array: the page.
type List[T any] struct {
	Items      [][]T `json:"items"`
	Skip       int   `json:"skip"`
	Take       int   `json:"take"`
	TotalCount int   `json:"totalCount"`
}

// CompareElements orders elements as every Store must return them: by facetName, then
// ordering, then id, variantId and versionId, strings compared byte by byte. It returns a
// negative number when a sorts before b, a positive one when after, and 0 when they tie.
func CompareElements(a, b *Element) int {
	if c := cmp.Compare(a.FacetName, b.FacetName); c != 0 {
		return c
	}
	if c := cmp.Compare(a.Ordering, b.Ordering); c != 0 {
		return c
	}
	if c := cmp.Compare(a.ID, b.ID); c != 0 {
		return c
	}
	if c := cmp.Compare(a.VariantID, b.VariantID); c != 0 {
		return c
	}
	return cmp.Compare(a.VersionID, b.VersionID)
}
