// Package scimhttp serves SCIM 2.0 user and group provisioning (RFC 7643, RFC 7644) over
// HTTP for the teams of a host, so that identity providers such as Okta and Microsoft Entra
// ID can provision through it. It is the HTTP adapter of package scim, which holds the
// domain: users, groups, the scim.Store a backend implements, filters, normalisation and
// the rules with their wording, and scim.Service, which applies PATCH and the
// read-change-write of every update. This package holds the handler, its routing, Bulk, the discovery
// endpoints, the JSON wire format, the /Schemas documents and the validation of POST and
// PUT bodies (both rest on github.com/elimity-com/scim's schema package, which needs
// net/http), and WriteProblem for the auth middleware.
//
// NewHandler returns an http.Handler mounted at {base}/user-provisioning/scim/v2 (see
// BasePath and WithPrefix):
//
//	mux.Handle(scimhttp.BasePath+"/", scimhttp.NewHandler(store))
//
// Every request acts on the team of its caller, taken from the principal.Principal in the
// request context (WithTeam changes that); a request without one is answered 401. Users
// and groups live in a scim.Store; storage/memory and storage/sqlstore have them.
//
// The handler uses github.com/elimity-com/scim as a library: its schemas describe the
// resources (and are served by /Schemas) and validate POST and PUT bodies. PATCH is
// decoded here and applied by scim.Service, whose documentation says how. Requests are
// routed once, by this package, which adds what the library lacks: team scoping, the vendor extension and its
// rules, filter evaluation, sorting, attributes/excludedAttributes, ETags with If-Match
// and If-None-Match, POST .search on the same code path as GET, Bulk, a
// ServiceProviderConfig that says what is supported, request size limits, and error
// bodies that say what was wrong.
//
// # Behaviour where the specifications are silent
//
//   - Errors are RFC 7644 Error bodies (status as a string, scimType where RFC 7644 has
//     one), also for 401, 404, 405, 413 and 415. Routing answers as the other kmkit APIs
//     do: an unknown path is 404 "no endpoint at PATH", a method an endpoint does not
//     serve 405 with an Allow header naming the methods it does, HEAD is answered as GET
//     without a body, and a store failure or a panic is 500 with a support id that is
//     logged with the cause (never the cause itself). A duplicate userName or group displayName
//     is 409 uniqueness; an exceeded license is 400 without scimType and a detail saying
//     the license of the team is exceeded. A detail that repeats a value of the request
//     (a filter, a path, an id, a header) repeats at most scim.MaxEcho (200) bytes of it,
//     cut at a UTF-8 boundary and followed by an ellipsis and the value's length in bytes
//     (scim.Echo), so a 1 MiB value makes an error of a few hundred bytes that still says
//     what was wrong.
//   - Seats: active users occupy the seats of the team's license. A write fails when it
//     would leave more active users than seats, unless it lowers their number
//     (deactivating or deleting a user always works).
//   - userName must look like an e-mail address (local@domain.tld, no spaces, as
//     net/mail parses it), be non-empty and at most 100 characters; it is compared ignoring
//     case. It cannot change on PUT or PATCH, except in case (400 mutability).
//   - role and sendEmailOnInvitation may be given in the extension object, as
//     "URN:attribute" keys, or at the top level; when several are present the top level
//     wins. sendEmailOnInvitation and active accept "true"/"false" strings in any case.
//     A new user without role is a MEMBER, without active is active, without
//     sendEmailOnInvitation gets no invitation. A PUT that omits role, active or
//     sendEmailOnInvitation keeps their current values; it replaces every other attribute.
//     The Notifier is called after a user with sendEmailOnInvitation true is stored; its
//     failure is logged and does not undo the creation.
//   - Users also take RFC 7643's enterprise extension (department, employeeNumber,
//     manager, ...), stored and returned as given; a manager sent as a bare id, as Entra ID
//     does, becomes {"value": id}, and a manager with an empty id, which Entra ID sends
//     to clear it, is no manager. Attributes of other, unknown extensions are dropped, as
//     are password (never stored nor returned) and the read-only groups.
//   - Groups may carry a role (MEMBER, ANALYST, ADMIN); a PUT without role clears it.
//     Members must be users of the team (type "User" or no type); duplicates are merged.
//     Group displayName is unique ignoring case.
//   - Filters: eq combined with and, on userName, externalId, id and displayName for
//     users and on displayName, externalId and id for groups; userName and displayName
//     compare ignoring case, id and externalId exactly. Users also filter on e-mails as
//     Entra ID sends it, emails[type eq "work"].value eq "x" (or emails[value eq "x" and
//     type eq "work"], or emails.value eq "x"), address and type ignoring case; groups on
//     members[value eq "id"] (or members.value eq "id"). Anything else is 400
//     invalidFilter naming the unsupported part. Strings in filters, here and in PATCH
//     paths, are JSON strings: "Sales \"EMEA\"" and "Gr\u00fc\u00dfe" compare with the
//     texts they encode.
//   - PATCH (RFC 7644 section 3.5.2) is applied by scim.Service: see package scim for
//     the paths, values and rules, and the behaviours RFC 7644 leaves open. If-Match
//     pins the version it is applied to (412 when it does not match).
//   - groups on a User lists the groups of the team it is a member of (value, display,
//     type "direct", $ref); it is read-only. schemas names an extension only when the
//     resource has data of it, and in a response narrowed by attributes or
//     excludedAttributes only when the attributes returned still include some of it
//     (RFC 7643 section 3: schemas holds the URIs of the schemas that define the
//     attributes present), so that attributes=userName answers the core schema alone;
//     an extension object left empty by the projection is left out.
//   - Sorting: sortBy on userName, displayName (both ignoring case), externalId, id,
//     meta.created or meta.lastModified (groups: all but userName); other attributes are
//     400 invalidValue. Resources without a value come last in both directions; values
//     equal but for case are ordered by their bytes (upper case first, reversed when
//     descending), equal values and unsorted lists in creation order. sortOrder without
//     sortBy is ignored.
//   - Lists: count defaults to 200 and larger counts are lowered to 200; a negative count
//     is 0; startIndex below 1 is 1. itemsPerPage is the number of resources returned
//     (the library reports the count asked for).
//   - attributes/excludedAttributes apply to every response carrying resources: users and
//     groups (GET, POST, PUT, PATCH, lists and .search) and the Schemas and ResourceTypes
//     lists and entries. id and schemas are always returned. Unknown names are ignored.
//     Both may be given; excluded names are removed from the included ones.
//   - Discovery (/Schemas, /ResourceTypes) ignores filter, sortBy, sortOrder, count and
//     startIndex (RFC 7644 section 4) and always lists everything. Its 400 (an attribute
//     name that is not one) carries, next to the RFC 7644 Error members, the seed's
//     FrontendHandledBackendError members frontendErrorKey and errorInformation.
//   - Endpoint names match ignoring case (/users is /Users).
//   - ETags are weak, W/"n", n the resource's version, which also changes when a write
//     to another resource changes what this one shows (a user's groups, a group's
//     members.display). A user's groups are read apart from the user and answered with
//     the version they belong to (scim.Service.UserGroups), so a membership written
//     meanwhile never goes out under the old ETag; a user deleted between the read of a
//     list's page and the read of its groups is left out of the page. If-Match on PUT,
//     PATCH and DELETE
//     is checked atomically by the store (412 when it does not match); If-None-Match on
//     GET of one resource answers 304. PUT and PATCH read, change and write the resource
//     in one atomic step of the store (scim.Store.UpdateUser), so concurrent updates
//     apply one after the other: without If-Match, or with "If-Match: *" (any version),
//     no update is lost and none fails for a version it did not ask for.
//   - Bulk: operations run in the order of the request, except that an operation naming
//     "bulkId:x" (in its path or anywhere in its data) runs after the POST operation x,
//     also when x comes later in the request (RFC 7644 section 3.7.2), and the reference
//     is replaced with the id x created. Each time, the first operation of the request
//     whose references are resolved runs. Without failOnErrors the run stops after the
//     first failure, with failOnErrors N once N operations have failed, counted in the
//     order the operations ran; the response lists the operations that ran in the order
//     of the request. POST operations need a bulkId, unique in the request. A reference
//     to a bulkId no POST operation has, or to an operation that failed, fails with 409
//     invalidValue saying which. Circular references (operations that each need the id
//     another creates) are not resolved: the operations of the cycle fail with 409
//     invalidValue naming their bulkIds, as RFC 7644 section 3.7.2 allows, and nothing
//     of them is stored; a client creates the resources, then PATCHes the references.
//     Group members are users, so a cycle can only run through free values such as a
//     user's manager. An operation's version is its If-Match. More operations than
//     maxOperations (1000) or a body above maxPayloadSize is 413.
//   - Request bodies must be application/scim+json or application/json (or carry no
//     Content-Type), else 415; bodies above the one body limit (WithMaxBodyBytes, 1 MiB
//     by default), which is also Bulk's maxPayloadSize in the ServiceProviderConfig, are
//     413.
//   - The ServiceProviderConfig advertises patch, bulk, filter, sort and etag as supported,
//     changePassword as unsupported, and the Bearer and AppKey schemes.
//   - Deleting a user removes it from this team and its groups only; the same userName in
//     another team is another user. Deleting a group leaves its members in the team.
package scimhttp
