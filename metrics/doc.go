// Package metrics measures the kmkit handlers and stores for Prometheus, on
// github.com/prometheus/client_golang.
//
// New registers the collectors on a prometheus.Registerer; Handler wraps the handlers (all
// APIs behind one middleware), KMStore, SCIMStore and ReportingStore wrap the stores, and
// LimitRefused is the auth.Config.Refused hook. Serve the registry with promhttp, as the
// reference server does at /metrics; RegisterRuntime and RegisterSQL add the Go runtime,
// the process and a database/sql pool.
//
// The series, all prefixed kmkit_:
//
//	http_requests_total{api, route, method, code}         counter
//	http_request_duration_seconds{api, route, method}     histogram (to the last byte)
//	http_requests_in_flight{api}                          gauge
//	http_response_bytes_total{api, route, method}          counter of body bytes
//	limiter_refusals_total{api, reason}                   429 answers by limit: budget, burst, concurrency
//	store_query_duration_seconds{backend, kind}           histogram of Store calls
//	store_errors_total{backend, kind}                     Store calls that failed (not found included)
//
// Cardinality is bounded: api is the caller's fixed name of an API, route a route template
// the handlers declare (kmhttp.RouteTemplate and the like: "{km_id}", never a model id), or
// "unmatched" for a path no route serves; method is one of the standard methods or
// "OTHER"; code is the status code; kind names a Store method. No label ever carries a
// raw path, a query, a principal or a field value.
package metrics
