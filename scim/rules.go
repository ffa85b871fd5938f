package scim

import (
	"slices"
	"strings"
	"sync"
	"unicode"
)

// The rules every Store enforces, and the words it reports them with, are kept here so
// that every backend applies and words them alike.

// NameKey returns the form in which userNames and group displayNames are compared
// ignoring case (their uniqueness in a team, the eq filters, the sorts): each character
// as the lower case of its upper case. Names that strings.EqualFold calls equal, the
// rule of CheckUserNameChange, have one key (ſ, s and S; ς, σ and Σ; K, k and the Kelvin
// sign), and the key of a name is the key of its strings.ToLower, which the stores kept
// before. A few names EqualFold tells apart share a key too (ı and i).
func NameKey(s string) string {
	return strings.Map(func(r rune) rune { return unicode.ToLower(unicode.ToUpper(r)) }, s)
}

// DuplicateUserName is the ErrUniqueness error of a userName already used in the team.
func DuplicateUserName(name string) error {
	return Errorf(ErrUniqueness, "userName %q is already in use.", Echo(name))
}

// DuplicateGroupName is the ErrUniqueness error of a group displayName already used in
// the team.
func DuplicateGroupName(name string) error {
	return Errorf(ErrUniqueness, "displayName %q is already in use by another group.", Echo(name))
}

// CheckUserNameChange returns the ErrMutability error when a replacement changes the
// stored userName other than in case, and nil otherwise.
func CheckUserNameChange(stored, requested string) error {
	if strings.EqualFold(stored, requested) {
		return nil
	}
	return Errorf(ErrMutability, "userName cannot be changed: it is %q, the request has %q.", Echo(stored), Echo(requested))
}

// TouchedMembers returns the ids of the users whose groups attribute a write to a group
// changes, given the group's members before and after it (each without duplicates): the
// users in one of the lists only, or, when the group's displayName changes, in either.
// A Store gives them the write's version and modify time, so that their ETags change
// with what they show.
func TouchedMembers(before, after []Member, renamed bool) []string {
	count := make(map[string]int, len(before)+len(after))
	for _, m := range slices.Concat(before, after) {
		count[m.Value]++
	}
	var out []string
	for _, m := range slices.Concat(before, after) {
		if n := count[m.Value]; n == 1 || (renamed && n > 0) {
			out = append(out, m.Value)
			count[m.Value] = 0
		}
	}
	return out
}

// CheckMember returns the error of a group member: ErrNoSuchMember when the user id does
// not exist in the team, ErrTooManyGroups when adding it to the group would make it a
// member of more than MaxGroupsPerUser groups. groups is the number of groups the user
// is in, inGroup whether the group being written is one of them.
func CheckMember(id string, exists bool, groups int, inGroup bool) error {
	if !exists {
		return Errorf(ErrNoSuchMember, "Group member %s does not exist in the team.", Echo(id))
	}
	if !inGroup && groups >= MaxGroupsPerUser {
		return Errorf(ErrTooManyGroups, "User %s would belong to more than %d groups.", Echo(id), MaxGroupsPerUser)
	}
	return nil
}

// SeatDelta is the change in active users of a write that turns a user from wasActive to
// isActive.
func SeatDelta(wasActive, isActive bool) int {
	switch {
	case isActive && !wasActive:
		return 1
	case wasActive && !isActive:
		return -1
	}
	return 0
}

// CheckSeats returns the ErrLicenseExceeded error of a write that changes the active users
// of a team by delta when active of them occupy seats of limit (0 or less: unlimited). A
// write that lowers their number always passes, so a team above its license can shrink.
func CheckSeats(active, delta, limit int) error {
	if limit <= 0 || delta < 0 || active+delta <= limit {
		return nil
	}
	return LicenseExceeded(active, limit)
}

// SeatLimits is the seat configuration of a Store: a limit per team and a default for
// the others. Seats are configuration, not data: every process serving a team must be
// given the same limits. The zero value is unlimited; it is safe for concurrent use.
type SeatLimits struct {
	mu       sync.RWMutex
	teams    map[string]int
	fallback int
}

// SetSeatLimit sets the number of active users team may have; 0 or less means unlimited.
// Lowering it below the team's active users makes every write that does not deactivate or
// delete a user fail until the team is back within its license.
func (l *SeatLimits) SetSeatLimit(team string, seats int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.teams == nil {
		l.teams = map[string]int{}
	}
	l.teams[team] = seats
}

// SetDefaultSeatLimit sets the seat limit of the teams without their own; 0 or less means
// unlimited.
func (l *SeatLimits) SetDefaultSeatLimit(seats int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.fallback = seats
}

// Seats returns the seat limit of team; 0 or less means unlimited.
func (l *SeatLimits) Seats(team string) int {
	l.mu.RLock()
	defer l.mu.RUnlock()
	if n, ok := l.teams[team]; ok {
		return n
	}
	return l.fallback
}
