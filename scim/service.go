package scim

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
)

// Precondition checks the version of a resource before an update: it returns nil to go
// on, or the error to answer (ErrVersionMismatch, worded by the caller, such as an HTTP
// adapter's If-Match). A nil Precondition lets every version through.
type Precondition func(version int64) error

// Service applies the operations of SCIM whose rules are the domain's over a Store: PATCH
// (RFC 7644 section 3.5.2) on the typed resources, and the read-change-write of every
// update, which the Store runs in one atomic step (Store.UpdateUser) so that concurrent
// updates apply one after the other. An HTTP adapter decodes a request, calls it and
// encodes the answer.
type Service struct {
	store  Store
	users  ResourceSchema
	groups ResourceSchema
}

// NewService returns the service of store.
func NewService(store Store) *Service {
	return &Service{store: store, users: UserResource(), groups: GroupResource()}
}

// Store returns the store the service writes to.
func (s *Service) Store() Store { return s.store }

// Patch is the operations of a PatchOp message, in order.
type Patch []PatchOp

// ParsePatch checks a PatchOp message decoded from JSON (NormalizePatch) and returns its
// operations; user says whether it patches a user (the vendor extension's attributes are
// then accepted without their URN).
func ParsePatch(body map[string]any, user bool) (Patch, *Error) {
	if e := NormalizePatch(body, user); e != nil {
		return nil, e
	}
	k, _ := AttributeKey(body, "Operations")
	list, _ := body[k].([]any)
	ops := make(Patch, 0, len(list))
	for _, o := range list {
		m := o.(map[string]any)
		var op PatchOp
		if k, ok := AttributeKey(m, "op"); ok {
			op.Op, _ = m[k].(string)
			op.Op = strings.ToLower(op.Op)
		}
		if k, ok := AttributeKey(m, "path"); ok {
			op.Path, _ = m[k].(string)
		}
		if k, ok := AttributeKey(m, "value"); ok {
			op.Value, op.HasValue = m[k], true
		}
		ops = append(ops, op)
	}
	return ops, nil
}

// guarded is the Change of an update: pre checks the version of the resource as stored
// (nil: any version), change makes the replacement, and same says whether it leaves the
// resource as it was (nil: never), in which case nothing is written and the version and
// times stay (RFC 7644 section 3.5.2.1).
func guarded[T any](pre Precondition, version func(T) int64, same func(next, cur T) bool, change func(T) (T, error)) Change[T] {
	return func(cur T) (T, bool, error) {
		if pre != nil {
			if err := pre(version(cur)); err != nil {
				return cur, false, err
			}
		}
		next, err := change(cur)
		if err != nil {
			return cur, false, err
		}
		if same != nil && same(next, cur) {
			return cur, false, nil
		}
		return next, true, nil
	}
}

// UpdateUser replaces the user id of team with change(current), read and written in one
// atomic step of the Store: pre checks the version then stored, and same says whether a
// no-op is written (nil: always). Another write to the user comes before or after, never
// in between, so an update that pinned no version never fails for one it did not ask for.
func (s *Service) UpdateUser(ctx context.Context, team, id string, pre Precondition, same func(next, cur User) bool,
	change func(User) (User, error)) (User, error) {
	return s.store.UpdateUser(ctx, team, id, guarded(pre, func(u User) int64 { return u.Version }, same, change))
}

// UpdateGroup replaces the group id of team with change(current), as UpdateUser.
func (s *Service) UpdateGroup(ctx context.Context, team, id string, pre Precondition, same func(next, cur Group) bool,
	change func(Group) (Group, error)) (Group, error) {
	return s.store.UpdateGroup(ctx, team, id, guarded(pre, func(g Group) int64 { return g.Version }, same, change))
}

// UserGroups returns the groups of team that have the user u (as read from the store)
// as a member, and u as of the same state. A user's groups are part of its
// representation and a write that changes them changes its version (see Store), so u's
// version is read again after its groups: when it has changed, a write slipped in
// between and the groups are read again for the user as it is then, for as long as ctx
// lasts. The version answered is thus the version of the groups answered (RFC 7644
// section 3.14), on every Store, without a transaction spanning both reads. A user
// deleted meanwhile is ErrNotFound.
func (s *Service) UserGroups(ctx context.Context, team string, u User) (User, []Group, error) {
	for {
		groups, _, err := s.store.ListGroups(ctx, team, ListQuery{
			Filter: []Equal{{Attr: MemberFilter, Value: u.ID}}, StartIndex: 1, Count: MaxGroupsPerUser})
		if err != nil {
			return User{}, nil, err
		}
		again, err := s.store.GetUser(ctx, team, u.ID)
		if err != nil {
			return User{}, nil, err
		}
		if again.Version == u.Version {
			return u, groups, nil
		}
		if err := ctx.Err(); err != nil {
			return User{}, nil, fmt.Errorf("scim: the groups of the user kept changing while the request read them: %w", err)
		}
		u = again
	}
}

