package scimtest

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/kmkit/kmkit/scim"
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
			m, _, e := c.patch("/Users/"+id, patchOp+tt.ops+"}", nil)
			if e != nil {
				t.Fatalf("PATCH: %v", *e)
			}
			if diff := cmp.Diff(tt.want, m[tt.attr]); diff != "" {
				t.Errorf("%s in the result (-want +got):\n%s", tt.attr, diff)
			}
			if diff := cmp.Diff(tt.want, c.stored("/Users/" + id)[tt.attr]); diff != "" {
				t.Errorf("stored %s (-want +got):\n%s", tt.attr, diff)
			}
		})
	}
	t.Run("6 no-op adds keep the version", func(t *testing.T) { testNoOpAdd(t, newStore) })
	t.Run("removes naming no values change nothing", func(t *testing.T) { testRemoveNothing(t, newStore) })
	t.Run("values stored before the rule", func(t *testing.T) { testPatchStoredDuplicates(t, newStore) })
	t.Run("7 duplicate values name the attribute and the value", func(t *testing.T) {
		// The rule of POST, PUT and PATCH alike (scim.CheckValues), with POST's body.
		_, err := newUser(t, `{"schemas":["`+userURN+`"],"userName":"i@x.example.com","ims":[{"value":"a","type":"xmpp"},{"value":"a","type":"xmpp"}]}`)
		want := badRequest("invalidValue", `ims holds the value {"type":"xmpp","value":"a"} twice: a multi-valued attribute holds each value once.`)
		if diff := cmp.Diff(want, asError(err)); diff != "" {
			t.Errorf("error (-want +got):\n%s", diff)
		}
		_, err = newUser(t, `{"schemas":["`+userURN+`"],"userName":"i@x.example.com","emails":[{"value":"a@x.example.com","primary":true},{"value":"b@x.example.com","primary":true}]}`)
		want = badRequest("invalidValue", `emails has 2 values with primary true ({"primary":true,"value":"a@x.example.com"}, {"primary":true,"value":"b@x.example.com"}): at most one value may be primary (RFC 7643 section 2.4).`)
		if diff := cmp.Diff(want, asError(err)); diff != "" {
			t.Errorf("error (-want +got):\n%s", diff)
		}
		// A PATCH that would store the duplicate is refused alike, and stores nothing.
		c := newClient(t, newStore(t, nil))
		id := c.create(`{"schemas":["` + userURN + `"],"userName":"i@x.example.com","ims":[{"value":"a","type":"xmpp"}]}`)
		_, _, e := c.patch("/Users/"+id, patchOp+`[{"op":"replace","path":"ims","value":[{"value":"a","type":"xmpp"},{"value":"A","type":"XMPP"}]}]}`, nil)
		want = badRequest("invalidValue", `ims holds the value {"type":"XMPP","value":"A"} twice: a multi-valued attribute holds each value once.`)
		if diff := cmp.Diff(want, e); diff != "" {
			t.Errorf("PATCH error (-want +got):\n%s", diff)
		}
		if diff := cmp.Diff([]any{map[string]any{"value": "a", "type": "xmpp"}}, c.stored("/Users/" + id)["ims"]); diff != "" {
			t.Errorf("stored ims (-want +got):\n%s", diff)
		}
	})
}

// testPatchStoredDuplicates: a user stored before the duplicate rule was enforced, with
// the same address twice, can still be patched; only a PATCH that changes its e-mails is
// held to the rule.
func testPatchStoredDuplicates(t *testing.T, newStore Factory) {
	s := newStore(t, nil)
	c := newClient(t, s)
	u, err := s.CreateUser(t.Context(), team, scim.User{UserName: "d@x.example.com", Active: true, Role: scim.RoleMember,
		Attributes: map[string]any{"emails": []any{email("d@x.example.com", "work"), email("D@X.EXAMPLE.COM", "work")}}})
	if err != nil {
		t.Fatal(err)
	}
	m, _, e := c.patch("/Users/"+u.ID, patchOp+`[{"op":"replace","path":"title","value":"T"}]}`, nil)
	if e != nil || m["title"] != "T" {
		t.Fatalf("PATCH of title: %v, title %v", e, m["title"])
	}
	_, _, e = c.patch("/Users/"+u.ID, patchOp+`[{"op":"add","path":"emails","value":[{"value":"o@x.example.com","type":"home"}]}]}`, nil)
	want := badRequest("invalidValue", `emails holds the value {"type":"work","value":"D@X.EXAMPLE.COM"} twice: a multi-valued attribute holds each value once.`)
	if diff := cmp.Diff(want, e); diff != "" {
		t.Errorf("PATCH of emails: error (-want +got):\n%s", diff)
	}
}

