package sqlstore_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/kmkit/kmkit/auth/ratelimit"
	"github.com/kmkit/kmkit/principal"
	"github.com/kmkit/kmkit/scim"
	"github.com/kmkit/kmkit/scim/scimhttp"
)

// replicas returns two SCIM handlers, each over its own connection pool on one database,
// as two server processes would be; every team has seats seats.
func replicas(t *testing.T, dsn string, seats int) [2]http.Handler {
	var hs [2]http.Handler
	for i := range hs {
		st := open(t, dsn).SCIM()
		st.SetDefaultSeatLimit(seats)
		h := scimhttp.NewHandler(st)
		hs[i] = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			p := &principal.Principal{Name: "idp", Team: "acme", Permissions: []principal.Permission{principal.PermSCIM}}
			h.ServeHTTP(w, r.WithContext(principal.NewContext(r.Context(), p)))
		})
	}
	return hs
}

// send runs n requests, alternating between the replicas, all at once, and counts the
// status codes.
func send(t *testing.T, hs [2]http.Handler, n int, req func(i int) (method, path, body string)) map[int]int {
	t.Helper()
	var mu sync.Mutex
	codes := map[int]int{}
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			method, path, body := req(i)
			r := httptest.NewRequest(method, "http://idm.example"+scimhttp.BasePath+path, strings.NewReader(body))
			r.Header.Set("Content-Type", "application/scim+json")
			w := httptest.NewRecorder()
			hs[i%2].ServeHTTP(w, r)
			mu.Lock()
			codes[w.Code]++
			mu.Unlock()
			if w.Code >= 500 {
				t.Errorf("%s %s: %d %s", method, path, w.Code, w.Body)
			}
		}()
	}
	wg.Wait()
	return codes
}

func userBody(name string) string {
	return fmt.Sprintf(`{"schemas":["urn:ietf:params:scim:schemas:core:2.0:User"],"userName":%q,"active":true}`, name)
}

