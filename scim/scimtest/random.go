package scimtest

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/kmkit/kmkit/scim"
)

// The generator of random but valid PATCH requests and the resources they apply to, from a
// seeded source so that a failing case can be run again. The suite applies them to every
// backend (testPatchRandom); package scim's differential test applies them to kmkit and to
// two other RFC 7644 implementations.

// PatchCase is one PATCH request and the resource it applies to, in their JSON forms.
type PatchCase struct {
	// Kind is "User" or "Group".
	Kind string `json:"kind"`
	// Resource is the starting resource, with schemas.
	Resource map[string]any `json:"resource"`
	// Ops is the Operations array of the PatchOp message.
	Ops []map[string]any `json:"ops"`
}

func pick[T any](rng *rand.Rand, xs ...T) T { return xs[rng.IntN(len(xs))] }

func chance(rng *rand.Rand, n int) bool { return rng.IntN(n) == 0 }

// opName is an op as identity providers spell it: Entra ID capitalises, Okta does not.
func opName(rng *rand.Rand, op string) string {
	if chance(rng, 2) {
		return string(op[0]-'a'+'A') + op[1:]
	}
	return op
}

var (
	emailValues = []string{"a@x.example.com", "b@x.example.com", "c@y.test", "A@X.EXAMPLE.COM"}
	emailTypes  = []string{"work", "home", "other"}
	words       = []string{"Ann", "Bo", "Cy", "Dee", "Eve", "Lyon", "Paris", "R&D", "Sales"}
)

func genEmail(rng *rand.Rand, primary bool) map[string]any {
	m := map[string]any{"value": pick(rng, emailValues...), "type": pick(rng, emailTypes...)}
	if primary {
		m["primary"] = true
	}
	if chance(rng, 4) {
		m["display"] = pick(rng, words...)
	}
	return m
}

// RandomUserCase is a user named u<i>@example.com with some of its attributes, and one to
// three operations on it.
func RandomUserCase(rng *rand.Rand, i int) PatchCase {
	res := map[string]any{"schemas": []any{userURN}, "userName": fmt.Sprintf("u%d@example.com", i), "active": true}
	if chance(rng, 2) {
		res["displayName"] = pick(rng, words...)
	}
	if chance(rng, 2) {
		res["title"] = pick(rng, words...)
	}
	if chance(rng, 2) {
		name := map[string]any{"givenName": pick(rng, words...)}
		if chance(rng, 2) {
			name["familyName"] = pick(rng, words...)
		}
		res["name"] = name
	}
	// Up to two e-mails, never the same address (ignoring case) with the same type.
	var emails []any
	seen := map[string]bool{}
	for j := range rng.IntN(3) {
		e := genEmail(rng, j == 0 && chance(rng, 2))
		key := strings.ToLower(e["value"].(string)) + "|" + e["type"].(string)
		if !seen[key] {
			seen[key] = true
			emails = append(emails, e)
		}
	}
	if len(emails) > 0 {
		res["emails"] = emails
	}
	if chance(rng, 3) {
		res["phoneNumbers"] = []any{map[string]any{"value": "555-0100", "type": "work"}}
	}
	if chance(rng, 3) {
		res["addresses"] = []any{map[string]any{"locality": pick(rng, "Lyon", "Paris"), "type": pick(rng, "home", "work")}}
	}
	if chance(rng, 2) {
		ent := map[string]any{}
		for _, a := range []string{"department", "costCenter", "employeeNumber"} {
			if chance(rng, 2) {
				ent[a] = pick(rng, words...)
			}
		}
		if chance(rng, 2) {
			ent["manager"] = map[string]any{"value": pick(rng, "m1", "m2")}
		}
		if len(ent) > 0 {
			res[entURN] = ent
			res["schemas"] = []any{userURN, entURN}
		}
	}
	c := PatchCase{Kind: "User", Resource: res}
	for range 1 + rng.IntN(3) {
		c.Ops = append(c.Ops, genUserOp(rng))
	}
	return c
}

