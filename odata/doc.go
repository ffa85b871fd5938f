// Package odata serves each Knowledge Model of a km.Store as a read-only OData v4 service,
// the beta OData interface of the Knowledge Model API, for BI tools and OData clients.
//
// The package is an HTTP adapter of package km, as km/kmhttp is: it stays one package (its
// EDM, URL grammar and JSON format are all OData over HTTP), reads OData's options into
// the domain's portable request (km.Request: $select as fields, $filter bound against the
// KM as Where, $orderby, $skip, $top, $count) and asks the request layer (km.Service),
// which checks, plans, costs and bounds it as for the KM API and MCP. Query strings are
// read with the same decoder as the KM API (internal/rawquery).
//
// NewHandler returns an http.Handler for the paths below BasePath:
//
//	GET /intelligence/api/odata/{km_id}.svc                         service document
//	GET /intelligence/api/odata/{km_id}.svc/$metadata               CSDL XML or CSDL JSON
//	GET /intelligence/api/odata/{km_id}.svc/{record_id}_entries     entity set
//	GET /intelligence/api/odata/{km_id}.svc/{record_id}_entries/$count
//	GET /intelligence/api/odata/{km_id}.svc/{record_id}_entries(key)  entity by key
//	POST /intelligence/api/odata/{km_id}.svc/$batch                  GET requests in a batch
//
// The schema has the namespace ODataKnowledgeModel and the container Container; each
// record is an entity type named by the record id, with one property per field, and an
// entity set named {record_id}_entries. Field types map to EDM types: string Edm.String,
// integer Edm.Int64, float and number Edm.Double, boolean Edm.Boolean, date Edm.Date,
// datetime and timestamp Edm.DateTimeOffset, time Edm.TimeOfDay (both temporal types with
// Precision 6, the microseconds the values carry). Every property states its nullability:
// the key is not nullable, every other property is, since any cell of a record may be
// null. The key is the record's declared key field; a record that declares none gets a
// generated key property ROW_NUMBER (Edm.Int64; _ROW_NUMBER, with as many underscores as
// needed, when the record has a field of that name), see below.
//
// Entity sets take $select, $filter (the grammar and code of the filterExpr parameter:
// query.Parse and query.Bind, with query.ODataSyntax: operators, functions and
// true/false/null in any case as OData 4.01 has it, and numeric literals with the type
// suffixes older clients write, 1000D, 5L, 1.5M, 2F; the canonical functions and
// arithmetic, see "Functions" in the query package; now() is the handler's clock read once
// per request), $orderby (property or value expression over the type's properties, such
// as tolower(STATUS) or year(DAY) add 1, then [asc|desc],
// the direction in any case, comma list), $top, $skip,
// $count=true, $expand (see "Navigation properties"), $format and filterid (ids of
// predefined KM filters, ANDed with $filter).
// Answers are OData JSON with minimal metadata (@odata.context, @odata.count, value,
// @odata.nextLink) or Atom feeds. The answer of every request, errors included, carries
// OData-Version: 4.0. Errors, whatever the format asked for, are one JSON object
// (application/problem+json) carrying both shapes: the Knowledge Model API's problem
// members (title, status, detail, errorCode, type) and OData's error object,
// "error": {"code" (the errorCode), "message" (the detail), "target" (the query option at
// fault, when one is), "details" ([])}, so that OData clients show the message. The
// body goes as application/json instead when the Accept header admits application/json
// but not problem+json (nor */*): OData clients such as @odata/client parse only that.
// Valid OData outside what the service implements (query.KindUnsupported: functions such
// as matchesPattern, has, all, parameter aliases ...) is 501 Not Implemented with
// code FILTER_NOT_SUPPORTED, as OData's Minimal conformance level has it; every other
// filter error is 400.
//
// # Navigation properties
//
// Each relationship of the KM (FROM.FIELD -> TO.FIELD, many-to-one) is a pair of
// navigation properties in $metadata (CSDL XML and JSON), each the other's Partner, with
// a NavigationPropertyBinding on the entity sets: a to-one property on FROM's entity type
// named TO (with a ReferentialConstraint FIELD -> TO's key when the relationship refers to
// the key), and a to-many (collection) property on TO's entity type named FROM. Where two
// properties of a type would share a name (two relationships both ways between two
// records) or a name is a property's, the to-one property is TO_via_FIELD and the to-many
// one FROM_by_FIELD (FIELD: the referring field); underscores are prepended to a name
// that still collides.
//
// $filter takes path expressions through to-one navigation properties
// (ORDERS_entries?$filter=CUSTOMERS/COUNTRY eq 'DE', or ORDERS/CUSTOMERS/COUNTRY from
// the items): a path names the related record's field, exactly as the KM-native
// CUSTOMERS.COUNTRY does, and filters through the relationships as every KM filter does
// (see package km): a row passes when its related row passes, so an order without a
// customer passes neither CUSTOMERS/COUNTRY eq 'DE' nor CUSTOMERS/COUNTRY eq null. The
// path must be the one the KM joins the two records along (its
// shortest, unambiguous path); another path is 501, and so is one that leads back to its
// own record. A collection-valued path outside any/all is 400.
//
// $orderby takes the same paths through to-one navigation properties
// (ORDERS_entries?$orderby=CUSTOMERS/COUNTRY desc,ORDER_ID): each entity is sorted by the
// value of its related entity, read as a KM-level request reads the related record's
// field on a listed row, so an entity without a related entity (or whose related entity
// fails the filter) sorts as null: last, in both directions. A path through a to-many
// property is 400: a collection has no single value to sort by.
//
// PATH/any(x: BODY) and PATH/all(x: BODY) on a to-many path
// (ORDERS_entries?$filter=ITEMS/any(i: i/QUANTITY gt 5)) are served anywhere in $filter:
// ANDed, under or and not (CUSTOMERS_entries?$filter=COUNTRY eq 'DE' or not
// ORDERS/all(o: o/EXPRESS eq true)). any holds for an entity with at least one related
// entity for which BODY is true; all holds when BODY is true for every related entity;
// PATH/any() holds for an entity with at least one related entity. In BODY, x/FIELD and
// x/NAV/FIELD are the related entity's (x/ROW_NUMBER the generated key of a related
// entity without a key of its own; the generated key of the outer entity or of an
// enclosing lambda's variable is 501 there), other names the outer entity's; a BODY of
// several conditions holds for one related entity. Nulls follow the filters'
// three-valued logic: any counts a related entity only where BODY is true (a null BODY
// does not count), and all fails on a related entity where BODY is false or null (no
// related entity where BODY is not true). Neither is ever null: over an entity with no
// related entities any is false and all is true, as OData says, so not any and not all
// are their complements. The plan evaluates them as a correlated EXISTS (any) or NOT
// EXISTS (all) over the related record (km.Quantifier). A path may start with to-one
// properties (ORDER_ITEMS_entries?$filter=ORDERS/ACTIVITIES/any(a: ...)), quantifying
// over the related entities of the entity it reaches; its BODY then cannot read the
// outer entity's properties (501 FILTER_NOT_SUPPORTED). Lambdas nest on a path from an
// enclosing lambda's variable (CUSTOMERS_entries?$filter=ORDERS/any(o:
// o/ORDER_ITEMS/any(i: i/QUANTITY gt 5 and o/EXPRESS eq true))): the inner BODY reads
// its own variable, the enclosing ones' and the outer entity's properties, unless a
// lambda between them has a to-one prefix (501, as above); a lambda inside a BODY on a
// path from the outer entity (ORDERS/any(o: ORDERS/any(...))) is 501
// FILTER_NOT_SUPPORTED.
//
// $expand follows navigation properties, in JSON and Atom: a to-one property is the
// related entity or null, a to-many one the array of related entities
// (CUSTOMERS_entries?$expand=ORDERS($select=ID,NET;$filter=NET gt 0;$orderby=NET
// desc;$top=2;$count=true)). Nested $select, $filter, $orderby, $top, $skip and $count
// (NAV@odata.count) are served on to-many properties, $select and $filter on to-one ones
// (a related entity that fails the filter is null; a nested $filter takes lambdas and
// paths as $filter does: ORDERS($filter=EVENTS/any(e: e/ACTIVITY eq 'Ship'))), and nested
// $expand on both, with its
// own nested options, down to MaxExpandLevels levels
// (CUSTOMERS_entries?$expand=ORDERS($top=1;$expand=EVENTS($orderby=AT))); beyond them the
// answer is 400 GENERAL_CONSTRAINT_VIOLATION. An entity addressed by key takes $expand
// too. For a page of entities each expanded property costs one km.Request for the related
// record filtered by an in list of the page's join values (lists of at most the filter
// limits' MaxIn values, each paged at the Service's page size), merged in Go; a nested
// property costs one more, over the related entities its parents show: one request per
// expanded property per level, never a request per entity, each through the Service and
// under the answer's time limit. The related entities of one answer, all levels together,
// are bounded by WithMaxExpandedEntities (default DefaultMaxExpandedEntities); an answer
// that would bring more is 400 GENERAL_CONSTRAINT_VIOLATION (target $expand) saying to ask
// for fewer entities per page (Prefer: odata.maxpagesize or $top), a narrower nested
// $filter or fewer properties, rather than a nested next link few clients follow. For a
// single parent (an entity by key, a page of one) the nested $skip, $top and $count of a
// to-many property are asked of the store, so that SET('K')?$expand=NAV($top=10) reads ten
// related entities however many there are. The context URL lists expanded properties as
// OData 4.01 does: SET(ID,ORDERS(ID,NET,EVENTS())), NAV() where nothing is selected or
// expanded inside.
//
// A navigation property is also addressable after an entity, one step: SET(key)/NAV. A
// to-many property answers as the target's entity set restricted to the related
// entities, with every option of an entity set but $apply (501), its next links
// continuing the path (CUSTOMERS_entries('C1')/ORDERS?$filter=NET gt 100&$top=10); a
// to-one property answers as the related entity (its $select, $expand and $format), or
// 204 No Content when it leads to none. The entity with the key must exist (404
// ODATA_ENTITY_NOTFOUND). A property after an entity (SET(key)/NAME, /$value), a
// navigation followed further (SET(key)/NAV/NAV2, SET(key)/NAV(key2)) and /$count after a
// navigation property are 501, saying to ask $select or SET(key)/NAV with options; an
// unknown name is 404. Each costs one store request for the entity's join value and one
// for the related entities.
//
// $levels (a nested option, NAV($levels=N), as OData defines it) recurses through a
// navigation property whose target is its own entity type. The KM never has one: km's
// loader refuses a relationship that joins a record with itself. So $levels=1 and
// $levels=max (the hierarchy's full depth, which is one level) expand once, and
// $levels=2 and more are 400 GENERAL_PARAMETER_ILLEGAL saying the property cannot
// recurse; $levels outside $expand is 400. "*", paths, $ref, other nested options and
// $expand with $apply are 501 ODATA_OPTION_NOT_SUPPORTED; $metadata says
// ExpandRestrictions Expandable true, MaxLevels MaxExpandLevels (4).
//
// In Atom, as OData's Atom format writes them, each expanded property of an entry is a
// link rel="http://docs.oasis-open.org/odata/ns/related/NAV" (type entry or feed, title
// NAV, href SET(key)/NAV) holding m:inline: the related entry, nothing for a null to-one
// property, or an inline feed (id SET(key)/NAV, m:count when asked) of the related
// entries, each with its own expanded links.
//
// # Behaviours chosen where the specification is silent
//
//   - Formats: $format takes json, xml, atom or the media types application/json,
//     application/xml, application/atom+xml (parameters allowed); anything else is 415
//     GENERAL_UNSUPPORTED_MEDIA_TYPE. Without $format the Accept header decides (q values
//     honoured, */* meaning the default); an Accept header admitting neither JSON nor XML
//     is 415 as well. Defaults: JSON for the service document and entity sets, XML for
//     $metadata, as the OData protocol requires of $metadata. For $metadata, XML also wins
//     over a preferred JSON whenever Accept admits XML at all: CSDL JSON exists only from
//     4.01 on, and 4.0 clients send one Accept header listing JSON first for every
//     request; only $format=json or an Accept header without XML gives CSDL JSON.
//   - Versions: CSDL XML is EDMX 4.0, and CSDL JSON states $Version 4.0 too, the version
//     of the payloads (the CSDL JSON Schema admits it). In CSDL JSON every property names
//     its $Type and $Nullable although both have defaults there. A request whose
//     OData-MaxVersion is below 4.0 (or not a version) is 400 ODATA_VERSION_NOT_SUPPORTED
//     (GENERAL_PARAMETER_MISSMATCH); 4.01 and above are served 4.0.
//   - Capabilities: $metadata references the OASIS Capabilities vocabulary and says what
//     the service does: every entity set has InsertRestrictions/Insertable,
//     UpdateRestrictions/Updatable and DeleteRestrictions/Deletable false; the container
//     has BatchSupported true and FilterFunctions listing every function, arithmetic
//     operator and lambda operator $filter supports (contains ... ceiling, add ... mod,
//     any, all).
//   - JSON control information: odata.metadata=minimal (the default), none (no context
//     URL) or full (also @odata.type, @odata.id and @odata.editLink per entity, and
//     NAME@odata.type for Int64, Date, DateTimeOffset and TimeOfDay properties), from
//     $format's or the Accept header's media type parameters, echoed in Content-Type.
//     Another value is 415. IEEE754Compatible=true writes Int64 values and @odata.count
//     as strings. The AtomPub service document is application/atomsvc+xml.
//   - Query option names are matched case-insensitively, with or without "$" (OData
//     4.01). A system option given twice is 400 ODATA_OPTION_REPEATED; a valid OData
//     option the service lacks ($compute, $skiptoken, ...) is
//     501 ODATA_OPTION_NOT_SUPPORTED (OData's Minimal conformance level), and $metadata
//     says so (Capabilities ComputeSupported false, TopSupported and SkipSupported
//     true, ExpandRestrictions Expandable true with MaxLevels 4 on every set); "expand"
//     without "$" stays a custom option; parameter aliases
//     (@p) are 400 ODATA_OPTION_NOT_SUPPORTED; an unknown "$" option is 400
//     GENERAL_PARAMETER_ILLEGAL; other custom options are ignored, as OData requires.
//     The service document and $metadata take $format only.
//   - The query string is split at "&" only, so a ";" inside $filter survives. A "+" is
//     a space, as form encoding has it (clients that send $filter=A+eq+1 work), except as
//     the sign of a time offset after a time of day (T15:48+03:00 needs no escaping); %2B
//     is always a plus (rawquery.Parse, shared with the Knowledge Model API). In
//     $select and $orderby a plus separates words too, since no property name holds one;
//     $format=application/atom+xml works unencoded, since no media type holds a space.
//   - $select always yields the key property as well, so that every entity keeps its
//     identity; the context URL lists the selection as asked. $orderby may name any
//     property, selected or not, the generated key too. Nulls sort last in both
//     directions and ties keep row order, as on the data endpoints.
//   - $apply (OData Extension for Data Aggregation 4.0, see ParseApply) is compiled into
//     one km.Request at the Knowledge Model level, the request of the KM API's
//     .../data?fields=...&kpis=...: grouping properties (a property of the set,
//     RECORD.FIELD, or a path along navigation properties, to-one or to-many, that is
//     the path the KM joins along; another path, or one back to the set's record, is
//     501) are its fields, custom aggregates its KPIs, "P with
//     sum|min|max|average|countdistinct as A" (min and max of a P of any type, with P's
//     type and the order of package km: strings byte by byte, false before true) and
//     "$count as A" KPIs made for the
//     request (km.KnowledgeModel.AdHocKPI), filter(...) steps and filterid its filters;
//     so the plan and the grain rule are those of /data on every store. The input set
//     is the entity set: where P is a property of another record (CUSTOMERS/CREDIT_LIMIT
//     on ORDERS_entries), the request also has a condition true for every entity of the
//     set, which restricts the other records to the rows related to the set's entities
//     (the KM's filter propagation), so that customers without orders neither count nor
//     make groups. Without a custom aggregate the groups are those of the set's entities:
//     where no aggregate counts them (every one reads another record), the request also
//     counts them, unanswered, so that a group no aggregate reads a row of (the null group
//     of CUSTOMERS/COUNTRY holding the orders without a customer, beside an aggregate of
//     CUSTOMERS/NAME) is there, its aggregates null (0 for a count), as groupby alone and
//     $count give it. A custom aggregate answers what /data answers, so beside one the
//     condition goes into the aggregate of P instead (an aggregate's own condition, see
//     package km): P still reads the related entities only, and the groups are those
//     /data gives. topcount and bottomcount rank the groups by an alias or grouping
//     property; groupby(...)/aggregate($count as A) is one entity with the number of
//     groups (ag-grid-odata's count; $orderby is ignored there); $orderby, $top, $skip and
//     $count=true act on the groups, paged like entity sets; $filter on grouping
//     properties keeps those groups (served as a filter before the grouping), except that
//     one holding for a null grouping property of another record (CUSTOMERS/COUNTRY eq
//     null) is 501: that null group also holds the entities without a related entity,
//     which a filter before the grouping leaves out.
//     concat(T1,T2,...), last and after filter steps only (which then apply to every
//     branch), answers the entities of each branch (one of the forms above) one branch
//     after the other, each branch one km.Request; $skip, $top, $count and paging act on
//     the concatenation, and the context URL lists every property once; $orderby and
//     $filter beside it, concat inside concat or before other steps are 501. Other
//     transformations, "from", aggregated expressions (NET mul 2 with sum as A),
//     custom aggregation methods, rollup, filters
//     after the aggregation, $filter on aliases, and $select or $search beside $apply
//     are 501 once the text is well formed by the aggregation ABNF; malformed text (a missing alias, "from" without "with", a
//     grouping path ending in a type cast, nest without "as") is 400. The official
//     aggregation ABNF test cases run against the parser (DEVELOPERS.md). Grouping along
//     a to-many navigation property is answered with the KM's grain rule, as /data
//     answers a field of a to-many related record. $metadata annotates every
//     set with Aggregation.ApplySupported (its Transformations listing concat too) and
//     one Aggregation.CustomAggregate per KPI.
//   - $search is the Knowledge Model API's fuzzy search (km.SearchRequest, searchTerm):
//     one word or one phrase in double quotes (\" and \\ escape), searched with the
//     default precision (km.DefaultSearchPrecision) in the string and time properties of
//     the answer, as searchTerm without searchField searches the selected fields; without
//     $orderby the best matches come first. AND, OR, NOT, several words and parentheses
//     are 501 (text no searchExpr produces, such as an unclosed phrase, a double quote
//     inside a word or parentheses that do not pair, is 400), and
//     Capabilities.SearchRestrictions on every set says Searchable with
//     UnsupportedExpressions AND, OR, NOT and group.
//   - filterid may be repeated or comma-separated; an unknown one is 400
//     KM_FILTER_NOTFOUND. filterid and $filter may use fields of other records
//     (RECORD.FIELD in $filter): they apply through the KM's relationships as on the
//     record data endpoints (package km, "What a query means"), e.g. the orders of German
//     customers with $filter=CUSTOMERS.COUNTRY eq 'DE' on ORDERS_entries.
//   - Server-driven paging: at most WithMaxPageSize entities per answer (or fewer
//     when the client sends Prefer: odata.maxpagesize=N, acknowledged with
//     Preference-Applied), then @odata.nextLink (Atom: link rel="next"): the same query
//     string with $skip advanced and what remains of $top. The store is asked for the
//     full count alongside the page to know whether there is a next one, and a $skip
//     that is no multiple of the page is served from the smallest store page that
//     covers it.
//   - The generated key of a record without a declared key is the row's 1-based position
//     in its record (row order: the order of the CSV file, or of the SQL source's
//     kmkit_row), the same for a row whatever $filter, filterid, $orderby, $skip, $top or
//     $count, so clients that cache entities by key never mix rows. It is the plan's row
//     key (km.RowField), computed by the store: the memory backend from the row index,
//     the SQL backend as kmkit_row + 1, which is the position when kmkit_row numbers the
//     rows from 0 as sqlstore's import does (a host's own table must provide kmkit_row
//     anyway; the generated key is then kmkit_row + 1, unique and stable, and the
//     position only if kmkit_row is). It is an ordinary Edm.Int64 property for $filter
//     (ROW_NUMBER gt 10, ROW_NUMBER in (3,5,7), comparisons with the other properties)
//     and $orderby (ROW_NUMBER desc), never null. The Knowledge Model API does not expose
//     it.
//   - Entities by key: SET('SO-1') or SET(KEY='SO-1'), the key literal as the payloads
//     write it (the ids and edit links of Atom entries, @odata.id of full metadata,
//     resolve); the literal is read by the $filter grammar and must be one value of the
//     key's type (400 otherwise). The answer is the entity (JSON with the context
//     SET/$entity, or an Atom entry document); no row with the key is 404
//     ODATA_ENTITY_NOTFOUND. Only $select and $format apply. A generated key is a
//     positive integer (5, 5L or ROW_NUMBER=5; 400 otherwise), the row at that position
//     of the record, the entity every payload identifies by it. Properties of an entity
//     and navigation are not addressable (404).
//   - Values: Int64 and Double are JSON numbers (Int64 as strings with
//     IEEE754Compatible=true in $format or Accept; NaN and infinities as "NaN", "INF",
//     "-INF"); dates YYYY-MM-DD, date-times RFC 3339 in UTC, times of day hh:mm:ss with
//     the fraction when there is one. In Atom, strings that XML 1.0 cannot carry (control
//     characters) have those characters replaced by U+FFFD. Atom entries are updated at
//     the time of the answer and have the entity's canonical URL as their id.
//   - Absolute URLs (context, next links, Atom ids) start with WithBaseURL, or with
//     the request's scheme and Host.
//   - $batch (POST) runs GET requests, which CAP sends for URLs longer than 1028
//     characters: a JSON batch (application/json, {"requests": [{"id", "method", "url",
//     "headers"}]}, OData 4.01) answered {"responses": [{"id", "status", "headers",
//     "body"}]} with JSON bodies inline and others as strings, or a multipart batch
//     (multipart/mixed, application/http parts, OData 4.0) answered part for part with
//     their Content-IDs. Request URLs are relative to the service root, or absolute
//     paths or URLs (whose host is ignored). Requests run in order as the batch's
//     caller, whom the authentication in front of the handler admitted: OData leaves
//     authentication to HTTP, and a request inside a batch is not authenticated on its
//     own, so a request whose credential headers (Authorization, AppKey) are absent or
//     the batch request's runs, and one whose differ is 400 GENERAL_PARAMETER_ILLEGAL in
//     its place, saying that a request in a batch runs as the batch's caller (it can
//     neither gain another caller's rights nor silently run as a caller it does not
//     name); values compare after trimming white space, the scheme word ignoring case.
//     A method other than GET is 405 and a change set (atomicity group,
//     nested multipart) 400 in its place, the batch itself 200. A failed request does
//     not stop the batch (the answer then carries Preference-Applied:
//     continue-on-error=true) unless the client sends Prefer: odata.continue-on-error=false
//     (or continue-on-error=false), which stops it after the first failed request; a JSON
//     request whose dependsOn names a failed request or
//     atomicity group is not run and answers 424 Failed Dependency naming it, and a
//     dependsOn entry that names no earlier request or group makes the batch 400. At most
//     MaxBatchRequests requests and WithMaxBatchBytes bytes (413 beyond).
//   - Only GET is allowed elsewhere (405 with Allow: GET, HEAD otherwise; HEAD is
//     answered as GET without a body). An unknown KM is 404 KM_MODEL_NOTFOUND, an unknown
//     entity set 404 KM_RECORD_NOTFOUND, any other path 404 GENERAL_NOTFOUND_PATH. Store
//     failures and panics are 500 ADMIN_FATAL_ERROR with a support id that is logged with
//     the error.
//
// Queries are bounded as the Knowledge Model API's, by the same Service (WithService):
// they run under its time limit (503 beyond it) and their plan is costed and refused
// beyond its budget with 400 GENERAL_CONSTRAINT_VIOLATION naming the part that is too
// large (km.CheckCost). A request runs all its queries (the page, each expanded
// property at each level, each branch of concat) in one time budget
// (km.Service.Budget), and a $batch all its parts: the limit bounds the request or the
// batch, not each query.
//
// The handler keeps no state between requests; authentication, permissions and rate
// limits belong to the auth middleware in front of it (auth.Guard.Wrap, with WriteProblem
// as the policy's error writer: it sets OData-Version on the middleware's 401, 403 and
// 429 answers too). Mount the handler at BasePath + "/":
//
//	odataPolicy := auth.Policy{Permission: principal.PermOData, WriteError: odata.WriteProblem}
//	mux.Handle(odata.BasePath+"/", guard.Wrap(odataPolicy, odata.NewHandler(store, odata.WithMaxPageSize(1000))))
package odata
