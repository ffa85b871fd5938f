// Package scimtest is the conformance suite of scim.Store implementations: every backend
// runs the same tests of the rules the Store documents, sequential and concurrent, and the
// PATCH operations of RFC 7644 section 3.5.2 applied by a scim.Service over the store,
// without HTTP.
//
//	func TestSCIMStore(t *testing.T) {
//		scimtest.Run(t, func(t *testing.T, seats map[string]int) scim.Store {
//			return newStoreWithSeatLimits(seats)
//		})
//	}
package scimtest

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/kmkit/kmkit/scim"
)

// Factory returns an empty store in which each team of seats has that seat limit; other
// teams have no limit.
type Factory func(t *testing.T, seats map[string]int) scim.Store

// Run runs the suite against stores made by newStore.
func Run(t *testing.T, newStore Factory) {
	tests := []struct {
		name string
		f    func(*testing.T, Factory)
	}{
		{"Users", testUsers},
		{"Errors", testErrors},
		{"List", testList},
		{"Groups", testGroups},
		{"GroupsPerUser", testGroupsPerUser},
		{"Seats", testSeats},
		{"ParallelUniqueness", testParallelUniqueness},
		{"ParallelMemberships", testParallelMemberships},
		{"ParallelSeats", testParallelSeats},
		{"ParallelPatches", testParallelPatches},
		{"Update", testUpdate},
		{"ValueFilters", testValueFilters},
		{"DerivedVersions", testDerivedVersions},
		{"UserGroups", testUserGroups},
		{"Patch", testPatch},
		{"PatchErrors", testPatchErrors},
		{"PatchGroups", testPatchGroups},
		{"PatchRFC", testPatchRFC},
		{"PatchRandom", testPatchRandom},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { tt.f(t, newStore) })
	}
}

var ignoreMeta = cmpopts.IgnoreFields(scim.User{}, "ID", "Created", "LastModified", "Version")

// result carries a store call's value and error until get checks them.
type result[T any] struct {
	v   T
	err error
}

func must[T any](v T, err error) result[T] { return result[T]{v, err} }

func (r result[T]) get(t *testing.T) T {
	t.Helper()
	if r.err != nil {
		t.Fatal(r.err)
	}
	return r.v
}

func testUsers(t *testing.T, newStore Factory) {
	ctx := context.Background()
	s := newStore(t, nil)
	in := scim.User{UserName: "a@example.com", Active: true, Role: scim.RoleMember, ExternalID: "e",
		Attributes: map[string]any{"name": map[string]any{"givenName": "A"}}}
	u := must(s.CreateUser(ctx, "t", in)).get(t)
	if u.ID == "" || u.Version == 0 || u.Created.IsZero() || !u.Created.Equal(u.LastModified) {
		t.Errorf("store-maintained fields: %+v", u)
	}
	if diff := cmp.Diff(in, u, ignoreMeta); diff != "" {
		t.Errorf("created (-want +got):\n%s", diff)
	}
	// Returned values share nothing with the store.
	u.Attributes["name"].(map[string]any)["givenName"] = "changed"
	in.Attributes["name"].(map[string]any)["givenName"] = "changed too"
	got := must(s.GetUser(ctx, "t", u.ID)).get(t)
	if diff := cmp.Diff(map[string]any{"name": map[string]any{"givenName": "A"}}, got.Attributes); diff != "" {
		t.Errorf("stored attributes changed through a returned value (-want +got):\n%s", diff)
	}

	r := must(s.ReplaceUser(ctx, "t", scim.User{ID: u.ID, UserName: "A@example.com", DisplayName: "A"}, u.Version)).get(t)
	if r.Version == u.Version || !r.Created.Equal(u.Created) || r.UserName != "A@example.com" || r.Active {
		t.Errorf("replaced: %+v", r)
	}
	if err := s.DeleteUser(ctx, "t", u.ID, r.Version); err != nil {
		t.Fatal(err)
	}
	if _, err := s.GetUser(ctx, "t", u.ID); !errors.Is(err, scim.ErrNotFound) {
		t.Errorf("deleted user: %v", err)
	}
	if _, err := s.CreateUser(ctx, "t", scim.User{UserName: "a@example.com"}); err != nil {
		t.Errorf("name not freed by the delete: %v", err)
	}
	// The same name in another team is another user.
	other := must(s.CreateUser(ctx, "other", scim.User{UserName: "a@example.com"})).get(t)
	if other.ID == u.ID {
		t.Errorf("teams share a user id")
	}
}

