package sqlstore

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"

	"github.com/kmkit/kmkit/scim"
)

// SCIMStore is the scim.Store of a DB. Every write runs in one transaction that first
// locks the team's row of scim_teams (an upsert that also hands out the next version), so
// the writes of one team are serialized across goroutines and processes while other teams
// proceed; the rules are checked inside that transaction, and unique indexes on the folded
// userName and group displayName back them up. Seat limits are configuration, not data:
// every process serving a team must be given the same limits.
type SCIMStore struct {
	scim.SeatLimits
	db  *DB
	now func() time.Time
}

// SCIM returns the DB's scim.Store. Seats are unlimited until SetSeatLimit or
// SetDefaultSeatLimit (of the embedded scim.SeatLimits) says otherwise.
func (db *DB) SCIM() *SCIMStore {
	return &SCIMStore{db: db, now: func() time.Time { return time.Now().UTC() }}
}

// q rebinds a statement for the dialect.
func (s *SCIMStore) q(stmt string) string { return s.db.d.rebind(stmt) }

// write runs f in a transaction holding the team's lock; version is the version this
// write hands out.
func (s *SCIMStore) write(ctx context.Context, team string, f func(tx *sql.Tx, version int64) error) error {
	return s.db.tx(ctx, func(tx *sql.Tx) error {
		var version int64
		err := tx.QueryRowContext(ctx, s.q(`INSERT INTO scim_teams (team, seq) VALUES (?, 1)
			ON CONFLICT (team) DO UPDATE SET seq = scim_teams.seq + 1 RETURNING seq`), team).Scan(&version)
		if err != nil {
			return err
		}
		return f(tx, version)
	})
}

// checkSeats fails when a write changing the active users by delta would leave the team
// above its limit, unless the write lowers their number.
func (s *SCIMStore) checkSeats(ctx context.Context, tx *sql.Tx, team string, delta int) error {
	limit := s.Seats(team)
	if limit <= 0 || delta < 0 {
		return nil
	}
	var active int
	if err := tx.QueryRowContext(ctx, s.q(`SELECT count(*) FROM scim_users WHERE team = ? AND active`), team).Scan(&active); err != nil {
		return err
	}
	return scim.CheckSeats(active, delta, limit)
}

const userColumns = `id, external_id, user_name, display_name, active, role, send_email, attributes, created_us, modified_us, version`

func scanUser(row interface{ Scan(...any) error }) (scim.User, error) {
	var (
		u         scim.User
		role      string
		attrs     string
		created   int64
		modified  int64
		active    bool
		sendEmail bool
	)
	if err := row.Scan(&u.ID, &u.ExternalID, &u.UserName, &u.DisplayName, &active, &role, &sendEmail, &attrs, &created, &modified, &u.Version); err != nil {
		return scim.User{}, err
	}
	u.Active, u.SendEmailOnInvitation, u.Role = active, sendEmail, scim.Role(role)
	u.Created, u.LastModified = time.UnixMicro(created).UTC(), time.UnixMicro(modified).UTC()
	if attrs != "null" {
		if err := json.Unmarshal([]byte(attrs), &u.Attributes); err != nil {
			return scim.User{}, fmt.Errorf("sqlstore: attributes of user %s: %w", u.ID, err)
		}
	}
	return u, nil
}

// times rounds t to the microsecond the database keeps.
func micros(t time.Time) time.Time { return time.UnixMicro(t.UnixMicro()).UTC() }

