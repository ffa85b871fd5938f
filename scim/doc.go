// Package scim is the domain of SCIM 2.0 user and group provisioning (RFC 7643,
// RFC 7644): what a backend implements and what every backend and the HTTP adapter apply
// alike. Its HTTP adapter is package scim/scimhttp, as database/sql/driver is the side of
// database/sql a driver implements; a program that only stores users and groups links no
// HTTP server code.
//
// It holds:
//
//   - the resources as a Store keeps them (User, Group, Member, Role) and the Store
//     contract, with ListQuery, its filter terms (Equal) and sort key (SortKey);
//   - the rules every Store enforces and their wording, so that every backend reports
//     them alike: unique userName and group displayName ignoring case, userName mutable
//     only in case, group members that are users of the team, at most MaxGroupsPerUser
//     groups per user, seat limits (SeatLimits, CheckSeats) and versions (CheckVersion);
//   - the errors: a Store reports rules as ErrNotFound, ErrUniqueness, ... wrapped in a
//     RuleError (Errorf); ErrorOf turns them into an Error, which carries the HTTP status
//     number and scimType that RFC 7644 section 3.12 makes part of SCIM's error model;
//   - the parsing of list filters and sort keys (ParseFilter, ParseSort) into a ListQuery;
//   - the checks and normalisation of user, group and PatchOp objects decoded from JSON
//     (NormalizeUser, CheckGroup, NormalizePatch, CheckUserName), with the vendor
//     extension's role and sendEmailOnInvitation accepted in any of their spellings.
//
// The behaviour of the API where the specifications are silent is described in package
// scim/scimhttp. The conformance suite of a Store is package scim/scimtest.
package scim