func testErrors(t *testing.T, newStore Factory) {
	ctx := context.Background()
	s := newStore(t, nil)
	u := must(s.CreateUser(ctx, "t", scim.User{UserName: "a@example.com"})).get(t)
	g := must(s.CreateGroup(ctx, "t", scim.Group{DisplayName: "G"})).get(t)
	tests := []struct {
		name string
		err  error
		f    func() error
	}{
		{"duplicate name", scim.ErrUniqueness, func() error {
			_, err := s.CreateUser(ctx, "t", scim.User{UserName: "A@EXAMPLE.COM"})
			return err
		}},
		{"rename", scim.ErrMutability, func() error {
			_, err := s.ReplaceUser(ctx, "t", scim.User{ID: u.ID, UserName: "b@example.com"}, 0)
			return err
		}},
		{"stale replace", scim.ErrVersionMismatch, func() error {
			_, err := s.ReplaceUser(ctx, "t", scim.User{ID: u.ID, UserName: "a@example.com"}, u.Version+100)
			return err
		}},
		{"stale delete", scim.ErrVersionMismatch, func() error { return s.DeleteUser(ctx, "t", u.ID, u.Version+100) }},
		{"missing user", scim.ErrNotFound, func() error {
			_, err := s.GetUser(ctx, "t", "nope")
			return err
		}},
		{"user of another team", scim.ErrNotFound, func() error {
			_, err := s.GetUser(ctx, "other", u.ID)
			return err
		}},
		{"missing replace", scim.ErrNotFound, func() error {
			_, err := s.ReplaceUser(ctx, "t", scim.User{ID: "nope", UserName: "x@example.com"}, 0)
			return err
		}},
		{"missing delete", scim.ErrNotFound, func() error { return s.DeleteUser(ctx, "t", "nope", 0) }},
		{"duplicate group", scim.ErrUniqueness, func() error {
			_, err := s.CreateGroup(ctx, "t", scim.Group{DisplayName: "g"})
			return err
		}},
		{"missing member", scim.ErrNoSuchMember, func() error {
			_, err := s.CreateGroup(ctx, "t", scim.Group{DisplayName: "H", Members: []scim.Member{{Value: "nope"}}})
			return err
		}},
		{"member of another team", scim.ErrNoSuchMember, func() error {
			_, err := s.CreateGroup(ctx, "other", scim.Group{DisplayName: "G", Members: []scim.Member{{Value: u.ID}}})
			return err
		}},
		{"stale group", scim.ErrVersionMismatch, func() error {
			_, err := s.ReplaceGroup(ctx, "t", scim.Group{ID: g.ID, DisplayName: "G"}, g.Version+100)
			return err
		}},
		{"missing group", scim.ErrNotFound, func() error { return s.DeleteGroup(ctx, "t", "nope", 0) }},
		{"group of another team", scim.ErrNotFound, func() error {
			_, err := s.ReplaceGroup(ctx, "other", scim.Group{ID: g.ID, DisplayName: "G"}, 0)
			return err
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.f()
			if !errors.Is(err, tt.err) {
				t.Fatalf("error %v, want %v", err, tt.err)
			}
			var re *scim.RuleError
			if !errors.As(err, &re) || re.Detail == "" {
				t.Errorf("error %v carries no detail for the client", err)
			}
		})
	}
}

func testList(t *testing.T, newStore Factory) {
	ctx := context.Background()
	s := newStore(t, nil)
	var names []string
	var users []scim.User
	for i := range 7 {
		u := must(s.CreateUser(ctx, "t", scim.User{UserName: fmt.Sprintf("U%d@example.com", i),
			ExternalID: fmt.Sprint(i % 2), DisplayName: fmt.Sprintf("User %d", i)})).get(t)
		names = append(names, u.UserName)
		users = append(users, u)
	}
	must(s.CreateUser(ctx, "other", scim.User{UserName: "u1@example.com", ExternalID: "1"})).get(t)
	eq := func(attr, v string) scim.Equal { return scim.Equal{Attr: attr, Value: v} }
	tests := []struct {
		q     scim.ListQuery
		want  []string
		total int
	}{
		{scim.ListQuery{StartIndex: 1, Count: 3}, names[:3], 7},
		{scim.ListQuery{StartIndex: 6, Count: 3}, names[5:], 7},
		{scim.ListQuery{StartIndex: 8, Count: 3}, []string{}, 7},
		{scim.ListQuery{StartIndex: 0, Count: 0}, []string{}, 7},
		{scim.ListQuery{StartIndex: 1, Count: 10, Filter: []scim.Equal{eq("externalId", "1")}}, []string{names[1], names[3], names[5]}, 3},
		{scim.ListQuery{StartIndex: 2, Count: 1, Filter: []scim.Equal{eq("externalId", "1")}}, []string{names[3]}, 3},
		{scim.ListQuery{StartIndex: 1, Count: 10, Filter: []scim.Equal{eq("userName", "U4@EXAMPLE.COM")}}, names[4:5], 1},
		{scim.ListQuery{StartIndex: 1, Count: 10, Filter: []scim.Equal{eq("displayName", "user 2")}}, names[2:3], 1},
		{scim.ListQuery{StartIndex: 1, Count: 10, Filter: []scim.Equal{eq("userName", "u4@example.com"), eq("externalId", "1")}}, []string{}, 0},
		{scim.ListQuery{StartIndex: 1, Count: 3, Sort: scim.SortKey{Attr: "userName", Descending: true}}, []string{names[6], names[5], names[4]}, 7},
		{scim.ListQuery{StartIndex: 2, Count: 2, Sort: scim.SortKey{Attr: "externalId"}}, []string{names[2], names[4]}, 7},
		{scim.ListQuery{StartIndex: 1, Count: 10, Filter: []scim.Equal{eq("externalId", "1")}, Sort: scim.SortKey{Attr: "id", Descending: true}},
			sortedByID(users, "1"), 3},
	}
	for _, tt := range tests {
		users, total, err := s.ListUsers(ctx, "t", tt.q)
		if err != nil {
			t.Fatal(err)
		}
		got := []string{}
		for _, u := range users {
			got = append(got, u.UserName)
		}
		if diff := cmp.Diff(tt.want, got); diff != "" || total != tt.total {
			t.Errorf("%+v: total %d, users (-want +got):\n%s", tt.q, total, diff)
		}
	}
	users, total, err := s.ListUsers(ctx, "empty", scim.ListQuery{StartIndex: 1, Count: 5})
	if err != nil || total != 0 || len(users) != 0 {
		t.Errorf("empty team: %v %d %v", users, total, err)
	}
}