// CreateUser implements scim.Store.
func (s *SCIMStore) CreateUser(ctx context.Context, team string, u scim.User) (scim.User, error) {
	attrs, err := json.Marshal(u.Attributes)
	if err != nil {
		return scim.User{}, fmt.Errorf("sqlstore: attributes: %w", err)
	}
	u = u.Clone()
	err = s.write(ctx, team, func(tx *sql.Tx, version int64) error {
		var dup int
		if err := tx.QueryRowContext(ctx, s.q(`SELECT count(*) FROM scim_users WHERE team = ? AND user_name_key = ?`),
			team, scim.NameKey(u.UserName)).Scan(&dup); err != nil {
			return err
		}
		if dup > 0 {
			return scim.DuplicateUserName(u.UserName)
		}
		delta := 0
		if u.Active {
			delta = 1
		}
		if err := s.checkSeats(ctx, tx, team, delta); err != nil {
			return err
		}
		u.ID = uuid.NewString()
		u.Created = micros(s.now())
		u.LastModified = u.Created
		u.Version = version
		_, err := tx.ExecContext(ctx, s.q(`INSERT INTO scim_users (team, id, seq, user_name, user_name_key, external_id,
			display_name, display_name_key, active, role, send_email, attributes, created_us, modified_us, version)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`),
			team, u.ID, version, u.UserName, scim.NameKey(u.UserName), u.ExternalID, u.DisplayName,
			scim.NameKey(u.DisplayName), u.Active, string(u.Role), u.SendEmailOnInvitation, string(attrs),
			u.Created.UnixMicro(), u.LastModified.UnixMicro(), u.Version)
		if s.db.d.uniqueViolation(err) {
			return scim.DuplicateUserName(u.UserName)
		}
		return err
	})
	if err != nil {
		return scim.User{}, err
	}
	return u.Clone(), nil
}

func (s *SCIMStore) getUser(ctx context.Context, q interface {
	QueryRowContext(context.Context, string, ...any) *sql.Row
}, team, id string) (scim.User, error) {
	u, err := scanUser(q.QueryRowContext(ctx, s.q(`SELECT `+userColumns+` FROM scim_users WHERE team = ? AND id = ?`), team, id))
	if errors.Is(err, sql.ErrNoRows) {
		return scim.User{}, scim.NotFound("User", id)
	}
	return u, err
}

// GetUser implements scim.Store.
func (s *SCIMStore) GetUser(ctx context.Context, team, id string) (scim.User, error) {
	return s.getUser(ctx, s.db.sql, team, id)
}

// ReplaceUser implements scim.Store.
func (s *SCIMStore) ReplaceUser(ctx context.Context, team string, u scim.User, ifVersion int64) (scim.User, error) {
	attrs, err := json.Marshal(u.Attributes)
	if err != nil {
		return scim.User{}, fmt.Errorf("sqlstore: attributes: %w", err)
	}
	var out scim.User
	err = s.write(ctx, team, func(tx *sql.Tx, version int64) error {
		old, err := s.getUser(ctx, tx, team, u.ID)
		if err != nil {
			return err
		}
		if err := scim.CheckVersion("User", u.ID, old.Version, ifVersion); err != nil {
			return err
		}
		out, err = s.replaceUser(ctx, tx, team, u, attrs, old, version)
		return err
	})
	if err != nil {
		return scim.User{}, err
	}
	return out, nil
}

// errUnchanged rolls back the transaction of an update whose change writes nothing.
var errUnchanged = errors.New("sqlstore: nothing to write")

// UpdateUser implements scim.Store: change runs in the transaction that holds the team's
// lock.
func (s *SCIMStore) UpdateUser(ctx context.Context, team, id string, change scim.Change[scim.User]) (scim.User, error) {
	var out scim.User
	err := s.write(ctx, team, func(tx *sql.Tx, version int64) error {
		old, err := s.getUser(ctx, tx, team, id)
		if err != nil {
			return err
		}
		next, write, err := change(old.Clone())
		if err != nil {
			return err
		}
		if !write {
			out = old
			return errUnchanged
		}
		next.ID = id
		attrs, err := json.Marshal(next.Attributes)
		if err != nil {
			return fmt.Errorf("sqlstore: attributes: %w", err)
		}
		out, err = s.replaceUser(ctx, tx, team, next, attrs, old, version)
		return err
	})
	if err != nil && !errors.Is(err, errUnchanged) {
		return scim.User{}, err
	}
	return out, nil
}

