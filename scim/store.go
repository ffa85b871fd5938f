package scim

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"
)

// MaxGroupsPerUser is the number of groups of one team a user may belong to.
const MaxGroupsPerUser = 50

// MaxUserNameLength is the longest userName accepted, in characters.
const MaxUserNameLength = 100

// Role is the role of a user or a group in a team.
type Role string

// The roles a user or group may have.
const (
	RoleMember  Role = "MEMBER"
	RoleAnalyst Role = "ANALYST"
	RoleAdmin   Role = "ADMIN"
)

// ParseRole returns the role named s, ignoring case.
func ParseRole(s string) (Role, bool) {
	switch r := Role(strings.ToUpper(s)); r {
	case RoleMember, RoleAnalyst, RoleAdmin:
		return r, true
	}
	return "", false
}

// User is one user of a team as a Store keeps it.
type User struct {
	// ID is assigned by the store on creation.
	ID         string
	ExternalID string
	// UserName is an e-mail address, unique in the team regardless of case.
	UserName    string
	DisplayName string
	// Active users occupy a seat of the team's license.
	Active bool
	Role   Role
	// SendEmailOnInvitation asks for an invitation e-mail when the user is created.
	SendEmailOnInvitation bool
	// Attributes holds the other core attributes (name, emails, title, ...) as JSON values
	// keyed by their schema names.
	Attributes map[string]any
	// Created, LastModified and Version are maintained by the store.
	Created      time.Time
	LastModified time.Time
	Version      int64
}

// Clone returns a deep copy of u, sharing no map or slice with it.
func (u User) Clone() User {
	u.Attributes = CloneAttributes(u.Attributes)
	return u
}

// Member is one member of a group: a user of the same team.
type Member struct {
	// Value is the user's id.
	Value string
	// Display is filled by the store on reads: the user's displayName, else its userName.
	Display string
}

// Group is one group of a team as a Store keeps it.
type Group struct {
	ID          string
	ExternalID  string
	DisplayName string
	// Role is optional for groups: "" when none was given.
	Role    Role
	Members []Member
	// Created, LastModified and Version are maintained by the store.
	Created      time.Time
	LastModified time.Time
	Version      int64
}

// Clone returns a deep copy of g.
func (g Group) Clone() Group {
	g.Members = append([]Member(nil), g.Members...)
	return g
}

// CloneAttributes returns a deep copy of a JSON object (maps, slices and scalars).
func CloneAttributes(m map[string]any) map[string]any {
	if m == nil {
		return nil
	}
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = CloneValue(v)
	}
	return out
}

// CloneValue returns a deep copy of a JSON value (maps, slices and scalars).
func CloneValue(v any) any {
	switch v := v.(type) {
	case map[string]any:
		return CloneAttributes(v)
	case []any:
		out := make([]any, len(v))
		for i, e := range v {
			out[i] = CloneValue(e)
		}
		return out
	case []map[string]any:
		out := make([]map[string]any, len(v))
		for i, e := range v {
			out[i] = CloneAttributes(e)
		}
		return out
	default:
		return v
	}
}

// MemberFilter is the Equal attribute that selects the groups having the user whose id is
// the value as a member.
const MemberFilter = "members.value"

// EmailFilter is the Equal attribute that selects the users having an e-mail address
// equal to the value, ignoring case, of the Equal's Type when it has one (also ignoring
// case): `emails[type eq "work"].value eq "x"`, as Entra ID sends it.
const EmailFilter = "emails.value"

// Equal is one term of a filter: the attribute equals the value. Attributes are "id",
// "externalId" (both compared exactly), "userName" and "displayName" (compared ignoring
// case, as their schemas declare caseExact false), for users EmailFilter and for groups
// MemberFilter.
type Equal struct {
	Attr  string
	Value string
	// Type restricts EmailFilter to the e-mails of this type; "" for any.
	Type string
}

// MatchesEmails reports whether the emails attribute of a user's Attributes satisfies
// an EmailFilter term.
func (e Equal) MatchesEmails(attrs map[string]any) bool {
	list, _ := attrs["emails"].([]any)
	for _, v := range list {
		m, _ := v.(map[string]any)
		value, _ := m["value"].(string)
		typ, _ := m["type"].(string)
		if sameFolded(value, e.Value) && (e.Type == "" || sameFolded(typ, e.Type)) {
			return true
		}
	}
	return false
}