// PatchUser applies ops to the user id of team and stores the result. A PATCH that
// changes nothing writes nothing. Errors are Errors (400 naming the operation and the
// problem) or the Store's rules; a refused PATCH leaves the user as it was.
func (s *Service) PatchUser(ctx context.Context, team, id string, ops Patch, pre Precondition) (User, error) {
	return s.UpdateUser(ctx, team, id, pre, SameUser, func(cur User) (User, error) { return s.ApplyUserPatch(cur, ops) })
}

// PatchGroup applies ops to the group id of team and stores the result, as PatchUser.
func (s *Service) PatchGroup(ctx context.Context, team, id string, ops Patch, pre Precondition) (Group, error) {
	return s.UpdateGroup(ctx, team, id, pre, SameGroup, func(cur Group) (Group, error) { return s.ApplyGroupPatch(cur, ops) })
}

// ApplyUserPatch returns cur with ops applied, checked as a stored user must be. An
// attribute the operations leave without a value is unassigned: removing active
// deactivates, removing role makes the user a MEMBER.
func (s *Service) ApplyUserPatch(cur User, ops Patch) (User, error) {
	attrs := UserAttributes(cur.Clone())
	before := valueTexts(attrs, s.users)
	attrs["id"] = cur.ID
	if cur.ExternalID != "" {
		attrs["externalId"] = cur.ExternalID
	}
	if e := s.users.applyPatch(attrs, ops); e != nil {
		return User{}, *e
	}
	delete(attrs, "id")
	if e := NormalizeUser(attrs); e != nil {
		return User{}, *e
	}
	if e := checkValues(attrs, s.users, before); e != nil {
		return User{}, *e
	}
	next, f, err := UserFromAttributes(attrs, s.users)
	if err != nil {
		return User{}, err
	}
	next.ID = cur.ID
	if !f.Role {
		next.Role = RoleMember
	}
	return next, nil
}

// ApplyGroupPatch returns cur with ops applied, checked as a stored group must be.
func (s *Service) ApplyGroupPatch(cur Group, ops Patch) (Group, error) {
	attrs := GroupAttributes(cur)
	attrs["id"] = cur.ID
	if cur.ExternalID != "" {
		attrs["externalId"] = cur.ExternalID
	}
	if e := s.groups.applyPatch(attrs, ops); e != nil {
		return Group{}, *e
	}
	delete(attrs, "id")
	if e := CheckGroup(attrs); e != nil {
		return Group{}, *e
	}
	next, err := GroupFromAttributes(attrs)
	if err != nil {
		return Group{}, err
	}
	next.ID = cur.ID
	return next, nil
}

// extension returns the attributes of the extension id of rs, none when it has none.
func (rs ResourceSchema) extension(id string) Attributes {
	for _, ext := range rs.Extensions {
		if ext.ID == id {
			return ext.Attributes
		}
	}
	return nil
}

// UserFields says which of the attributes a replacement keeps when absent were given.
type UserFields struct{ Active, Role, SendEmail bool }

// UserFromAttributes builds a user from the attributes of a checked user object (core
// attributes at the top level, extensions' under their URNs, the vendor extension's
// gathered by NormalizeUser). Attributes rs does not describe are dropped; userName must
// pass CheckUserName.
func UserFromAttributes(attrs map[string]any, rs ResourceSchema) (User, UserFields, error) {
	var u User
	var f UserFields
	u.Attributes = map[string]any{}
	for k, v := range attrs {
		a, known := rs.Core.Attributes.Find(k)
		switch {
		case v == nil:
		case strings.EqualFold(k, ExtensionSchema):
			ext, _ := v.(map[string]any)
			if r, ok := ext["role"].(string); ok {
				u.Role, f.Role = Role(r), true
			}
			if s, ok := ext["sendEmailOnInvitation"].(bool); ok {
				u.SendEmailOnInvitation, f.SendEmail = s, true
			}
		case strings.EqualFold(k, EnterpriseSchema):
			if m, ok := v.(map[string]any); ok && len(m) > 0 {
				out := map[string]any{}
				for ek, ev := range m {
					if ea, ok := rs.extension(EnterpriseSchema).Find(ek); ok && ev != nil && ea.Mutability != ReadOnly {
						out[ea.Name] = ev
					}
				}
				if len(out) > 0 {
					u.Attributes[EnterpriseSchema] = out
				}
			}
		case !known:
		case a.Name == "userName":
			u.UserName, _ = v.(string)
		case a.Name == "displayName":
			u.DisplayName, _ = v.(string)
		case a.Name == "externalId":
			u.ExternalID, _ = v.(string)
		case a.Name == "active":
			u.Active, f.Active = v.(bool)
		case a.Mutability == ReadOnly || a.Mutability == WriteOnly:
			// password is write-only and never returned: this service does not keep
			// passwords. groups, id and meta are read-only.
		default:
			u.Attributes[a.Name] = v
		}
	}
	if e := CheckUserName(u.UserName); e != nil {
		return User{}, f, *e
	}
	return u, f, nil
}