// replaceUser replaces the stored user old with u (its attributes encoded as attrs) in
// the write's transaction.
func (s *SCIMStore) replaceUser(ctx context.Context, tx *sql.Tx, team string, u scim.User, attrs []byte, old scim.User, version int64) (scim.User, error) {
	if err := scim.CheckUserNameChange(old.UserName, u.UserName); err != nil {
		return scim.User{}, err
	}
	delta := scim.SeatDelta(old.Active, u.Active)
	if err := s.checkSeats(ctx, tx, team, delta); err != nil {
		return scim.User{}, err
	}
	u = u.Clone()
	u.Created = old.Created
	u.LastModified = micros(s.now())
	u.Version = version
	if u.UserName != old.UserName || u.DisplayName != old.DisplayName {
		if err := s.touchGroupsOf(ctx, tx, team, u.ID, version, u.LastModified.UnixMicro()); err != nil {
			return scim.User{}, err
		}
	}
	_, err := tx.ExecContext(ctx, s.q(`UPDATE scim_users SET user_name = ?, user_name_key = ?, external_id = ?,
		display_name = ?, display_name_key = ?, active = ?, role = ?, send_email = ?, attributes = ?,
		modified_us = ?, version = ? WHERE team = ? AND id = ?`),
		u.UserName, scim.NameKey(u.UserName), u.ExternalID, u.DisplayName, scim.NameKey(u.DisplayName),
		u.Active, string(u.Role), u.SendEmailOnInvitation, string(attrs), u.LastModified.UnixMicro(), u.Version,
		team, u.ID)
	if err != nil {
		return scim.User{}, err
	}
	return u.Clone(), nil
}

// DeleteUser implements scim.Store: the user leaves the team and its groups, whose
// versions change.
func (s *SCIMStore) DeleteUser(ctx context.Context, team, id string, ifVersion int64) error {
	return s.write(ctx, team, func(tx *sql.Tx, version int64) error {
		old, err := s.getUser(ctx, tx, team, id)
		if err != nil {
			return err
		}
		if err := scim.CheckVersion("User", id, old.Version, ifVersion); err != nil {
			return err
		}
		if err := s.touchGroupsOf(ctx, tx, team, id, version, s.now().UnixMicro()); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, s.q(`DELETE FROM scim_members WHERE team = ? AND user_id = ?`), team, id); err != nil {
			return err
		}
		_, err = tx.ExecContext(ctx, s.q(`DELETE FROM scim_users WHERE team = ? AND id = ?`), team, id)
		return err
	})
}

// touchGroupsOf gives the groups of the user id the write's version and modify time: the
// user's name is their members.display, and leaving them changes their members.
func (s *SCIMStore) touchGroupsOf(ctx context.Context, tx *sql.Tx, team, id string, version, now int64) error {
	_, err := tx.ExecContext(ctx, s.q(`UPDATE scim_groups SET modified_us = ?, version = ?
		WHERE team = ? AND id IN (SELECT group_id FROM scim_members WHERE team = ? AND user_id = ?)`),
		now, version, team, team, id)
	return err
}

// touchUsers gives the users ids, whose groups a write to a group changed
// (scim.TouchedMembers), the write's version and modify time.
func (s *SCIMStore) touchUsers(ctx context.Context, tx *sql.Tx, team string, ids []string, version, now int64) error {
	if len(ids) == 0 {
		return nil
	}
	_, err := tx.ExecContext(ctx, s.q(`UPDATE scim_users SET modified_us = ?, version = ? WHERE team = ? AND `+
		s.db.d.inArray("id", "?", ids)), now, version, team, s.db.d.arrayArg(ids))
	return err
}

