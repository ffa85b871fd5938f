// Package km serves the Knowledge Model API from a host's data: the KM types, the loader of
// KM definitions (models/*.yaml), the KPI expression language, the Store interface a host
// implements (and the optional Summarizer), and NewHandler, the http.Handler for
// /intelligence/api, including the record summary and the generated OpenAPI spec (Spec).
//
// A Knowledge Model (KM) holds records (tables with typed fields), relationships that join
// them many-to-one, KPIs (aggregations written in the KPI language) and predefined filters
// (filter expressions). Load reads the definitions; a Store serves the catalog and executes
// Plans; the handler turns GET query strings and POST projections into a PlanRequest,
// compiles it against the KM into a Plan (NewPlan), and shapes the answers.
//
// # Definitions
//
// Load reads models/*.yaml, one KM per file (see DESIGN.md for the format). A KM may extend
// another (extends: BASE): it inherits the base's records, relationships, KPIs and filters,
// and its own parts with the same ids replace the inherited ones. Inherited KPIs and filters
// are compiled again against the extending KM. Every error names the file, the line and
// the reason; unknown keys are errors, so typos do not pass silently. Record and field ids
// are identifiers (letters, digits, '_'); KM ids may also hold '.' and '-'.
//
// # Team scope
//
// A definition may list teams: [acme, ...] (KnowledgeModel.Teams); a KM without teams is
// visible to every team, one with teams only to a principal (principal.FromContext) whose Team
// is among them. A principal without a team, and a request without a principal (a host
// mounting the handler with no auth in front), see only KMs without teams. A KM that
// extends another and lists no teams has its base's. Stores hold every KM; the rule is
// applied above them by LookupModel and VisibleModels, which the KM handler, the OData
// handler and the MCP server use: a KM the caller may not see is 404 KM_MODEL_NOTFOUND with
// the same body as a KM that does not exist, and the list of KMs leaves it out.
//
// # The KPI language
//
// count(), count(F), countdistinct(F), sum(F), avg(F), min(F), max(F), median(F), each with
// an optional condition as last argument, ratio(condition), numeric literals, + - * / and
// parentheses. Conditions are filter expressions. The grammar and its parser live beside
// the filter parser in package query (query.ParseKPI, query.ParseAndBindKPI), with its
// error and position conventions. ${param} placeholders are filled from the KPI's
// parameters before parsing: inside quotes as text (quotes doubled), outside quotes only
// as one literal token, so a parameter value can never change the structure of the
// expression. Errors in a KPI expression, a predefined filter or a placeholder give the
// 1-based character position in the definition's text ("KPI K: position 14: ...").
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
//     KM_FIELD_NOTFOUND listing them all, unknown filters 400 KM_FILTER_NOTFOUND, records
//     without a path 400 KM_JOIN_NOT_POSSIBLE, records joined by several shortest paths
//     400 KM_JOIN_AMBIGUOUS naming the candidates ("ORDERS-ORDER_ITEMS-MATERIALS or
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
//   - Limits beyond the seed's: at most MaxFields selected fields and MaxFilterExpressions
//     filter expressions per request (400 GENERAL_CONSTRAINT_VIOLATION); error details
//     list at most ten unknown names.
//   - Bounded work: the request's context reaches the store (Store.Query), so a client
//     that goes away or a server shutting down stops the query (the memory store checks
//     it per filter predicate and between phases, the SQL stores cancel the running
//     statement, both within 100 ms). Data, query and summary
//     requests run under WithQueryTimeout (default 30 s): longer work is stopped and
//     answered 503 GENERAL_SERVICE_UNAVAILABLE "the query ran longer than the time limit
//     of 30s and was stopped; ...". Before running, a data, query or summary request's
//     plan (and that of QueryJSON, SummaryJSON and, through CheckCost, OData's) is
//     costed (Plan.Cost: rows x predicates for the filters, rows x fields x aggregates for
//     the grouping, rows from the store's RowCounter or AssumedRows) and refused beyond
//     WithMaxQueryCost (default DefaultMaxQueryCost) with 400
//     GENERAL_CONSTRAINT_VIOLATION naming the estimate, the budget and the part that is
//     too large (the filters or the grouping). An in list counts as one predicate: the
//     memory executor tests it with one pass.
//   - Successful answers carry Cache-Control: private, no-store (they hold a team's data
//     and are fetched with credentials).
//   - Store errors other than client errors, and panics, are 500 ADMIN_FATAL_ERROR with a
//     support id that is logged with the error.
//   - Summary (records/{id}/summary): fields (default: all of the record's) less
//     excludeFields are described, and the same fields make up the sample, so shape is
//     [rows after filters, len(fields)]; excluding every field is 400
//     GENERAL_PARAMETER_ILLEGAL. filters apply as on the record data endpoint, and
//     filterExpr is accepted as there. sampleSize is 1 to WithMaxSampleSize
//     (default DefaultMaxSampleSize, 5000; the 400 beyond it names the option; default
//     size DefaultSampleSize); the sample is the first rows in row order. Statistics are pandas'
//     describe(include='all') (package stats): integer and float fields numeric, all
//     others, booleans and times included, count/unique/top/freq with top written as the
//     data endpoints write the value ("true", "2025-01-05", RFC 3339, "10:30:00").
//     Statistics pandas gives as NaN are null. A Store implementing Summarizer computes
//     them itself; otherwise the handler reads all filtered rows and uses DescribeResult.
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
// # What a query means
//
// These rules make every backend (and the reference evaluator of storage/storetest) give
// the same answers; Plan's documentation restates them member by member.
//
// Relationships and paths. A relationship {from: C.f, to: P.k} relates child rows of C to
// the parent row of P with an equal, non-null key. The path between two records is the
// shortest in the relationship graph taken as undirected; several shortest paths are a
// 400 KM_JOIN_AMBIGUOUS naming them, none a 400 KM_JOIN_NOT_POSSIBLE. "Up" is from child
// to parent.
//
// Filters. The filter of a request is the AND of its predefined filters and filterExpr
// entries (OData: filterid and $filter), split into top-level AND conjuncts. A conjunct
// lives on its home: the record it names from which every other record it names is
// reached going up; it is evaluated on each home row, reading the other records' fields
// from the chain of parent rows (null where a parent is missing), with SQL's
// three-valued logic. A conjunct without a home (fields of sibling records) is a 400 that
// asks for separate expressions. A row of any record passes a conjunct when some home row
// connected to it along the path passes it: "my parent passes" going down from the home,
// "some child passes" going up, and so on through common parents. A row passes the
// filter when it passes every conjunct, and the filter applies to every row a query
// reads. Record endpoints take their own fields bare and RECORD.FIELD of any record;
// every predefined filter applies to every record it reaches.
//
// Rows without KPIs. At record level the rows are the record's rows that pass the
// filter, in row order. At KM level the rows are those of the row grain: the coarsest
// record that reaches every record of the selected fields (and of the searched fields)
// going up (ORDERS for ORDERS and CUSTOMERS fields, ORDER_ITEMS for ORDERS and
// MATERIALS), each with the fields of its parent chain. Fields of two sibling records
// (ACTIVITIES and ORDER_ITEMS) have no such record: 400 KM_JOIN_NOT_POSSIBLE saying that
// KPIs can combine them. A record-level request naming no field selects them all.
//
// KPIs. Each aggregate counts the rows of its grain: the record of its field; for ratio
// the home of its condition; for count() the KPI's record: (else the only record its
// expression names; otherwise the definition fails to load). Its tuples start at the
// grain rows that pass the filter and expand along the shortest paths to the records of
// the selected fields: one parent row going up, every child row going down, only rows
// that pass the filter, one null row where none does. Each tuple pairs a group (the
// selected fields' values) with a grain row, and each grain row counts once per group. An
// aggregate's condition is one conjunct (not split) carried to the grain: a grain row
// passes when some connected row of the condition's home passes it; the request's filter
// restricts the grain rows, not the rows the condition reads (a choice: the condition
// says which grain rows count, the filter which grain rows exist). Without fields there
// is one group, also over no rows. The groups are those of all aggregates; an aggregate
// without rows in a group is 0 for counts and null otherwise, and arithmetic with null or
// a division by zero is null. Without sort, groups come by the first aggregate that has
// rows in them, then by the least row number of those rows, then by their values
// ascending, nulls last; sort keys break ties the same way.
//
// Row key. A record-level request may ask for the record's row key (PlanRequest.RowKey;
// the OData service does for records that declare no key, the KM API never): the field
// RowField, an integer that is the row's 1-based position among all rows of its record
// in row order, whatever the filter, sort and page. It is selected, filtered and sorted
// like an integer field and is never null.
//
// Search. Without KPIs the searched fields (by default the selected string fields)
// belong to the row grain's records and rows come best score first. With KPIs a search
// looks at the selected fields only (searchField naming another field is a 400): a group
// matches when its values score enough, best score first.
//
// Quoted literals. A quoted text compared with a typed field is read as that type when
// it is a value of it ('true', '42', '2025-03-01'); F not eq followed by the empty quoted
// text, on a typed field, is "F is not null" (the Power Platform connector's "not
// empty"). See package query.
//
// The handler keeps no state between requests; authentication, permissions and rate
// limits belong to the auth middleware in front of it.
package km