func genUserOp(rng *rand.Rand) map[string]any {
	simple := []string{"displayName", "title", "nickName", "name.givenName", "name.familyName", "DisplayName", "name.GivenName"}
	filter := func() string {
		return pick(rng,
			fmt.Sprintf(`type eq %q`, pick(rng, emailTypes...)),
			fmt.Sprintf(`value eq %q`, pick(rng, emailValues...)),
			fmt.Sprintf(`type eq %q or type eq %q`, pick(rng, emailTypes...), pick(rng, emailTypes...)),
			fmt.Sprintf(`value ew "example.com" and type eq %q`, pick(rng, emailTypes...)),
			`primary eq true`)
	}
	switch rng.IntN(16) {
	case 0:
		return map[string]any{"op": opName(rng, pick(rng, "add", "replace")), "path": pick(rng, simple...), "value": pick(rng, words...)}
	case 1:
		return map[string]any{"op": opName(rng, "remove"), "path": pick(rng, simple...)}
	case 2:
		return map[string]any{"op": opName(rng, "replace"), "path": "name", "value": map[string]any{"givenName": pick(rng, words...)}}
	case 3:
		return map[string]any{"op": opName(rng, "add"), "path": "emails", "value": []any{genEmail(rng, chance(rng, 3))}}
	case 4:
		return map[string]any{"op": opName(rng, "replace"), "path": "emails", "value": []any{genEmail(rng, chance(rng, 2))}}
	case 5:
		return map[string]any{"op": opName(rng, pick(rng, "add", "replace")), "path": "emails[" + filter() + "]." + pick(rng, "value", "display"),
			"value": pick(rng, append(emailValues[:3:3], words...)...)}
	case 6:
		return map[string]any{"op": opName(rng, "remove"), "path": "emails[" + filter() + "]" + pick(rng, "", ".display")}
	case 7:
		return map[string]any{"op": opName(rng, "add"), "path": `phoneNumbers[type eq "mobile"].value`, "value": "555-0199"}
	case 8:
		return map[string]any{"op": opName(rng, pick(rng, "add", "replace")), "path": `addresses[type eq "home"].locality`, "value": pick(rng, "Lyon", "Paris", "Nice")}
	case 9:
		return map[string]any{"op": opName(rng, pick(rng, "add", "replace")), "path": entURN + ":" + pick(rng, "department", "costCenter"), "value": pick(rng, words...)}
	case 10:
		return map[string]any{"op": opName(rng, "remove"), "path": entURN + ":" + pick(rng, "department", "manager", "manager.value")}
	case 11:
		return map[string]any{"op": opName(rng, pick(rng, "add", "replace")), "path": entURN + ":manager", "value": map[string]any{"value": pick(rng, "m1", "m3")}}
	case 12:
		return map[string]any{"op": opName(rng, pick(rng, "add", "replace")), "path": entURN, "value": map[string]any{"department": pick(rng, words...)}}
	case 13:
		return map[string]any{"op": opName(rng, pick(rng, "add", "replace")), "value": map[string]any{
			"displayName": pick(rng, words...), "name.givenName": pick(rng, words...), entURN + ":costCenter": pick(rng, words...)}}
	case 14:
		return map[string]any{"op": opName(rng, "replace"), "value": map[string]any{entURN: map[string]any{"department": pick(rng, words...)}, "active": chance(rng, 2)}}
	default:
		return map[string]any{"op": opName(rng, "replace"), "path": pick(rng, "title", "displayName", "nickName"), "value": nil}
	}
}

// RandomGroupCase is a group named G<i> with some of members (user ids) as its members,
// and one to three operations on it.
func RandomGroupCase(rng *rand.Rand, i int, members []string) PatchCase {
	res := map[string]any{"schemas": []any{groupURN}, "displayName": fmt.Sprintf("G%d", i)}
	var list []any
	for _, m := range members {
		if chance(rng, 2) {
			list = append(list, map[string]any{"value": m})
		}
	}
	if len(list) > 0 {
		res["members"] = list
	}
	c := PatchCase{Kind: "Group", Resource: res}
	for range 1 + rng.IntN(3) {
		m := pick(rng, members...)
		var op map[string]any
		switch rng.IntN(6) {
		case 0:
			op = map[string]any{"op": opName(rng, "add"), "path": "members", "value": []any{map[string]any{"value": m}}}
		case 1:
			op = map[string]any{"op": opName(rng, "remove"), "path": fmt.Sprintf(`members[value eq %q]`, m)}
		case 2:
			op = map[string]any{"op": opName(rng, "remove"), "path": "members", "value": []any{map[string]any{"value": m}}}
		case 3:
			op = map[string]any{"op": opName(rng, "replace"), "path": "displayName", "value": fmt.Sprintf("G%d-%d", i, rng.IntN(9))}
		case 4:
			op = map[string]any{"op": opName(rng, "replace"), "path": "members", "value": []any{map[string]any{"value": m}}}
		default:
			op = map[string]any{"op": opName(rng, "replace"), "value": map[string]any{"displayName": fmt.Sprintf("H%d", i)}}
		}
		c.Ops = append(c.Ops, op)
	}
	return c
}

// randomCases is how many generated cases the suite applies to each backend.
const randomCases = 150