// members returns the members of the group gid as stored, in their order, without
// displays, and the position of the last one (-1 when there is none).
func (s *SCIMStore) members(ctx context.Context, tx *sql.Tx, team, gid string) ([]scim.Member, int64, error) {
	rows, err := tx.QueryContext(ctx, s.q(`SELECT user_id, pos FROM scim_members WHERE team = ? AND group_id = ? ORDER BY pos`), team, gid)
	if err != nil {
		return nil, 0, err
	}
	defer rows.Close()
	var out []scim.Member
	last := int64(-1)
	for rows.Next() {
		var m scim.Member
		if err := rows.Scan(&m.Value, &last); err != nil {
			return nil, 0, err
		}
		out = append(out, m)
	}
	return out, last, rows.Err()
}

// listClauses returns the WHERE conditions and arguments of a filter, and the ORDER BY of
// a sort, over the columns of users or groups. Folded columns hold scim.NameKey of the
// value, which is how the memory store and scim.Equal compare userName and displayName.
func (s *SCIMStore) listClauses(team string, q scim.ListQuery, users bool) (where string, args []any, order string, err error) {
	var conds []string
	for _, e := range q.Filter {
		switch e.Attr {
		case scim.EmailFilter:
			if !users {
				conds = append(conds, "1 = 0")
				continue
			}
			conds = append(conds, s.emailCondition())
			args = append(args, e.Value, e.Type, e.Type)
		case scim.MemberFilter:
			if users {
				conds = append(conds, "1 = 0")
				continue
			}
			conds = append(conds, "id IN (SELECT group_id FROM scim_members WHERE team = ? AND user_id = ?)")
			args = append(args, team, e.Value)
		case "id":
			conds = append(conds, "id = ?")
			args = append(args, e.Value)
		case "externalId":
			conds = append(conds, "external_id = ?")
			args = append(args, e.Value)
		case "displayName":
			conds = append(conds, "display_name_key = ?")
			args = append(args, scim.NameKey(e.Value))
		case "userName":
			if !users {
				conds = append(conds, "1 = 0") // groups have no userName: nothing matches
				continue
			}
			conds = append(conds, "user_name_key = ?")
			args = append(args, scim.NameKey(e.Value))
		default:
			conds = append(conds, "1 = 0")
		}
	}
	for _, c := range conds {
		where += " AND " + c
	}
	dir := " ASC"
	if q.Sort.Descending {
		dir = " DESC"
	}
	switch q.Sort.Attr {
	case "":
		order = "seq"
	case "id":
		order = "id" + dir + ", seq"
	case "externalId":
		order = "external_id = ''" + ", external_id" + dir + ", seq"
	case "userName":
		if !users {
			order = "seq"
			break
		}
		order = "user_name_key" + dir + ", user_name" + dir + ", seq"
	case "displayName":
		order = "display_name = ''" + ", display_name_key" + dir + ", display_name" + dir + ", seq"
	case "meta.created":
		order = "created_us" + dir + ", seq"
	case "meta.lastModified":
		order = "modified_us" + dir + ", seq"
	default:
		return "", nil, "", fmt.Errorf("sqlstore: unknown sort attribute %q", q.Sort.Attr)
	}
	return where, args, order, nil
}

// emailCondition is the condition of an EmailFilter term on scim_users, with three
// parameters: the address, then the type twice ("" for any). Both sides are folded to
// lower case over Unicode, as scim.Equal.MatchesEmails folds them.
func (s *SCIMStore) emailCondition() string {
	elements := `json_each(scim_users.attributes, '$.emails') e`
	value, typ := `json_extract(e.value, '$.value')`, `json_extract(e.value, '$.type')`
	if s.db.d.name() == "postgres" {
		elements = `jsonb_array_elements(CASE WHEN jsonb_typeof(scim_users.attributes::jsonb -> 'emails') = 'array'
			THEN scim_users.attributes::jsonb -> 'emails' ELSE '[]'::jsonb END) e`
		value, typ = `e ->> 'value'`, `e ->> 'type'`
	}
	lower := func(x string) string { return s.db.d.caseMap(false, x) }
	return `EXISTS (SELECT 1 FROM ` + elements + ` WHERE ` + lower(value) + ` = ` + lower(`CAST(? AS TEXT)`) + `
		AND (CAST(? AS TEXT) = '' OR ` + lower(typ) + ` = ` + lower(`CAST(? AS TEXT)`) + `))`
}

