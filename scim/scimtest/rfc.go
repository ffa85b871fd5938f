package scimtest

import (
	"net/http"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// The cases below are the PATCH defects of issue 28, each with the exact body that showed
// it, and the two behaviours RFC 7644 leaves open as the package documentation of scim
// decides them. Expected values are written out from the RFC's text, not computed.

const (
	emailsN1 = `{"schemas":["` + userURN + `"],"userName":"n1@x.example.com","emails":[{"value":"n1@x.example.com","type":"work","primary":true}]}`
	entDCM   = `{"schemas":["` + userURN + `","` + entURN + `"],"userName":"e@x.example.com","` + entURN + `":{"department":"D","costCenter":"C","manager":{"value":"m1"}}}`
)

// patchCase is a user created from create, patched with ops (the Operations array exactly
// as sent), whose attribute attr (an extension URN for an extension's object) must then be
// want, in the response and in the store.
type patchCase struct {
	name, create, ops, attr string
	want                    any
}

func email(value, typ string, primary ...bool) map[string]any {
	m := map[string]any{"value": value, "type": typ}
	if len(primary) > 0 {
		m["primary"] = primary[0]
	}
	return m
}

func testPatchRFC(t *testing.T, newStore Factory) {
	tests := []patchCase{
		// 1. An e-mail address may be both work and home (RFC 7643 section 2.4): adding it
		// as home adds a value (RFC 7644 section 3.5.2.1).
		{"1 add the same address as home", emailsN1,
			`[{"op":"add","path":"emails","value":[{"value":"n1@x.example.com","type":"home"}]}]`,
			"emails", []any{email("n1@x.example.com", "work", true), email("n1@x.example.com", "home")}},
		{"1 path-less add of the same address as home", emailsN1,
			`[{"op":"add","value":{"emails":[{"value":"n1@x.example.com","type":"home"}]}}]`,
			"emails", []any{email("n1@x.example.com", "work", true), email("n1@x.example.com", "home")}},
		{"1 add the address in upper case as home", emailsN1,
			`[{"op":"add","path":"emails","value":[{"value":"N1@X.EXAMPLE.COM","type":"home"}]}]`,
			"emails", []any{email("n1@x.example.com", "work", true), email("N1@X.EXAMPLE.COM", "home")}},
		{"1 add the address in upper case as work is no change", emailsN1,
			`[{"op":"add","path":"emails","value":[{"value":"N1@X.EXAMPLE.COM","type":"work"}]}]`,
			"emails", []any{email("n1@x.example.com", "work", true)}},
		{"1 add the same value with primary makes it primary",
			`{"schemas":["` + userURN + `"],"userName":"n1b@x.example.com","emails":[{"value":"n1b@x.example.com","type":"work"}]}`,
			`[{"op":"add","path":"emails","value":[{"value":"n1b@x.example.com","type":"work","primary":true}]}]`,
			"emails", []any{email("n1b@x.example.com", "work", true)}},
		// 2. A new primary value: the others are primary no more (RFC 7644 section 3.5.2).
		{"2 add a second primary", emailsN1,
			`[{"op":"add","path":"emails","value":[{"value":"other@x.example.com","type":"home","primary":true}]}]`,
			"emails", []any{email("n1@x.example.com", "work", false), email("other@x.example.com", "home", true)}},
		{"2 replace primary of the home value",
			`{"schemas":["` + userURN + `"],"userName":"n1@x.example.com","emails":[{"value":"n1@x.example.com","type":"work","primary":true},{"value":"n1@x.example.com","type":"home"}]}`,
			`[{"op":"replace","path":"emails[type eq \"home\"].primary","value":true}]`,
			"emails", []any{email("n1@x.example.com", "work", false), email("n1@x.example.com", "home", true)}},
		// 3. Replacing an extension with some of its attributes leaves the others
		// (RFC 7644 section 3.5.2.3: sub-attributes not given are left unchanged).
		{"3 replace the enterprise extension by its URN", entDCM,
			`[{"op":"replace","path":"urn:ietf:params:scim:schemas:extension:enterprise:2.0:User","value":{"department":"D2"}}]`,
			entURN, map[string]any{"department": "D2", "costCenter": "C", "manager": map[string]any{"value": "m1"}}},
		{"3 path-less replace of the enterprise extension", entDCM,
			`[{"op":"replace","value":{"urn:ietf:params:scim:schemas:extension:enterprise:2.0:User":{"department":"D2"}}}]`,
			entURN, map[string]any{"department": "D2", "costCenter": "C", "manager": map[string]any{"value": "m1"}}},
		// 4. Attribute names are case-insensitive (RFC 7643 section 2.1): the address is
		// there already.
		{"4 add an address again with other capitals",
			`{"schemas":["` + userURN + `"],"userName":"a@x.example.com","addresses":[{"locality":"Lyon","type":"home"}]}`,
			`[{"op":"add","path":"addresses","value":[{"Locality":"Lyon","Type":"home"}]}]`,
			"addresses", []any{map[string]any{"locality": "Lyon", "type": "home"}}},
		// 5. valFilter may be in parentheses (RFC 7644 section 3.4.2.2).
		{"5 remove display by a filter in parentheses",
			`{"schemas":["` + userURN + `"],"userName":"p@x.example.com","emails":[{"value":"w@x.example.com","type":"work","display":"W"},{"value":"h@y.test","type":"home","display":"H"}]}`,
			`[{"op":"remove","path":"emails[(type eq \"work\" or type eq \"home\") and value ew \"example.com\"].display"}]`,
			"emails", []any{email("w@x.example.com", "work"), map[string]any{"value": "h@y.test", "type": "home", "display": "H"}}},
		{"5 remove by a parenthesised filter",
			`{"schemas":["` + userURN + `"],"userName":"p@x.example.com","emails":[{"value":"w@x.example.com","type":"work"},{"value":"h@y.test","type":"home"}]}`,
			`[{"op":"remove","path":"emails[(type eq \"work\")]"}]`,
			"emails", []any{email("h@y.test", "home")}},
		// 8. Replacing an attribute without a value is an add (RFC 7644 section 3.5.2.3).
		{"8 replace emails.type of a user without e-mails",
			`{"schemas":["` + userURN + `"],"userName":"z@x.example.com"}`,
			`[{"op":"replace","path":"emails.type","value":"work"}]`,
			"emails", []any{map[string]any{"type": "work"}}},
		{"8 add emails.type of a user without e-mails",
			`{"schemas":["` + userURN + `"],"userName":"z@x.example.com"}`,
			`[{"op":"add","path":"emails.type","value":"work"}]`,
			"emails", []any{map[string]any{"type": "work"}}},
		// Open behaviours, as package scim decides them: a replace whose filter matches
		// several values with one value leaves that value once, in place of the first
		// match; a replace with null whose filter matches nothing changes nothing.
		{"open replace of several matches by one value",
			`{"schemas":["` + userURN + `"],"userName":"o@x.example.com","emails":[{"value":"a@x.example.com","type":"work"},{"value":"h@y.test","type":"home"},{"value":"b@x.example.com","type":"work"}]}`,
			`[{"op":"replace","path":"emails[type eq \"work\"]","value":{"value":"c@x.example.com","type":"work"}}]`,
			"emails", []any{email("c@x.example.com", "work"), email("h@y.test", "home")}},
		{"open replace with null matching nothing", emailsN1,
			`[{"op":"replace","path":"emails[type eq \"home\"]","value":null}]`,
			"emails", []any{email("n1@x.example.com", "work", true)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := newClient(t, newStore(t, nil))
			id := c.create(tt.create)
			code, m := c.call("PATCH", "/Users/"+id, patchOp+tt.ops+"}")
			if code != http.StatusOK {
				t.Fatalf("PATCH: %d %v", code, m)
			}
			if diff := cmp.Diff(tt.want, m[tt.attr]); diff != "" {
				t.Errorf("%s in the response (-want +got):\n%s", tt.attr, diff)
			}
			if diff := cmp.Diff(tt.want, c.resource("/Users/" + id)[tt.attr]); diff != "" {
				t.Errorf("stored %s (-want +got):\n%s", tt.attr, diff)
			}
		})
	}
	t.Run("6 no-op adds keep the version", func(t *testing.T) { testNoOpAdd(t, newStore) })
	t.Run("7 duplicate values name the attribute and the value", func(t *testing.T) {
		c := newClient(t, newStore(t, nil))
		code, m := c.call("POST", "/Users", `{"schemas":["`+userURN+`"],"userName":"i@x.example.com","ims":[{"value":"a","type":"xmpp"},{"value":"a","type":"xmpp"}]}`)
		want := map[string]any{"schemas": []any{"urn:ietf:params:scim:api:messages:2.0:Error"}, "status": "400", "scimType": "invalidValue",
			"detail": `ims holds the value {"type":"xmpp","value":"a"} twice: a multi-valued attribute holds each value once.`}
		if diff := cmp.Diff(want, m); code != http.StatusBadRequest || diff != "" {
			t.Errorf("status %d, body (-want +got):\n%s", code, diff)
		}
		code, m = c.call("POST", "/Users", `{"schemas":["`+userURN+`"],"userName":"i@x.example.com","emails":[{"value":"a@x.example.com","primary":true},{"value":"b@x.example.com","primary":true}]}`)
		want["detail"] = `emails has 2 values with primary true ({"primary":true,"value":"a@x.example.com"}, {"primary":true,"value":"b@x.example.com"}): at most one value may be primary (RFC 7643 section 2.4).`
		if diff := cmp.Diff(want, m); code != http.StatusBadRequest || diff != "" {
			t.Errorf("status %d, body (-want +got):\n%s", code, diff)
		}
	})
}

// testNoOpAdd sends adds of what is there already, with the version held as If-Match:
// RFC 7644 section 3.5.2.1 says they SHALL NOT change the modify timestamp, so the
// version stays and the next request with it succeeds.
func testNoOpAdd(t *testing.T, newStore Factory) {
	c := newClient(t, newStore(t, nil))
	uid := c.create(emailsN1)
	code, g := c.call("POST", "/Groups", `{"schemas":["urn:ietf:params:scim:schemas:core:2.0:Group"],"displayName":"G","members":[{"value":"`+uid+`"}]}`)
	if code != http.StatusCreated {
		t.Fatalf("group: %d %v", code, g)
	}
	for _, tt := range []struct{ path, ops string }{
		{"/Groups/" + g["id"].(string), `[{"op":"add","path":"members","value":[{"value":"` + uid + `"}]}]`},
		{"/Users/" + uid, `[{"op":"add","path":"emails","value":[{"value":"n1@x.example.com","type":"work","primary":true}]}]`},
		{"/Users/" + uid, `[{"op":"add","path":"emails","value":[{"value":"n1@x.example.com","type":"work"}]}]`},
	} {
		before := c.resourceMeta(tt.path)
		for range 2 {
			code, m := c.callIfMatch("PATCH", tt.path, patchOp+tt.ops+"}", before["version"].(string))
			if code != http.StatusOK {
				t.Fatalf("PATCH %s %s with If-Match %s: %d %v", tt.path, tt.ops, before["version"], code, m)
			}
			if diff := cmp.Diff(before, m["meta"]); diff != "" {
				t.Errorf("PATCH %s %s: meta (-before +after):\n%s", tt.path, tt.ops, diff)
			}
		}
		if diff := cmp.Diff(before, c.resourceMeta(tt.path)); diff != "" {
			t.Errorf("stored meta of %s after %s (-before +after):\n%s", tt.path, tt.ops, diff)
		}
	}
}
