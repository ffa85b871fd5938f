package scim_test

import (
	"fmt"
	"math/rand/v2"
	"strings"
)

// The generator of the differential test: random but valid resources and PATCH requests,
// from a seeded source so that a failing case can be run again.

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

// genUser is a user with some of its attributes and one to three operations.
func genUser(rng *rand.Rand, i int) patchCase {
	res := map[string]any{"schemas": []any{coreURN}, "userName": fmt.Sprintf("u%d@example.com", i), "active": true}
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
			res["schemas"] = []any{coreURN, entURN}
		}
	}
	c := patchCase{Kind: "User", Resource: res}
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

// genGroup is a group with some of members as its members and one to three operations.
func genGroup(rng *rand.Rand, i int, members []string) patchCase {
	res := map[string]any{"schemas": []any{grpURN}, "displayName": fmt.Sprintf("G%d", i)}
	var list []any
	for _, m := range members {
		if chance(rng, 2) {
			list = append(list, map[string]any{"value": m})
		}
	}
	if len(list) > 0 {
		res["members"] = list
	}
	c := patchCase{Kind: "Group", Resource: res}
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