// ListUsers implements scim.Store.
func (s *SCIMStore) ListUsers(ctx context.Context, team string, q scim.ListQuery) ([]scim.User, int, error) {
	where, args, order, err := s.listClauses(team, q, true)
	if err != nil {
		return nil, 0, err
	}
	args = append([]any{team}, args...)
	var (
		out   []scim.User
		total int
	)
	// The total and the page of one snapshot: a delete between them would answer a
	// totalResults that the page contradicts.
	err = readTx(ctx, s.db.sql, s.db.d, func(tx *sql.Tx) error {
		if err := tx.QueryRowContext(ctx, s.q(`SELECT count(*) FROM scim_users WHERE team = ?`+where), args...).Scan(&total); err != nil {
			return err
		}
		lo, hi := q.Page(total)
		out = make([]scim.User, 0, hi-lo)
		if hi == lo {
			return nil
		}
		rows, err := tx.QueryContext(ctx, s.q(`SELECT `+userColumns+` FROM scim_users WHERE team = ?`+where+
			` ORDER BY `+order+` LIMIT ? OFFSET ?`), append(args, hi-lo, lo)...)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			u, err := scanUser(rows)
			if err != nil {
				return err
			}
			out = append(out, u)
		}
		return rows.Err()
	})
	if err != nil {
		return nil, 0, err
	}
	return out, total, nil
}

// checkMembers validates the members of group gid (empty for a new group), whose stored
// members are before, and returns them without duplicates, in their first order. A
// stored member needs no check: it is a user of the team (deleting a user removes its
// memberships) and already counted in this group.
func (s *SCIMStore) checkMembers(ctx context.Context, tx *sql.Tx, team, gid string, members, before []scim.Member) ([]scim.Member, error) {
	stored := make(map[string]bool, len(before))
	for _, m := range before {
		stored[m.Value] = true
	}
	seen := make(map[string]bool, len(members))
	out := make([]scim.Member, 0, len(members))
	for _, m := range members {
		if seen[m.Value] {
			continue
		}
		seen[m.Value] = true
		if stored[m.Value] {
			out = append(out, scim.Member{Value: m.Value})
			continue
		}
		var exists, groups, inThis int
		err := tx.QueryRowContext(ctx, s.q(`SELECT
			(SELECT count(*) FROM scim_users WHERE team = ? AND id = ?),
			(SELECT count(*) FROM scim_members WHERE team = ? AND user_id = ?),
			(SELECT count(*) FROM scim_members WHERE team = ? AND user_id = ? AND group_id = ?)`),
			team, m.Value, team, m.Value, team, m.Value, gid).Scan(&exists, &groups, &inThis)
		if err != nil {
			return nil, err
		}
		if err := scim.CheckMember(m.Value, exists > 0, groups, inThis > 0); err != nil {
			return nil, err
		}
		out = append(out, scim.Member{Value: m.Value})
	}
	return out, nil
}

func (s *SCIMStore) checkGroupName(ctx context.Context, tx *sql.Tx, team, gid, name string) error {
	var n int
	err := tx.QueryRowContext(ctx, s.q(`SELECT count(*) FROM scim_groups WHERE team = ? AND display_name_key = ? AND id <> ?`),
		team, scim.NameKey(name), gid).Scan(&n)
	if err != nil {
		return err
	}
	if n > 0 {
		return scim.DuplicateGroupName(name)
	}
	return nil
}

