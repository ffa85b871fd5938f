// Package reportinghttp serves the reporting API over HTTP: a tenant's elements and facets.
// It is the HTTP adapter of package reporting, which holds the domain (Element, Facet, the
// reporting.Store a backend implements, loading and validation); this package holds the
// handler, its parameter parsing, the JSON encoders of its pages and WriteProblem.
//
// NewHandler answers GET /api/v1/elements (query parameters FacetName, Skip, Take) and
// GET /api/v1/facets (Skip, Take) with a reporting.List: {"items": [[...page...]], "skip",
// "take", "totalCount"}. Mount it at BasePath:
//
//	mux.Handle(reportinghttp.BasePath+"/", reportinghttp.NewHandler(store))
//
// It reads data from a reporting.Store, one data set per tenant; storage/memory and
// storage/sqlstore have them, and reporting.Load reads a data directory's
// reporting/<tenant-uuid>.json files.
//
// The tenant of a request is the one of its principal.Principal, which must match the
// x-tenant-id header (see HeaderTenant), so a handler mounted without the auth middleware
// still serves nobody's data to the wrong caller. WithTenant plugs in another rule.
//
// Where the specification is silent, the handler behaves as follows:
//
//   - Parameter names match case-insensitively (take, TAKE, Take). Parameters the endpoint
//     does not know are ignored, as ASP.NET model binding does; FacetName is not a
//     parameter of /facets. A parameter given twice is a 400; one given with an empty
//     value counts as absent.
//   - Skip defaults to 0 and has no upper bound (past the end the page is empty); Take
//     defaults to 100 and must lie in 0..100 (Take=0 returns only totalCount). Non-integers
//     are 400 GENERAL_PARAMETER_MISSMATCH; out-of-range integers 400
//     GENERAL_CONSTRAINT_VIOLATION. "skip" and "take" in the response are the values used,
//     defaults included.
//   - FacetName matches facetName exactly (case-sensitively); a facet without elements
//     gives an empty page with totalCount 0, not a 404.
//   - Elements come ordered by facetName, then ordering, then id, variantId and versionId
//     (reporting.CompareElements); facets by name. Strings compare byte by byte, so paging is stable.
//   - Facets are the distinct facetName values of a tenant's elements. A tenant without
//     data has no elements and no facets: its pages are empty, not 404.
//   - Members are always present in the JSON of an element; a collection the data leaves
//     out is null, so data round-trips through the API unchanged.
//   - Responses are JSON whatever the Accept header says, with Cache-Control: no-store
//     since they depend on the caller's key. HEAD is answered like GET.
//     Other methods get 405 with an Allow header, other paths 404 GENERAL_NOTFOUND_PATH.
//   - Errors are RFC 9457 problem bodies (package problem); a request without a principal
//     gets the 401 the auth middleware sends for this API (ADMIN_AUTHENTICATION_ERROR). A store
//     failure or a panic is a 500 ADMIN_FATAL_ERROR whose support id is logged with the
//     cause.
//   - Element files are strict (see reporting.Load).
//
// Backends implement reporting.Store and run the conformance suite of package
// reporting/reportingtest.
package reportinghttp
