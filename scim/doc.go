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
//     a value of the request that an error's detail repeats is formatted as an Echo, cut
//     to MaxEcho bytes with its length, in every error of this package and scim/scimhttp;
//   - the parsing of list filters and sort keys (ParseFilter, ParseSort) into a ListQuery;
//   - the checks and normalisation of user, group and PatchOp objects decoded from JSON
//     (NormalizeUser, CheckGroup, NormalizePatch, CheckUserName), with the vendor
//     extension's role and sendEmailOnInvitation accepted in any of their spellings;
//   - the Service, which applies PATCH operations (RFC 7644 section 3.5.2) to the typed
//     resources over a Store, whose UpdateUser and UpdateGroup run the read-change-write
//     of every update in one atomic step (Change), and reads a user's groups with the user's version they belong to
//     (UserGroups), with the descriptions of the attributes PATCH resolves paths against
//     (UserResource, GroupResource) and the checks of the values it stores (CheckValues).
//
// # PATCH
//
// Operations are add, replace and remove on core and extension attributes
// ("urn:...:enterprise:2.0:User:manager.value"), sub-attributes, and multi-valued
// attributes with value filters (and, or, not, parentheses, eq, ne, co, sw, ew, gt, ge, lt,
// le, pr). Attribute names compare ignoring case; values compare ignoring case unless
// their attribute is caseExact.
//
//   - add on a filtered path that matches nothing creates the value the filter describes
//     when it is eq terms joined by and (phoneNumbers[type eq "mobile"].value creates
//     {"type": "mobile", "value": ...}); replace on such a path is 400 noTarget. Replacing
//     a sub-attribute of an attribute that has no values is an add (emails.type).
//   - A path-less add or replace takes an object whose keys are paths: plain, dotted
//     ("name.givenName") or URN-prefixed attributes, or an extension URN with an object.
//     The core schema's URN, as the path or as a key, takes such an object too; keys apply
//     in their order ignoring case, so a whole attribute before the keys naming its parts.
//     Replacing an extension, by its URN as path or as key, replaces the attributes given
//     and keeps the others, as replacing a complex attribute keeps the sub-attributes not
//     given.
//   - A null value on replace removes the attribute (RFC 7643 section 2.5), as does
//     remove. remove on a multi-valued attribute with values removes those values (Entra
//     ID removes members that way); a value that is an empty list, or null, names no
//     values and removes nothing. Only a remove without a value removes them all (RFC
//     7644 section 3.5.2.2).
//   - add on a multi-valued attribute adds the values that are not there. Values with a
//     "value" sub-attribute are the same when their values are equal and, when both have
//     one, their types are: one address may be both work and home, and a member sent
//     without a type is the member there. Other values are the same when all their
//     sub-attributes are. A value that is there already gets the sub-attributes the add
//     gives (adding it with primary true makes it primary); the rest of it stays as
//     stored.
//   - A value made primary makes every other value of the attribute primary false.
//   - A PATCH that changes nothing (adding what is there) writes nothing: the version
//     and lastModified stay, so a client holding the version can go on using it.
//   - Operations apply in order, and the result is checked before it is stored: types
//     (CheckValues), each value of a multi-valued attribute at most once, at most one
//     primary value, userName, role. Any operation that cannot have its effect fails the
//     whole PATCH with a 400 that names the operation, the attribute and the problem:
//     noTarget, invalidPath (unknown attribute, sub-attribute or schema, malformed path,
//     filter on a single value), mutability (id, meta, groups, and sub-attributes the
//     service fills in such as members.display and manager.displayName) or invalidValue.
//     A refused PATCH changes nothing. The checks apply to the attributes the PATCH
//     changes: a user stored with the same address twice, before the rule was enforced,
//     can still have its title replaced, not another address added.
//   - A PATCH that leaves active without a value makes the user inactive, without role
//     makes it a MEMBER.
//
// Two behaviours RFC 7644 leaves open are decided so:
//
//   - A replace whose filter matches several values, with one value, leaves that value
//     once, in place of the first match: one copy per match would hold the same value
//     several times, which a multi-valued attribute does not.
//   - A replace with null whose filter matches nothing answers 200 and changes nothing:
//     null is a remove (RFC 7643 section 2.5), and removing what is not there is no
//     change; the noTarget of section 3.5.2.3 is for a replace that has a value to put.
//
// The behaviour of the HTTP API where the specifications are silent is described in
// package scim/scimhttp. The conformance suite of a Store, PATCH included, is package
// scim/scimtest.
package scim
