package sqlstore_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/kmkit/kmkit/scim"
	"github.com/kmkit/kmkit/scim/scimhttp"
)

// answer is the status and body of one request of a race.
type answer struct {
	code int
	body map[string]any
}

// race sends the requests all at once, alternating between the replicas, and returns
// each one's answer in request order. No answer may be a 5xx.
func race(t *testing.T, hs [2]http.Handler, n int, req func(i int) (method, path, body string)) []answer {
	t.Helper()
	return raceRequests(t, hs, n, func(i int) *http.Request {
		method, path, body := req(i)
		r := httptest.NewRequest(method, "http://idm.example"+scimhttp.BasePath+path, strings.NewReader(body))
		r.Header.Set("Content-Type", "application/scim+json")
		return r
	})
}

// raceRequests is race with the requests made by req.
func raceRequests(t *testing.T, hs [2]http.Handler, n int, req func(i int) *http.Request) []answer {
	t.Helper()
	out := make([]answer, n)
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			r := req(i)
			w := httptest.NewRecorder()
			<-start
			hs[i%2].ServeHTTP(w, r)
			out[i].code = w.Code
			if w.Body.Len() > 0 {
				if err := json.Unmarshal(w.Body.Bytes(), &out[i].body); err != nil {
					t.Errorf("%s %s: %d %s: %v", r.Method, r.URL, w.Code, w.Body, err)
				}
			}
			if w.Code >= 500 {
				t.Errorf("%s %s: %d %s", r.Method, r.URL, w.Code, w.Body)
			}
		})
	}
	close(start)
	wg.Wait()
	return out
}

// codes counts the status codes of answers.
func codes(as []answer) map[int]int {
	out := map[int]int{}
	for _, a := range as {
		out[a.code]++
	}
	return out
}

// scimInvariants checks the SCIM rules of team acme in the database itself, not through
// the store: no membership of a missing user or group, no user in more than
// MaxGroupsPerUser groups, no two users or groups of one name key, at most seats active
// users (seats > 0).
func scimInvariants(t *testing.T, dsn string, seats int) {
	t.Helper()
	db := open(t, dsn).SQL()
	for _, c := range []struct{ what, query string }{
		{"memberships of missing users", `SELECT count(*) FROM scim_members m WHERE m.team = 'acme'
			AND NOT EXISTS (SELECT 1 FROM scim_users u WHERE u.team = m.team AND u.id = m.user_id)`},
		{"memberships of missing groups", `SELECT count(*) FROM scim_members m WHERE m.team = 'acme'
			AND NOT EXISTS (SELECT 1 FROM scim_groups g WHERE g.team = m.team AND g.id = m.group_id)`},
		{"users in too many groups", fmt.Sprintf(`SELECT count(*) FROM (SELECT user_id FROM scim_members WHERE team = 'acme'
			GROUP BY user_id HAVING count(*) > %d) x`, scim.MaxGroupsPerUser)},
		{"duplicate memberships", `SELECT count(*) FROM (SELECT 1 FROM scim_members WHERE team = 'acme'
			GROUP BY group_id, user_id HAVING count(*) > 1) x`},
		{"userNames used twice", `SELECT count(*) FROM (SELECT 1 FROM scim_users WHERE team = 'acme'
			GROUP BY lower(user_name) HAVING count(*) > 1) x`},
		{"group displayNames used twice", `SELECT count(*) FROM (SELECT 1 FROM scim_groups WHERE team = 'acme'
			GROUP BY lower(display_name) HAVING count(*) > 1) x`},
	} {
		var n int
		if err := db.QueryRowContext(t.Context(), c.query).Scan(&n); err != nil {
			t.Fatalf("%s: %v", c.what, err)
		}
		if n != 0 {
			t.Errorf("%d %s", n, c.what)
		}
	}
	if seats > 0 {
		var active int
		if err := db.QueryRowContext(t.Context(), `SELECT count(*) FROM scim_users WHERE team = 'acme' AND active`).Scan(&active); err != nil {
			t.Fatal(err)
		}
		if active > seats {
			t.Errorf("%d active users for %d seats", active, seats)
		}
	}
}