func testReplicas(t *testing.T, dsn func(t *testing.T) string) {
	t.Run("Uniqueness", func(t *testing.T) {
		hs := replicas(t, dsn(t), 0)
		got := send(t, hs, 16, func(i int) (string, string, string) {
			return "POST", "/Users", userBody([]string{"same@example.com", "Same@Example.com"}[i%2])
		})
		if diff := cmp.Diff(map[int]int{201: 1, 409: 15}, got); diff != "" {
			t.Errorf("status codes (-want +got):\n%s", diff)
		}
	})
	t.Run("UniquenessFolded", func(t *testing.T) {
		// Names equal under Unicode simple case folding (strings.EqualFold, which the
		// userName mutability rule uses): long s, Kelvin sign, final sigma.
		d := dsn(t)
		hs := replicas(t, d, 0)
		for _, names := range [][]string{
			{"sam@example.com", "\u017fam@example.com", "SAM@example.com", "\u017fAM@EXAMPLE.COM"},
			{"kim@example.com", "\u212aim@example.com", "KIM@example.com", "\u212aIM@example.com"},
			{"a\u03c3@example.com", "a\u03c2@example.com", "A\u03a3@example.com", "a\u03c2@EXAMPLE.COM"},
		} {
			got := send(t, hs, 16, func(i int) (string, string, string) {
				return "POST", "/Users", userBody(names[i%len(names)])
			})
			if diff := cmp.Diff(map[int]int{201: 1, 409: 15}, got); diff != "" {
				t.Errorf("%q: status codes (-want +got):\n%s", names, diff)
			}
		}
		st := open(t, d).SCIM()
		if _, err := st.CreateUser(t.Context(), "acme", scim.User{UserName: "bo@example.com", Active: true}); err != nil {
			t.Fatal(err)
		}
		users, _, err := st.ListUsers(t.Context(), "acme", scim.ListQuery{Count: 100})
		if err != nil {
			t.Fatal(err)
		}
		if len(users) != 4 {
			t.Errorf("%d users, want 4: %v", len(users), users)
		}
		for _, u := range users {
			for _, f := range []string{strings.ToUpper(u.UserName), strings.ToLower(u.UserName)} {
				got, _, err := st.ListUsers(t.Context(), "acme", scim.ListQuery{Count: 10, Filter: []scim.Equal{{Attr: "userName", Value: f}}})
				if err != nil || len(got) != 1 || got[0].ID != u.ID {
					t.Errorf("userName eq %q: %v, %v; want %s", f, got, err, u.UserName)
				}
			}
		}
	})
	t.Run("IfMatch", func(t *testing.T) {
		d := dsn(t)
		hs := replicas(t, d, 0)
		u, err := open(t, d).SCIM().CreateUser(t.Context(), "acme", scim.User{UserName: "v@example.com", Active: true, Role: scim.RoleMember})
		if err != nil {
			t.Fatal(err)
		}
		etag := fmt.Sprintf(`W/"%d"`, u.Version)
		var mu sync.Mutex
		codes := map[int]int{}
		var wg sync.WaitGroup
		for i := range 16 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				body := fmt.Sprintf(`{"schemas":["urn:ietf:params:scim:schemas:core:2.0:User"],"userName":"v@example.com","active":true,"displayName":"w%d"}`, i)
				method := "PUT"
				if i%2 == 1 {
					method = "PATCH"
					body = fmt.Sprintf(`{"schemas":["urn:ietf:params:scim:api:messages:2.0:PatchOp"],"Operations":[{"op":"replace","path":"displayName","value":"w%d"}]}`, i)
				}
				r := httptest.NewRequest(method, "http://idm.example"+scimhttp.BasePath+"/Users/"+u.ID, strings.NewReader(body))
				r.Header.Set("Content-Type", "application/scim+json")
				r.Header.Set("If-Match", etag)
				w := httptest.NewRecorder()
				hs[i%2].ServeHTTP(w, r)
				mu.Lock()
				codes[w.Code]++
				mu.Unlock()
				if w.Code != 200 && w.Code != 412 {
					t.Errorf("%s: %d %s", method, w.Code, w.Body)
				}
			}()
		}
		wg.Wait()
		if diff := cmp.Diff(map[int]int{200: 1, 412: 15}, codes); diff != "" {
			t.Errorf("status codes (-want +got):\n%s", diff)
		}
	})
	t.Run("PatchMembers", func(t *testing.T) {
		// Concurrent PATCHes (no If-Match) adding members to one group from both
		// processes: every one succeeds, and the group ends with every member; the
		// user at the limit of groups gets exactly the groups left.
		d := dsn(t)
		hs := replicas(t, d, 0)
		st := open(t, d).SCIM()
		var ids []string
		for i := range 16 {
			u, err := st.CreateUser(t.Context(), "acme", scim.User{UserName: fmt.Sprintf("p%d@example.com", i), Active: true})
			if err != nil {
				t.Fatal(err)
			}
			ids = append(ids, u.ID)
		}
		g, err := st.CreateGroup(t.Context(), "acme", scim.Group{DisplayName: "all"})
		if err != nil {
			t.Fatal(err)
		}
		got := send(t, hs, len(ids), func(i int) (string, string, string) {
			return "PATCH", "/Groups/" + g.ID, fmt.Sprintf(`{"schemas":["urn:ietf:params:scim:api:messages:2.0:PatchOp"],
				"Operations":[{"op":"add","path":"members","value":[{"value":%q}]}]}`, ids[i])
		})
		if diff := cmp.Diff(map[int]int{200: len(ids)}, got); diff != "" {
			t.Errorf("status codes (-want +got):\n%s", diff)
		}
		if g, err = st.GetGroup(t.Context(), "acme", g.ID); err != nil || len(g.Members) != len(ids) {
			t.Errorf("the group has %d members (%v), want %d", len(g.Members), err, len(ids))
		}
		var gids []string
		for i := range scim.MaxGroupsPerUser + 6 {
			g, err := st.CreateGroup(t.Context(), "acme", scim.Group{DisplayName: fmt.Sprintf("q%d", i)})
			if err != nil {
				t.Fatal(err)
			}
			gids = append(gids, g.ID)
		}
		// ids[0] is in one group: 49 more fit, of 56.
		got = send(t, hs, len(gids), func(i int) (string, string, string) {
			return "PATCH", "/Groups/" + gids[i], fmt.Sprintf(`{"schemas":["urn:ietf:params:scim:api:messages:2.0:PatchOp"],
				"Operations":[{"op":"add","path":"members","value":[{"value":%q}]}]}`, ids[0])
		})
		if diff := cmp.Diff(map[int]int{200: scim.MaxGroupsPerUser - 1, 400: 7}, got); diff != "" {
			t.Errorf("status codes (-want +got):\n%s", diff)
		}
		in, _, err := st.ListGroups(t.Context(), "acme", scim.ListQuery{Count: 200, Filter: []scim.Equal{{Attr: scim.MemberFilter, Value: ids[0]}}})
		if err != nil || len(in) != scim.MaxGroupsPerUser {
			t.Errorf("the user is in %d groups (%v), want %d", len(in), err, scim.MaxGroupsPerUser)
		}
	})
	t.Run("BulkIDs", func(t *testing.T) {
		// Bulk requests of both processes create the same user (its name in other case)
		// and a group naming it by bulkId: one wins both; the others' user fails with 409
		// and their group, which names it, leaves no trace, whether the bulk stops at the
		// first error or goes on (failOnErrors 10).
		d := dsn(t)
		hs := replicas(t, d, 0)
		const n = 8
		var mu sync.Mutex
		outcomes := map[string]int{}
		var wg sync.WaitGroup
		for i := range n {
			wg.Go(func() {
				fail := ""
				if i%4 >= 2 {
					fail = `"failOnErrors":10,`
				}
				body := fmt.Sprintf(`{"schemas":["urn:ietf:params:scim:api:messages:2.0:BulkRequest"],%s"Operations":[
					{"method":"POST","path":"/Users","bulkId":"u","data":%s},
					{"method":"POST","path":"/Groups","bulkId":"g","data":{"schemas":["urn:ietf:params:scim:schemas:core:2.0:Group"],
						"displayName":"b%d","members":[{"value":"bulkId:u"}]}}]}`, fail, userBody([]string{"bulk@example.com", "BULK@example.com"}[i%2]), i)
				r := httptest.NewRequest("POST", "http://idm.example"+scimhttp.BasePath+"/Bulk", strings.NewReader(body))
				r.Header.Set("Content-Type", "application/scim+json")
				w := httptest.NewRecorder()
				hs[i%2].ServeHTTP(w, r)
				var resp struct{ Operations []struct{ Status string } }
				if err := json.Unmarshal(w.Body.Bytes(), &resp); w.Code != 200 || err != nil {
					t.Errorf("bulk: %d %s", w.Code, w.Body)
					return
				}
				var st []string
				for _, op := range resp.Operations {
					st = append(st, op.Status)
				}
				mu.Lock()
				outcomes[strings.Join(st, ",")]++
				mu.Unlock()
			})
		}
		wg.Wait()
		if outcomes["201,201"] != 1 || outcomes["201,201"]+outcomes["409"]+outcomes["409,409"] != n {
			t.Errorf("bulk outcomes %v, want one 201,201 and the others 409 (and 409 for the group going on)", outcomes)
		}
		st := open(t, d).SCIM()
		users, _, err := st.ListUsers(t.Context(), "acme", scim.ListQuery{Count: 100})
		if err != nil || len(users) != 1 {
			t.Fatalf("users %v (%v), want one", users, err)
		}
		groups, _, err := st.ListGroups(t.Context(), "acme", scim.ListQuery{Count: 100})
		if err != nil || len(groups) != 1 || len(groups[0].Members) != 1 || groups[0].Members[0].Value != users[0].ID {
			t.Errorf("groups %v (%v), want one with the user %s", groups, err, users[0].ID)
		}
	})
	t.Run("ListTotals", func(t *testing.T) {
		// One process lists users and groups while the other deletes them: each list's
		// total is the number of resources it holds (its count covers them all).
		d := dsn(t)
		writer, reader := open(t, d).SCIM(), open(t, d).SCIM()
		var ids, gids []string
		for i := range 40 {
			u, err := writer.CreateUser(t.Context(), "acme", scim.User{UserName: fmt.Sprintf("l%d@example.com", i), Active: true})
			if err != nil {
				t.Fatal(err)
			}
			g, err := writer.CreateGroup(t.Context(), "acme", scim.Group{DisplayName: fmt.Sprintf("lg%d", i)})
			if err != nil {
				t.Fatal(err)
			}
			ids, gids = append(ids, u.ID), append(gids, g.ID)
		}
		var done atomic.Bool
		var wg sync.WaitGroup
		wg.Go(func() {
			defer done.Store(true)
			for i := range ids {
				if err := writer.DeleteUser(t.Context(), "acme", ids[i], 0); err != nil {
					t.Error(err)
				}
				if err := writer.DeleteGroup(t.Context(), "acme", gids[i], 0); err != nil {
					t.Error(err)
				}
			}
		})
		for !done.Load() {
			users, total, err := reader.ListUsers(t.Context(), "acme", scim.ListQuery{Count: 100})
			if err != nil || len(users) != total {
				t.Errorf("users: %d listed, total %d (%v)", len(users), total, err)
			}
			groups, total, err := reader.ListGroups(t.Context(), "acme", scim.ListQuery{Count: 100})
			if err != nil || len(groups) != total {
				t.Errorf("groups: %d listed, total %d (%v)", len(groups), total, err)
			}
		}
		wg.Wait()
	})
	t.Run("Seats", func(t *testing.T) {
		hs := replicas(t, dsn(t), 5)
		got := send(t, hs, 16, func(i int) (string, string, string) {
			return "POST", "/Users", userBody(fmt.Sprintf("u%d@example.com", i))
		})
		if diff := cmp.Diff(map[int]int{201: 5, 400: 11}, got); diff != "" {
			t.Errorf("status codes (-want +got):\n%s", diff)
		}
	})
	t.Run("GroupsPerUser", func(t *testing.T) {
		d := dsn(t)
		hs := replicas(t, d, 0)
		user, err := open(t, d).SCIM().CreateUser(t.Context(), "acme", scim.User{UserName: "m@example.com", Active: true})
		if err != nil {
			t.Fatal(err)
		}
		n := scim.MaxGroupsPerUser + 6
		got := send(t, hs, n, func(i int) (string, string, string) {
			return "POST", "/Groups", fmt.Sprintf(`{"schemas":["urn:ietf:params:scim:schemas:core:2.0:Group"],
				"displayName":"g%d","members":[{"value":%q}]}`, i, user.ID)
		})
		if diff := cmp.Diff(map[int]int{201: scim.MaxGroupsPerUser, 400: 6}, got); diff != "" {
			t.Errorf("status codes (-want +got):\n%s", diff)
		}
	})
	t.Run("MembersExist", func(t *testing.T) {
		d := dsn(t)
		hs := replicas(t, d, 0)
		st := open(t, d).SCIM()
		var ids []string
		for i := range 8 {
			u, err := st.CreateUser(t.Context(), "acme", scim.User{UserName: fmt.Sprintf("x%d@example.com", i), Active: true})
			if err != nil {
				t.Fatal(err)
			}
			ids = append(ids, u.ID)
		}
		// Deletes of users race with groups naming them: no group may keep a deleted member.
		send(t, hs, 16, func(i int) (string, string, string) {
			if i%2 == 0 {
				return "DELETE", "/Users/" + ids[i/2], ""
			}
			return "POST", "/Groups", fmt.Sprintf(`{"schemas":["urn:ietf:params:scim:schemas:core:2.0:Group"],
				"displayName":"g%d","members":[{"value":%q}]}`, i, ids[i/2])
		})
		groups, _, err := st.ListGroups(t.Context(), "acme", scim.ListQuery{Count: 100})
		if err != nil {
			t.Fatal(err)
		}
		for _, g := range groups {
			if len(g.Members) > 0 {
				t.Errorf("group %s keeps deleted member %v", g.DisplayName, g.Members)
			}
		}
	})
}

