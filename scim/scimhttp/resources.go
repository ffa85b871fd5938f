package scimhttp

import (
	"encoding/json"
	"errors"
	"net/url"
	"strconv"
	"strings"

	"github.com/elimity-com/scim/schema"
	"github.com/kmkit/kmkit/scim"
)

// maxRetries bounds the optimistic retries of a PUT or PATCH without If-Match that races
// with other writes of the same resource.
const maxRetries = 32

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

// update replaces a resource with change(current), retrying when another write slips in
// between, unless the client pinned a version with If-Match. When same is given and says
// that change left the resource as it was, nothing is written.
func update[T any](ifMatch string, version func(T) int64, same func(next, cur T) bool, get func() (T, error),
	change func(T) (T, error), replace func(T, int64) (T, error)) (T, error) {
	var zero T
	for attempt := 0; ; attempt++ {
		cur, err := get()
		if err != nil {
			return zero, err
		}
		if ifMatch != "" && !etagMatches(ifMatch, etag(version(cur))) {
			return zero, scim.Errorf(scim.ErrVersionMismatch, "If-Match %s does not match the current version %s.", ifMatch, etag(version(cur)))
		}
		next, err := change(cur)
		if err != nil {
			return zero, err
		}
		if same != nil && same(next, cur) {
			// Nothing changes: the version and lastModified stay (RFC 7644 section
			// 3.5.2.1), so a client holding the version can go on using it.
			return cur, nil
		}
		out, err := replace(next, version(cur))
		if errors.Is(err, scim.ErrVersionMismatch) && ifMatch == "" && attempt < maxRetries {
			continue
		}
		if errors.Is(err, scim.ErrVersionMismatch) {
			return zero, scim.Errorf(scim.ErrVersionMismatch, "The resource changed while the request was processed.")
		}
		return out, err
	}
}

// deleteResource deletes with the If-Match precondition checked atomically by the store.
func deleteResource[T any](ifMatch string, version func(T) int64, get func() (T, error), del func(int64) error) error {
	if ifMatch == "" {
		return del(0)
	}
	cur, err := get()
	if err != nil {
		return err
	}
	if !etagMatches(ifMatch, etag(version(cur))) {
		return scim.Errorf(scim.ErrVersionMismatch, "If-Match %s does not match the current version %s.", ifMatch, etag(version(cur)))
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

// userFields says which of the attributes that a replacement keeps when absent were given.
type userFields struct{ active, role, sendEmail bool }

// userFromAttrs builds a user from validated attributes.
func userFromAttrs(attrs map[string]any) (scim.User, userFields, error) {
	var u scim.User
	var f userFields
	u.Attributes = map[string]any{}
	for k, v := range attrs {
		switch k {
		case "schemas", "id", "meta", "password", "groups":
			// password is write-only and never returned: this service does not keep
			// passwords. groups is read-only.
		case "userName":
			u.UserName, _ = v.(string)
		case "displayName":
			u.DisplayName, _ = v.(string)
		case "externalId":
			u.ExternalID, _ = v.(string)
		case "active":
			u.Active, f.active = v.(bool)
		case scim.ExtensionSchema:
			ext, _ := v.(map[string]any)
			if r, ok := ext["role"].(string); ok {
				u.Role, f.role = scim.Role(r), true
			}
			if s, ok := ext["sendEmailOnInvitation"].(bool); ok {
				u.SendEmailOnInvitation, f.sendEmail = s, true
			}
		default:
			u.Attributes[k] = v
		}
	}
	if e := scim.CheckUserName(u.UserName); e != nil {
		return scim.User{}, f, *e
	}
	return u, f, nil
}

// keep fills what a replacement did not give from the current user.
func (f userFields) keep(u *scim.User, cur scim.User) {
	u.ID = cur.ID
	if !f.active {
		u.Active = cur.Active
	}
	if !f.role {
		u.Role = cur.Role
	}
	if !f.sendEmail {
		u.SendEmailOnInvitation = cur.SendEmailOnInvitation
	}
}

// userAttrs is the SCIM representation of u without id, externalId and meta. It takes
// u.Attributes over: u comes from the store, which hands out copies, and is not used again.
func userAttrs(u scim.User) map[string]any {
	m := u.Attributes
	if m == nil {
		m = map[string]any{}
	}
	m["userName"] = u.UserName
	if u.DisplayName != "" {
		m["displayName"] = u.DisplayName
	}
	m["active"] = u.Active
	m[scim.ExtensionSchema] = map[string]any{"role": string(u.Role), "sendEmailOnInvitation": u.SendEmailOnInvitation}
	return m
}

// groupFromAttrs builds a group from validated attributes.
func groupFromAttrs(attrs map[string]any) (scim.Group, error) {
	var g scim.Group
	g.DisplayName, _ = attrs["displayName"].(string)
	if strings.TrimSpace(g.DisplayName) == "" {
		return scim.Group{}, badValue("displayName must be a non-empty string.")
	}
	g.ExternalID, _ = attrs["externalId"].(string)
	if r, ok := attrs["role"].(string); ok {
		role, e := scim.RoleOf(r)
		if e != nil {
			return scim.Group{}, *e
		}
		g.Role = role
	}
	list, _ := attrs["members"].([]any)
	g.Members = make([]scim.Member, 0, len(list))
	for i, v := range list {
		if e := scim.CheckMemberObject(i, v); e != nil {
			return scim.Group{}, *e
		}
		m := v.(map[string]any)
		k, _ := scim.AttributeKey(m, "value")
		g.Members = append(g.Members, scim.Member{Value: m[k].(string)})
	}
	return g, nil
}

// groupAttrs is the SCIM representation of g without id, externalId and meta.
func groupAttrs(g scim.Group, root string) map[string]any {
	m := map[string]any{"displayName": g.DisplayName}
	if g.Role != "" {
		m["role"] = string(g.Role)
	}
	members := make([]any, len(g.Members))
	for i, mb := range g.Members {
		members[i] = map[string]any{
			"value":   mb.Value,
			"display": mb.Display,
			"type":    "User",
			"$ref":    root + "/Users/" + url.PathEscape(mb.Value),
		}
	}
	m["members"] = members
	return m
}

func userVersion(u scim.User) int64 { return u.Version }

// sameUser reports whether a replacement next of the user cur stores what cur holds.
func sameUser(next, cur scim.User) bool {
	if next.UserName != cur.UserName || next.DisplayName != cur.DisplayName || next.ExternalID != cur.ExternalID ||
		next.Active != cur.Active || next.Role != cur.Role || next.SendEmailOnInvitation != cur.SendEmailOnInvitation {
		return false
	}
	a, err1 := json.Marshal(next.Attributes)
	b, err2 := json.Marshal(cur.Attributes)
	return err1 == nil && err2 == nil && (string(a) == string(b) || len(next.Attributes)+len(cur.Attributes) == 0)
}

// sameGroup reports whether a replacement next of the group cur stores what cur holds.
func sameGroup(next, cur scim.Group) bool {
	if next.DisplayName != cur.DisplayName || next.ExternalID != cur.ExternalID || next.Role != cur.Role ||
		len(next.Members) != len(cur.Members) {
		return false
	}
	for i := range next.Members {
		if next.Members[i].Value != cur.Members[i].Value {
			return false
		}
	}
	return true
}

func groupVersion(g scim.Group) int64 { return g.Version }
