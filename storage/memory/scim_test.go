package memory

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/kmkit/kmkit/scim"
)

var scimIgnoreMeta = cmpopts.IgnoreFields(scim.User{}, "ID", "Created", "LastModified", "Version")

func TestSCIMStoreUsers(t *testing.T) {
	ctx := context.Background()
	s := NewSCIMStore()
	in := scim.User{UserName: "a@example.com", Active: true, Role: scim.RoleMember,
		Attributes: map[string]any{"name": map[string]any{"givenName": "A"}}}
	u, err := s.CreateUser(ctx, "t", in)
	if err != nil {
		t.Fatal(err)
	}
	if u.ID == "" || u.Version == 0 || u.Created.IsZero() || !u.Created.Equal(u.LastModified) {
		t.Errorf("store-maintained fields: %+v", u)
	}
	if diff := cmp.Diff(in, u, scimIgnoreMeta); diff != "" {
		t.Errorf("created (-want +got):\n%s", diff)
	}
	// Returned values share nothing with the store.
	u.Attributes["name"].(map[string]any)["givenName"] = "changed"
	in.Attributes["name"].(map[string]any)["givenName"] = "changed too"
	got, err := s.GetUser(ctx, "t", u.ID)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(map[string]any{"name": map[string]any{"givenName": "A"}}, got.Attributes); diff != "" {
		t.Errorf("stored attributes changed through a returned value (-want +got):\n%s", diff)
	}

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
		{"stale version", scim.ErrVersionMismatch, func() error {
			_, err := s.ReplaceUser(ctx, "t", scim.User{ID: u.ID, UserName: "a@example.com"}, u.Version+1)
			return err
		}},
		{"stale delete", scim.ErrVersionMismatch, func() error { return s.DeleteUser(ctx, "t", u.ID, u.Version+1) }},
		{"missing", scim.ErrNotFound, func() error {
			_, err := s.GetUser(ctx, "t", "nope")
			return err
		}},
		{"other team", scim.ErrNotFound, func() error {
			_, err := s.GetUser(ctx, "other", u.ID)
			return err
		}},
		{"missing replace", scim.ErrNotFound, func() error {
			_, err := s.ReplaceUser(ctx, "t", scim.User{ID: "nope", UserName: "x@example.com"}, 0)
			return err
		}},
		{"missing delete", scim.ErrNotFound, func() error { return s.DeleteUser(ctx, "t", "nope", 0) }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := tt.f(); !errors.Is(err, tt.err) {
				t.Errorf("error %v, want %v", err, tt.err)
			}
		})
	}

	r, err := s.ReplaceUser(ctx, "t", scim.User{ID: u.ID, UserName: "A@example.com", DisplayName: "A"}, u.Version)
	if err != nil {
		t.Fatal(err)
	}
	if r.Version <= u.Version || !r.Created.Equal(u.Created) || r.UserName != "A@example.com" {
		t.Errorf("replaced: %+v", r)
	}
	if err := s.DeleteUser(ctx, "t", u.ID, r.Version); err != nil {
		t.Fatal(err)
	}
	if _, err := s.CreateUser(ctx, "t", scim.User{UserName: "a@example.com"}); err != nil {
		t.Errorf("name not freed by the delete: %v", err)
	}
}

