package reportinghttp

import (
	"fmt"
	"slices"
	"strconv"

	"github.com/kmkit/kmkit/internal/jsonenc"
	"github.com/kmkit/kmkit/reporting"
)

// The handler encodes pages with the append functions below instead of encoding/json's
// reflection: a page of elements is most of the work of a request, and these write the
// same bytes as json.Marshal (TestAppendMatchesEncodingJSON and FuzzDecodeElements hold
// them to it; strings are jsonenc.AppendString's, which escapes as json.Marshal does) several times faster and without allocating.

// errTooDeep stops the encoding of elements nested deeper than MaxDepth, which only a
// cycle of Content pointers built in memory can produce: Validate refuses such data.
var errTooDeep = fmt.Errorf("reporting: elements nested more than %d levels deep (a cycle?)", reporting.MaxDepth)

// appendElementList appends the JSON of a List of elements; a nil page is written as [].
func appendElementList(b []byte, page []reporting.Element, skip, take, total int) ([]byte, error) {
	b = append(b, `{"items":[[`...)
	for i := range page {
		if i > 0 {
			b = append(b, ',')
		}
		var err error
		if b, err = appendElement(b, &page[i], 0); err != nil {
			return b, err
		}
	}
	return appendListEnd(b, skip, take, total), nil
}

