package scimtest

import (
	"bytes"
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/kmkit/kmkit/scim"
)

// The PATCH suite applies RFC 7644 section 3.5.2 requests through a scim.Service over the
// store, without HTTP, and checks what the store then holds. Its cases include, with their
// exact bodies, the operations identity providers send that once answered 200 and stored
// nothing. Resources are compared in their JSON form (scim.UserAttributes,
// scim.GroupAttributes, with externalId), as an adapter renders them without id, meta and
// schemas.

const (
	userURN  = "urn:ietf:params:scim:schemas:core:2.0:User"
	groupURN = "urn:ietf:params:scim:schemas:core:2.0:Group"
	extURN   = "urn:celonis:params:scim:schemas:extension:2.0:User"
	entURN   = "urn:ietf:params:scim:schemas:extension:enterprise:2.0:User"
	patchOp  = `{"schemas":["urn:ietf:params:scim:api:messages:2.0:PatchOp"],"Operations":`
	team     = "t"
)

// client applies requests to a service over a store, as team "t".
type client struct {
	t   *testing.T
	svc *scim.Service
}

func newClient(t *testing.T, s scim.Store) client { return client{t, scim.NewService(s)} }

// decode reads a JSON object as an adapter does, numbers as json.Number.
func decode(t *testing.T, body string) map[string]any {
	t.Helper()
	d := json.NewDecoder(bytes.NewReader([]byte(body)))
	d.UseNumber()
	var m map[string]any
	if err := d.Decode(&m); err != nil {
		t.Fatalf("body %s: %v", body, err)
	}
	return m
}

// newUser checks a user object as POST does and returns the user to create.
func newUser(t *testing.T, body string) (scim.User, error) {
	t.Helper()
	m := decode(t, body)
	if e := scim.NormalizeUser(m); e != nil {
		return scim.User{}, *e
	}
	if e := scim.CheckValues(m, scim.UserResource()); e != nil {
		return scim.User{}, *e
	}
	u, f, err := scim.UserFromAttributes(m, scim.UserResource())
	if err != nil {
		return scim.User{}, err
	}
	if !f.Active {
		u.Active = true
	}
	if !f.Role {
		u.Role = scim.RoleMember
	}
	return u, nil
}

// create stores a user object and returns its id.
func (c client) create(body string) string {
	c.t.Helper()
	u, err := newUser(c.t, body)
	if err != nil {
		c.t.Fatalf("create %s: %v", body, err)
	}
	created, err := c.svc.Store().CreateUser(c.t.Context(), team, u)
	if err != nil {
		c.t.Fatalf("create %s: %v", body, err)
	}
	return created.ID
}

// createGroup stores a group object and returns its id.
func (c client) createGroup(body string) string {
	c.t.Helper()
	m := decode(c.t, body)
	if e := scim.CheckGroup(m); e != nil {
		c.t.Fatalf("group %s: %v", body, e)
	}
	g, err := scim.GroupFromAttributes(m)
	if err != nil {
		c.t.Fatalf("group %s: %v", body, err)
	}
	created, err := c.svc.Store().CreateGroup(c.t.Context(), team, g)
	if err != nil {
		c.t.Fatalf("group %s: %v", body, err)
	}
	return created.ID
}

func userJSON(u scim.User) map[string]any {
	m := scim.UserAttributes(u.Clone())
	if u.ExternalID != "" {
		m["externalId"] = u.ExternalID
	}
	return m
}

func groupJSON(g scim.Group) map[string]any {
	m := scim.GroupAttributes(g)
	if g.ExternalID != "" {
		m["externalId"] = g.ExternalID
	}
	return m
}

// version is the version and modify time of a resource.
type version struct {
	Version      int64
	LastModified time.Time
}

// patch applies a PatchOp body to path ("/Users/id" or "/Groups/id") with the
// precondition pre and returns the resource's JSON form and version, or the SCIM error.
func (c client) patch(path, body string, pre scim.Precondition) (map[string]any, version, *scim.Error) {
	c.t.Helper()
	kind, id, _ := strings.Cut(strings.TrimPrefix(path, "/"), "/")
	ops, e := scim.ParsePatch(decode(c.t, body), kind == "Users")
	if e != nil {
		return nil, version{}, e
	}
	var (
		m   map[string]any
		v   version
		err error
	)
	if kind == "Users" {
		var u scim.User
		u, err = c.svc.PatchUser(c.t.Context(), team, id, ops, pre)
		m, v = userJSON(u), version{u.Version, u.LastModified}
	} else {
		var g scim.Group
		g, err = c.svc.PatchGroup(c.t.Context(), team, id, ops, pre)
		m, v = groupJSON(g), version{g.Version, g.LastModified}
	}
	if err != nil {
		se, ok := scim.ErrorOf(err)
		if !ok {
			c.t.Fatalf("PATCH %s %s: %v", path, body, err)
		}
		return nil, version{}, &se
	}
	return m, v, nil
}