// TestReplicasSQLite checks the SCIM rules under concurrent requests to two handlers,
// each with its own connection pool, on one SQLite file.
func TestReplicasSQLite(t *testing.T) {
	testReplicas(t, func(t *testing.T) string { return "sqlite:" + filepath.Join(t.TempDir(), "kmkit.db") })
}

// TestReplicasPostgres is TestReplicasSQLite on PostgreSQL.
func TestReplicasPostgres(t *testing.T) {
	testReplicas(t, func(t *testing.T) string { return postgresDSN(t) })
}

// testLimiterReplicas counts requests through two limiters, each with its own pool on one
// database: the budget is shared, exactly limit requests pass.
func testLimiterReplicas(t *testing.T, dsn string) {
	ls := [2]ratelimit.Limiter{open(t, dsn).Limiter(), open(t, dsn).Limiter()}
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	const limit, requests = 30, 80
	var (
		mu      sync.Mutex
		allowed int
		wg      sync.WaitGroup
	)
	for i := range requests {
		wg.Add(1)
		go func() {
			defer wg.Done()
			d, err := ls[i%2].Allow(t.Context(), "key", limit, time.Hour, now)
			if err != nil {
				t.Error(err)
				return
			}
			if d.Allowed {
				mu.Lock()
				allowed++
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if allowed != limit {
		t.Errorf("%d requests allowed through two replicas, want %d", allowed, limit)
	}
}

func TestLimiterReplicasSQLite(t *testing.T) {
	testLimiterReplicas(t, "sqlite:"+filepath.Join(t.TempDir(), "kmkit.db"))
}

func TestLimiterReplicasPostgres(t *testing.T) { testLimiterReplicas(t, postgresDSN(t)) }

// TestLimiterWindowBoundary: at the end of a window, one process (whose clock, or whose
// request, is a little behind) still counts in the ending window while the other counts
// in the next. The late requests must not take the counter back to the ending window: the
// next window's budget holds, however the two interleave.
func TestLimiterWindowBoundary(t *testing.T) {
	dsn := postgresDSN(t)
	ls := [2]ratelimit.Limiter{open(t, dsn).Limiter(), open(t, dsn).Limiter()}
	next := time.Date(2026, 3, 1, 13, 0, 0, 0, time.UTC)
	const limit = 3
	allowed := 0
	for i := range 10 {
		d, err := ls[0].Allow(t.Context(), "key", limit, time.Hour, next.Add(time.Duration(i)*time.Millisecond))
		if err != nil {
			t.Fatal(err)
		}
		if d.Allowed {
			allowed++
		}
		if _, err := ls[1].Allow(t.Context(), "key", limit, time.Hour, next.Add(-time.Millisecond)); err != nil {
			t.Fatal(err)
		}
	}
	if allowed > limit {
		t.Errorf("%d requests of the new window allowed, want at most %d", allowed, limit)
	}
}
