// Package kmkit serves the Knowledge Model API (with its OData service and an MCP server),
// SCIM 2.0 provisioning and the elements-and-facets reporting API from a host's own data.
//
// kmkit is a library: a host imports the packages it needs, mounts their http.Handlers on
// its own server, and plugs in storage. Each API is a domain package (types, rules and
// the Store interface a backend implements) with an HTTP adapter beside it, so a backend
// or a batch program that only reads and writes stores links no HTTP server, OpenAPI or
// JWT code (deps_test.go checks it with go list -deps).
//
// The APIs, domain and adapter:
//   - km: Knowledge Models (records, fields, relationships, KPIs, filters), their loader,
//     the KPI language's parameters, the compiled query plan, km.Store, the summary types
//     and km.Service, the one request layer every surface asks: it alone checks the text,
//     looks the KM up as the caller sees it, plans, caps the page and applies the cost,
//     memory and time limits. km/exec: the in-memory columnar executor of km.Plans, which
//     the memory backend runs (the executor sits with the plan it runs). km/kmhttp: the
//     Knowledge Model API (data, KPIs, summary,
//     schemas, generated OpenAPI documents), which reads its query strings and bodies
//     into a km.Request and encodes the Service's results.
//   - odata: the KMs as a read-only OData v4 service, an HTTP adapter over km.Service
//     (each $batch part too, the batch in one time budget).
//   - mcp: the KMs' query tools, resources and prompt for AI agents over the Model
//     Context Protocol, an HTTP adapter over km.Service (and stdio, see
//     examples/mcpstdio). No surface drives another or reads another's output: a host
//     builds one Service and hands it to the KM API, OData and MCP, which then apply the
//     same limits (deps_test.go checks that odata, mcp and the conformance suite link
//     neither km/kmhttp nor a store).
//   - scim: SCIM 2.0 users and groups, their rules, scim.Store and scim.Service (PATCH);
//     scim/scimhttp: the SCIM protocol (resources, Bulk, discovery); scim/scimtest: the
//     suite every scim.Store passes.
//   - reporting: elements and facets per tenant and reporting.Store;
//     reporting/reportinghttp: the reporting API; reporting/reportingtest: its store
//     suite.
//
// Shared by the APIs:
//   - query: the filter and KPI expression languages (parse, bind, errors with
//     positions), the portable request and result; query/column: tables held by column;
//     query/fuzzy: fuzzy scoring.
//   - stats: column statistics equal to pandas' describe.
//   - problem: the RFC 9457 problem bodies and error codes of the KM API;
//     problem/problemhttp writes them.
//   - principal: the caller of a request in its context, which the handlers read.
//   - auth (auth/keysfile, auth/ratelimit, auth/idptest): the guard in front of the
//     handlers: credentials (AppKey, Bearer JWT, x-api-key) and rate limits, with the
//     permission and error shape each API's Policy names; Bearer tokens of identity
//     providers verified against their JWKS with a claim mapping, and the OAuth 2.0
//     protected resource metadata that points clients to them.
//   - outage: telling a store's unavailable database from a failure (backends classify
//     their errors with it and compile no HTTP).
//   - metrics: Prometheus metrics of handlers and stores.
//
// web/ holds the HTTP middleware and answers every kmkit API handler shares, one package
// for each job: web/cors (cross-origin access for browser apps), web/head (HEAD answered
// as GET), web/publicurl (the public URL absolute links start with, never taken from the
// Host header) and web/routing (the 404 and 405 of routing, the 500 with a support id and
// the answers to failures that are nobody's fault, such as a database outage or the time
// limit). A host writing a handler of its own beside the APIs may use them to answer the
// same way.
//
// Storage: storage/memory (everything in memory) and storage/sqlstore (SQLite or
// PostgreSQL) open the same way, one value handing out the stores of every API (KM(),
// SCIM(), Reporting()), and KM stores fill with Import(ctx, fsys) or PutModel(ctx, m);
// storage/storetest is the conformance suite both pass, asking km.Service as the surfaces
// do and comparing with its reference evaluator; storage/swap replaces a km.Store
// while it serves.
//
// Every handler is built the same way: NewHandler(store, options...) with functional
// options, mounted at its package's BasePath (plus "/" where the API has several paths),
// behind auth's Guard with the API's policy and error writer. The example mounts three
// APIs over the memory backend.
package kmkit