// resource returns a user or group as the store holds it, in its JSON form, and its
// version.
func (c client) resource(path string) (map[string]any, version) {
	c.t.Helper()
	kind, id, _ := strings.Cut(strings.TrimPrefix(path, "/"), "/")
	if kind == "Users" {
		u, err := c.svc.Store().GetUser(c.t.Context(), team, id)
		if err != nil {
			c.t.Fatalf("GetUser %s: %v", id, err)
		}
		return userJSON(u), version{u.Version, u.LastModified}
	}
	g, err := c.svc.Store().GetGroup(c.t.Context(), team, id)
	if err != nil {
		c.t.Fatalf("GetGroup %s: %v", id, err)
	}
	return groupJSON(g), version{g.Version, g.LastModified}
}

// stored returns the JSON form of a user or group as the store holds it.
func (c client) stored(path string) map[string]any {
	c.t.Helper()
	m, _ := c.resource(path)
	return m
}

// badRequest is the Error of a 400 with scimType and detail.
func badRequest(scimType, detail string) *scim.Error {
	return &scim.Error{Status: scim.StatusBadRequest, ScimType: scimType, Detail: detail}
}

const jane = `{"schemas":["` + userURN + `","` + entURN + `"],"userName":"jane@example.com","displayName":"Jane",
	"title":"Engineer","name":{"givenName":"Jane","familyName":"Doe"},
	"emails":[{"value":"jane@example.com","type":"home"}],
	"` + entURN + `":{"department":"R&D","employeeNumber":"7","manager":{"value":"boss-id"}}}`

// janeWant is jane in its JSON form; edit changes a copy.
func janeWant(edit func(m map[string]any)) map[string]any {
	m := map[string]any{
		"userName":    "jane@example.com",
		"displayName": "Jane",
		"title":       "Engineer",
		"active":      true,
		"name":        map[string]any{"givenName": "Jane", "familyName": "Doe"},
		"emails":      []any{map[string]any{"value": "jane@example.com", "type": "home"}},
		extURN:        map[string]any{"role": "MEMBER", "sendEmailOnInvitation": false},
		entURN:        map[string]any{"department": "R&D", "employeeNumber": "7", "manager": map[string]any{"value": "boss-id"}},
	}
	if edit != nil {
		edit(m)
	}
	return m
}

func ent(m map[string]any) map[string]any { return m[entURN].(map[string]any) }

