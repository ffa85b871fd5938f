package scimtest

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/kmkit/kmkit/scim"
	"github.com/kmkit/kmkit/scim/scimhttp"
)

// The PATCH suite sends RFC 7644 section 3.5.2 requests through a scimhttp.Handler over the
// store and checks what the store then holds. Its cases include, with their exact bodies,
// the operations identity providers send that once answered 200 and stored nothing.

const (
	userURN = "urn:ietf:params:scim:schemas:core:2.0:User"
	extURN  = "urn:celonis:params:scim:schemas:extension:2.0:User"
	entURN  = "urn:ietf:params:scim:schemas:extension:enterprise:2.0:User"
	patchOp = `{"schemas":["urn:ietf:params:scim:api:messages:2.0:PatchOp"],"Operations":`
)

// client calls a handler over a store as team "t".
type client struct {
	t *testing.T
	h http.Handler
}

func newClient(t *testing.T, s scim.Store) client {
	return client{t, scimhttp.NewHandler(s, scimhttp.WithPrefix(""), scimhttp.WithBaseURL("https://idm.example"),
		scimhttp.WithTeam(func(*http.Request) (string, bool) { return "t", true }))}
}

func (c client) call(method, path, body string) (int, map[string]any) {
	c.t.Helper()
	return c.callIfMatch(method, path, body, "")
}

// callIfMatch is call with an If-Match header when ifMatch is not "".
func (c client) callIfMatch(method, path, body, ifMatch string) (int, map[string]any) {
	c.t.Helper()
	req := httptest.NewRequest(method, "https://idm.example"+path, strings.NewReader(body))
	if ifMatch != "" {
		req.Header.Set("If-Match", ifMatch)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/scim+json")
	}
	rec := httptest.NewRecorder()
	c.h.ServeHTTP(rec, req)
	var m map[string]any
	if rec.Body.Len() > 0 {
		if err := json.Unmarshal(rec.Body.Bytes(), &m); err != nil {
			c.t.Fatalf("%s %s: body %q: %v", method, path, rec.Body.String(), err)
		}
	}
	return rec.Code, m
}

// create posts a user and returns its id.
func (c client) create(body string) string {
	c.t.Helper()
	code, m := c.call("POST", "/Users", body)
	if code != http.StatusCreated {
		c.t.Fatalf("create: %d %v", code, m)
	}
	return m["id"].(string)
}

// resource returns a user or group as GET returns it, without id and meta.
func (c client) resource(path string) map[string]any {
	c.t.Helper()
	code, m := c.call("GET", path, "")
	if code != http.StatusOK {
		c.t.Fatalf("GET %s: %d %v", path, code, m)
	}
	delete(m, "id")
	delete(m, "meta")
	return m
}

// resourceMeta returns the meta of a user or group as GET returns it.
func (c client) resourceMeta(path string) map[string]any {
	c.t.Helper()
	code, m := c.call("GET", path, "")
	if code != http.StatusOK {
		c.t.Fatalf("GET %s: %d %v", path, code, m)
	}
	meta, _ := m["meta"].(map[string]any)
	return meta
}

const jane = `{"schemas":["` + userURN + `","` + entURN + `"],"userName":"jane@example.com","displayName":"Jane",
	"title":"Engineer","name":{"givenName":"Jane","familyName":"Doe"},
	"emails":[{"value":"jane@example.com","type":"home"}],
	"` + entURN + `":{"department":"R&D","employeeNumber":"7","manager":{"value":"boss-id"}}}`

// janeWant is jane as a GET returns it, without id and meta; edit changes a copy.
func janeWant(edit func(m map[string]any)) map[string]any {
	m := map[string]any{
		"schemas":     []any{userURN, extURN, entURN},
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
			janeWant(func(m map[string]any) {
				delete(m, entURN)
				m["schemas"] = []any{userURN, extURN}
			})},
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
			s := newStore(t, nil)
			c := newClient(t, s)
			id := c.create(jane)
			code, m := c.call("PATCH", "/Users/"+id, patchOp+tt.ops+"}")
			if code != http.StatusOK {
				t.Fatalf("PATCH: %d %v", code, m)
			}
			delete(m, "id")
			delete(m, "meta")
			if diff := cmp.Diff(tt.want, m); diff != "" {
				t.Errorf("PATCH response (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.want, c.resource("/Users/"+id)); diff != "" {
				t.Errorf("stored user (-want +got):\n%s", diff)
			}
		})
	}
}

func testPatchErrors(t *testing.T, newStore Factory) {
	s := newStore(t, nil)
	c := newClient(t, s)
	id := c.create(jane)
	code, g := c.call("POST", "/Groups", `{"schemas":["urn:ietf:params:scim:schemas:core:2.0:Group"],"displayName":"G","members":[{"value":"`+id+`"}]}`)
	if code != http.StatusCreated {
		t.Fatalf("group: %d %v", code, g)
	}
	gid := g["id"].(string)
	tests := []struct {
		name, path, ops, scimType, detail string
	}{
		{"replace with no match", "/Users/" + id, `[{"op":"replace","path":"emails[type eq \"work\"].value","value":"x@y.example"}]`,
			"noTarget", `Operations[0]: No value of emails matches the filter of "emails[type eq \"work\"].value".`},
		{"add with a filter that describes no value", "/Users/" + id, `[{"op":"add","path":"emails[type sw \"w\"].value","value":"x@y.example"}]`,
			"noTarget", `Operations[0]: No value of emails matches the filter of "emails[type sw \"w\"].value", and the filter does not describe a value to create (it must combine eq terms with and).`},
		{"remove without path", "/Users/" + id, `[{"op":"remove"}]`, "noTarget", "Operations[0]: remove needs a path."},
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
	before := c.resource("/Users/" + id)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, m := c.call("PATCH", tt.path, patchOp+tt.ops+"}")
			want := map[string]any{"schemas": []any{"urn:ietf:params:scim:api:messages:2.0:Error"}, "status": "400",
				"scimType": tt.scimType, "detail": tt.detail}
			if diff := cmp.Diff(want, m); code != http.StatusBadRequest || diff != "" {
				t.Errorf("status %d, body (-want +got):\n%s", code, diff)
			}
		})
	}
	if diff := cmp.Diff(before, c.resource("/Users/"+id)); diff != "" {
		t.Errorf("refused operations changed the user (-before +after):\n%s", diff)
	}
}

func testPatchGroups(t *testing.T, newStore Factory) {
	s := newStore(t, nil)
	c := newClient(t, s)
	a := c.create(`{"schemas":["` + userURN + `"],"userName":"a@example.com"}`)
	b := c.create(`{"schemas":["` + userURN + `"],"userName":"b@example.com"}`)
	code, g := c.call("POST", "/Groups", `{"schemas":["urn:ietf:params:scim:schemas:core:2.0:Group"],"displayName":"G"}`)
	if code != http.StatusCreated {
		t.Fatalf("group: %d %v", code, g)
	}
	gid := g["id"].(string)
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
		code, m := c.call("PATCH", "/Groups/"+gid, patchOp+st.ops+"}")
		if code != http.StatusOK {
			t.Fatalf("step %d: %d %v", i, code, m)
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
		// groups on a user lists its groups; a user in none has no groups.
		var want any
		if slices.Contains(got, b) {
			want = []any{map[string]any{"value": gid, "display": st.name, "type": "direct", "$ref": "https://idm.example/Groups/" + gid}}
		}
		if diff := cmp.Diff(want, c.resource("/Users/" + b)["groups"]); diff != "" {
			t.Errorf("step %d: groups of the user (-want +got):\n%s", i, diff)
		}
	}
}