// setMembers stores members as the members of group gid, whose stored members are before
// (in order, the last at position last). When the members that stay keep their order and
// the new ones follow them, as with PATCH add and remove, only the members that left are
// deleted and those that joined appended; otherwise the list is written anew.
func (s *SCIMStore) setMembers(ctx context.Context, tx *sql.Tx, team, gid string, before []scim.Member, last int64, members []scim.Member) error {
	in := make(map[string]bool, len(members))
	for _, m := range members {
		in[m.Value] = true
	}
	var left []string
	kept := 0
	for _, m := range before {
		if !in[m.Value] {
			left = append(left, m.Value)
			continue
		}
		if kept == len(members) || members[kept].Value != m.Value {
			return s.rewriteMembers(ctx, tx, team, gid, members)
		}
		kept++
	}
	if len(left) > 0 {
		if _, err := tx.ExecContext(ctx, s.q(`DELETE FROM scim_members WHERE team = ? AND group_id = ? AND `+
			s.db.d.inArray("user_id", "?", left)), team, gid, s.db.d.arrayArg(left)); err != nil {
			return err
		}
	}
	return s.insertMembers(ctx, tx, team, gid, members[kept:], last+1)
}

// rewriteMembers replaces the stored members of group gid with members.
func (s *SCIMStore) rewriteMembers(ctx context.Context, tx *sql.Tx, team, gid string, members []scim.Member) error {
	if _, err := tx.ExecContext(ctx, s.q(`DELETE FROM scim_members WHERE team = ? AND group_id = ?`), team, gid); err != nil {
		return err
	}
	return s.insertMembers(ctx, tx, team, gid, members, 0)
}

// insertMembers adds members to group gid at the positions from pos on.
func (s *SCIMStore) insertMembers(ctx context.Context, tx *sql.Tx, team, gid string, members []scim.Member, pos int64) error {
	for i, m := range members {
		if _, err := tx.ExecContext(ctx, s.q(`INSERT INTO scim_members (team, group_id, user_id, pos) VALUES (?, ?, ?, ?)`),
			team, gid, m.Value, pos+int64(i)); err != nil {
			return err
		}
	}
	return nil
}

const groupColumns = `id, external_id, display_name, role, created_us, modified_us, version`

// readGroups returns the groups the query selects (columns groupColumns), with their
// members and member displays.
func (s *SCIMStore) readGroups(ctx context.Context, q querier, team, stmt string, args ...any) ([]scim.Group, error) {
	rows, err := q.QueryContext(ctx, stmt, args...)
	if err != nil {
		return nil, err
	}
	var out []scim.Group
	for rows.Next() {
		var g scim.Group
		var role string
		var created, modified int64
		if err := rows.Scan(&g.ID, &g.ExternalID, &g.DisplayName, &role, &created, &modified, &g.Version); err != nil {
			rows.Close()
			return nil, err
		}
		g.Role = scim.Role(role)
		g.Created, g.LastModified = time.UnixMicro(created).UTC(), time.UnixMicro(modified).UTC()
		out = append(out, g)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, err
	}
	for i := range out {
		g := &out[i]
		mrows, err := q.QueryContext(ctx, s.q(`SELECT m.user_id, u.display_name, u.user_name FROM scim_members m
			JOIN scim_users u ON u.team = m.team AND u.id = m.user_id
			WHERE m.team = ? AND m.group_id = ? ORDER BY m.pos`), team, g.ID)
		if err != nil {
			return nil, err
		}
		for mrows.Next() {
			var m scim.Member
			var display, name string
			if err := mrows.Scan(&m.Value, &display, &name); err != nil {
				mrows.Close()
				return nil, err
			}
			m.Display = display
			if display == "" {
				m.Display = name
			}
			g.Members = append(g.Members, m)
		}
		mrows.Close()
		if err := mrows.Err(); err != nil {
			return nil, err
		}
	}
	return out, nil
}

func (s *SCIMStore) getGroup(ctx context.Context, q querier, team, id string) (scim.Group, error) {
	gs, err := s.readGroups(ctx, q, team, s.q(`SELECT `+groupColumns+` FROM scim_groups WHERE team = ? AND id = ?`), team, id)
	if err != nil {
		return scim.Group{}, err
	}
	if len(gs) == 0 {
		return scim.Group{}, scim.NotFound("Group", id)
	}
	return gs[0], nil
}