func testPatch(t *testing.T, newStore Factory) {
	tests := []struct {
		name string
		ops  string // the Operations array, exactly as sent
		want map[string]any
	}{
		// 1. remove on extension attributes.
		{"remove enterprise department",
			`[{"op":"remove","path":"urn:ietf:params:scim:schemas:extension:enterprise:2.0:User:department"}]`,
			janeWant(func(m map[string]any) { delete(ent(m), "department") })},
		{"remove enterprise manager",
			`[{"op":"remove","path":"urn:ietf:params:scim:schemas:extension:enterprise:2.0:User:manager"}]`,
			janeWant(func(m map[string]any) { delete(ent(m), "manager") })},
		{"remove enterprise manager.value",
			`[{"op":"remove","path":"urn:ietf:params:scim:schemas:extension:enterprise:2.0:User:manager.value"}]`,
			janeWant(func(m map[string]any) { delete(ent(m), "manager") })},
		{"Entra manager removal with a value",
			`[{"op":"Remove","path":"urn:ietf:params:scim:schemas:extension:enterprise:2.0:User:manager","value":[{"value":"boss-id"}]}]`,
			janeWant(func(m map[string]any) { delete(ent(m), "manager") })},
		{"remove the whole enterprise extension",
			`[{"op":"remove","path":"urn:ietf:params:scim:schemas:extension:enterprise:2.0:User"}]`,
			janeWant(func(m map[string]any) { delete(m, entURN) })},
		// 2. add on a filtered multi-valued path with no matching value creates it.
		{"add phoneNumbers[type eq mobile].value",
			`[{"op":"Add","path":"phoneNumbers[type eq \"mobile\"].value","value":"555-1234"}]`,
			janeWant(func(m map[string]any) {
				m["phoneNumbers"] = []any{map[string]any{"type": "mobile", "value": "555-1234"}}
			})},
		{"add addresses[type eq work].streetAddress",
			`[{"op":"Add","path":"addresses[type eq \"work\"].streetAddress","value":"1 Main St"}]`,
			janeWant(func(m map[string]any) {
				m["addresses"] = []any{map[string]any{"type": "work", "streetAddress": "1 Main St"}}
			})},
		{"add emails[type eq work].value next to a home e-mail",
			`[{"op":"Add","path":"emails[type eq \"work\"].value","value":"jane@work.example"}]`,
			janeWant(func(m map[string]any) {
				m["emails"] = []any{
					map[string]any{"value": "jane@example.com", "type": "home"},
					map[string]any{"value": "jane@work.example", "type": "work"},
				}
			})},
		{"add on a filtered path that matches sets the match",
			`[{"op":"Add","path":"emails[type eq \"home\"].value","value":"j@home.example"}]`,
			janeWant(func(m map[string]any) {
				m["emails"] = []any{map[string]any{"value": "j@home.example", "type": "home"}}
			})},
		// 3. path-less replace with dotted keys, as Entra ID sends it.
		{"path-less replace with dotted keys",
			`[{"op":"replace","value":{"displayName":"B","name.givenName":"K","name.familyName":"U"}}]`,
			janeWant(func(m map[string]any) {
				m["displayName"] = "B"
				m["name"] = map[string]any{"givenName": "K", "familyName": "U"}
			})},
		{"path-less add with URN keys",
			`[{"op":"add","value":{"urn:ietf:params:scim:schemas:extension:enterprise:2.0:User:costCenter":"CC1","urn:ietf:params:scim:schemas:extension:enterprise:2.0:User:manager":{"value":"other"},"title":"Lead"}}]`,
			janeWant(func(m map[string]any) {
				m["title"] = "Lead"
				ent(m)["costCenter"] = "CC1"
				ent(m)["manager"] = map[string]any{"value": "other"}
			})},
		{"path-less keys apply whole attributes before their parts, whatever the map order",
			`[{"op":"replace","value":{"name.givenName":"K","name":{"givenName":"X","familyName":"Y"},"Name.FamilyName":"U",
				"emails[type eq \"home\"].value":"k@home.example","emails":[{"value":"x@home.example","type":"home"}],
				"urn:ietf:params:scim:schemas:extension:enterprise:2.0:User:department":"Ops",
				"urn:ietf:params:scim:schemas:extension:enterprise:2.0:User":{"department":"Sales","costCenter":"C"}}}]`,
			janeWant(func(m map[string]any) {
				m["name"] = map[string]any{"givenName": "K", "familyName": "U"}
				m["emails"] = []any{map[string]any{"value": "k@home.example", "type": "home"}}
				ent(m)["department"] = "Ops"
				ent(m)["costCenter"] = "C"
			})},
		{"a manager as a bare id, by URN:attr key, extension object and extension path",
			`[{"op":"add","value":{"URN:IETF:params:scim:schemas:extension:enterprise:2.0:User:manager":"m1"}},
			{"op":"replace","value":{"urn:ietf:params:scim:schemas:extension:enterprise:2.0:User":{"Manager":"m2","costCenter":"C"}}},
			{"op":"replace","path":"urn:ietf:params:scim:schemas:extension:enterprise:2.0:User","value":{"manager":"m3","division":"D"}}]`,
			janeWant(func(m map[string]any) {
				ent(m)["manager"] = map[string]any{"value": "m3"}
				ent(m)["costCenter"] = "C"
				ent(m)["division"] = "D"
			})},
		{"the core schema's URN as path or key takes a path-less value",
			`[{"op":"replace","path":"urn:ietf:params:scim:schemas:core:2.0:User","value":{"title":"Lead","name.givenName":"J"}},
			{"op":"add","value":{"URN:IETF:params:scim:schemas:core:2.0:User":{"nickName":"JJ"}}}]`,
			janeWant(func(m map[string]any) {
				m["title"] = "Lead"
				m["nickName"] = "JJ"
				m["name"] = map[string]any{"givenName": "J", "familyName": "Doe"}
			})},
		{"path-less replace with an extension object",
			`[{"op":"replace","value":{"urn:ietf:params:scim:schemas:extension:enterprise:2.0:User":{"department":"Sales"}}}]`,
			janeWant(func(m map[string]any) { ent(m)["department"] = "Sales" })},
		// 4. null on replace clears the attribute (RFC 7643 section 2.5).
		{"replace title with null",
			`[{"op":"Replace","path":"title","value":null}]`,
			janeWant(func(m map[string]any) { delete(m, "title") })},
		{"path-less replace with a null",
			`[{"op":"replace","value":{"title":null,"name.familyName":null}}]`,
			janeWant(func(m map[string]any) {
				delete(m, "title")
				m["name"] = map[string]any{"givenName": "Jane"}
			})},
		// The other forms of RFC 7644 section 3.5.2.
		{"replace a filtered value's sub-attribute",
			`[{"op":"replace","path":"emails[type eq \"home\"].value","value":"j2@example.com"}]`,
			janeWant(func(m map[string]any) {
				m["emails"] = []any{map[string]any{"value": "j2@example.com", "type": "home"}}
			})},
		{"a value filter's strings are JSON strings, escapes decoded",
			`[{"op":"replace","path":"emails[value eq \"jane\\u0040example.com\"].type","value":"work"}]`,
			janeWant(func(m map[string]any) {
				m["emails"] = []any{map[string]any{"value": "jane@example.com", "type": "work"}}
			})},
		{"remove by filter",
			`[{"op":"remove","path":"emails[type eq \"home\"]"}]`,
			janeWant(func(m map[string]any) { delete(m, "emails") })},
		{"replace a complex attribute keeps sub-attributes not given",
			`[{"op":"replace","path":"name","value":{"givenName":"Janet"}}]`,
			janeWant(func(m map[string]any) { m["name"] = map[string]any{"givenName": "Janet", "familyName": "Doe"} })},
		{"replace a multi-valued attribute",
			`[{"op":"replace","path":"emails","value":[{"value":"a@b.example","type":"work","primary":true}]}]`,
			janeWant(func(m map[string]any) {
				m["emails"] = []any{map[string]any{"value": "a@b.example", "type": "work", "primary": true}}
			})},
		{"core URN prefix and case-insensitive names",
			`[{"op":"REPLACE","path":"urn:ietf:params:scim:schemas:core:2.0:User:NAME.GIVENNAME","value":"J"}]`,
			janeWant(func(m map[string]any) { m["name"] = map[string]any{"givenName": "J", "familyName": "Doe"} })},
		{"remove by a filter with or",
			`[{"op":"add","path":"emails","value":[{"value":"j@work.example","type":"work"},{"value":"j@other.example","type":"other"}]},{"op":"remove","path":"emails[type eq \"home\" or type eq \"WORK\"]"}]`,
			janeWant(func(m map[string]any) {
				m["emails"] = []any{map[string]any{"value": "j@other.example", "type": "other"}}
			})},
		{"add does not repeat a value already there",
			`[{"op":"add","path":"emails","value":{"value":"jane@example.com","type":"home"}}]`,
			janeWant(nil)},
		{"replace the values matching pr and ne",
			`[{"op":"add","path":"emails","value":[{"value":"p@example.com","type":"work","primary":true}]},{"op":"replace","path":"emails[primary pr and type ne \"home\"].type","value":"office"}]`,
			janeWant(func(m map[string]any) {
				m["emails"] = []any{
					map[string]any{"value": "jane@example.com", "type": "home"},
					map[string]any{"value": "p@example.com", "type": "office", "primary": true},
				}
			})},
		{"operations apply in order",
			`[{"op":"add","path":"nickName","value":"JJ"},{"op":"remove","path":"nickName"},{"op":"add","path":"locale","value":"de-DE"}]`,
			janeWant(func(m map[string]any) { m["locale"] = "de-DE" })},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := newClient(t, newStore(t, nil))
			id := c.create(jane)
			m, _, e := c.patch("/Users/"+id, patchOp+tt.ops+"}", nil)
			if e != nil {
				t.Fatalf("PATCH: %v", *e)
			}
			if diff := cmp.Diff(tt.want, m); diff != "" {
				t.Errorf("PATCH result (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.want, c.stored("/Users/"+id)); diff != "" {
				t.Errorf("stored user (-want +got):\n%s", diff)
			}
		})
	}
}

