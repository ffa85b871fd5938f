// Package km is the domain of the Knowledge Model API: the KM types, the loader of KM
// definitions (models/*.yaml), the KPI expression language, the planner that compiles a
// request into a Plan (NewPlan: joins, filters, KPIs, search, sort, paging), the request
// layer every surface asks (Service), the cost rule
// (Plan.Cost, CheckCost), the Store interface a host implements (and the optional
// Summarizer and RowCounter), and the summary types (Summary, DescribeResult).
//
// A Knowledge Model (KM) holds records (tables with typed fields), relationships that join
// them many-to-one, KPIs (aggregations written in the KPI language) and predefined filters
// (filter expressions). Load reads the definitions; a Store serves the catalog and executes
// Plans: a SQL backend translates them, and package km/exec, the in-memory columnar
// executor the memory backend runs, reads the Plan itself (the executor sits with the
// plan it runs; no second request model stands between them). The KM API's query-string
// grammar is the adapters' (internal/kmparams), not the domain's. The package imports no
// net/http: the HTTP API (the handler for /intelligence/api,
// its parameters, the summary endpoint and the OpenAPI document) is package km/kmhttp, so a
// backend or a program using only a Store links no HTTP server, OpenAPI or JWT code.
// Refusals of the planner are *problem.Problem errors (400 or 404 with an error code such
// as KM_FIELD_NOTFOUND) or *query.Error (400); the adapters write them.
//
// # The request layer
//
// Service is the one layer between the surfaces and a Store, as sql.DB is over its
// driver. The KM API (km/kmhttp), OData (and each part of a $batch), the MCP tools and
// the conformance suite read their protocol's input into a portable Request (or
// SummaryRequest) and hand it to the Service with the caller's context; no surface drives
// another or reads another's output. The Service alone checks the text (CheckText: no
// NUL, valid UTF-8, which PostgreSQL alone would refuse), looks the KM up as the caller
// sees it (Model: LookupModel), compiles the plan (Prepare: NewPlan), caps the page
// (WithMaxPageSize), refuses plans beyond the cost budget and the memory bound with the
// store's sizes (Run: CheckCost, WithMaxQueryCost, WithMaxQueryMemory), bounds the time
// (WithQueryTimeout; Budget lets one budget cover several requests, as a $batch) and
// passes the caller's context to the store, so a caller that leaves stops the work. Its
// errors are client errors (AsProblem), errors wrapping ErrTimeLimit, the caller's context
// error, or the store's: the adapters answer the last three alike (web/routing).
// A host builds one Service and hands it to every surface, so each applies the same limits.
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
// sum, avg and median take numeric fields; count, countdistinct, min and max take fields
// of every type. A min or max has its field's type (a date, a date-time, a time, a string,
// a boolean), which every surface reports and formats as it does the field's values; the
// order is the one sort and the filter language's lt use: numbers and temporal values by
// value, strings byte by byte (case-sensitive, 'Z' before 'a' before 'é'), booleans false
// before true, so that min of booleans is "all true" (SQL's bool_and) and max "any true"
// (bool_or). Such an aggregate cannot take part in arithmetic (max(D) - min(D) fails the
// load with the file, the line and the reason).
//
// # Limits and cost
//
// A request selects at most MaxFields fields and combines at most MaxFilterExpressions
// filter expressions (400 GENERAL_CONSTRAINT_VIOLATION); error details list at most ten
// unknown names. Before running, an adapter costs the plan (Plan.Cost: rows x predicates
// for the filters, rows x fields x aggregates for the grouping, rows from the store's
// RowCounter or AssumedRows) and CheckCost refuses it beyond a budget with 400
// GENERAL_CONSTRAINT_VIOLATION naming the estimate, the budget and the part that is too
// large (the filters or the grouping). An in list counts as one predicate. Over a store
// that runs plans in memory (MemorySizer) the memory the plan holds is estimated too
// (Cost.Memory: groups x values, distinct keys, sort buffers) and refused beyond
// Limits.Memory with the same code, saying what to change.
//
// # What a query means
//
// These rules make every backend (and the reference evaluator of storage/storetest) give
// the same answers; Plan's documentation restates them member by member.
//
// Relationships and paths. A relationship {from: C.f, to: P.k} relates child rows of C to
// the parent row of P with an equal, non-null key. "Up" is from child to parent. P.k must
// hold each non-null value at most once (nulls join nothing), so that a child row joins
// one parent and a KPI counts it once: every store refuses data breaking this when it is
// loaded, with ErrDuplicateTarget (a *DuplicateTargetError naming the relationship and
// one value held twice), and a query meeting such data anyway (a table a host replaced
// under a KM) is the 409 GENERAL_CONSTRAINT_VIOLATION with the same message. One rule
// chooses the path between two records, whatever needs it (listed rows, KPIs, filters,
// sort, search): the shortest in the relationship graph taken as undirected wins; among
// equally short ones, a lookup chain wins over the paths that change direction; a tie
// left is a 400 KM_JOIN_AMBIGUOUS naming the paths, no path a 400 KM_JOIN_NOT_POSSIBLE.
// A lookup chain is a path whose steps all go the same way: read from one of its ends,
// every step is a many-to-one lookup (INVOICES -> PO_LINES -> PURCHASE_ORDERS wins over
// INVOICES -> VENDORS <- PURCHASE_ORDERS). SPEC-NOTES says "a path of many-to-one steps
// only"; the rule is read from either end (a choice) so that the path from a to b is the
// path from b to a taken backwards, as a filter carried from its record to another and a
// KPI expanded the other way must agree. Two lookup chains of one length therefore tie
// even when one goes up from a and the other up from b.
//
// Filters. The filter of a request is the AND of its predefined filters and filterExpr
// entries (OData: filterid and $filter), split into top-level AND conjuncts. A conjunct
// lives on its home: the record it names whose path (by the rule above) to every other
// record it names goes only up; it is evaluated on each home row, reading the other
// records' fields from the chain of parent rows (null where a parent is missing), with
// SQL's three-valued logic. A conjunct without a home (fields of sibling records) is a 400 that
// asks for separate expressions. A row of any record passes a conjunct when some home row
// connected to it along the path passes it: "my parent passes" going down from the home,
// "some child passes" going up, and so on through common parents. A row passes the
// filter when it passes every conjunct, and the filter applies to every row a query
// reads. Record endpoints take their own fields bare and RECORD.FIELD of any record;
// every predefined filter applies to every record it reaches.
//
// A conjunct may hold quantified conditions (query.Quantified, OData's any and all)
// anywhere under its and, or and not: a condition on a row of a record P over its related
// rows of a record C that P reaches going down only (Quantifier). It reads P like a
// field of P (P is the home or one of its parents), and its value is true or false,
// never unknown: any is true when some related row passes the body (true), all when no
// related row fails it (false or unknown), so over no related rows any is false and all
// true. The body is placed on C as a conjunct is on its home (C's fields and those of
// its parents), and may hold quantified conditions of its own.
//
// Rows without KPIs. At record level the rows are the record's rows that pass the
// filter, in row order (with PlanRequest.Related they may also show and sort by fields
// of the records the record reaches going up, read as at KM level). At KM level the rows are those of the row grain: the coarsest
// record whose path (by the rule above) to every record of the selected fields (and of
// the searched fields) goes only up (ORDERS for ORDERS and CUSTOMERS fields, ORDER_ITEMS
// for ORDERS and MATERIALS), each with the fields of its parent chain. The filter
// restricts every record: a parent row that does not pass it is read as no parent (its
// fields and those of every row reached through it are null, and sort so), so the rows
// are exactly the groups of the same request with a KPI counting the grain's rows.
// Fields of two sibling records (ACTIVITIES and ORDER_ITEMS) have no such record: 400
// KM_JOIN_NOT_POSSIBLE saying that KPIs can combine them. A record-level request naming
// no field selects them all.
//
// KPIs. Each aggregate counts the rows of its grain: the record of its field; for ratio
// the home of its condition; for count() the KPI's record: (else the only record its
// expression names; otherwise the definition fails to load). Its tuples start at the
// grain rows that pass the filter and expand along the paths (by the rule above) to the
// records of the selected fields: one parent row going up, every child row going down,
// only rows that pass the filter, one null row where none does. Each tuple pairs a group (the
// selected fields' values) with a grain row, and each grain row counts once per group. An
// aggregate's condition is one conjunct (not split) carried to the grain: a grain row
// passes when some connected row of the condition's home passes it; the request's filter
// restricts the grain rows, not the rows the condition reads (a choice: the condition
// says which grain rows count, the filter which grain rows exist). Without fields there
// is one group, also over no rows. The groups are those of all aggregates; KPIs that
// aggregate nothing (constants such as "3") have the groups the same request lists
// without KPIs, as SQL's SELECT f, 3 FROM t GROUP BY f does (a 400 KM_JOIN_NOT_POSSIBLE
// where those rows cannot be listed), and their value in every group. An aggregate
// without rows in a group is 0 for counts and null otherwise, and arithmetic with null or
// a division by zero is null. Without sort, groups come by the first aggregate that has
// rows in them, then by the least row number of those rows, then by their values
// ascending, nulls last; sort keys break ties the same way.
//
// Numbers. Every backend computes a KPI to the same value. The sum of an integer field is
// an integer and exact: the true sum of the values whenever it fits in a signed 64-bit
// integer, whatever the order of the additions and however far the partial sums stray
// (9007199254740992 + 1 is 9007199254740993; 2^63-1, 29 and -(2^63-1) give 29); a sum
// beyond that range is null, as no 64-bit integer holds it (the KM API writes an infinite
// float null too). The avg of an integer field is the double nearest to the exact mean
// (within 1e-9 relative on SQLite), also where the sum does not fit. A sum or avg of a
// float field is the double nearest to the true sum (or mean) of the values, ±Inf where
// the sum goes beyond a double's range; on memory and SQLite also where only a partial
// sum does (1.5e308 + 1.5e308 - 1.5e308 is +Inf there, 1.5e308 on PostgreSQL), and the
// avg of doubles whose sum leaves the range is ±Inf on every backend. A median is the middle value, or the double nearest to the mean of
// the middle two, finite also where their sum in doubles overflows (pandas' median is
// inf there). Arithmetic between aggregates and numbers is in doubles (IEEE 754):
// a result beyond a double's range is ±Inf (null in the KM API, INF in OData) and one too
// small for a double is 0, never an error; a division by zero is null. A zero is shown
// as 0 on every surface, whatever its sign: -0 equals 0 in every comparison, grouping and
// distinct, SQLite stores -0.0 as 0, and among equal zeros a min picks whichever its
// backend meets first, so the sign would only make backends read differently.
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
// matches when its values score enough, best score first. A field named more than once
// (searchField repeated, MCP's search.fields) is searched once: the number of names has
// no limit, and the stores see each field once.
//
// Unknown ids. An unknown record, field, KPI, filter or KPI parameter id is answered with
// the closest known ids ("did you mean ORDER_ID?"; see SuggestField and DidYouMean): the
// ids equal to it but for case, else those within a small edit distance, else the same
// field id on another record, related records first; at record level RECORD.FIELD of the
// record itself suggests the bare id. The KM API, OData and MCP resolve ids here, so they
// word it alike; a filter's unknown field gets it through query.Suggester.
//
// Quoted literals. A quoted text compared with a typed field is read as that type when
// it is a value of it ('true', '42', '2025-03-01'); F not eq followed by the empty quoted
// text, on a typed field, is "F is not null" (the Power Platform connector's "not
// empty"). See package query.
package km