// sortedByID returns the names of the users with externalId ext, by descending id.
func sortedByID(users []scim.User, ext string) []string {
	var sel []scim.User
	for _, u := range users {
		if u.ExternalID == ext {
			sel = append(sel, u)
		}
	}
	sort.Slice(sel, func(i, j int) bool { return sel[i].ID > sel[j].ID })
	out := make([]string, len(sel))
	for i, u := range sel {
		out[i] = u.UserName
	}
	return out
}

func testGroups(t *testing.T, newStore Factory) {
	ctx := context.Background()
	s := newStore(t, nil)
	a := must(s.CreateUser(ctx, "t", scim.User{UserName: "a@example.com", DisplayName: "Ann"})).get(t)
	b := must(s.CreateUser(ctx, "t", scim.User{UserName: "b@example.com"})).get(t)
	g := must(s.CreateGroup(ctx, "t", scim.Group{DisplayName: "G", Role: scim.RoleAdmin,
		Members: []scim.Member{{Value: a.ID}, {Value: b.ID}, {Value: a.ID}}})).get(t)
	want := []scim.Member{{Value: a.ID, Display: "Ann"}, {Value: b.ID, Display: "b@example.com"}}
	if diff := cmp.Diff(want, g.Members); diff != "" || g.Role != scim.RoleAdmin {
		t.Errorf("role %q, members (-want +got):\n%s", g.Role, diff)
	}
	// Deleting a user takes it out of its groups and changes their version.
	if err := s.DeleteUser(ctx, "t", b.ID, 0); err != nil {
		t.Fatal(err)
	}
	after := must(s.GetGroup(ctx, "t", g.ID)).get(t)
	if diff := cmp.Diff(want[:1], after.Members); diff != "" || after.Version == g.Version {
		t.Errorf("after deleting a member: version %d -> %d, members (-want +got):\n%s", g.Version, after.Version, diff)
	}
	// Renaming frees the old name.
	renamed := must(s.ReplaceGroup(ctx, "t", scim.Group{ID: g.ID, DisplayName: "H"}, after.Version)).get(t)
	if len(renamed.Members) != 0 || renamed.Role != "" || !renamed.Created.Equal(g.Created) {
		t.Errorf("replaced group: %+v", renamed)
	}
	must(s.CreateGroup(ctx, "t", scim.Group{DisplayName: "G"})).get(t)
	// Deleting a group leaves its members in the team.
	must(s.ReplaceGroup(ctx, "t", scim.Group{ID: g.ID, DisplayName: "H", Members: []scim.Member{{Value: a.ID}}}, 0)).get(t)
	if err := s.DeleteGroup(ctx, "t", g.ID, 0); err != nil {
		t.Fatal(err)
	}
	must(s.GetUser(ctx, "t", a.ID)).get(t)
	groups, total, err := s.ListGroups(ctx, "t", scim.ListQuery{StartIndex: 1, Count: 10, Filter: []scim.Equal{{Attr: "displayName", Value: "g"}}})
	if err != nil || total != 1 || len(groups) != 1 || groups[0].DisplayName != "G" {
		t.Errorf("filtered groups: %d %+v %v", total, groups, err)
	}
}

func testGroupsPerUser(t *testing.T, newStore Factory) {
	ctx := context.Background()
	s := newStore(t, nil)
	a := must(s.CreateUser(ctx, "t", scim.User{UserName: "a@example.com"})).get(t)
	var first scim.Group
	for i := range scim.MaxGroupsPerUser {
		g := must(s.CreateGroup(ctx, "t", scim.Group{DisplayName: fmt.Sprint(i), Members: []scim.Member{{Value: a.ID}}})).get(t)
		if i == 0 {
			first = g
		}
	}
	if _, err := s.CreateGroup(ctx, "t", scim.Group{DisplayName: "one too many", Members: []scim.Member{{Value: a.ID}}}); !errors.Is(err, scim.ErrTooManyGroups) {
		t.Errorf("51st group: %v", err)
	}
	// Replacing a group the user is in does not count it twice.
	must(s.ReplaceGroup(ctx, "t", scim.Group{ID: first.ID, DisplayName: "0", Members: []scim.Member{{Value: a.ID}}}, 0)).get(t)
	if err := s.DeleteGroup(ctx, "t", first.ID, 0); err != nil {
		t.Fatal(err)
	}
	must(s.CreateGroup(ctx, "t", scim.Group{DisplayName: "room again", Members: []scim.Member{{Value: a.ID}}})).get(t)
}