func testPatchErrors(t *testing.T, newStore Factory) {
	c := newClient(t, newStore(t, nil))
	id := c.create(jane)
	gid := c.createGroup(`{"schemas":["` + groupURN + `"],"displayName":"G","members":[{"value":"` + id + `"}]}`)
	tests := []struct {
		name, path, ops, scimType, detail string
	}{
		{"replace with no match", "/Users/" + id, `[{"op":"replace","path":"emails[type eq \"work\"].value","value":"x@y.example"}]`,
			"noTarget", `Operations[0]: No value of emails matches the filter of "emails[type eq \"work\"].value".`},
		{"add with a filter that describes no value", "/Users/" + id, `[{"op":"add","path":"emails[type sw \"w\"].value","value":"x@y.example"}]`,
			"noTarget", `Operations[0]: No value of emails matches the filter of "emails[type sw \"w\"].value", and the filter does not describe a value to create (it must combine eq terms with and).`},
		{"remove without path", "/Users/" + id, `[{"op":"remove"}]`, "noTarget", "Operations[0]: remove needs a path."},
		{"remove the core schema", "/Users/" + id, `[{"op":"remove","path":"urn:ietf:params:scim:schemas:core:2.0:User"}]`,
			"noTarget", `Operations[0]: The path "urn:ietf:params:scim:schemas:core:2.0:User" names the whole resource, which remove cannot remove.`},
		{"the core schema's URN with a value that is not an object", "/Users/" + id,
			`[{"op":"replace","value":{"urn:ietf:params:scim:schemas:core:2.0:User":"x"}}]`,
			"invalidValue", `Operations[0]: urn:ietf:params:scim:schemas:core:2.0:User must be an object of its attributes.`},
		{"the core schema's URN as path with a value that is not an object", "/Users/" + id,
			`[{"op":"add","path":"urn:ietf:params:scim:schemas:core:2.0:User","value":"x"}]`,
			"invalidValue", `Operations[0]: add on "urn:ietf:params:scim:schemas:core:2.0:User" needs an object of attributes as its value.`},
		{"unknown attribute", "/Users/" + id, `[{"op":"add","path":"shoeSize","value":42}]`,
			"invalidPath", `Operations[0]: The path "shoeSize" names no attribute of the resource.`},
		{"unknown sub-attribute", "/Users/" + id, `[{"op":"add","path":"name.nickName","value":"x"}]`,
			"invalidPath", `Operations[0]: The path "name.nickName" names no sub-attribute of name.`},
		{"unknown extension attribute", "/Users/" + id, `[{"op":"remove","path":"urn:ietf:params:scim:schemas:extension:enterprise:2.0:User:shoeSize"}]`,
			"invalidPath", `Operations[0]: The path "urn:ietf:params:scim:schemas:extension:enterprise:2.0:User:shoeSize" names no attribute of the resource.`},
		{"unknown schema", "/Users/" + id, `[{"op":"remove","path":"urn:example:2.0:Thing:x"}]`,
			"invalidPath", `Operations[0]: The path "urn:example:2.0:Thing:x" names an unknown schema urn:example:2.0:Thing.`},
		{"filter on a single value", "/Users/" + id, `[{"op":"remove","path":"name[givenName eq \"Jane\"]"}]`,
			"invalidPath", `Operations[0]: The path "name[givenName eq \"Jane\"]" filters name, which is not multi-valued.`},
		{"malformed path", "/Users/" + id, `[{"op":"remove","path":"emails[type eq"}]`,
			"invalidPath", `Operations[0]: The path "emails[type eq" is not a valid SCIM attribute path.`},
		{"unknown key in a path-less value", "/Users/" + id, `[{"op":"replace","value":{"shoeSize":42}}]`,
			"invalidPath", `Operations[0]: The path "shoeSize" names no attribute of the resource.`},
		{"id", "/Users/" + id, `[{"op":"replace","path":"id","value":"x"}]`, "mutability", "Operations[0]: id is read-only: the service maintains it."},
		{"meta", "/Users/" + id, `[{"op":"replace","path":"meta.created","value":"x"}]`, "mutability", "Operations[0]: meta is read-only: the service maintains it."},
		{"groups of a user", "/Users/" + id, `[{"op":"add","path":"groups","value":[{"value":"` + gid + `"}]}]`,
			"mutability", "Operations[0]: groups is read-only: the service maintains it."},
		{"manager displayName", "/Users/" + id, `[{"op":"replace","path":"urn:ietf:params:scim:schemas:extension:enterprise:2.0:User:manager.displayName","value":"x"}]`,
			"mutability", "Operations[0]: manager.displayName is read-only: the service maintains it."},
		{"id in a path-less value", "/Users/" + id, `[{"op":"replace","value":{"id":"other"}}]`, "mutability", "Operations[0]: id is read-only: the service maintains it."},
		{"userName", "/Users/" + id, `[{"op":"replace","path":"userName","value":"other@example.com"}]`,
			"mutability", `userName cannot be changed: it is "jane@example.com", the request has "other@example.com".`},
		{"add without value", "/Users/" + id, `[{"op":"add","path":"title"}]`, "invalidValue", `Operations[0]: add on "title" needs a value.`},
		{"group member display", "/Groups/" + gid, `[{"op":"replace","path":"members[value eq \"` + id + `\"].display","value":"x"}]`,
			"mutability", "Operations[0]: members.display is read-only: the service maintains it."},
		{"group member with no match", "/Groups/" + gid, `[{"op":"replace","path":"members[value eq \"nobody\"].value","value":"x"}]`,
			"noTarget", `Operations[0]: No value of members matches the filter of "members[value eq \"nobody\"].value".`},
	}
	before, beforeVersion := c.resource("/Users/" + id)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, _, e := c.patch(tt.path, patchOp+tt.ops+"}", nil)
			if diff := cmp.Diff(badRequest(tt.scimType, tt.detail), e); diff != "" {
				t.Errorf("error (-want +got):\n%s", diff)
			}
		})
	}
	if after, v := c.resource("/Users/" + id); !cmp.Equal(before, after) || v != beforeVersion {
		t.Errorf("refused operations changed the user (-before +after):\n%s", cmp.Diff(before, after))
	}
	if diff := cmp.Diff(before, c.stored("/Users/"+id)); diff != "" {
		t.Errorf("refused operations changed the user (-before +after):\n%s", diff)
	}
}