// asError returns the SCIM error of err, nil for none.
func asError(err error) *scim.Error {
	if err == nil {
		return nil
	}
	e, ok := scim.ErrorOf(err)
	if !ok {
		return &scim.Error{Detail: err.Error()}
	}
	return &e
}

// testNoOpAdd sends adds of what is there already, with the version held as the
// precondition: RFC 7644 section 3.5.2.1 says they SHALL NOT change the modify timestamp,
// so the version stays and the next request with it succeeds.
func testNoOpAdd(t *testing.T, newStore Factory) {
	c := newClient(t, newStore(t, nil))
	uid := c.create(emailsN1)
	gid := c.createGroup(`{"schemas":["` + groupURN + `"],"displayName":"G","members":[{"value":"` + uid + `"}]}`)
	checkNoChange(t, c, "/Groups/"+gid, `[{"op":"add","path":"members","value":[{"value":"`+uid+`"}]}]`)
	checkNoChange(t, c, "/Users/"+uid, `[{"op":"add","path":"emails","value":[{"value":"n1@x.example.com","type":"work","primary":true}]}]`)
	checkNoChange(t, c, "/Users/"+uid, `[{"op":"add","path":"emails","value":[{"value":"n1@x.example.com","type":"work"}]}]`)
}

// testRemoveNothing sends removes whose value lists no values. A remove with a value
// list removes the values listed (Entra ID removes members so); an empty list, or null,
// names none, so nothing is removed: only a remove without a value removes every value
// (RFC 7644 section 3.5.2.2). Once, the empty list emptied the group.
func testRemoveNothing(t *testing.T, newStore Factory) {
	c := newClient(t, newStore(t, nil))
	uid := c.create(`{"schemas":["` + userURN + `"],"userName":"r@x.example.com",
		"emails":[{"value":"r@x.example.com","type":"work","primary":true},{"value":"r@y.test","type":"home"}],
		"phoneNumbers":[{"value":"+1 555 0100","type":"mobile"}],"ims":[{"value":"r","type":"xmpp"}]}`)
	other := c.create(`{"schemas":["` + userURN + `"],"userName":"s@x.example.com"}`)
	gid := c.createGroup(`{"schemas":["` + groupURN + `"],"displayName":"G","members":[{"value":"` + uid + `"},{"value":"` + other + `"}]}`)
	for _, ops := range []string{
		`[{"op":"remove","path":"members","value":[]}]`,
		`[{"op":"Remove","path":"members","value":null}]`,
		`[{"op":"remove","path":"members","value":[]},{"op":"remove","path":"members","value":[{"value":"absent-id"}]}]`,
	} {
		checkNoChange(t, c, "/Groups/"+gid, ops)
	}
	for _, ops := range []string{
		`[{"op":"remove","path":"emails","value":[]}]`,
		`[{"op":"remove","path":"emails","value":null}]`,
		`[{"op":"remove","path":"phoneNumbers","value":[]}]`,
		`[{"op":"remove","path":"ims","value":[]}]`,
		`[{"op":"remove","path":"addresses","value":[]}]`,
	} {
		checkNoChange(t, c, "/Users/"+uid, ops)
	}
	// Without a value, remove still removes every value.
	if m, _, e := c.patch("/Groups/"+gid, patchOp+`[{"op":"remove","path":"members"}]}`, nil); e != nil || len(m["members"].([]any)) != 0 {
		t.Errorf("remove members without a value: members %v, error %v", m["members"], e)
	}
}

// checkNoChange applies ops to path twice with the version held as the precondition: each
// time the PATCH succeeds, answers the resource as it was with its version and modify
// time, and the store holds it unchanged (RFC 7644 section 3.5.2: a PATCH that changes
// nothing writes nothing).
func checkNoChange(t *testing.T, c client, path, ops string) {
	t.Helper()
	before, held := c.resource(path)
	pre := func(v int64) error {
		if v != held.Version {
			return scim.Errorf(scim.ErrVersionMismatch, "version %d, held %d", v, held.Version)
		}
		return nil
	}
	for range 2 {
		m, v, e := c.patch(path, patchOp+ops+"}", pre)
		if e != nil {
			t.Fatalf("PATCH %s %s with the version held: %v", path, ops, *e)
		}
		if v != held || !cmp.Equal(before, m) {
			t.Errorf("PATCH %s %s: version %+v, held %+v; resource (-before +after):\n%s", path, ops, v, held, cmp.Diff(before, m))
		}
	}
	if after, v := c.resource(path); v != held || !cmp.Equal(before, after) {
		t.Errorf("stored %s after %s: version %+v, held %+v; (-before +after):\n%s", path, ops, v, held, cmp.Diff(before, after))
	}
}