func testSeats(t *testing.T, newStore Factory) {
	ctx := context.Background()
	s := newStore(t, map[string]int{"t": 1, "big": 3})
	a := must(s.CreateUser(ctx, "t", scim.User{UserName: "a@example.com", Active: true})).get(t)
	if _, err := s.CreateUser(ctx, "t", scim.User{UserName: "b@example.com", Active: true}); !errors.Is(err, scim.ErrLicenseExceeded) {
		t.Errorf("second active user: %v", err)
	}
	inactive := must(s.CreateUser(ctx, "t", scim.User{UserName: "c@example.com"})).get(t)
	inactive.Active = true
	if _, err := s.ReplaceUser(ctx, "t", inactive, 0); !errors.Is(err, scim.ErrLicenseExceeded) {
		t.Errorf("activation beyond the limit: %v", err)
	}
	a.Active = false
	must(s.ReplaceUser(ctx, "t", a, 0)).get(t)
	must(s.ReplaceUser(ctx, "t", inactive, 0)).get(t)
	for i := range 3 {
		must(s.CreateUser(ctx, "big", scim.User{UserName: fmt.Sprintf("%d@example.com", i), Active: true})).get(t)
	}
	for i := range 5 {
		must(s.CreateUser(ctx, "unlimited", scim.User{UserName: fmt.Sprintf("%d@example.com", i), Active: true})).get(t)
	}
}

// parallel runs f(i) for i in [0, n) at once and counts the errors by rule.
func parallel(n int, f func(i int) error) map[string]int {
	var mu sync.Mutex
	out := map[string]int{}
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			err := f(i)
			key := "ok"
			for _, rule := range []error{scim.ErrUniqueness, scim.ErrTooManyGroups, scim.ErrLicenseExceeded} {
				if errors.Is(err, rule) {
					key = rule.Error()
				}
			}
			if err != nil && key == "ok" {
				key = err.Error()
			}
			mu.Lock()
			out[key]++
			mu.Unlock()
		}()
	}
	wg.Wait()
	return out
}

func testParallelUniqueness(t *testing.T, newStore Factory) {
	s := newStore(t, nil)
	got := parallel(50, func(int) error {
		_, err := s.CreateUser(context.Background(), "t", scim.User{UserName: "same@example.com"})
		return err
	})
	if diff := cmp.Diff(map[string]int{"ok": 1, scim.ErrUniqueness.Error(): 49}, got); diff != "" {
		t.Errorf("outcomes (-want +got):\n%s", diff)
	}
}

func testParallelMemberships(t *testing.T, newStore Factory) {
	ctx := context.Background()
	s := newStore(t, nil)
	u := must(s.CreateUser(ctx, "t", scim.User{UserName: "busy@example.com"})).get(t)
	var groups []scim.Group
	for i := range 60 {
		groups = append(groups, must(s.CreateGroup(ctx, "t", scim.Group{DisplayName: fmt.Sprint(i)})).get(t))
	}
	got := parallel(60, func(i int) error {
		g := groups[i]
		g.Members = []scim.Member{{Value: u.ID}}
		_, err := s.ReplaceGroup(ctx, "t", g, 0)
		return err
	})
	if diff := cmp.Diff(map[string]int{"ok": 50, scim.ErrTooManyGroups.Error(): 10}, got); diff != "" {
		t.Errorf("outcomes (-want +got):\n%s", diff)
	}
	in := 0
	for _, g := range groups {
		for _, m := range must(s.GetGroup(ctx, "t", g.ID)).get(t).Members {
			if m.Value == u.ID {
				in++
			}
		}
	}
	if in != scim.MaxGroupsPerUser {
		t.Errorf("the user is in %d groups", in)
	}
}

func testParallelSeats(t *testing.T, newStore Factory) {
	s := newStore(t, map[string]int{"t": 7})
	got := parallel(30, func(i int) error {
		_, err := s.CreateUser(context.Background(), "t", scim.User{UserName: fmt.Sprintf("u%d@example.com", i), Active: true})
		return err
	})
	if diff := cmp.Diff(map[string]int{"ok": 7, scim.ErrLicenseExceeded.Error(): 23}, got); diff != "" {
		t.Errorf("outcomes (-want +got):\n%s", diff)
	}
	users, total, err := s.ListUsers(context.Background(), "t", scim.ListQuery{StartIndex: 1, Count: 100})
	if err != nil || total != 7 || len(users) != 7 {
		t.Errorf("users: %d %v", total, err)
	}
	names := make([]string, len(users))
	for i, u := range users {
		names[i] = u.UserName
	}
	sort.Strings(names)
	if len(names) > 1 && names[0] == names[1] {
		t.Errorf("duplicate users: %v", names)
	}
}