// Matches reports whether value, the resource's value of e.Attr, satisfies e.
func (e Equal) Matches(value string) bool {
	switch e.Attr {
	case "userName", "displayName":
		return NameKey(value) == NameKey(e.Value)
	}
	return value == e.Value
}

// sameFolded reports whether two e-mail addresses or types are equal in lower case
// (strings.ToLower), the folding the SQL filters use (the databases' lower);
// strings.EqualFold folds more (ſ is s there), which would make one backend find what
// another does not.
func sameFolded(a, b string) bool {
	//lint:ignore SA6005 strings.EqualFold is the folding this function must not use (see above).
	return strings.ToLower(a) == strings.ToLower(b)
}

// SortKey orders a list. Attr is "" (creation order), "id", "externalId", "userName",
// "displayName" (the last two compared ignoring case), "meta.created" or
// "meta.lastModified". Resources without a value come last in both directions; ties keep
// creation order.
type SortKey struct {
	Attr       string
	Descending bool
}

// ListQuery selects a page of users or groups.
type ListQuery struct {
	// Filter is a conjunction: a resource is listed when it matches every term.
	Filter []Equal
	// Sort orders the matches before the page is cut.
	Sort SortKey
	// StartIndex is the 1-based position of the first resource of the page.
	StartIndex int
	// Count is the largest number of resources in the page; 0 asks only for the total.
	Count int
}

// Store keeps the users and groups of teams. Every method acts on one team; the same user
// name may exist in several teams as separate users. Implementations must be safe for
// concurrent use and enforce, atomically with the write, these rules:
//
//   - userName unique in the team ignoring case (ErrUniqueness); it cannot change on replace
//     except in case (ErrMutability);
//   - group displayName unique in the team ignoring case (ErrUniqueness);
//   - group members are users of the team (ErrNoSuchMember), each in at most
//     MaxGroupsPerUser groups (ErrTooManyGroups);
//   - the seat limit of the team (ErrLicenseExceeded), see the backend's documentation for
//     how it is configured; active users occupy seats, and a write that would leave more
//     active users than seats fails unless it lowers their number;
//   - ifVersion > 0 on replace and delete requires the stored version (ErrVersionMismatch);
//   - a write that changes what another resource shows gives that resource a new version
//     and LastModified too, so that its ETag changes with its representation: a user's
//     userName or displayName (its groups' members.display), a group's members or
//     displayName, or its deletion (the groups of the users concerned, see
//     TouchedMembers), a user's deletion (the members of its groups).
//
// Deleting a user removes it from the team's groups; deleting a group leaves its members
// in the team. Lists are in creation order. Missing resources are ErrNotFound. Returned
// values must not share maps or slices with the store's own state.
type Store interface {
	// CreateUser stores a new user and returns it with its ID, times and version.
	CreateUser(ctx context.Context, team string, u User) (User, error)
	// GetUser returns the user id.
	GetUser(ctx context.Context, team, id string) (User, error)
	// ReplaceUser replaces the user u.ID with u, keeping its Created time.
	ReplaceUser(ctx context.Context, team string, u User, ifVersion int64) (User, error)
	// UpdateUser replaces the user id with what change makes of it, read and written in
	// one atomic step of the team's writes (see Change).
	UpdateUser(ctx context.Context, team, id string, change Change[User]) (User, error)
	// DeleteUser removes the user id from the team and its groups.
	DeleteUser(ctx context.Context, team, id string, ifVersion int64) error
	// ListUsers returns one page of the users matching q and the number of all matches.
	ListUsers(ctx context.Context, team string, q ListQuery) (page []User, total int, err error)

	// CreateGroup stores a new group and returns it with its ID, times, version and
	// member displays.
	CreateGroup(ctx context.Context, team string, g Group) (Group, error)
	// GetGroup returns the group id.
	GetGroup(ctx context.Context, team, id string) (Group, error)
	// ReplaceGroup replaces the group g.ID with g, keeping its Created time.
	ReplaceGroup(ctx context.Context, team string, g Group, ifVersion int64) (Group, error)
	// UpdateGroup replaces the group id with what change makes of it, read and written
	// in one atomic step of the team's writes (see Change); change is given the group
	// with its member displays, as GetGroup returns it.
	UpdateGroup(ctx context.Context, team, id string, change Change[Group]) (Group, error)
	// DeleteGroup removes the group id; its members stay in the team.
	DeleteGroup(ctx context.Context, team, id string, ifVersion int64) error
	// ListGroups returns one page of the groups matching q and the number of all matches.
	ListGroups(ctx context.Context, team string, q ListQuery) (page []Group, total int, err error)
}

