package sqlstore_test

import (
	"errors"
	"strings"
	"testing"
	"unicode"

	"github.com/kmkit/kmkit/scim"
)

// TestNameKeyMigration stores users and a group as a kmkit before scim.NameKey did (the
// keys strings.ToLower of the names), with names holding every character whose
// strings.ToLower NameKey changes, and opens the database again: the migration gives
// every row the key NameKey computes, so that the names are found by their folded forms
// and no name equal to a stored one under strings.EqualFold can be created. Two stored
// names that only NameKey equates do not fail the migration.
func TestNameKeyMigration(t *testing.T) {
	var changed []rune
	for r := range unicode.MaxRune + 1 {
		if c := unicode.ToLower(rune(r)); c == rune(r) && scim.NameKey(string(c)) != string(c) {
			changed = append(changed, c)
		}
	}
	if len(changed) == 0 {
		t.Fatal("no character changes its key")
	}
	for _, b := range databases {
		t.Run(b.name, func(t *testing.T) {
			dsn := b.dsn(t)
			db := open(t, dsn)
			userName := "Old" + string(changed) + "@example.com"
			display := "Ab" + string(changed)
			stmts := []struct {
				q    string
				args []any
			}{
				{`INSERT INTO scim_users (team, id, seq, user_name, user_name_key, external_id, display_name,
					display_name_key, active, role, send_email, attributes, created_us, modified_us, version)
					VALUES ('acme', 'u1', 1, $1, $2, '', $3, $4, true, 'MEMBER', false, 'null', 0, 0, 1)`,
					[]any{userName, strings.ToLower(userName), display, strings.ToLower(display)}},
				{`INSERT INTO scim_groups (team, id, seq, display_name, display_name_key, external_id, role,
					created_us, modified_us, version) VALUES ('acme', 'g1', 2, $1, $2, '', 'MEMBER', 0, 0, 2)`,
					[]any{display, strings.ToLower(display)}},
				// Two names that only the new folding equates: the migration leaves one
				// key as it was rather than fail.
				{`INSERT INTO scim_users (team, id, seq, user_name, user_name_key, external_id, display_name,
					display_name_key, active, role, send_email, attributes, created_us, modified_us, version)
					VALUES ('acme', 'u2', 3, $1, $1, '', '', '', true, 'MEMBER', false, 'null', 0, 0, 3),
					('acme', 'u3', 4, $2, $2, '', '', '', true, 'MEMBER', false, 'null', 0, 0, 4)`,
					[]any{"sam@example.com", "\u017fam@example.com"}},
				{`INSERT INTO scim_teams (team, seq) VALUES ('acme', 4)`, nil},
				{`DELETE FROM kmkit_migrations WHERE version = 3`, nil},
			}
			for _, s := range stmts {
				if db.Dialect() == "sqlite" {
					s.q = strings.ReplaceAll(s.q, "$", "?")
				}
				if _, err := db.SQL().ExecContext(t.Context(), s.q, s.args...); err != nil {
					t.Fatal(err)
				}
			}
			st := open(t, dsn).SCIM()
			for _, name := range []string{strings.ToUpper(userName), scim.NameKey(userName)} {
				got, _, err := st.ListUsers(t.Context(), "acme", scim.ListQuery{Count: 10, Filter: []scim.Equal{{Attr: "userName", Value: name}}})
				if err != nil || len(got) != 1 {
					t.Errorf("userName eq %q: %v, %v; want the stored user", name, got, err)
				}
				got, _, err = st.ListUsers(t.Context(), "acme", scim.ListQuery{Count: 10, Filter: []scim.Equal{{Attr: "displayName", Value: strings.ToUpper(display)}}})
				if err != nil || len(got) != 1 {
					t.Errorf("users displayName eq %q: %v, %v; want the stored user", strings.ToUpper(display), got, err)
				}
			}
			groups, _, err := st.ListGroups(t.Context(), "acme", scim.ListQuery{Count: 10, Filter: []scim.Equal{{Attr: "displayName", Value: strings.ToUpper(display)}}})
			if err != nil || len(groups) != 1 {
				t.Errorf("groups displayName eq %q: %v, %v; want the stored group", strings.ToUpper(display), groups, err)
			}
			for _, name := range []string{strings.ToUpper(userName), "SAM@example.com", "\u017fAM@example.com"} {
				if _, err := st.CreateUser(t.Context(), "acme", scim.User{UserName: name, Active: true}); !errors.Is(err, scim.ErrUniqueness) {
					t.Errorf("a user named %q: %v, want a uniqueness error", name, err)
				}
			}
			if _, total, err := st.ListUsers(t.Context(), "acme", scim.ListQuery{}); err != nil || total != 3 {
				t.Errorf("%d users (%v), want the 3 stored", total, err)
			}
		})
	}
}