// testParallelPatches adds members to one group by PATCH through a Service from many
// goroutines at once: each read-change-write that loses to another reads again, so every
// PATCH succeeds and the group ends with every member.
func testParallelPatches(t *testing.T, newStore Factory) {
	ctx := context.Background()
	s := newStore(t, nil)
	svc := scim.NewService(s)
	const n = 24
	var want []string
	for i := range n {
		want = append(want, must(s.CreateUser(ctx, "t", scim.User{UserName: fmt.Sprintf("p%d@example.com", i)})).get(t).ID)
	}
	g := must(s.CreateGroup(ctx, "t", scim.Group{DisplayName: "all"})).get(t)
	got := parallel(n, func(i int) error {
		ops := scim.Patch{{Op: "add", Path: "members", Value: []any{map[string]any{"value": want[i]}}, HasValue: true}}
		_, err := svc.PatchGroup(ctx, "t", g.ID, ops, nil)
		return err
	})
	if diff := cmp.Diff(map[string]int{"ok": n}, got); diff != "" {
		t.Errorf("outcomes (-want +got):\n%s", diff)
	}
	var members []string
	for _, m := range must(s.GetGroup(ctx, "t", g.ID)).get(t).Members {
		members = append(members, m.Value)
	}
	sort.Strings(members)
	sort.Strings(want)
	if diff := cmp.Diff(want, members); diff != "" {
		t.Errorf("members (-want +got):\n%s", diff)
	}
}

// testValueFilters checks the filters on e-mails and group members: EmailFilter compares
// address and type ignoring case (over Unicode), MemberFilter selects the groups of a user.
func testValueFilters(t *testing.T, newStore Factory) {
	ctx := context.Background()
	s := newStore(t, nil)
	mail := func(v, typ string) map[string]any { return map[string]any{"value": v, "type": typ} }
	a := must(s.CreateUser(ctx, "t", scim.User{UserName: "a@example.com", Attributes: map[string]any{
		"emails": []any{mail("A@Work.example", "work"), mail("a@home.example", "home")}}})).get(t)
	b := must(s.CreateUser(ctx, "t", scim.User{UserName: "b@example.com", Attributes: map[string]any{
		"emails": []any{mail("a@home.example", "Work")}}})).get(t)
	must(s.CreateUser(ctx, "t", scim.User{UserName: "c@example.com", Attributes: map[string]any{"title": "x"}})).get(t)
	d := must(s.CreateUser(ctx, "t", scim.User{UserName: "d@example.com", Attributes: map[string]any{
		"emails": []any{mail("Ärger.Öl@Example.com", "BÜRO"), mail("s@example.com", "home")}}})).get(t)
	must(s.CreateUser(ctx, "other", scim.User{UserName: "a@example.com", Attributes: map[string]any{
		"emails": []any{mail("a@work.example", "work")}}})).get(t)
	email := func(v, typ string) []scim.Equal { return []scim.Equal{{Attr: scim.EmailFilter, Value: v, Type: typ}} }
	users := []struct {
		filter []scim.Equal
		want   []string
	}{
		{email("a@work.example", "work"), []string{a.UserName}},
		{email("a@work.example", "WORK"), []string{a.UserName}},
		{email("a@work.example", "home"), []string{}},
		{email("a@home.example", ""), []string{a.UserName, b.UserName}},
		{email("a@home.example", "work"), []string{b.UserName}},
		{append(email("a@home.example", ""), scim.Equal{Attr: "userName", Value: "B@example.com"}), []string{b.UserName}},
		{email("nobody@example.com", ""), []string{}},
		// E-mail addresses are folded over Unicode as the databases' lower folds them,
		// strings.ToLower (so ſ, whose lower case is itself, is not s; userName and
		// displayName fold further, see scim.NameKey).
		{email("ärger.öl@example.COM", "büro"), []string{d.UserName}},
		{email("ÄRGER.ÖL@EXAMPLE.COM", ""), []string{d.UserName}},
		{email("ſ@example.com", ""), []string{}},
	}
	for _, tt := range users {
		page, total, err := s.ListUsers(ctx, "t", scim.ListQuery{Filter: tt.filter, StartIndex: 1, Count: 10})
		if err != nil {
			t.Fatal(err)
		}
		got := []string{}
		for _, u := range page {
			got = append(got, u.UserName)
		}
		if diff := cmp.Diff(tt.want, got); diff != "" || total != len(tt.want) {
			t.Errorf("%+v: total %d, users (-want +got):\n%s", tt.filter, total, diff)
		}
	}
	g1 := must(s.CreateGroup(ctx, "t", scim.Group{DisplayName: "G1", Members: []scim.Member{{Value: a.ID}, {Value: b.ID}}})).get(t)
	g2 := must(s.CreateGroup(ctx, "t", scim.Group{DisplayName: "G2", Members: []scim.Member{{Value: b.ID}}})).get(t)
	must(s.CreateGroup(ctx, "t", scim.Group{DisplayName: "G3"})).get(t)
	member := func(id string) []scim.Equal { return []scim.Equal{{Attr: scim.MemberFilter, Value: id}} }
	groups := []struct {
		filter []scim.Equal
		want   []string
	}{
		{member(a.ID), []string{g1.DisplayName}},
		{member(b.ID), []string{g1.DisplayName, g2.DisplayName}},
		{append(member(b.ID), scim.Equal{Attr: "id", Value: g2.ID}), []string{g2.DisplayName}},
		{member("nobody"), []string{}},
	}
	for _, tt := range groups {
		page, total, err := s.ListGroups(ctx, "t", scim.ListQuery{Filter: tt.filter, StartIndex: 1, Count: 10})
		if err != nil {
			t.Fatal(err)
		}
		got := []string{}
		for _, g := range page {
			got = append(got, g.DisplayName)
		}
		if diff := cmp.Diff(tt.want, got); diff != "" || total != len(tt.want) {
			t.Errorf("%+v: total %d, groups (-want +got):\n%s", tt.filter, total, diff)
		}
	}
}

