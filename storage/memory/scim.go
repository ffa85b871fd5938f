package memory

import (
	"context"
	"slices"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/kmkit/kmkit/scim"
)

// SCIMStore is the in-memory scim.Store. Each team has its own lock, so teams never wait
// for each other. Seats are unlimited unless SetSeatLimit or SetDefaultSeatLimit (of the
// embedded scim.SeatLimits) says otherwise.
type SCIMStore struct {
	scim.SeatLimits
	mu    sync.Mutex
	teams map[string]*scimTeam
	now   func() time.Time
}

// newSCIMStore returns an empty store (DB.SCIM).
func newSCIMStore() *SCIMStore {
	return &SCIMStore{
		teams: map[string]*scimTeam{},
		now:   func() time.Time { return time.Now().UTC() },
	}
}

// scimTeam is the state of one team, guarded by its own mutex.
type scimTeam struct {
	mu     sync.RWMutex
	seq    int64 // last version handed out
	active int   // active users

	users      map[string]*scim.User
	userOrder  []string
	userByName map[string]string // scim.NameKey(userName) -> id

	groups      map[string]*scimGroup
	groupOrder  []string
	groupByName map[string]string          // scim.NameKey(displayName) -> id
	memberOf    map[string]map[string]bool // user id -> group ids
}

// scimGroup is a stored group; members hold user ids only, displays are added on reads.
type scimGroup struct {
	scim.Group
}

// team returns the state of team, creating it when create is set; nil otherwise.
func (s *SCIMStore) team(name string, create bool) (*scimTeam, int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	t := s.teams[name]
	if t == nil && create {
		t = &scimTeam{
			users:       map[string]*scim.User{},
			userByName:  map[string]string{},
			groups:      map[string]*scimGroup{},
			groupByName: map[string]string{},
			memberOf:    map[string]map[string]bool{},
		}
		s.teams[name] = t
	}
	return t, s.Seats(name)
}

// checkSeats fails when a write changing the active users by delta would leave the team
// above its limit, unless the write lowers their number.
func (t *scimTeam) checkSeats(limit, delta int) error {
	return scim.CheckSeats(t.active, delta, limit)
}

func (t *scimTeam) nextVersion() int64 {
	t.seq++
	return t.seq
}

// CreateUser implements scim.Store.
func (s *SCIMStore) CreateUser(_ context.Context, team string, u scim.User) (scim.User, error) {
	t, limit := s.team(team, true)
	t.mu.Lock()
	defer t.mu.Unlock()
	key := scim.NameKey(u.UserName)
	if _, dup := t.userByName[key]; dup {
		return scim.User{}, scim.DuplicateUserName(u.UserName)
	}
	if u.Active {
		if err := t.checkSeats(limit, 1); err != nil {
			return scim.User{}, err
		}
	} else if err := t.checkSeats(limit, 0); err != nil {
		return scim.User{}, err
	}
	u = u.Clone()
	u.ID = uuid.NewString()
	u.Created = s.now()
	u.LastModified = u.Created
	u.Version = t.nextVersion()
	t.users[u.ID] = &u
	t.userOrder = append(t.userOrder, u.ID)
	t.userByName[key] = u.ID
	if u.Active {
		t.active++
	}
	return u.Clone(), nil
}

// GetUser implements scim.Store.
func (s *SCIMStore) GetUser(_ context.Context, team, id string) (scim.User, error) {
	t, _ := s.team(team, false)
	if t == nil {
		return scim.User{}, scim.NotFound("User", id)
	}
	t.mu.RLock()
	defer t.mu.RUnlock()
	u, ok := t.users[id]
	if !ok {
		return scim.User{}, scim.NotFound("User", id)
	}
	return u.Clone(), nil
}

