package reporting

import (
	"fmt"
	"maps"
	"slices"
	"strings"
)

// ElementError reports an invalid element of a tenant's element list.
type ElementError struct {
	// File names the file the element came from, or is "" when it came from elsewhere.
	File string
	// Index is the element's position in its list, from 0.
	Index int
	// ID is the element's id as given, or "" when it has none.
	ID string
	// Path locates the offending member inside the element, e.g. "variants[0].versionId";
	// it is "" when the element as a whole is at fault.
	Path string
	// Reason says what is wrong.
	Reason string
}

// Error returns "file: element N (id X): path: reason", leaving out the parts that are empty.
func (e *ElementError) Error() string {
	var b strings.Builder
	if e.File != "" {
		b.WriteString(e.File)
		b.WriteString(": ")
	}
	fmt.Fprintf(&b, "element %d", e.Index)
	if e.ID != "" {
		fmt.Fprintf(&b, " (id %s)", e.ID)
	}
	b.WriteString(": ")
	if e.Path != "" {
		b.WriteString(e.Path)
		b.WriteString(": ")
	}
	b.WriteString(e.Reason)
	return b.String()
}

// Validate checks a tenant's element list and returns an *ElementError for the first
// element at fault. Every element and every nested element, reference, variant and version
// needs an id in UUID form; creationId, variantDefinitionId, variantId and versionId must be
// UUIDs where given; relation names must not be empty; elements nest at most MaxDepth
// levels deep; the listed elements need a facetName, and no two of them may share id, variantId and versionId.
func Validate(elements []Element) error {
	type key struct{ id, variant, version string }
	seen := make(map[key]int, len(elements))
	for i := range elements {
		e := &elements[i]
		fail := func(path, reason string) error {
			return &ElementError{Index: i, ID: e.ID, Path: path, Reason: reason}
		}
		if e.FacetName == "" {
			return fail("facetName", "missing")
		}
		if path, reason := checkElement(e, 0); reason != "" {
			return fail(path, reason)
		}
		k := key{e.ID, e.VariantID, e.VersionID}
		if j, dup := seen[k]; dup {
			return fail("", fmt.Sprintf("same id, variantId and versionId as element %d", j))
		}
		seen[k] = i
	}
	return nil
}

// MaxDepth is how deep elements may nest in one another's content, variants and versions.
const MaxDepth = 1000

// checkElement returns the path of the first invalid member of e, which is nested depth
// levels deep, and the reason; the reason is "" when e is valid. Paths are built only on
// failure, so checking valid data costs no formatting.
func checkElement(e *Element, depth int) (path, reason string) {
	if depth > MaxDepth {
		return "", tooDeep
	}
	if member, reason := checkIdentity(&e.Identity); reason != "" {
		return member, reason
	}
	for i := range e.Content {
		if c := e.Content[i].Element; c != nil {
			if path, reason := checkElement(c, depth+1); reason != "" {
				return nest(fmt.Sprintf("content[%d]", i), path, reason)
			}
		}
	}
	for _, name := range slices.Sorted(maps.Keys(e.Related)) {
		if name == "" {
			return "related", "relation name is empty"
		}
		if path, reason := checkReferences(e.Related[name]); reason != "" {
			return fmt.Sprintf("related[%q]%s", name, path), reason
		}
	}
	if path, reason := checkReferences(e.Children); reason != "" {
		return "children" + path, reason
	}
	if path, reason := checkReferences(e.RootPath); reason != "" {
		return "rootPath" + path, reason
	}
	for i := range e.Variants {
		if path, reason := checkElement(&e.Variants[i], depth+1); reason != "" {
			return nest(fmt.Sprintf("variants[%d]", i), path, reason)
		}
	}
	for i := range e.Versions {
		if path, reason := checkElement(&e.Versions[i], depth+1); reason != "" {
			return nest(fmt.Sprintf("versions[%d]", i), path, reason)
		}
	}
	return "", ""
}

// tooDeep is the reason checkElement gives for elements nested beyond MaxDepth; its path
// is left out, as it would only repeat a member name a thousand times.
var tooDeep = fmt.Sprintf("content, variants and versions nest more than %d levels deep", MaxDepth)

// nest returns the path of a nested element's invalid member, path, below the member
// outer that holds the element, with the reason unchanged.
func nest(outer, path, reason string) (string, string) {
	switch {
	case reason == tooDeep:
		return "", reason
	case path == "":
		return outer, reason
	}
	return outer + "." + path, reason
}

// checkReferences returns "[i].member" for the first invalid member of refs, and the reason.
func checkReferences(refs []Reference) (path, reason string) {
	for i := range refs {
		if member, reason := checkIdentity(&refs[i].Identity); reason != "" {
			return fmt.Sprintf("[%d].%s", i, member), reason
		}
	}
	return "", ""
}

// checkIdentity returns the name of the first invalid identity member of id, and the reason.
func checkIdentity(id *Identity) (member, reason string) {
	if id.ID == "" {
		return "id", "missing"
	}
	for _, m := range [...]struct{ name, value string }{
		{"id", id.ID},
		{"creationId", id.CreationID},
		{"variantDefinitionId", id.VariantDefinitionID},
		{"variantId", id.VariantID},
		{"versionId", id.VersionID},
	} {
		if m.value != "" && !isUUID(m.value) {
			return m.name, fmt.Sprintf("%q is not a UUID (want the form xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx)", m.value)
		}
	}
	return "", ""
}

// isUUID reports whether s has the 8-4-4-4-12 hexadecimal form of a UUID, in either case.
func isUUID(s string) bool {
	if len(s) != 36 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch i {
		case 8, 13, 18, 23:
			if c != '-' {
				return false
			}
		default:
			if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F') {
				return false
			}
		}
	}
	return true
}