// CreateGroup implements scim.Store.
func (s *SCIMStore) CreateGroup(ctx context.Context, team string, g scim.Group) (scim.Group, error) {
	var out scim.Group
	err := s.write(ctx, team, func(tx *sql.Tx, version int64) error {
		if err := s.checkGroupName(ctx, tx, team, "", g.DisplayName); err != nil {
			return err
		}
		members, err := s.checkMembers(ctx, tx, team, "", g.Members, nil)
		if err != nil {
			return err
		}
		if err := s.checkSeats(ctx, tx, team, 0); err != nil {
			return err
		}
		id := uuid.NewString()
		now := s.now().UnixMicro()
		_, err = tx.ExecContext(ctx, s.q(`INSERT INTO scim_groups (team, id, seq, display_name, display_name_key,
			external_id, role, created_us, modified_us, version) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`),
			team, id, version, g.DisplayName, scim.NameKey(g.DisplayName), g.ExternalID, string(g.Role), now, now, version)
		if s.db.d.uniqueViolation(err) {
			return scim.DuplicateGroupName(g.DisplayName)
		}
		if err != nil {
			return err
		}
		if err := s.insertMembers(ctx, tx, team, id, members, 0); err != nil {
			return err
		}
		if err := s.touchUsers(ctx, tx, team, scim.TouchedMembers(nil, members, false), version, now); err != nil {
			return err
		}
		out, err = s.getGroup(ctx, tx, team, id)
		return err
	})
	return out, err
}

// GetGroup implements scim.Store. The group and its members are read in one snapshot,
// so that its version is that of its members.
func (s *SCIMStore) GetGroup(ctx context.Context, team, id string) (scim.Group, error) {
	var g scim.Group
	err := readTx(ctx, s.db.sql, s.db.d, func(tx *sql.Tx) error {
		var err error
		g, err = s.getGroup(ctx, tx, team, id)
		return err
	})
	return g, err
}

// ReplaceGroup implements scim.Store.
func (s *SCIMStore) ReplaceGroup(ctx context.Context, team string, g scim.Group, ifVersion int64) (scim.Group, error) {
	var out scim.Group
	err := s.write(ctx, team, func(tx *sql.Tx, version int64) error {
		var stored int64
		var storedName string
		err := tx.QueryRowContext(ctx, s.q(`SELECT version, display_name FROM scim_groups WHERE team = ? AND id = ?`),
			team, g.ID).Scan(&stored, &storedName)
		if errors.Is(err, sql.ErrNoRows) {
			return scim.NotFound("Group", g.ID)
		}
		if err != nil {
			return err
		}
		if err := scim.CheckVersion("Group", g.ID, stored, ifVersion); err != nil {
			return err
		}
		out, err = s.replaceGroup(ctx, tx, team, g, storedName, version)
		return err
	})
	return out, err
}

// UpdateGroup implements scim.Store: change runs in the transaction that holds the
// team's lock.
func (s *SCIMStore) UpdateGroup(ctx context.Context, team, id string, change scim.Change[scim.Group]) (scim.Group, error) {
	var out scim.Group
	err := s.write(ctx, team, func(tx *sql.Tx, version int64) error {
		cur, err := s.getGroup(ctx, tx, team, id)
		if err != nil {
			return err
		}
		next, write, err := change(cur.Clone())
		if err != nil {
			return err
		}
		if !write {
			out = cur
			return errUnchanged
		}
		next.ID = id
		out, err = s.replaceGroup(ctx, tx, team, next, cur.DisplayName, version)
		return err
	})
	if err != nil && !errors.Is(err, errUnchanged) {
		return scim.Group{}, err
	}
	return out, nil
}