// appendFacetList appends the JSON of a List of facets; a nil page is written as [].
func appendFacetList(b []byte, page []reporting.Facet, skip, take, total int) []byte {
	b = append(b, `{"items":[[`...)
	for i := range page {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"name":`...)
		b = jsonenc.AppendString(b, page[i].Name)
		b = append(b, '}')
	}
	return appendListEnd(b, skip, take, total)
}

// appendListEnd closes the page and appends the members after it.
func appendListEnd(b []byte, skip, take, total int) []byte {
	b = append(b, `]],"skip":`...)
	b = strconv.AppendInt(b, int64(skip), 10)
	b = append(b, `,"take":`...)
	b = strconv.AppendInt(b, int64(take), 10)
	b = append(b, `,"totalCount":`...)
	b = strconv.AppendInt(b, int64(total), 10)
	return append(b, '}')
}

// appendElement appends e, which is nested depth levels deep.
func appendElement(b []byte, e *reporting.Element, depth int) ([]byte, error) {
	if depth > reporting.MaxDepth {
		return b, errTooDeep
	}
	var err error
	b = appendIdentity(b, &e.Identity)
	b = append(b, `,"attributes":`...)
	b = appendAttributes(b, e.Attributes)
	b = append(b, `,"content":`...)
	if e.Content == nil {
		b = append(b, "null"...)
	} else {
		b = append(b, '[')
		for i, c := range e.Content {
			if i > 0 {
				b = append(b, ',')
			}
			if c.Element != nil {
				if b, err = appendElement(b, c.Element, depth+1); err != nil {
					return b, err
				}
			} else {
				b = jsonenc.AppendString(b, c.Text)
			}
		}
		b = append(b, ']')
	}
	b = append(b, `,"related":`...)
	if e.Related == nil {
		b = append(b, "null"...)
	} else {
		b = append(b, '{')
		var keys [8]string
		for i, name := range sortedKeys(keys[:0], e.Related) {
			if i > 0 {
				b = append(b, ',')
			}
			b = jsonenc.AppendString(b, name)
			b = append(b, ':')
			b = appendReferences(b, e.Related[name])
		}
		b = append(b, '}')
	}
	b = append(b, `,"children":`...)
	b = appendReferences(b, e.Children)
	b = append(b, `,"isMasterVariant":`...)
	b = strconv.AppendBool(b, e.IsMasterVariant)
	b = append(b, `,"isRootNode":`...)
	b = strconv.AppendBool(b, e.IsRootNode)
	b = append(b, `,"rootPath":`...)
	b = appendReferences(b, e.RootPath)
	b = append(b, `,"supportsVariants":`...)
	b = strconv.AppendBool(b, e.SupportsVariants)
	b = append(b, `,"supportsVersions":`...)
	b = strconv.AppendBool(b, e.SupportsVersions)
	b = append(b, `,"variants":`...)
	if b, err = appendElements(b, e.Variants, depth+1); err != nil {
		return b, err
	}
	b = append(b, `,"versions":`...)
	if b, err = appendElements(b, e.Versions, depth+1); err != nil {
		return b, err
	}
	return append(b, '}'), nil
}

func appendElements(b []byte, elements []reporting.Element, depth int) ([]byte, error) {
	if elements == nil {
		return append(b, "null"...), nil
	}
	b = append(b, '[')
	for i := range elements {
		if i > 0 {
			b = append(b, ',')
		}
		var err error
		if b, err = appendElement(b, &elements[i], depth); err != nil {
			return b, err
		}
	}
	return append(b, ']'), nil
}

// appendIdentity appends the opening brace and the identity members, without a closing brace.
func appendIdentity(b []byte, id *reporting.Identity) []byte {
	b = append(b, `{"containerPermaLink":`...)
	b = jsonenc.AppendString(b, id.ContainerPermaLink)
	b = append(b, `,"creationId":`...)
	b = jsonenc.AppendString(b, id.CreationID)
	b = append(b, `,"facetName":`...)
	b = jsonenc.AppendString(b, id.FacetName)
	b = append(b, `,"id":`...)
	b = jsonenc.AppendString(b, id.ID)
	b = append(b, `,"ordering":`...)
	b = strconv.AppendInt(b, int64(id.Ordering), 10)
	b = append(b, `,"permaLink":`...)
	b = jsonenc.AppendString(b, id.PermaLink)
	b = append(b, `,"state":`...)
	b = jsonenc.AppendString(b, id.State)
	b = append(b, `,"stereotype":`...)
	b = jsonenc.AppendString(b, id.Stereotype)
	b = append(b, `,"type":`...)
	b = jsonenc.AppendString(b, id.Type)
	b = append(b, `,"variantDefinitionId":`...)
	b = jsonenc.AppendString(b, id.VariantDefinitionID)
	b = append(b, `,"variantId":`...)
	b = jsonenc.AppendString(b, id.VariantID)
	b = append(b, `,"versionId":`...)
	return jsonenc.AppendString(b, id.VersionID)
}

func appendReferences(b []byte, refs []reporting.Reference) []byte {
	if refs == nil {
		return append(b, "null"...)
	}
	b = append(b, '[')
	for i := range refs {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendIdentity(b, &refs[i].Identity)
		b = append(b, `,"isReference":`...)
		b = strconv.AppendBool(b, refs[i].IsReference)
		b = append(b, `,"isRootNode":`...)
		b = strconv.AppendBool(b, refs[i].IsRootNode)
		b = append(b, '}')
	}
	return append(b, ']')
}

func appendAttributes(b []byte, attrs reporting.Attributes) []byte {
	if attrs == nil {
		return append(b, "null"...)
	}
	b = append(b, '{')
	var keys, valueKeys [8]string
	for i, name := range sortedKeys(keys[:0], attrs) {
		if i > 0 {
			b = append(b, ',')
		}
		b = jsonenc.AppendString(b, name)
		b = append(b, ':')
		values := attrs[name]
		if values == nil {
			b = append(b, "null"...)
			continue
		}
		b = append(b, '{')
		for j, k := range sortedKeys(valueKeys[:0], values) {
			if j > 0 {
				b = append(b, ',')
			}
			b = jsonenc.AppendString(b, k)
			b = append(b, ':')
			b = jsonenc.AppendString(b, values[k])
		}
		b = append(b, '}')
	}
	return append(b, '}')
}

// sortedKeys appends the keys of m to dst and sorts them in byte order, the order
// encoding/json writes them in. Callers pass a small array's slice, so that the usual few
// keys need no allocation.
func sortedKeys[V any](dst []string, m map[string]V) []string {
	for k := range m {
		dst = append(dst, k)
	}
	slices.Sort(dst)
	return dst
}