// testDerivedVersions checks that a write changing what another resource shows changes
// that resource's version and lastModified too, so that its ETag changes with its
// representation: a user's name is its groups' members.display, a group's displayName
// and members are the groups of its users. Resources the write does not touch keep
// theirs.
func testDerivedVersions(t *testing.T, newStore Factory) {
	ctx := context.Background()
	s := newStore(t, nil)
	a := must(s.CreateUser(ctx, "t", scim.User{UserName: "a@example.com", Active: true})).get(t)
	b := must(s.CreateUser(ctx, "t", scim.User{UserName: "b@example.com", Active: true})).get(t)
	c := must(s.CreateUser(ctx, "t", scim.User{UserName: "c@example.com", Active: true})).get(t)
	other := must(s.CreateGroup(ctx, "t", scim.Group{DisplayName: "Other", Members: []scim.Member{{Value: c.ID}}})).get(t)
	user := func(u scim.User) scim.User { return must(s.GetUser(ctx, "t", u.ID)).get(t) }
	group := func(g scim.Group) scim.Group { return must(s.GetGroup(ctx, "t", g.ID)).get(t) }
	type state struct {
		users  []scim.User
		groups []scim.Group
	}
	read := func(gs ...scim.Group) state {
		st := state{users: []scim.User{user(a), user(b), user(c)}}
		for _, g := range gs {
			st.groups = append(st.groups, group(g))
		}
		return st
	}
	// changed names the resources whose version is not the one in before.
	changed := func(before state, gs ...scim.Group) []string {
		after := read(gs...)
		out := []string{}
		for i, u := range after.users {
			if u.Version != before.users[i].Version {
				if u.LastModified.Before(before.users[i].LastModified) {
					t.Errorf("user %s: lastModified went back", u.UserName)
				}
				out = append(out, u.UserName)
			}
		}
		for i, g := range after.groups {
			if g.Version != before.groups[i].Version {
				out = append(out, g.DisplayName)
			}
		}
		return out
	}
	check := func(step string, got []string, want ...string) {
		t.Helper()
		if diff := cmp.Diff(want, got, cmpopts.EquateEmpty()); diff != "" {
			t.Errorf("%s: changed versions (-want +got):\n%s", step, diff)
		}
	}

	before := read(other)
	g := must(s.CreateGroup(ctx, "t", scim.Group{DisplayName: "G", Members: []scim.Member{{Value: a.ID}}})).get(t)
	check("create a group with a", changed(before, other), "a@example.com")

	before = read(g, other)
	must(s.ReplaceGroup(ctx, "t", scim.Group{ID: g.ID, DisplayName: "G", Members: []scim.Member{{Value: a.ID}, {Value: b.ID}}}, 0)).get(t)
	check("add b", changed(before, g, other), "b@example.com", "G")

	before = read(g, other)
	must(s.ReplaceGroup(ctx, "t", scim.Group{ID: g.ID, DisplayName: "G", Members: []scim.Member{{Value: b.ID}}}, 0)).get(t)
	check("remove a", changed(before, g, other), "a@example.com", "G")

	before = read(g, other)
	must(s.ReplaceGroup(ctx, "t", scim.Group{ID: g.ID, DisplayName: "Renamed", Members: []scim.Member{{Value: b.ID}}, Role: scim.RoleAdmin}, 0)).get(t)
	check("rename the group", changed(before, g, other), "b@example.com", "Renamed")

	before = read(g, other)
	must(s.ReplaceGroup(ctx, "t", scim.Group{ID: g.ID, DisplayName: "Renamed", Members: []scim.Member{{Value: b.ID}}, ExternalID: "x"}, 0)).get(t)
	check("change the group's externalId", changed(before, g, other), "Renamed")

	before = read(g, other)
	bu := user(b)
	bu.DisplayName = "Bee"
	must(s.ReplaceUser(ctx, "t", bu, 0)).get(t)
	check("rename b", changed(before, g, other), "b@example.com", "Renamed")

	before = read(g, other)
	bu = user(b)
	bu.Attributes = map[string]any{"title": "T"}
	must(s.ReplaceUser(ctx, "t", bu, 0)).get(t)
	check("change b's title", changed(before, g, other), "b@example.com")

	before = read(other)
	if err := s.DeleteGroup(ctx, "t", g.ID, 0); err != nil {
		t.Fatal(err)
	}
	check("delete the group", changed(before, other), "b@example.com")
}

