// Package kmkit serves the Knowledge Model API (with its OData service), SCIM 2.0
// provisioning and the elements-and-facets reporting API from a host's own data.
//
// kmkit is a library: a host imports the packages it needs, mounts their http.Handlers on
// its own server, and plugs in storage.
//
//   - query: the filter language, the portable query.Request, and an in-memory columnar
//     executor with fuzzy search.
//   - principal: the caller of a request in its context, which the handlers read.
//   - auth: the guard in front of the handlers: credentials (AppKey, Bearer JWT,
//     x-api-key), rate limits, and the permission and error shape each API's Policy
//     names.
//   - stats: column statistics equal to pandas' describe.
//   - scim: SCIM 2.0 users and groups.
//   - reporting: elements and facets per tenant.
//   - storage/memory: the in-memory backend of every store.
//
// Each domain package defines the Store interface it consumes; backends implement them.
package kmkit
