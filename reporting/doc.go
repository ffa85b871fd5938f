// Package reporting is the domain of the reporting API: a tenant's elements and facets.
// Its HTTP adapter is package reporting/reportinghttp, as database/sql/driver is the side
// of database/sql a driver implements; a program that only stores or loads elements links
// no HTTP server code.
//
// It holds the types (Element with its Identity, References, Attributes and Content;
// Facet; List, the page the API returns), their order (CompareElements: by facetName,
// then ordering, then id, variantId and versionId, strings byte by byte), the Store
// contract a backend implements with ElementQuery, and the loading and validation of data
// files: Load and LoadDir read a data directory's reporting/<tenant-uuid>.json files,
// DecodeElements one file, Validate checks what was read.
//
// Element files are strict: a member Element has no field for is an error, so typos in
// hand-written data are caught at load time instead of silently dropped. An error names the
// file, the element (position, id, line) and what is wrong with it (ElementError).
//
// Backends implement Store and run the conformance suite of package reportingtest.
package reporting
