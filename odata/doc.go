// Package odata serves each Knowledge Model of a km.Store as a read-only OData v4 service,
// the beta OData interface of the Knowledge Model API, for BI tools and OData clients.
//
// NewHandler returns an http.Handler for the paths below BasePath:
//
//	GET /intelligence/api/odata/{km_id}.svc                         service document
//	GET /intelligence/api/odata/{km_id}.svc/$metadata               CSDL XML or CSDL JSON
//	GET /intelligence/api/odata/{km_id}.svc/{record_id}_entries     entity set
//	GET /intelligence/api/odata/{km_id}.svc/{record_id}_entries/$count
//
// The schema has the namespace ODataKnowledgeModel and the container Container; each
// record is an entity type named by the record id, with one property per field, and an
// entity set named {record_id}_entries. Field types map to EDM types: string Edm.String,
// integer Edm.Int64, float and number Edm.Double, boolean Edm.Boolean, date Edm.Date,
// datetime and timestamp Edm.DateTimeOffset, time Edm.TimeOfDay (both temporal types with
// Precision 6, the microseconds the values carry). Every property states its nullability:
// the key is not nullable, every other property is, since any cell of a record may be
// null. The key is the record's declared key field; a record that declares none gets a
// generated key property ROW_NUMBER (Edm.Int64), see below.
//
// Entity sets take $select, $filter (the grammar and code of the filterExpr parameter:
// query.Parse and query.Bind), $orderby (property [asc|desc], comma list), $top, $skip,
// $count=true, $format and filterid (ids of predefined KM filters, ANDed with $filter).
// Answers are OData JSON with minimal metadata (@odata.context, @odata.count, value,
// @odata.nextLink) or Atom feeds. The answer of every request, errors included, carries
// OData-Version: 4.0; errors are the Knowledge Model API's problem bodies
// (application/problem+json) whatever the format asked for.
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
//   - Versions: CSDL XML is EDMX 4.0; CSDL JSON is $Version 4.01, its first version.
//     In CSDL JSON every property names its $Type and $Nullable although both have
//     defaults there.
//   - Query option names are matched case-insensitively, with or without "$" (OData
//     4.01). A system option given twice is 400 ODATA_OPTION_REPEATED; a valid OData
//     option the service lacks ($expand, $search, $apply, $compute, ...) and parameter
//     aliases (@p) are 400 ODATA_OPTION_NOT_SUPPORTED; an unknown "$" option is 400
//     GENERAL_PARAMETER_ILLEGAL; other custom options are ignored, as OData requires.
//     The service document and $metadata take $format only.
//   - The query string is split at "&" only, so a ";" inside $filter survives. A "+" is
//     a space, as form encoding has it (clients that send $filter=A+eq+1 work), except as
//     the sign of a time offset after a time of day (T15:48+03:00 needs no escaping); %2B
//     is always a plus (query.ParseRawQuery, shared with the Knowledge Model API). In
//     $select and $orderby a plus separates words too, since no property name holds one;
//     $format=application/atom+xml works unencoded, since no media type holds a space.
//   - $select always yields the key property as well, so that every entity keeps its
//     identity; the context URL lists the selection as asked. $orderby may name any
//     property, selected or not; sorting by the generated row number is 400 (entities
//     come in row order without $orderby). Nulls sort last in both directions and ties
//     keep row order, as on the data endpoints.
//   - filterid may be repeated or comma-separated; an unknown one is 400
//     KM_FILTER_NOTFOUND. filterid and $filter may use fields of other records
//     (RECORD.FIELD in $filter): they apply through the KM's relationships as on the
//     record data endpoints (package km, "What a query means"), e.g. the orders of German
//     customers with $filter=CUSTOMERS.COUNTRY eq 'DE' on ORDERS_entries.
//   - Server-driven paging: at most Options.MaxPageSize entities per answer (or fewer
//     when the client sends Prefer: odata.maxpagesize=N, acknowledged with
//     Preference-Applied), then @odata.nextLink (Atom: link rel="next"): the same query
//     string with $skip advanced and what remains of $top. The store is asked for the
//     full count alongside the page to know whether there is a next one, and a $skip
//     that is no multiple of the page is served from the smallest store page that
//     covers it.
//   - The generated key of a record without a declared key is the entity's 1-based
//     position in the filtered and sorted entity set, so it is unique within an answer
//     and its next links; entities cannot be addressed by key (such paths are 404).
//   - Values: Int64 and Double are JSON numbers (Int64 as strings with
//     IEEE754Compatible=true in $format or Accept; NaN and infinities as "NaN", "INF",
//     "-INF"); dates YYYY-MM-DD, date-times RFC 3339 in UTC, times of day hh:mm:ss with
//     the fraction when there is one. In Atom, strings that XML 1.0 cannot carry (control
//     characters) have those characters replaced by U+FFFD. Atom entries are updated at
//     the time of the answer and have the entity's canonical URL as their id.
//   - Absolute URLs (context, next links, Atom ids) start with Options.BaseURL, or with
//     the request's scheme and Host.
//   - Only GET is allowed (405 with Allow: GET otherwise). An unknown KM is 404
//     KM_MODEL_NOTFOUND, an unknown entity set 404 KM_RECORD_NOTFOUND, any other path 404
//     GENERAL_NOTFOUND_PATH. Store failures are 500 ADMIN_FATAL_ERROR with a support id
//     that is logged with the error.
//
// The handler keeps no state between requests; authentication, permissions and rate
// limits belong to the auth middleware in front of it (auth.Guard.OData).
package odata