func testPatchGroups(t *testing.T, newStore Factory) {
	s := newStore(t, nil)
	c := newClient(t, s)
	a := c.create(`{"schemas":["` + userURN + `"],"userName":"a@example.com"}`)
	b := c.create(`{"schemas":["` + userURN + `"],"userName":"b@example.com"}`)
	gid := c.createGroup(`{"schemas":["` + groupURN + `"],"displayName":"G"}`)
	steps := []struct {
		ops  string
		want []string
		name string
	}{
		{`[{"op":"Add","path":"members","value":[{"value":"` + a + `"},{"value":"` + b + `"}]}]`, []string{a, b}, "G"},
		{`[{"op":"Remove","path":"members[value eq \"` + a + `\"]"}]`, []string{b}, "G"},
		{`[{"op":"Add","path":"members","value":[{"value":"` + a + `"}]},{"op":"Replace","path":"displayName","value":"H"}]`, []string{b, a}, "H"},
		{`[{"op":"Remove","path":"members","value":[{"value":"` + b + `"}]}]`, []string{a}, "H"},
		{`[{"op":"replace","value":{"displayName":"I","members":[{"value":"` + b + `"}]}}]`, []string{b}, "I"},
		{`[{"op":"remove","path":"members"}]`, nil, "I"},
	}
	for i, st := range steps {
		if _, _, e := c.patch("/Groups/"+gid, patchOp+st.ops+"}", nil); e != nil {
			t.Fatalf("step %d: %v", i, *e)
		}
		stored, err := s.GetGroup(t.Context(), "t", gid)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, mb := range stored.Members {
			got = append(got, mb.Value)
		}
		if diff := cmp.Diff(st.want, got); diff != "" || stored.DisplayName != st.name {
			t.Errorf("step %d: displayName %q, members (-want +got):\n%s", i, stored.DisplayName, diff)
		}
		// The groups of a user are those that have it as a member.
		groups, _, err := s.ListGroups(t.Context(), team, scim.ListQuery{
			Filter: []scim.Equal{{Attr: scim.MemberFilter, Value: b}}, StartIndex: 1, Count: scim.MaxGroupsPerUser})
		if err != nil {
			t.Fatal(err)
		}
		var want, gotGroups []string
		if slices.Contains(got, b) {
			want = []string{gid}
		}
		for _, g := range groups {
			gotGroups = append(gotGroups, g.ID)
		}
		if diff := cmp.Diff(want, gotGroups); diff != "" {
			t.Errorf("step %d: groups of the user (-want +got):\n%s", i, diff)
		}
	}
}