// storedMembers returns the member ids of the group gid as the database holds them, sorted.
func storedMembers(t *testing.T, dsn, gid string) []string {
	t.Helper()
	rows, err := open(t, dsn).SQL().QueryContext(t.Context(),
		`SELECT user_id FROM scim_members WHERE team = 'acme' AND group_id = '`+gid+`' ORDER BY user_id`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	out := []string{}
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			t.Fatal(err)
		}
		out = append(out, id)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// memberIDs returns the member ids of a group body, sorted.
func memberIDs(body map[string]any) []string {
	out := []string{}
	list, _ := body["members"].([]any)
	for _, m := range list {
		v, _ := m.(map[string]any)["value"].(string)
		out = append(out, v)
	}
	slices.Sort(out)
	return out
}

func patchBody(ops string) string {
	return `{"schemas":["urn:ietf:params:scim:api:messages:2.0:PatchOp"],"Operations":[` + ops + `]}`
}

func groupBody(name string, members ...string) string {
	list := make([]string, len(members))
	for i, m := range members {
		list[i] = fmt.Sprintf(`{"value":%q}`, m)
	}
	return fmt.Sprintf(`{"schemas":["urn:ietf:params:scim:schemas:core:2.0:Group"],"displayName":%q,"members":[%s]}`,
		name, strings.Join(list, ","))
}

func testSCIMRaces(t *testing.T, dsn func(t *testing.T) string) {
	t.Run("RenameGroups", func(t *testing.T) {
		// Groups renamed at once, by PATCH and PUT from both processes, to one name in
		// different cases: one rename wins, the others are 409 uniqueness.
		d := dsn(t)
		hs := replicas(t, d, 0)
		st := open(t, d).SCIM()
		const n = 10
		var gids []string
		for i := range n {
			g, err := st.CreateGroup(t.Context(), "acme", scim.Group{DisplayName: fmt.Sprintf("r%d", i)})
			if err != nil {
				t.Fatal(err)
			}
			gids = append(gids, g.ID)
		}
		names := []string{"Shared", "SHARED", "shared"}
		got := race(t, hs, n, func(i int) (string, string, string) {
			if i%2 == 0 {
				return "PATCH", "/Groups/" + gids[i], patchBody(fmt.Sprintf(`{"op":"replace","path":"displayName","value":%q}`, names[i%3]))
			}
			return "PUT", "/Groups/" + gids[i], groupBody(names[i%3])
		})
		if diff := cmp.Diff(map[int]int{200: 1, 409: n - 1}, codes(got)); diff != "" {
			t.Errorf("status codes (-want +got):\n%s", diff)
		}
		for i, a := range got {
			g, err := st.GetGroup(t.Context(), "acme", gids[i])
			if err != nil {
				t.Fatal(err)
			}
			switch {
			case a.code == 200 && g.DisplayName != names[i%3]:
				t.Errorf("group %d answered 200 but is named %q", i, g.DisplayName)
			case a.code == 409 && g.DisplayName != fmt.Sprintf("r%d", i):
				t.Errorf("group %d answered 409 but is named %q", i, g.DisplayName)
			case a.code == 409 && a.body["scimType"] != "uniqueness":
				t.Errorf("group %d: 409 body %v, want scimType uniqueness", i, a.body)
			}
		}
		scimInvariants(t, d, 0)
	})
	t.Run("CreateGroupsOneName", func(t *testing.T) {
		// Groups of one displayName in different cases created at once from both
		// processes: one is created, the others are 409 uniqueness and leave nothing.
		d := dsn(t)
		hs := replicas(t, d, 0)
		const n = 10
		got := race(t, hs, n, func(i int) (string, string, string) {
			return "POST", "/Groups", groupBody([]string{"Ops", "OPS", "ops"}[i%3])
		})
		if diff := cmp.Diff(map[int]int{201: 1, 409: n - 1}, codes(got)); diff != "" {
			t.Errorf("status codes (-want +got):\n%s", diff)
		}
		groups, total, err := open(t, d).SCIM().ListGroups(t.Context(), "acme", scim.ListQuery{Count: 100})
		if err != nil || total != 1 {
			t.Errorf("groups %v (%v), want one", groups, err)
		}
		scimInvariants(t, d, 0)
	})
	t.Run("ReplaceVersusAddMembers", func(t *testing.T) {
		// PATCH replace of the members and PATCH add of a member on one group at once,
		// from both processes: both answer 200 and the group ends as one of their orders
		// leaves it, never without the added member when the add came last.
		d := dsn(t)
		hs := replicas(t, d, 0)
		st := open(t, d).SCIM()
		var ids []string
		for i := range 4 {
			u, err := st.CreateUser(t.Context(), "acme", scim.User{UserName: fmt.Sprintf("rv%d@example.com", i), Active: true})
			if err != nil {
				t.Fatal(err)
			}
			ids = append(ids, u.ID)
		}
		for round := range 8 {
			g, err := st.CreateGroup(t.Context(), "acme", scim.Group{DisplayName: fmt.Sprintf("rv%d", round), Members: []scim.Member{{Value: ids[0]}}})
			if err != nil {
				t.Fatal(err)
			}
			replaced := []string{ids[1], ids[2]}
			slices.Sort(replaced)
			got := race(t, hs, 2, func(i int) (string, string, string) {
				if i == 0 {
					return "PATCH", "/Groups/" + g.ID, patchBody(fmt.Sprintf(`{"op":"replace","path":"members","value":[{"value":%q},{"value":%q}]}`, ids[1], ids[2]))
				}
				return "PATCH", "/Groups/" + g.ID, patchBody(fmt.Sprintf(`{"op":"add","path":"members","value":[{"value":%q}]}`, ids[3]))
			})
			if got[0].code != 200 || got[1].code != 200 {
				t.Fatalf("round %d: %d %v, %d %v", round, got[0].code, got[0].body, got[1].code, got[1].body)
			}
			final := storedMembers(t, d, g.ID)
			withAdd := slices.Sorted(slices.Values(append(slices.Clone(replaced), ids[3])))
			// The later write's answer is the final state; the earlier one's is what the
			// later one started from.
			switch {
			case slices.Equal(final, withAdd): // replace, then add
				if diff := cmp.Diff(withAdd, memberIDs(got[1].body)); diff != "" {
					t.Errorf("round %d: the add came last but answered other members (-want +got):\n%s", round, diff)
				}
			case slices.Equal(final, replaced): // add, then replace
				if diff := cmp.Diff(slices.Sorted(slices.Values([]string{ids[0], ids[3]})), memberIDs(got[1].body)); diff != "" {
					t.Errorf("round %d: the add came first but answered other members (-want +got):\n%s", round, diff)
				}
			default:
				t.Errorf("round %d: members %v are no order of the two writes (%v or %v)", round, final, withAdd, replaced)
			}
		}
		scimInvariants(t, d, 0)
	})
	t.Run("DeleteWhileAdding", func(t *testing.T) {
		// Users deleted while PATCH add and PUT put them into groups: an add that answers
		// 200 names a user that existed then, and no group keeps a deleted user.
		d := dsn(t)
		hs := replicas(t, d, 0)
		st := open(t, d).SCIM()
		const n = 8
		var ids, gids []string
		for i := range n {
			u, err := st.CreateUser(t.Context(), "acme", scim.User{UserName: fmt.Sprintf("dw%d@example.com", i), Active: true})
			if err != nil {
				t.Fatal(err)
			}
			g, err := st.CreateGroup(t.Context(), "acme", scim.Group{DisplayName: fmt.Sprintf("dw%d", i)})
			if err != nil {
				t.Fatal(err)
			}
			ids, gids = append(ids, u.ID), append(gids, g.ID)
		}
		got := race(t, hs, 3*n, func(i int) (string, string, string) {
			k := i / 3
			switch i % 3 {
			case 0:
				return "DELETE", "/Users/" + ids[k], ""
			case 1:
				return "PATCH", "/Groups/" + gids[k], patchBody(fmt.Sprintf(`{"op":"add","path":"members","value":[{"value":%q}]}`, ids[k]))
			}
			return "PUT", "/Groups/" + gids[(k+1)%n], groupBody(fmt.Sprintf("dw%d", (k+1)%n), ids[k])
		})
		for i, a := range got {
			switch {
			case i%3 == 0 && a.code != 204:
				t.Errorf("DELETE %d: %d %v", i/3, a.code, a.body)
			case i%3 != 0 && a.code != 200 && (a.code != 400 || a.body["scimType"] != "invalidValue"):
				t.Errorf("write %d: %d %v, want 200 or 400 invalidValue", i, a.code, a.body)
			}
		}
		users, total, err := st.ListUsers(t.Context(), "acme", scim.ListQuery{Count: 100})
		if err != nil || total != 0 {
			t.Errorf("users left: %v (%v)", users, err)
		}
		for _, gid := range gids {
			if m := storedMembers(t, d, gid); len(m) > 0 {
				t.Errorf("group %s keeps deleted members %v", gid, m)
			}
		}
		scimInvariants(t, d, 0)
	})
	t.Run("ActivateAtSeatLimit", func(t *testing.T) {
		// Inactive users activated at once by PATCH and PUT from both processes, with
		// 2 seats left of 5: two activations pass, the others are 400 and leave the
		// user inactive.
		d := dsn(t)
		hs := replicas(t, d, 5)
		st := open(t, d).SCIM()
		st.SetDefaultSeatLimit(5)
		for i := range 3 {
			if _, err := st.CreateUser(t.Context(), "acme", scim.User{UserName: fmt.Sprintf("on%d@example.com", i), Active: true}); err != nil {
				t.Fatal(err)
			}
		}
		const n = 10
		var ids []string
		for i := range n {
			u, err := st.CreateUser(t.Context(), "acme", scim.User{UserName: fmt.Sprintf("off%d@example.com", i)})
			if err != nil {
				t.Fatal(err)
			}
			ids = append(ids, u.ID)
		}
		got := race(t, hs, n, func(i int) (string, string, string) {
			if i%2 == 0 {
				return "PATCH", "/Users/" + ids[i], patchBody(`{"op":"Replace","path":"active","value":"True"}`)
			}
			return "PUT", "/Users/" + ids[i], fmt.Sprintf(`{"schemas":["urn:ietf:params:scim:schemas:core:2.0:User"],"userName":"off%d@example.com","active":true}`, i)
		})
		if diff := cmp.Diff(map[int]int{200: 2, 400: n - 2}, codes(got)); diff != "" {
			t.Errorf("status codes (-want +got):\n%s", diff)
		}
		for i, a := range got {
			u, err := st.GetUser(t.Context(), "acme", ids[i])
			if err != nil {
				t.Fatal(err)
			}
			if u.Active != (a.code == 200) {
				t.Errorf("user %d answered %d and is active %v", i, a.code, u.Active)
			}
		}
		scimInvariants(t, d, 5)
	})
	t.Run("ManyPatchesOneGroup", func(t *testing.T) { testManyPatchesOneGroup(t, dsn(t)) })
}

// TestSCIMRacesSQLite races SCIM writes through two handlers, each with its own
// connection pool, on one SQLite file, and checks the rules in the database after each
// race and that every 2xx answer's effect is there.
func TestSCIMRacesSQLite(t *testing.T) {
	testSCIMRaces(t, func(t *testing.T) string { return "sqlite:" + filepath.Join(t.TempDir(), "kmkit.db") })
}

// TestSCIMRacesPostgres is TestSCIMRacesSQLite on PostgreSQL.
func TestSCIMRacesPostgres(t *testing.T) {
	testSCIMRaces(t, func(t *testing.T) string { return postgresDSN(t) })
}

// testManyPatchesOneGroup sends many PATCHes adding members to one group from both
// processes at once, half without If-Match and half with "If-Match: *" (any version of
// the group): every one answers 200, however often others slip in between its read and
// its write, and the group has every member.
func testManyPatchesOneGroup(t *testing.T, d string) {
	hs := replicas(t, d, 0)
	st := open(t, d).SCIM()
	const n = 40
	var ids []string
	for i := range n {
		u, err := st.CreateUser(t.Context(), "acme", scim.User{UserName: fmt.Sprintf("many%d@example.com", i), Active: true})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, u.ID)
	}
	g, err := st.CreateGroup(t.Context(), "acme", scim.Group{DisplayName: "many"})
	if err != nil {
		t.Fatal(err)
	}
	got := raceRequests(t, hs, n, func(i int) *http.Request {
		r := httptest.NewRequest("PATCH", "http://idm.example"+scimhttp.BasePath+"/Groups/"+g.ID,
			strings.NewReader(patchBody(fmt.Sprintf(`{"op":"add","path":"members","value":[{"value":%q}]}`, ids[i]))))
		r.Header.Set("Content-Type", "application/scim+json")
		if i%4 >= 2 {
			r.Header.Set("If-Match", "*")
		}
		return r
	})
	for i, a := range got {
		if a.code != 200 {
			t.Errorf("PATCH %d: %d %v", i, a.code, a.body)
		}
	}
	if diff := cmp.Diff(slices.Sorted(slices.Values(ids)), storedMembers(t, d, g.ID)); diff != "" {
		t.Errorf("members (-want +got):\n%s", diff)
	}
	scimInvariants(t, d, 0)
}