// testPatchRandom applies generated PATCH requests through a scim.Service over the store
// and checks, case by case, that the store then holds what the service computed from the
// resource as it was (scim.Service.ApplyUserPatch), that a PATCH that changes nothing keeps
// the version, and that a refused PATCH leaves the resource as it was: every backend
// agrees with the computation, and so with each other.
func testPatchRandom(t *testing.T, newStore Factory) {
	s := newStore(t, nil)
	svc := scim.NewService(s)
	rng := rand.New(rand.NewPCG(28, 7644))
	ctx := t.Context()
	for i := range randomCases {
		team := fmt.Sprintf("r%d", i)
		var c PatchCase
		var id string
		if chance(rng, 4) {
			var members []string
			for j := range 4 {
				u, err := s.CreateUser(ctx, team, scim.User{UserName: fmt.Sprintf("m%d@example.com", j), Active: true, Role: scim.RoleMember})
				if err != nil {
					t.Fatal(err)
				}
				members = append(members, u.ID)
			}
			c = RandomGroupCase(rng, i, members)
			m := scim.CloneAttributes(c.Resource)
			if e := scim.CheckGroup(m); e != nil {
				t.Fatalf("case %d: group: %v", i, e)
			}
			g, err := scim.GroupFromAttributes(m)
			if err == nil {
				g, err = s.CreateGroup(ctx, team, g)
			}
			if err != nil {
				t.Fatalf("case %d: group: %v", i, err)
			}
			id = g.ID
		} else {
			c = RandomUserCase(rng, i)
			body, _ := json.Marshal(c.Resource)
			u, err := newUser(t, string(body))
			if err == nil {
				u, err = s.CreateUser(ctx, team, u)
			}
			if err != nil {
				t.Fatalf("case %d: user: %v", i, err)
			}
			id = u.ID
		}
		body, _ := json.Marshal(map[string]any{"schemas": []any{scim.PatchOpSchema}, "Operations": c.Ops})
		ops, e := scim.ParsePatch(decode(t, string(body)), c.Kind == "User")
		if e != nil {
			t.Fatalf("case %d: %s: %v", i, body, e)
		}
		if c.Kind == "User" {
			cur, err := s.GetUser(ctx, team, id)
			if err != nil {
				t.Fatal(err)
			}
			want, werr := svc.ApplyUserPatch(cur.Clone(), ops)
			got, gerr := svc.PatchUser(ctx, team, id, ops, nil)
			stored, err := s.GetUser(ctx, team, id)
			if err != nil {
				t.Fatal(err)
			}
			want.ExternalID = cur.ExternalID
			checkRandom(t, i, body, werr, gerr, scim.SameUser(want, cur),
				userJSON(cur), version{cur.Version, cur.LastModified},
				userJSON(want), userJSON(got), userJSON(stored), version{got.Version, got.LastModified}, version{stored.Version, stored.LastModified})
			continue
		}
		cur, err := s.GetGroup(ctx, team, id)
		if err != nil {
			t.Fatal(err)
		}
		want, werr := svc.ApplyGroupPatch(cur.Clone(), ops)
		got, gerr := svc.PatchGroup(ctx, team, id, ops, nil)
		stored, err := s.GetGroup(ctx, team, id)
		if err != nil {
			t.Fatal(err)
		}
		want.ExternalID = cur.ExternalID
		checkRandom(t, i, body, werr, gerr, scim.SameGroup(want, cur),
			groupShape(cur), version{cur.Version, cur.LastModified},
			groupShape(want), groupShape(got), groupShape(stored), version{got.Version, got.LastModified}, version{stored.Version, stored.LastModified})
	}
}

// groupShape is what a group's PATCH decides: its JSON form without the members' display,
// which the store fills in on reads.
func groupShape(g scim.Group) map[string]any {
	m := groupJSON(g)
	for _, mb := range m["members"].([]any) {
		delete(mb.(map[string]any), "display")
	}
	return m
}

// checkRandom compares one generated case's outcome with the service's computation.
func checkRandom(t *testing.T, i int, body []byte, werr, gerr error, same bool, before map[string]any, beforeV version,
	want, got, stored map[string]any, gotV, storedV version) {
	t.Helper()
	if werr != nil {
		we, _ := scim.ErrorOf(werr)
		ge, ok := scim.ErrorOf(gerr)
		if !ok || ge != we {
			t.Errorf("case %d %s: PATCH answered %v, the computation %v", i, body, gerr, werr)
		}
		if !cmp.Equal(before, stored) || storedV != beforeV {
			t.Errorf("case %d %s: a refused PATCH changed the resource (-before +after):\n%s", i, body, cmp.Diff(before, stored))
		}
		return
	}
	if gerr != nil {
		t.Errorf("case %d %s: PATCH refused with %v; the computation gave %v", i, body, gerr, want)
		return
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("case %d %s: PATCH result (-computed +got):\n%s", i, body, diff)
	}
	if diff := cmp.Diff(got, stored); diff != "" || gotV != storedV {
		t.Errorf("case %d %s: stored %+v, answered %+v (-answered +stored):\n%s", i, body, storedV, gotV, diff)
	}
	if same && gotV != beforeV {
		t.Errorf("case %d %s: a PATCH that changes nothing moved the version from %+v to %+v", i, body, beforeV, gotV)
	}
	if !same && gotV.Version == beforeV.Version {
		t.Errorf("case %d %s: a PATCH that changes the resource kept version %d", i, body, gotV.Version)
	}
}