// RacingStore is a Store whose next ListGroups first calls Slip, once: the write of a
// concurrent request between the read of a user and the read of its groups, made
// deterministic for the tests of this suite and of adapters. It is for sequential use.
type RacingStore struct {
	scim.Store
	Slip func()
}

// ListGroups calls Slip, if set, and clears it, then lists the groups.
func (s *RacingStore) ListGroups(ctx context.Context, team string, q scim.ListQuery) ([]scim.Group, int, error) {
	if f := s.Slip; f != nil {
		s.Slip = nil
		f()
	}
	return s.Store.ListGroups(ctx, team, q)
}

// testUserGroups reads a user's groups while a write changes them: the groups answered
// are those of the version answered (RFC 7644 section 3.14: the version is of the
// resource as represented, groups included), never new groups under the old version nor
// the old groups under the new one.
func testUserGroups(t *testing.T, newStore Factory) {
	ctx := context.Background()
	s := &RacingStore{Store: newStore(t, nil)}
	svc := scim.NewService(s)
	a := must(s.CreateUser(ctx, "t", scim.User{UserName: "a@example.com", Active: true})).get(t)
	g := must(s.CreateGroup(ctx, "t", scim.Group{DisplayName: "G"})).get(t)
	for _, step := range []struct {
		name    string
		members []scim.Member
		want    []string
	}{
		{"joins", []scim.Member{{Value: a.ID}}, []string{g.ID}},
		{"leaves", nil, []string{}},
	} {
		read := must(s.GetUser(ctx, "t", a.ID)).get(t)
		s.Slip = func() {
			must(s.Store.ReplaceGroup(ctx, "t", scim.Group{ID: g.ID, DisplayName: "G", Members: step.members}, 0)).get(t)
		}
		u, groups, err := svc.UserGroups(ctx, "t", read)
		if err != nil {
			t.Fatalf("%s: %v", step.name, err)
		}
		stored := must(s.GetUser(ctx, "t", a.ID)).get(t)
		if u.Version != stored.Version || u.Version == read.Version {
			t.Errorf("%s: version %d with the groups of version %d (read before the write: %d)", step.name, u.Version, stored.Version, read.Version)
		}
		got := []string{}
		for _, g := range groups {
			got = append(got, g.ID)
		}
		if diff := cmp.Diff(step.want, got); diff != "" {
			t.Errorf("%s: groups (-want +got):\n%s", step.name, diff)
		}
	}
	// Without a write in between, the user is answered as read.
	read := must(s.GetUser(ctx, "t", a.ID)).get(t)
	u, groups, err := svc.UserGroups(ctx, "t", read)
	if err != nil || u.Version != read.Version || len(groups) != 0 {
		t.Errorf("quiet read: version %d (read %d), groups %v, error %v", u.Version, read.Version, groups, err)
	}
	// A user deleted meanwhile is not found.
	s.Slip = func() {
		if err := s.Store.DeleteUser(ctx, "t", a.ID, 0); err != nil {
			t.Fatal(err)
		}
	}
	if _, _, err := svc.UserGroups(ctx, "t", read); !errors.Is(err, scim.ErrNotFound) {
		t.Errorf("user deleted meanwhile: error %v, want ErrNotFound", err)
	}
}