// Keep fills what a replacement did not give from the current user.
func (f UserFields) Keep(u *User, cur User) {
	u.ID = cur.ID
	if !f.Active {
		u.Active = cur.Active
	}
	if !f.Role {
		u.Role = cur.Role
	}
	if !f.SendEmail {
		u.SendEmailOnInvitation = cur.SendEmailOnInvitation
	}
}

// UserAttributes is the JSON form of u without id, externalId, meta and schemas. It takes
// u.Attributes over: pass a clone when u is used again.
func UserAttributes(u User) map[string]any {
	m := u.Attributes
	if m == nil {
		m = map[string]any{}
	}
	m["userName"] = u.UserName
	if u.DisplayName != "" {
		m["displayName"] = u.DisplayName
	}
	m["active"] = u.Active
	m[ExtensionSchema] = map[string]any{"role": string(u.Role), "sendEmailOnInvitation": u.SendEmailOnInvitation}
	return m
}

// GroupFromAttributes builds a group from the attributes of a group object checked by
// CheckGroup.
func GroupFromAttributes(attrs map[string]any) (Group, error) {
	var g Group
	k, _ := AttributeKey(attrs, "displayName")
	g.DisplayName, _ = attrs[k].(string)
	if strings.TrimSpace(g.DisplayName) == "" {
		return Group{}, badValue("displayName must be a non-empty string.")
	}
	if k, ok := AttributeKey(attrs, "externalId"); ok {
		g.ExternalID, _ = attrs[k].(string)
	}
	if k, ok := AttributeKey(attrs, "role"); ok {
		role, e := RoleOf(attrs[k])
		if e != nil {
			return Group{}, *e
		}
		g.Role = role
	}
	k, _ = AttributeKey(attrs, "members")
	list, _ := attrs[k].([]any)
	g.Members = make([]Member, 0, len(list))
	seen := map[string]bool{}
	for i, v := range list {
		if e := CheckMemberObject(i, v); e != nil {
			return Group{}, *e
		}
		m := v.(map[string]any)
		vk, _ := AttributeKey(m, "value")
		id := m[vk].(string)
		if !seen[id] {
			seen[id] = true
			g.Members = append(g.Members, Member{Value: id})
		}
	}
	return g, nil
}

// GroupAttributes is the JSON form of g without id, externalId, meta and schemas; its
// members have value, display and type, not $ref, which is the adapter's to add.
func GroupAttributes(g Group) map[string]any {
	m := map[string]any{"displayName": g.DisplayName}
	if g.Role != "" {
		m["role"] = string(g.Role)
	}
	members := make([]any, len(g.Members))
	for i, mb := range g.Members {
		members[i] = map[string]any{"value": mb.Value, "display": mb.Display, "type": "User"}
	}
	m["members"] = members
	return m
}

// SameUser reports whether a replacement next of the user cur stores what cur holds.
func SameUser(next, cur User) bool {
	if next.UserName != cur.UserName || next.DisplayName != cur.DisplayName || next.ExternalID != cur.ExternalID ||
		next.Active != cur.Active || next.Role != cur.Role || next.SendEmailOnInvitation != cur.SendEmailOnInvitation {
		return false
	}
	if len(next.Attributes)+len(cur.Attributes) == 0 {
		return true
	}
	a, err1 := json.Marshal(next.Attributes)
	b, err2 := json.Marshal(cur.Attributes)
	return err1 == nil && err2 == nil && string(a) == string(b)
}

// SameGroup reports whether a replacement next of the group cur stores what cur holds.
func SameGroup(next, cur Group) bool {
	if next.DisplayName != cur.DisplayName || next.ExternalID != cur.ExternalID || next.Role != cur.Role ||
		len(next.Members) != len(cur.Members) {
		return false
	}
	for i := range next.Members {
		if next.Members[i].Value != cur.Members[i].Value {
			return false
		}
	}
	return true
}
