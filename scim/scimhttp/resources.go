package scimhttp

import (
	"strconv"
	"strings"

	"github.com/elimity-com/scim/schema"
	"github.com/kmkit/kmkit/scim"
)

// etag is the weak entity tag of a version.
func etag(version int64) string { return `W/"` + strconv.FormatInt(version, 10) + `"` }

// etagMatches reports whether the If-Match or If-None-Match header value matches tag,
// comparing weakly (RFC 9110 section 8.8.3.2).
func etagMatches(header, tag string) bool {
	opaque := func(t string) string { return strings.TrimPrefix(strings.TrimSpace(t), "W/") }
	want := opaque(tag)
	for _, t := range strings.Split(header, ",") {
		t = strings.TrimSpace(t)
		if t == "*" || (t != "" && opaque(t) == want) {
			return true
		}
	}
	return false
}

// anyVersion reports whether an If-Match header value is absent or lists "*": every
// current version of the resource then satisfies it, so a write need not pin the version
// it read and retries, as without the header, when another write slips in.
func anyVersion(ifMatch string) bool {
	for _, t := range strings.Split(ifMatch, ",") {
		if strings.TrimSpace(t) == "*" {
			return true
		}
	}
	return strings.TrimSpace(ifMatch) == ""
}

// precondition is the scim.Precondition of an If-Match header value; nil when any version
// satisfies it (anyVersion).
func precondition(ifMatch string) scim.Precondition {
	if anyVersion(ifMatch) {
		return nil
	}
	return func(version int64) error {
		if !etagMatches(ifMatch, etag(version)) {
			return scim.Errorf(scim.ErrVersionMismatch, "If-Match %s does not match the current version %s.", scim.Echo(ifMatch), etag(version))
		}
		return nil
	}
}

// deleteResource deletes with the If-Match precondition checked atomically by the store.
func deleteResource[T any](ifMatch string, version func(T) int64, get func() (T, error), del func(int64) error) error {
	if anyVersion(ifMatch) {
		return del(0)
	}
	cur, err := get()
	if err != nil {
		return err
	}
	if !etagMatches(ifMatch, etag(version(cur))) {
		return scim.Errorf(scim.ErrVersionMismatch, "If-Match %s does not match the current version %s.", scim.Echo(ifMatch), etag(version(cur)))
	}
	return del(version(cur))
}

// validateAttrs validates a resource object against a schema and its extensions the way
// the library validates request bodies (externalId included).
func validateAttrs(m map[string]any, s schema.Schema, exts ...schema.Schema) (map[string]any, *scimError) {
	m["schemas"] = []any{s.ID}
	out, e := withExternalID(s).Validate(m)
	if e != nil {
		return nil, libraryError(e)
	}
	for _, ext := range exts {
		k, ok := scim.AttributeKey(m, ext.ID)
		if !ok || m[k] == nil {
			continue
		}
		attrs, e := ext.ValidateExtension(m[k])
		if e != nil {
			return nil, libraryError(e)
		}
		out[ext.ID] = attrs
	}
	return out, nil
}

// withExternalID adds the common attribute externalId to s, as the library does when it
// validates request bodies.
func withExternalID(s schema.Schema) schema.Schema {
	s.Attributes = append(s.Attributes[:len(s.Attributes):len(s.Attributes)],
		schema.SimpleCoreAttribute(schema.SimpleStringParams(schema.StringParams{CaseExact: true, Name: "externalId"})))
	return s
}

func userVersion(u scim.User) int64 { return u.Version }

func groupVersion(g scim.Group) int64 { return g.Version }