// testUpdate checks UpdateUser and UpdateGroup (scim.Change): concurrent changes of one
// resource each see the writes that came before (a counter incremented by n writers
// ends at n, with n distinct versions), a change that writes nothing or fails leaves the
// resource and its version, and the replacement is held to the rules of ReplaceUser and
// ReplaceGroup.
func testUpdate(t *testing.T, newStore Factory) {
	ctx := context.Background()
	s := newStore(t, nil)
	u := must(s.CreateUser(ctx, "t", scim.User{UserName: "c@example.com", Active: true, Attributes: map[string]any{"nickName": "0"}})).get(t)
	const n = 16
	var mu sync.Mutex
	versions := map[int64]bool{}
	got := parallel(n, func(int) error {
		out, err := s.UpdateUser(ctx, "t", u.ID, func(cur scim.User) (scim.User, bool, error) {
			var count int
			fmt.Sscan(cur.Attributes["nickName"].(string), &count)
			cur.Attributes["nickName"] = fmt.Sprint(count + 1)
			return cur, true, nil
		})
		mu.Lock()
		versions[out.Version] = true
		mu.Unlock()
		return err
	})
	stored := must(s.GetUser(ctx, "t", u.ID)).get(t)
	if got["ok"] != n || stored.Attributes["nickName"] != fmt.Sprint(n) || len(versions) != n {
		t.Errorf("%d writers incrementing: outcomes %v, counter %v, %d distinct versions", n, got, stored.Attributes["nickName"], len(versions))
	}

	unchanged := func(step string, err error, wantErr error) {
		t.Helper()
		if !errors.Is(err, wantErr) {
			t.Errorf("%s: error %v, want %v", step, err, wantErr)
		}
		if after := must(s.GetUser(ctx, "t", u.ID)).get(t); after.Version != stored.Version || !cmp.Equal(after, stored) {
			t.Errorf("%s changed the user (-before +after):\n%s", step, cmp.Diff(stored, after))
		}
	}
	out, err := s.UpdateUser(ctx, "t", u.ID, func(cur scim.User) (scim.User, bool, error) {
		cur.DisplayName = "not written"
		return cur, false, nil
	})
	unchanged("write false", err, nil)
	if !cmp.Equal(out, stored) {
		t.Errorf("write false answered (-stored +answered):\n%s", cmp.Diff(stored, out))
	}
	failed := errors.New("the change fails")
	_, err = s.UpdateUser(ctx, "t", u.ID, func(cur scim.User) (scim.User, bool, error) {
		cur.DisplayName = "not written"
		return cur, true, failed
	})
	unchanged("a failing change", err, failed)
	_, err = s.UpdateUser(ctx, "t", u.ID, func(cur scim.User) (scim.User, bool, error) {
		cur.UserName = "other@example.com"
		return cur, true, nil
	})
	unchanged("a userName change", err, scim.ErrMutability)
	called := false
	_, err = s.UpdateUser(ctx, "t", "missing", func(cur scim.User) (scim.User, bool, error) {
		called = true
		return cur, true, nil
	})
	if !errors.Is(err, scim.ErrNotFound) || called {
		t.Errorf("missing user: error %v, change called %v", err, called)
	}

	g := must(s.CreateGroup(ctx, "t", scim.Group{DisplayName: "G", Members: []scim.Member{{Value: u.ID}}})).get(t)
	var seen scim.Group
	out2, err := s.UpdateGroup(ctx, "t", g.ID, func(cur scim.Group) (scim.Group, bool, error) {
		seen = cur
		cur.DisplayName = "H"
		return cur, true, nil
	})
	if err != nil || out2.DisplayName != "H" || out2.Version <= g.Version || len(seen.Members) != 1 || seen.Members[0].Display != "c@example.com" {
		t.Errorf("rename: %+v, %v; the change saw %+v", out2, err, seen)
	}
	_, err = s.UpdateGroup(ctx, "t", g.ID, func(cur scim.Group) (scim.Group, bool, error) {
		cur.Members = append(cur.Members, scim.Member{Value: "nobody"})
		return cur, true, nil
	})
	if !errors.Is(err, scim.ErrNoSuchMember) {
		t.Errorf("a member that is no user: error %v, want ErrNoSuchMember", err)
	}
	if after := must(s.GetGroup(ctx, "t", g.ID)).get(t); !cmp.Equal(after, out2) {
		t.Errorf("a refused change changed the group (-before +after):\n%s", cmp.Diff(out2, after))
	}
	if _, err := s.UpdateGroup(ctx, "t", "missing", func(cur scim.Group) (scim.Group, bool, error) { return cur, true, nil }); !errors.Is(err, scim.ErrNotFound) {
		t.Errorf("missing group: error %v, want ErrNotFound", err)
	}

	// Members keep the order they are given in, whether members are appended, removed or
	// reordered.
	v := must(s.CreateUser(ctx, "t", scim.User{UserName: "v@example.com"})).get(t).ID
	w := must(s.CreateUser(ctx, "t", scim.User{UserName: "w@example.com"})).get(t).ID
	for _, order := range [][]string{{u.ID, v, w}, {w, u.ID}, {w, u.ID, v}, {v, w, u.ID}, {v, u.ID}, {u.ID, v, w}, {}} {
		out, err := s.UpdateGroup(ctx, "t", g.ID, func(cur scim.Group) (scim.Group, bool, error) {
			cur.Members = nil
			for _, id := range order {
				cur.Members = append(cur.Members, scim.Member{Value: id})
			}
			return cur, true, nil
		})
		if err != nil {
			t.Fatalf("members %v: %v", order, err)
		}
		for _, got := range []scim.Group{out, must(s.GetGroup(ctx, "t", g.ID)).get(t)} {
			ids := []string{}
			for _, m := range got.Members {
				ids = append(ids, m.Value)
			}
			if diff := cmp.Diff(order, ids); diff != "" {
				t.Errorf("members (-want +got):\n%s", diff)
			}
		}
	}
}
