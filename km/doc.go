// Package km serves the Knowledge Model API from a host's data: the KM types, the loader of
// KM definitions (models/*.yaml), the KPI expression language, the Store interface a host
// implements (and the optional Summarizer), and NewHandler, the http.Handler for
// /intelligence/api, including the record summary and the generated OpenAPI spec (Spec).
//
// A Knowledge Model (KM) holds records (tables with typed fields), relationships that join
// them many-to-one, KPIs (aggregations written in the KPI language) and predefined filters
// (filter expressions). Load reads the definitions; a Store serves the catalog and executes
// a Query; the handler turns GET query strings and POST projections into Queries, checks
// them against the KM, and shapes the answers.
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
// # The KPI language
//
// count(), count(F), countdistinct(F), sum(F), avg(F), min(F), max(F), median(F), each with
// an optional condition as last argument, ratio(condition), numeric literals, + - * / and
// parentheses. Conditions are filter expressions (package query). ${param} placeholders are
// filled from the KPI's parameters before parsing: inside quotes as text (quotes doubled),
// outside quotes only as one literal token, so a parameter value can never change the
// structure of the expression.
//
// # Behaviours chosen where the specification is silent
//
//   - Routing: paths are matched below BasePath; a trailing slash is ignored; anything else
//     is 404 GENERAL_NOTFOUND_PATH. Data endpoints take GET and POST, all others GET; another
//     method is 405 GENERAL_METHOD_NOT_ALLOWED with an Allow header.
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
//   - Record endpoints are single-table: a predefined filter applies there only when all
//     its fields belong to that record (400 GENERAL_PARAMETER_ILLEGAL otherwise). kpis at
//     record level is 400 GENERAL_PARAMETER_ILLEGAL.
//   - KM endpoints join the records a request touches (fields, filters, search, KPI fields
//     and conditions) from the one record that reaches all others through relationships;
//     the rows are that record's. Without such a record: 400 KM_JOIN_NOT_POSSIBLE naming
//     two records that cannot be joined. Unknown fields and KPIs: 400 KM_FIELD_NOTFOUND
//     listing them all; unknown filters: 400 KM_FILTER_NOTFOUND.
//   - KPI parameters can be set per request: GET kpiParam=KPI_ID.param:value (repeatable),
//     POST projection member kpiParameters {"KPI_ID": {"param": "value"}}; they apply only
//     to KPIs the request selects.
//   - Header type of a KPI is what the store computes (the memory store: integer for
//     count and countdistinct, the field's type for min and max, float otherwise).
//   - POST bodies are JSON: a Content-Type other than application/json or a "+json"
//     type (text/plain, application/xml, a form) is 415 GENERAL_UNSUPPORTED_MEDIA_TYPE;
//     a missing Content-Type is read as JSON. Unknown members are 400 GENERAL_PARAMETER_ILLEGAL; a member of the wrong
//     JSON type is 400 GENERAL_PARAMETER_MISSMATCH; beyond Options.MaxBodyBytes, 413
//     GENERAL_PAYLOAD_TOO_LARGE. filterExpr entries of a POST are split at top-level
//     commas as on GET.
//   - Fuzzy search: without searchField the searched fields are the selected string fields
//     (at record level with no fields: all string fields); searching a non-string field is
//     400. The default precision is DefaultSearchPrecision.
//   - Limits beyond the seed's: at most MaxFields selected fields and MaxFilterExpressions
//     filter expressions per request (400 GENERAL_CONSTRAINT_VIOLATION); error details
//     list at most ten unknown names.
//   - Successful answers carry Cache-Control: private, no-store (they hold a team's data
//     and are fetched with credentials).
//   - Store errors other than client errors are 500 ADMIN_FATAL_ERROR with a support id
//     that is logged with the error.
//   - Summary (records/{id}/summary): fields (default: all of the record's) less
//     excludeFields are described, and the same fields make up the sample, so shape is
//     [rows after filters, len(fields)]; excluding every field is 400
//     GENERAL_PARAMETER_ILLEGAL. filters apply as on the record data endpoint, and
//     filterExpr is accepted as there. sampleSize is 1 to Options.MaxSampleSize
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
// The handler keeps no state between requests; authentication, permissions and rate
// limits belong to the auth middleware in front of it.
package km