func TestSCIMStoreList(t *testing.T) {
	ctx := context.Background()
	s := NewSCIMStore()
	var names []string
	for i := range 7 {
		u, err := s.CreateUser(ctx, "t", scim.User{UserName: fmt.Sprintf("u%d@example.com", i), ExternalID: fmt.Sprint(i % 2)})
		if err != nil {
			t.Fatal(err)
		}
		names = append(names, u.UserName)
	}
	tests := []struct {
		q     scim.ListQuery
		want  []string
		total int
	}{
		{scim.ListQuery{StartIndex: 1, Count: 3}, names[:3], 7},
		{scim.ListQuery{StartIndex: 6, Count: 3}, names[5:], 7},
		{scim.ListQuery{StartIndex: 8, Count: 3}, []string{}, 7},
		{scim.ListQuery{StartIndex: 0, Count: 0}, []string{}, 7},
		{scim.ListQuery{StartIndex: 1, Count: 10, Filter: []scim.Equal{{Attr: "externalId", Value: "1"}}}, []string{names[1], names[3], names[5]}, 3},
		{scim.ListQuery{StartIndex: 2, Count: 1, Filter: []scim.Equal{{Attr: "externalId", Value: "1"}}}, []string{names[3]}, 3},
		{scim.ListQuery{StartIndex: 1, Count: 10, Filter: []scim.Equal{{Attr: "userName", Value: "U4@EXAMPLE.COM"}}}, names[4:5], 1},
		{scim.ListQuery{StartIndex: 1, Count: 10, Filter: []scim.Equal{{Attr: "userName", Value: "u4@example.com"}, {Attr: "externalId", Value: "1"}}}, []string{}, 0},
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
	if users, total, err := s.ListUsers(ctx, "empty", scim.ListQuery{StartIndex: 1, Count: 5}); err != nil || total != 0 || len(users) != 0 {
		t.Errorf("empty team: %v %d %v", users, total, err)
	}
}

func TestSCIMStoreGroups(t *testing.T) {
	ctx := context.Background()
	s := NewSCIMStore()
	a, _ := s.CreateUser(ctx, "t", scim.User{UserName: "a@example.com", DisplayName: "Ann"})
	b, _ := s.CreateUser(ctx, "t", scim.User{UserName: "b@example.com"})
	g, err := s.CreateGroup(ctx, "t", scim.Group{DisplayName: "G", Members: []scim.Member{{Value: a.ID}, {Value: b.ID}, {Value: a.ID}}})
	if err != nil {
		t.Fatal(err)
	}
	want := []scim.Member{{Value: a.ID, Display: "Ann"}, {Value: b.ID, Display: "b@example.com"}}
	if diff := cmp.Diff(want, g.Members); diff != "" {
		t.Errorf("members (-want +got):\n%s", diff)
	}
	if _, err := s.CreateGroup(ctx, "t", scim.Group{DisplayName: "g"}); !errors.Is(err, scim.ErrUniqueness) {
		t.Errorf("duplicate displayName: %v", err)
	}
	if _, err := s.CreateGroup(ctx, "t", scim.Group{DisplayName: "H", Members: []scim.Member{{Value: "nope"}}}); !errors.Is(err, scim.ErrNoSuchMember) {
		t.Errorf("missing member: %v", err)
	}
	// Deleting a user takes it out of its groups and bumps their version.
	if err := s.DeleteUser(ctx, "t", b.ID, 0); err != nil {
		t.Fatal(err)
	}
	after, _ := s.GetGroup(ctx, "t", g.ID)
	if diff := cmp.Diff(want[:1], after.Members); diff != "" || after.Version <= g.Version {
		t.Errorf("after deleting a member: version %d -> %d, members (-want +got):\n%s", g.Version, after.Version, diff)
	}
	// Deleting a group leaves the user and frees its memberships.
	if err := s.DeleteGroup(ctx, "t", g.ID, after.Version); err != nil {
		t.Fatal(err)
	}
	if _, err := s.GetUser(ctx, "t", a.ID); err != nil {
		t.Errorf("user gone with its group: %v", err)
	}
	for i := range scim.MaxGroupsPerUser {
		if _, err := s.CreateGroup(ctx, "t", scim.Group{DisplayName: fmt.Sprint(i), Members: []scim.Member{{Value: a.ID}}}); err != nil {
			t.Fatalf("group %d: %v", i, err)
		}
	}
	if _, err := s.CreateGroup(ctx, "t", scim.Group{DisplayName: "one too many", Members: []scim.Member{{Value: a.ID}}}); !errors.Is(err, scim.ErrTooManyGroups) {
		t.Errorf("51st group: %v", err)
	}
	groups, total, _ := s.ListGroups(ctx, "t", scim.ListQuery{StartIndex: 1, Count: 1, Filter: []scim.Equal{{Attr: "displayName", Value: "7"}}})
	if total != 1 || len(groups) != 1 || groups[0].DisplayName != "7" {
		t.Errorf("filtered groups: %d %+v", total, groups)
	}
}

func TestSCIMStoreSeats(t *testing.T) {
	ctx := context.Background()
	s := NewSCIMStore()
	s.SetDefaultSeatLimit(1)
	s.SetSeatLimit("big", 3)
	if _, err := s.CreateUser(ctx, "t", scim.User{UserName: "a@example.com", Active: true}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.CreateUser(ctx, "t", scim.User{UserName: "b@example.com", Active: true}); !errors.Is(err, scim.ErrLicenseExceeded) {
		t.Errorf("second active user: %v", err)
	}
	inactive, err := s.CreateUser(ctx, "t", scim.User{UserName: "c@example.com"})
	if err != nil {
		t.Errorf("inactive users take no seat: %v", err)
	}
	inactive.Active = true
	if _, err := s.ReplaceUser(ctx, "t", inactive, 0); !errors.Is(err, scim.ErrLicenseExceeded) {
		t.Errorf("activation beyond the limit: %v", err)
	}
	for i := range 3 {
		if _, err := s.CreateUser(ctx, "big", scim.User{UserName: fmt.Sprintf("%d@example.com", i), Active: true}); err != nil {
			t.Errorf("team with its own limit, user %d: %v", i, err)
		}
	}
}
