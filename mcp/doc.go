// Package mcp serves the Knowledge Models to AI agents over the Model Context Protocol,
// built on the official Go SDK (github.com/modelcontextprotocol/go-sdk).
//
// The package is an HTTP adapter itself, over the domain of package km. NewHandler(store,
// options...) returns a Handler over a km.Store, configured like the other APIs' handlers
// with functional options (WithService, WithMaxRows, WithMaxBytes, WithSpecServer,
// WithLogger). The Handler speaks MCP over Streamable HTTP (stateless, JSON answers) and
// Handler.MCPServer returns an SDK server for any other transport (stdio for desktop hosts:
// see examples/mcpstdio). Streamable HTTP has one endpoint: the reference server mounts the
// handler at BasePath (/intelligence/api/mcp) itself, behind the auth guard:
//
//	mux.Handle(mcp.BasePath, guard.Wrap(mcpPolicy, mcp.NewHandler(store)))
//
// Callers need the "mcp" permission, and the KMs they see are scoped to their team as for
// the KM API.
//
// Over Streamable HTTP, the SDK gives each stateless request a session of its own and
// decodes and encodes each message several times, which cost an agent's query call
// several times the query. So the Handler answers the common form of a query call itself:
// a POST of one tools/call of query (protocol 2025-03-26 to 2025-11-25, no _meta, a plain
// id), written byte for byte as the SDK writes it (a test holds the two together, and a
// fuzz target holds the reading of the call to the SDK's). Every other request, including
// the draft sessionless protocol (2026-07-28) and anything the SDK refuses, goes to the
// SDK as it came. As the KM API keeps the plans of repeated GETs, the Handler keeps the
// checked plans of up to 512 distinct query arguments (with the KM value they were
// planned on, so a changed KM is planned anew; calls that may use now() or carry KPI
// parameters are planned per call): an agent repeating a call skips reading and planning
// it, and the store still runs it.
//
// # Tools
//
//   - list_knowledge_models: the KMs visible to the caller.
//   - describe_knowledge_model: records, fields (types, descriptions), KPIs with their
//     parameters, predefined filters, relationships.
//   - query: the KM API's query endpoint (a record's rows, or the KM with fields named
//     RECORD.FIELD and KPIs): fields, filters, filterExpr, kpis, kpiParameters, sort,
//     distinct, search, page, pageSize. Rows come back as objects with the applied page,
//     the total of rows before paging, more (rows follow these) and next (the page and
//     pageSize that return them). pageSize 0 is refused as by the KM API; absent, it is
//     DefaultPageSize, or the largest page allowed (WithMaxRows, the Service's
//     MaxPageSize) when that is smaller.
//   - summarize_record: the KM API's summary endpoint.
//   - find_field_values: the distinct values of a string field the KM API's fuzzy search
//     matches, best first, so that an agent can turn "munich" into the stored "München":
//     limit of them (page from 0 asks for the following ones), with total (how many
//     match), more (values follow these) and next (the page and limit that return them).
//
// Every tool reads its arguments into the domain's portable request (km.Request,
// km.SummaryRequest) and asks the request layer (km.Service), as the KM API and OData do:
// the same question gets the same rows, a bad one the same refusal, and the same page
// cap, time limit, cost budget and memory bound apply (the reference server hands one
// Service to every surface: WithService). A call runs in its caller's context, so a
// client that leaves stops the work. A refused call is a tool error (isError) whose text
// is the KM API's problem body, {"status", "errorCode", "detail", ...}: 4xx for the
// caller's mistakes (text with a NUL or bad UTF-8 included), and for failures the status
// and log line every API gives them (web/routing: 503 for the time limit, a client
// gone or a database outage, else 500 with a logged support id). The query tool reads its
// arguments itself: an unknown argument (names are matched exactly: "KM" and "PageSize"
// are unknown) is 400 GENERAL_PARAMETER_ILLEGAL, a wrong type (pageSize 2.5 or "ten")
// 400 GENERAL_PARAMETER_MISSMATCH, a page outside 1 to WithMaxRows the KM API's 400
// GENERAL_CONSTRAINT_VIOLATION, and so is a search.precision outside 1 to 100 (0
// included, as the input schema's minimum says), in the words the KM API refuses a
// searchPrecision with (query.CheckPrecisionParam); the other tools' arguments that their
// JSON Schema refuses are tool errors from the SDK. An integer argument (page, pageSize,
// precision, sampleSize, limit) may be written as any number with a zero fractional
// part (2.0, 1e1, 20e-1), which JSON Schema counts an integer, on every tool and path.
// summarize_record without sampleSize has the Service's DefaultSampleSize sample rows
// (km.DefaultSampleSize, or MaxSampleSize when that is smaller).
//
// # Resources, prompt and completions
//
// Three resource templates: OpenAPIURITemplate (kmkit://knowledge-models/{km}/openapi.json,
// the KM's generated OpenAPI document, as the KM API's spec endpoint serves it, naming the WithSpecServer URL as its
// server), SchemaURITemplate (kmkit://knowledge-models/{km}/schema.json,
// describe_knowledge_model's answer) and RecordURITemplate
// (kmkit://knowledge-models/{km}/records/{record}/schema.json, one record's fields and the
// relationships it takes part in). resources/list names these resources for every KM the
// caller sees, so hosts that only list resources show them. A KM or record the caller
// does not see is "resource not found": code -32002 in protocol versions 2025-03-26 to
// 2025-11-25, as they specify, and -32602 from the draft 2026-07-28 on (SEP-2164). The filter_language prompt (arguments km, and
// optionally record and field to narrow the examples) explains the filter language of
// filterExpr with examples built from the KM's fields and a row of each record's data,
// each an expression the KM API accepts.
//
// completion/complete offers values for the km argument (the KMs the caller sees), record
// (the records of the KM in the request's context arguments) and field (the fields of the
// record there) of the prompt and the resource templates, by case-insensitive prefix.
//
// # Descriptions for agents
//
// The input schemas state the limits the tools keep: pageSize and find_field_values' limit
// from 1 to WithMaxRows (or the Service's MaxPageSize when smaller), summarize_record's
// sampleSize from 1 to the Service's MaxSampleSize, precisions from 1 to 100, page from 0
// to 2147483647 (query.CheckPaging's range). filterExpr's description gives the
// operators and FilterExprExamples (a test parses each with the filter language's parser).
// describe_knowledge_model's output schema enumerates every field type (FieldTypes).
//
// # Transport security
//
// The Streamable HTTP transport says servers must validate the Origin header, against DNS
// rebinding: Handler.ServeHTTP (and Handler.CheckOrigin, for the chain in front of the
// authentication) lets a request through when it has no Origin (a non-browser client),
// when its Origin is the server's own public origin (package publicurl's choice, never the
// Host header) or one of WithAllowedOrigins (the reference server passes -cors-origins);
// any other is 403 with a JSON-RPC error without id. Browser-hosted clients also need CORS:
// package cors allows and exposes the transport's headers (mcp-protocol-version,
// mcp-session-id, last-event-id).
//
// # Callers
//
// Over Streamable HTTP every call runs in the context of its HTTP request, so a store sees
// the principal the auth guard put there (team scope) and a store pinned per request
// (storage/swap) stays pinned. MCPServer(p) runs every call as p instead (stdio).
//
// # Limits
//
// WithMaxRows (default 500) bounds pageSize: the query tool's input schema states it as
// the maximum, and a call above it (or with pageSize 0) is refused as the KM API refuses a
// page outside its bounds.
// WithMaxBytes (default 256 KiB) bounds the JSON size of the rows of one answer: a page
// that does not fit is cut to d rows, d the largest divisor of pageSize that fits, and the
// answer says so (truncated, note) and names in next the page of size d that starts at the
// first row left out, so that no row is skipped. A row alone above the cap is refused
// with GENERAL_CONSTRAINT_VIOLATION.
// A summary above MaxBytes is refused with GENERAL_CONSTRAINT_VIOLATION.
package mcp