// replaceGroup replaces the stored group g.ID, named storedName, with g in the write's
// transaction, and returns it as stored.
func (s *SCIMStore) replaceGroup(ctx context.Context, tx *sql.Tx, team string, g scim.Group, storedName string, version int64) (scim.Group, error) {
	if err := s.checkGroupName(ctx, tx, team, g.ID, g.DisplayName); err != nil {
		return scim.Group{}, err
	}
	before, last, err := s.members(ctx, tx, team, g.ID)
	if err != nil {
		return scim.Group{}, err
	}
	members, err := s.checkMembers(ctx, tx, team, g.ID, g.Members, before)
	if err != nil {
		return scim.Group{}, err
	}
	if err := s.checkSeats(ctx, tx, team, 0); err != nil {
		return scim.Group{}, err
	}
	now := s.now().UnixMicro()
	_, err = tx.ExecContext(ctx, s.q(`UPDATE scim_groups SET display_name = ?, display_name_key = ?, external_id = ?,
		role = ?, modified_us = ?, version = ? WHERE team = ? AND id = ?`),
		g.DisplayName, scim.NameKey(g.DisplayName), g.ExternalID, string(g.Role), now, version, team, g.ID)
	if s.db.d.uniqueViolation(err) {
		return scim.Group{}, scim.DuplicateGroupName(g.DisplayName)
	}
	if err != nil {
		return scim.Group{}, err
	}
	if err := s.setMembers(ctx, tx, team, g.ID, before, last, members); err != nil {
		return scim.Group{}, err
	}
	touched := scim.TouchedMembers(before, members, g.DisplayName != storedName)
	if err := s.touchUsers(ctx, tx, team, touched, version, now); err != nil {
		return scim.Group{}, err
	}
	return s.getGroup(ctx, tx, team, g.ID)
}

// DeleteGroup implements scim.Store: the members stay in the team.
func (s *SCIMStore) DeleteGroup(ctx context.Context, team, id string, ifVersion int64) error {
	return s.write(ctx, team, func(tx *sql.Tx, version int64) error {
		var stored int64
		err := tx.QueryRowContext(ctx, s.q(`SELECT version FROM scim_groups WHERE team = ? AND id = ?`), team, id).Scan(&stored)
		if errors.Is(err, sql.ErrNoRows) {
			return scim.NotFound("Group", id)
		}
		if err != nil {
			return err
		}
		if err := scim.CheckVersion("Group", id, stored, ifVersion); err != nil {
			return err
		}
		before, _, err := s.members(ctx, tx, team, id)
		if err != nil {
			return err
		}
		if err := s.touchUsers(ctx, tx, team, scim.TouchedMembers(before, nil, false), version, s.now().UnixMicro()); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, s.q(`DELETE FROM scim_members WHERE team = ? AND group_id = ?`), team, id); err != nil {
			return err
		}
		_, err = tx.ExecContext(ctx, s.q(`DELETE FROM scim_groups WHERE team = ? AND id = ?`), team, id)
		return err
	})
}

// ListGroups implements scim.Store.
func (s *SCIMStore) ListGroups(ctx context.Context, team string, q scim.ListQuery) ([]scim.Group, int, error) {
	where, args, order, err := s.listClauses(team, q, false)
	if err != nil {
		return nil, 0, err
	}
	args = append([]any{team}, args...)
	var (
		out   []scim.Group
		total int
	)
	// The total, the page and the members of one snapshot (see ListUsers).
	err = readTx(ctx, s.db.sql, s.db.d, func(tx *sql.Tx) error {
		if err := tx.QueryRowContext(ctx, s.q(`SELECT count(*) FROM scim_groups WHERE team = ?`+where), args...).Scan(&total); err != nil {
			return err
		}
		lo, hi := q.Page(total)
		if hi == lo {
			return nil
		}
		var err error
		out, err = s.readGroups(ctx, tx, team, s.q(`SELECT `+groupColumns+` FROM scim_groups WHERE team = ?`+where+
			` ORDER BY `+order+` LIMIT ? OFFSET ?`), append(args, hi-lo, lo)...)
		return err
	})
	if err != nil {
		return nil, 0, err
	}
	if out == nil {
		out = []scim.Group{}
	}
	return out, total, nil
}

var _ scim.Store = (*SCIMStore)(nil)
