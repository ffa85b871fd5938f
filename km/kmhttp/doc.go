// Package kmhttp serves the Knowledge Model API (package km) over HTTP: NewHandler returns
// the http.Handler for BasePath (/intelligence/api) over a km.Store, with its options
// (WithMaxPageSize, WithQueryTimeout, WithMaxQueryCost, ...). It holds everything of the
// API that is HTTP: routing and route templates (RouteTemplate), the query-string and
// POST-projection parameters, the data, query, schema and summary endpoints, the OpenAPI
// document (Spec, kin-openapi) and the KM API's error writer (WriteProblem).
// The handler only reads GET query strings and POST projections into the domain's
// portable request (km.Request, km.SummaryRequest), asks the request layer (km.Service,
// WithService; by default one made from the handler's options), which checks, plans and
// bounds it, and shapes the answers. The plans of repeated GETs are kept (a plan cache
// keyed by the raw query string). What a query means is documented in package km.
//
// Mount it at BasePath, or under another prefix with http.StripPrefix:
//
//	mux.Handle(kmhttp.BasePath+"/", kmhttp.NewHandler(store))
//
// # Behaviours chosen where the specification is silent
//
//   - Routing: paths are matched below BasePath; a trailing slash is ignored; anything else
//     is 404 GENERAL_NOTFOUND_PATH. Data endpoints take GET and POST, all others GET; HEAD
//     is answered as GET without a body; another method is 405 GENERAL_METHOD_NOT_ALLOWED
//     with an Allow header.
//   - Query strings are split at "&" only (a ";" stays in its value). "+" is a space, as
//     form encoding has it, except where it is the sign of a time offset after a time of
//     day ("T15:48+03:00"); "%2B" is always a plus. A bad percent escape is 400.
//   - Lists (fields, filters, kpis, options, searchField) may be comma-separated and
//     repeated; duplicates are dropped, order kept. filterExpr may be repeated and each
//     value may hold several expressions joined by top-level commas. A repeated page,
//     pageSize or searchPrecision takes its last value.
//   - Single-valued parameters (page, pageSize, searchPrecision, sampleSize, curated,
//     format): an empty value ("page=") stands for the default, as in the real service;
//     a value that is present must parse, so a blank one ("page=%20") is 400
//     GENERAL_PARAMETER_MISSMATCH, never taken as absent. curated takes only true or
//     false (any case): "0" or "1" is 400 GENERAL_PARAMETER_MISSMATCH.
//   - format and unit are always written in data headers, record fields and KPIs, ""
//     when the field or KPI has none, as the real service writes them.
//   - Record details (records/{id}) report a field's type as its definition declares it
//     ("number" stays "number"), except a time field, reported as "string" there: the
//     record-field enum of the API has no time (its values are "HH:MM:SS" strings). Data
//     headers, whose enum has time, report "time".
//   - Schema lists without sort keep definition order (KMs: by id) and report sort "";
//     with sort they order case-insensitively by the named member (id, name, description,
//     shortDisplayName, internalNote; published for KMs; format, unit, direction, target
//     for KPIs), ties in definition order. Record details take sort for their fields
//     (also by type, format and unit).
//   - Every request is compiled once into a Plan (NewPlan; see "What a query means"),
//     the only step that rejects a request: unknown fields and KPIs are 400
//     KM_FIELD_NOTFOUND listing them all, unknown filters 400 KM_FILTER_NOTFOUND, each
//     with the closest known ids ("did you mean ORDER_ID?", package km), records
//     without a path 400 KM_JOIN_NOT_POSSIBLE, records joined by several paths that the
//     rule for join paths cannot choose between (km's "What a query means") 400
//     KM_JOIN_AMBIGUOUS naming the candidates ("ORDERS-ORDER_ITEMS-MATERIALS or
//     ORDERS-PLANTS-MATERIALS"). kpis at record level is 400 GENERAL_PARAMETER_ILLEGAL.
//   - KPI parameters can be set per request: GET kpiParam=KPI_ID.param:value (repeatable),
//     POST projection member kpiParameters {"KPI_ID": {"param": "value"}}; they apply only
//     to KPIs the request selects.
//   - The type of a KPI (headers, Plan.Columns) is integer for a lone count or
//     countdistinct, the field's type for a lone min or max, float otherwise.
//   - POST bodies are JSON: a Content-Type other than application/json or a "+json"
//     type (text/plain, application/xml, a form) is 415 GENERAL_UNSUPPORTED_MEDIA_TYPE;
//     a missing Content-Type is read as JSON. Unknown members are 400 GENERAL_PARAMETER_ILLEGAL; a member of the wrong
//     JSON type is 400 GENERAL_PARAMETER_MISSMATCH; beyond WithMaxBodyBytes, 413
//     GENERAL_PAYLOAD_TOO_LARGE. filterExpr entries of a POST are split at top-level
//     commas as on GET.
//   - Fuzzy search: without searchField the searched fields are the selected string fields
//     (at record level with no fields: all string fields); searching a non-string field is
//     400. The default precision is DefaultSearchPrecision.
//   - Limits beyond the seed's: at most km.MaxFields selected fields and km.MaxFilterExpressions
//     filter expressions per request (400 GENERAL_CONSTRAINT_VIOLATION); error details
//     list at most ten unknown names.
//   - Bounded work: the request's context reaches the store (km.Store.Query), so a client
//     that goes away or a server shutting down stops the query (the memory store checks
//     it per filter predicate and between phases, the SQL stores cancel the running
//     statement, both within 100 ms). Data, query and summary
//     requests run under WithQueryTimeout (default 30 s; the limit's timer starts only
//     when the store waits on the context, see internal/deadline): longer work is stopped and
//     answered 503 GENERAL_SERVICE_UNAVAILABLE "the query ran longer than the time limit
//     of 30s and was stopped; ...". Before running, a data, query or summary request's
//     plan (km.Service, as for OData and MCP) is
//     costed (km.Plan.Cost: rows x predicates for the filters, rows x fields x aggregates for
//     the grouping, rows from the store's RowCounter or km.AssumedRows) and refused beyond
//     WithMaxQueryCost (default km.DefaultMaxQueryCost) with 400
//     GENERAL_CONSTRAINT_VIOLATION naming the estimate, the budget and the part that is
//     too large (the filters or the grouping). An in list counts as one predicate: the
//     memory executor tests it with one pass. Over a store that runs plans in memory
//     (km.MemorySizer: the memory backend) the plan's memory is estimated too (groups x
//     values, distinct keys, sort buffers; km.Cost.Memory) and refused beyond
//     WithMaxQueryMemory (default km.DefaultMaxQueryMemory, 1 GiB) with 400
//     GENERAL_CONSTRAINT_VIOLATION "the query would hold about 208 MB in memory, beyond
//     the limit of ...: about 100001 groups of 34 values; group by fewer or coarser
//     fields ...", before anything is allocated.
//   - Repeated data GETs: the handler keeps the checked plans of up to 512 distinct
//     requests (KM value, endpoint and query string; package internal/plancache, which
//     MCP's query tool uses too), so a repeated request skips parsing
//     and planning (the store still runs it, and its cost is still checked). Plans with
//     now() in a filter or sort key, or with KPI parameters, are made per request.
//   - Successful answers carry Cache-Control: private, no-store (they hold a team's data
//     and are fetched with credentials).
//   - Store errors other than client errors, and panics, are 500 ADMIN_FATAL_ERROR with a
//     support id that is logged with the error. A store's data whose relationship target
//     holds a value twice (km.DuplicateTargetError: stores refuse them at load, so only
//     a table put under a KM afterwards) is 409 GENERAL_CONSTRAINT_VIOLATION naming the
//     relationship and the value.
//   - Summary (records/{id}/summary): fields (default: all of the record's) less
//     excludeFields are described, and the same fields make up the sample, so shape is
//     [rows after filters, len(fields)]; excluding every field is 400
//     GENERAL_PARAMETER_ILLEGAL. filters apply as on the record data endpoint, and
//     filterExpr is accepted as there. sampleSize is 1 to WithMaxSampleSize
//     (default DefaultMaxSampleSize, 5000; the 400 beyond it names the option; default
//     size DefaultSampleSize, or WithMaxSampleSize when that is smaller); the sample is
//     the first rows in row order. Statistics are pandas'
//     describe(include='all') (package stats): integer and float fields numeric, all
//     others, booleans and times included, count/unique/top/freq with top written as the
//     data endpoints write the value ("true", "2025-01-05", RFC 3339, "10:30:00").
//     Statistics pandas gives as NaN are null. A Store implementing km.Summarizer computes
//     them itself; otherwise the handler reads all filtered rows and uses km.DescribeResult.
//   - Spec (knowledge-models/{id}/spec): paths are the record query endpoints and the KM
//     query endpoint, written out per record (no path parameters). info.version is the
//     KM's published time (RFC 3339), "unpublished" without one. Row schemas list every
//     field as nullable with additionalProperties false; KPIs join the KM row schema.
//     With curated=true the KM query endpoint offers only the curated records' fields,
//     and only the KPIs and predefined filters that read a field of a curated record:
//     those defined only over auto-generated records leave with them. servers is the request's base URL: scheme and host (X-Forwarded-Proto
//     and X-Forwarded-Host when present) and any prefix http.StripPrefix removed. format
//     json|yml|yaml (case-insensitive) wins over Accept; Accept picks YAML only when it
//     ranks a YAML type above JSON; anything else gets JSON. Another format is 400
//     GENERAL_PARAMETER_ILLEGAL, a curated that is not a boolean 400
//     GENERAL_PARAMETER_MISSMATCH.
//
// The handler keeps no state between requests; authentication, permissions and rate
// limits belong to the auth middleware in front of it.
package kmhttp