// ReplaceUser implements scim.Store.
func (s *SCIMStore) ReplaceUser(_ context.Context, team string, u scim.User, ifVersion int64) (scim.User, error) {
	t, limit := s.team(team, false)
	if t == nil {
		return scim.User{}, scim.NotFound("User", u.ID)
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	old, ok := t.users[u.ID]
	if !ok {
		return scim.User{}, scim.NotFound("User", u.ID)
	}
	if err := scim.CheckVersion("User", u.ID, old.Version, ifVersion); err != nil {
		return scim.User{}, err
	}
	return s.replaceUser(t, limit, u, old)
}

// UpdateUser implements scim.Store: change runs under the team's lock.
func (s *SCIMStore) UpdateUser(_ context.Context, team, id string, change scim.Change[scim.User]) (scim.User, error) {
	t, limit := s.team(team, false)
	if t == nil {
		return scim.User{}, scim.NotFound("User", id)
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	old, ok := t.users[id]
	if !ok {
		return scim.User{}, scim.NotFound("User", id)
	}
	next, write, err := change(old.Clone())
	if err != nil {
		return scim.User{}, err
	}
	if !write {
		return old.Clone(), nil
	}
	next.ID = id
	return s.replaceUser(t, limit, next, old)
}

// replaceUser replaces the stored user old with u, under the team's lock.
func (s *SCIMStore) replaceUser(t *scimTeam, limit int, u scim.User, old *scim.User) (scim.User, error) {
	if err := scim.CheckUserNameChange(old.UserName, u.UserName); err != nil {
		return scim.User{}, err
	}
	delta := scim.SeatDelta(old.Active, u.Active)
	if err := t.checkSeats(limit, delta); err != nil {
		return scim.User{}, err
	}
	u = u.Clone()
	u.Created = old.Created
	u.LastModified = s.now()
	u.Version = t.nextVersion()
	if u.UserName != old.UserName || u.DisplayName != old.DisplayName {
		// The user's name is its groups' members.display.
		for gid := range t.memberOf[u.ID] {
			t.groups[gid].LastModified, t.groups[gid].Version = u.LastModified, u.Version
		}
	}
	t.users[u.ID] = &u
	t.active += delta
	return u.Clone(), nil
}

// touchUsers gives the users whose groups a write to a group changed
// (scim.TouchedMembers) the write's version and modify time.
func (t *scimTeam) touchUsers(old, members []scim.Member, renamed bool, version int64, now time.Time) {
	for _, id := range scim.TouchedMembers(old, members, renamed) {
		if u := t.users[id]; u != nil {
			u.LastModified, u.Version = now, version
		}
	}
}

// DeleteUser implements scim.Store: the user leaves the team and its groups.
func (s *SCIMStore) DeleteUser(_ context.Context, team, id string, ifVersion int64) error {
	t, _ := s.team(team, false)
	if t == nil {
		return scim.NotFound("User", id)
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	u, ok := t.users[id]
	if !ok {
		return scim.NotFound("User", id)
	}
	if err := scim.CheckVersion("User", id, u.Version, ifVersion); err != nil {
		return err
	}
	now := s.now()
	for gid := range t.memberOf[id] {
		g := t.groups[gid]
		g.Members = slices.DeleteFunc(g.Members, func(m scim.Member) bool { return m.Value == id })
		g.LastModified = now
		g.Version = t.nextVersion()
	}
	delete(t.memberOf, id)
	delete(t.users, id)
	delete(t.userByName, scim.NameKey(u.UserName))
	t.userOrder = slices.DeleteFunc(t.userOrder, func(v string) bool { return v == id })
	if u.Active {
		t.active--
	}
	return nil
}

func scimUserAttr(u *scim.User, attr string) string {
	switch attr {
	case "id":
		return u.ID
	case "externalId":
		return u.ExternalID
	case "userName":
		return u.UserName
	case "displayName":
		return u.DisplayName
	case "meta.created":
		return scimSortTime(u.Created)
	case "meta.lastModified":
		return scimSortTime(u.LastModified)
	}
	return ""
}

// scimSortTime formats t so that times sort as strings.
func scimSortTime(t time.Time) string { return t.UTC().Format("20060102150405.000000000") }

// scimSorted returns ids ordered by k (a new slice; ties keep their order).
func scimSorted(ids []string, k scim.SortKey, value func(id string) string) []string {
	if k.Attr == "" {
		return ids
	}
	vals := make(map[string]string, len(ids))
	for _, id := range ids {
		vals[id] = value(id)
	}
	out := slices.Clone(ids)
	slices.SortStableFunc(out, func(a, b string) int { return k.Compare(vals[a], vals[b]) })
	return out
}

// ListUsers implements scim.Store.
func (s *SCIMStore) ListUsers(_ context.Context, team string, q scim.ListQuery) ([]scim.User, int, error) {
	t, _ := s.team(team, false)
	if t == nil {
		return []scim.User{}, 0, nil
	}
	t.mu.RLock()
	defer t.mu.RUnlock()
	ids := t.userOrder
	// The identity providers' existence check (userName eq ...) is answered from the index.
	for _, e := range q.Filter {
		if e.Attr == "userName" {
			ids = nil
			if id, ok := t.userByName[scim.NameKey(e.Value)]; ok {
				ids = []string{id}
			}
			break
		}
	}
	if len(q.Filter) > 0 {
		matched := make([]string, 0, len(ids))
		for _, id := range ids {
			u := t.users[id]
			if scimAll(q.Filter, func(e scim.Equal) bool {
				if e.Attr == scim.EmailFilter {
					return e.MatchesEmails(u.Attributes)
				}
				return e.Matches(scimUserAttr(u, e.Attr))
			}) {
				matched = append(matched, id)
			}
		}
		ids = matched
	}
	ids = scimSorted(ids, q.Sort, func(id string) string { return scimUserAttr(t.users[id], q.Sort.Attr) })
	lo, hi := q.Page(len(ids))
	out := make([]scim.User, 0, hi-lo)
	for _, id := range ids[lo:hi] {
		out = append(out, t.users[id].Clone())
	}
	return out, len(ids), nil
}

func scimAll(terms []scim.Equal, f func(scim.Equal) bool) bool {
	for _, e := range terms {
		if !f(e) {
			return false
		}
	}
	return true
}

// checkMembers validates the members of group gid (empty for a new group) and returns them
// without duplicates, in their first order.
func (t *scimTeam) checkMembers(gid string, members []scim.Member) ([]scim.Member, error) {
	seen := make(map[string]bool, len(members))
	out := make([]scim.Member, 0, len(members))
	for _, m := range members {
		if seen[m.Value] {
			continue
		}
		seen[m.Value] = true
		_, exists := t.users[m.Value]
		groups := t.memberOf[m.Value]
		if err := scim.CheckMember(m.Value, exists, len(groups), groups[gid]); err != nil {
			return nil, err
		}
		out = append(out, scim.Member{Value: m.Value})
	}
	return out, nil
}

func (t *scimTeam) checkGroupName(gid, name string) error {
	if other, ok := t.groupByName[scim.NameKey(name)]; ok && other != gid {
		return scim.DuplicateGroupName(name)
	}
	return nil
}

// readGroup returns a copy of g with member displays filled in.
func (t *scimTeam) readGroup(g *scimGroup) scim.Group {
	out := g.Clone()
	for i := range out.Members {
		u := t.users[out.Members[i].Value]
		out.Members[i].Display = u.DisplayName
		if u.DisplayName == "" {
			out.Members[i].Display = u.UserName
		}
	}
	return out
}

func (t *scimTeam) setMemberships(gid string, old, members []scim.Member) {
	for _, m := range old {
		delete(t.memberOf[m.Value], gid)
		if len(t.memberOf[m.Value]) == 0 {
			delete(t.memberOf, m.Value)
		}
	}
	for _, m := range members {
		set := t.memberOf[m.Value]
		if set == nil {
			set = map[string]bool{}
			t.memberOf[m.Value] = set
		}
		set[gid] = true
	}
}

// CreateGroup implements scim.Store.
func (s *SCIMStore) CreateGroup(_ context.Context, team string, g scim.Group) (scim.Group, error) {
	t, limit := s.team(team, true)
	t.mu.Lock()
	defer t.mu.Unlock()
	if err := t.checkGroupName("", g.DisplayName); err != nil {
		return scim.Group{}, err
	}
	members, err := t.checkMembers("", g.Members)
	if err != nil {
		return scim.Group{}, err
	}
	if err := t.checkSeats(limit, 0); err != nil {
		return scim.Group{}, err
	}
	g.ID = uuid.NewString()
	g.Members = members
	g.Created = s.now()
	g.LastModified = g.Created
	g.Version = t.nextVersion()
	sg := &scimGroup{Group: g}
	t.groups[g.ID] = sg
	t.groupOrder = append(t.groupOrder, g.ID)
	t.groupByName[scim.NameKey(g.DisplayName)] = g.ID
	t.setMemberships(g.ID, nil, members)
	t.touchUsers(nil, members, false, g.Version, g.Created)
	return t.readGroup(sg), nil
}

// GetGroup implements scim.Store.
func (s *SCIMStore) GetGroup(_ context.Context, team, id string) (scim.Group, error) {
	t, _ := s.team(team, false)
	if t == nil {
		return scim.Group{}, scim.NotFound("Group", id)
	}
	t.mu.RLock()
	defer t.mu.RUnlock()
	g, ok := t.groups[id]
	if !ok {
		return scim.Group{}, scim.NotFound("Group", id)
	}
	return t.readGroup(g), nil
}

// ReplaceGroup implements scim.Store.
func (s *SCIMStore) ReplaceGroup(_ context.Context, team string, g scim.Group, ifVersion int64) (scim.Group, error) {
	t, limit := s.team(team, false)
	if t == nil {
		return scim.Group{}, scim.NotFound("Group", g.ID)
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	old, ok := t.groups[g.ID]
	if !ok {
		return scim.Group{}, scim.NotFound("Group", g.ID)
	}
	if err := scim.CheckVersion("Group", g.ID, old.Version, ifVersion); err != nil {
		return scim.Group{}, err
	}
	return s.replaceGroup(t, limit, g, old)
}

// UpdateGroup implements scim.Store: change runs under the team's lock.
func (s *SCIMStore) UpdateGroup(_ context.Context, team, id string, change scim.Change[scim.Group]) (scim.Group, error) {
	t, limit := s.team(team, false)
	if t == nil {
		return scim.Group{}, scim.NotFound("Group", id)
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	old, ok := t.groups[id]
	if !ok {
		return scim.Group{}, scim.NotFound("Group", id)
	}
	cur := t.readGroup(old)
	next, write, err := change(cur.Clone())
	if err != nil {
		return scim.Group{}, err
	}
	if !write {
		return cur, nil
	}
	next.ID = id
	return s.replaceGroup(t, limit, next, old)
}

// replaceGroup replaces the stored group old with g, under the team's lock.
func (s *SCIMStore) replaceGroup(t *scimTeam, limit int, g scim.Group, old *scimGroup) (scim.Group, error) {
	if err := t.checkGroupName(g.ID, g.DisplayName); err != nil {
		return scim.Group{}, err
	}
	members, err := t.checkMembers(g.ID, g.Members)
	if err != nil {
		return scim.Group{}, err
	}
	if err := t.checkSeats(limit, 0); err != nil {
		return scim.Group{}, err
	}
	t.setMemberships(g.ID, old.Members, members)
	delete(t.groupByName, scim.NameKey(old.DisplayName))
	t.groupByName[scim.NameKey(g.DisplayName)] = g.ID
	g.Members = members
	g.Created = old.Created
	g.LastModified = s.now()
	g.Version = t.nextVersion()
	t.touchUsers(old.Members, members, g.DisplayName != old.DisplayName, g.Version, g.LastModified)
	old.Group = g
	return t.readGroup(old), nil
}

// DeleteGroup implements scim.Store: the members stay in the team.
func (s *SCIMStore) DeleteGroup(_ context.Context, team, id string, ifVersion int64) error {
	t, _ := s.team(team, false)
	if t == nil {
		return scim.NotFound("Group", id)
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	g, ok := t.groups[id]
	if !ok {
		return scim.NotFound("Group", id)
	}
	if err := scim.CheckVersion("Group", id, g.Version, ifVersion); err != nil {
		return err
	}
	t.setMemberships(id, g.Members, nil)
	t.touchUsers(g.Members, nil, false, t.nextVersion(), s.now())
	delete(t.groups, id)
	delete(t.groupByName, scim.NameKey(g.DisplayName))
	t.groupOrder = slices.DeleteFunc(t.groupOrder, func(v string) bool { return v == id })
	return nil
}

func scimGroupAttr(g *scimGroup, attr string) string {
	switch attr {
	case "id":
		return g.ID
	case "externalId":
		return g.ExternalID
	case "displayName":
		return g.DisplayName
	case "meta.created":
		return scimSortTime(g.Created)
	case "meta.lastModified":
		return scimSortTime(g.LastModified)
	}
	return ""
}

// ListGroups implements scim.Store.
func (s *SCIMStore) ListGroups(_ context.Context, team string, q scim.ListQuery) ([]scim.Group, int, error) {
	t, _ := s.team(team, false)
	if t == nil {
		return []scim.Group{}, 0, nil
	}
	t.mu.RLock()
	defer t.mu.RUnlock()
	ids := t.groupOrder
	// The groups of a user (the groups attribute of every User response) come from the
	// membership index, in creation order.
	for _, e := range q.Filter {
		if e.Attr == scim.MemberFilter {
			in := t.memberOf[e.Value]
			ids = make([]string, 0, len(in))
			if len(in) > 0 {
				for _, id := range t.groupOrder {
					if in[id] {
						ids = append(ids, id)
					}
				}
			}
			break
		}
	}
	if len(q.Filter) > 0 {
		matched := make([]string, 0)
		for _, id := range ids {
			g := t.groups[id]
			if scimAll(q.Filter, func(e scim.Equal) bool {
				if e.Attr == scim.MemberFilter {
					return t.memberOf[e.Value][id]
				}
				return e.Matches(scimGroupAttr(g, e.Attr))
			}) {
				matched = append(matched, id)
			}
		}
		ids = matched
	}
	ids = scimSorted(ids, q.Sort, func(id string) string { return scimGroupAttr(t.groups[id], q.Sort.Attr) })
	lo, hi := q.Page(len(ids))
	out := make([]scim.Group, 0, hi-lo)
	for _, id := range ids[lo:hi] {
		out = append(out, t.readGroup(t.groups[id]))
	}
	return out, len(ids), nil
}

var _ scim.Store = (*SCIMStore)(nil)