// Change computes the replacement of a resource from the resource as stored, for
// Store.UpdateUser and Store.UpdateGroup: it returns the replacement and true, or false
// to write nothing (the resource is then returned as stored, its version and times
// unchanged), or an error to fail the update, which then writes nothing and returns it.
// The Store calls it while it holds the team's writes, with a copy of the resource and
// after any write that came first, so concurrent updates of one resource apply one
// after the other instead of failing on each other's versions; the replacement is then
// written under the Store's rules, as by ReplaceUser or ReplaceGroup, with the same ID.
// A Store may call it more than once (a transaction retried), so it must not have
// effects, and it must not call the Store.
type Change[T any] func(cur T) (next T, write bool, err error)

// Errors a Store reports. Wrap them with Errorf to add a detail for the client.
var (
	ErrNotFound        = errors.New("resource not found")
	ErrUniqueness      = errors.New("value already in use")
	ErrMutability      = errors.New("attribute cannot be changed")
	ErrNoSuchMember    = errors.New("group member does not exist")
	ErrTooManyGroups   = errors.New("too many groups for a user")
	ErrLicenseExceeded = errors.New("license of the team exceeded")
	ErrVersionMismatch = errors.New("version does not match")
)

// RuleError is a Store error with a detail meant for the client.
type RuleError struct {
	Err    error // one of the Err* values
	Detail string
}

// Error returns the detail.
func (e *RuleError) Error() string { return e.Detail }

// Unwrap returns the rule that was broken.
func (e *RuleError) Unwrap() error { return e.Err }

// Errorf returns a *RuleError for err with a formatted detail.
func Errorf(err error, format string, args ...any) error {
	return &RuleError{Err: err, Detail: fmt.Sprintf(format, args...)}
}

// The errors below are worded once here so that every Store reports them alike.

// NotFound returns the ErrNotFound error of the resource of kind ("User", "Group") and id.
func NotFound(kind, id string) error {
	return Errorf(ErrNotFound, "%s %s not found.", kind, Echo(id))
}

// CheckVersion returns the ErrVersionMismatch error of the resource when want is positive
// and differs from its stored version, and nil otherwise.
func CheckVersion(kind, id string, stored, want int64) error {
	if want > 0 && stored != want {
		return Errorf(ErrVersionMismatch, "%s %s has changed: its version is %d.", kind, Echo(id), stored)
	}
	return nil
}

// LicenseExceeded returns the ErrLicenseExceeded error of a team whose active users occupy
// active of its limit seats.
func LicenseExceeded(active, limit int) error {
	return Errorf(ErrLicenseExceeded, "The license of the team is exceeded: %d of %d seats are in use.", active, limit)
}

// Compare orders two resources by k, given their values of k.Attr (strings, or times
// formatted by the caller so that they sort as strings): negative when a comes first.
// Empty values come last in both directions.
func (k SortKey) Compare(a, b string) int {
	switch {
	case a == "" && b == "":
		return 0
	case a == "":
		return 1
	case b == "":
		return -1
	}
	var c int
	if k.Attr == "userName" || k.Attr == "displayName" {
		c = strings.Compare(NameKey(a), NameKey(b))
	}
	if c == 0 {
		c = strings.Compare(a, b)
	}
	if k.Descending {
		return -c
	}
	return c
}

// Page cuts the 1-based page of q out of n items: the half-open range [lo, hi).
func (q ListQuery) Page(n int) (lo, hi int) {
	lo = max(q.StartIndex, 1) - 1
	lo = min(lo, n)
	hi = lo + min(max(q.Count, 0), n-lo)
	return lo, hi
}
