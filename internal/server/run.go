// Package server is the kmkit reference server, the command kmkit (cmd/kmkit, also run as
// examples/server): the Knowledge Model API with its OData service, SCIM 2.0 provisioning
// and the reporting API on one port, from an embedded order-to-cash demo or a data
// directory.
//
//	go run ./examples/server   # or: go install github.com/kmkit/kmkit/cmd/kmkit@latest
//
// starts on :8080 with the demo and prints a development key, valid for every API:
//
//	curl -H "Authorization: AppKey $KEY" localhost:8080/intelligence/api/knowledge-models
//
// Flags, each also read from an environment variable (the flag wins):
//
//	-addr ADDR          KMKIT_ADDR           listen address (default :8080)
//	-data DIR           KMKIT_DATA           serve DIR (models/*.yaml, data/*.csv, reporting/*.json)
//	-db DSN             KMKIT_DB             sqlite:PATH (default sqlite:kmkit.db), memory: or postgres://...
//	-demo-rows N        KMKIT_DEMO_ROWS      generate the demo with N orders instead of the embedded one
//	-keys FILE          KMKIT_KEYS           keys file (see package auth/keysfile); default: a printed development key
//	-max-page-size N    KMKIT_MAX_PAGE_SIZE  largest pageSize of the KM API (default 5000)
//	-max-body BYTES     KMKIT_MAX_BODY       largest request body, SCIM Bulk included (default 1 MiB)
//	-query-timeout D    KMKIT_QUERY_TIMEOUT  longest run of one KM query; longer work is stopped with 503 (default 30s)
//	-query-budget N     KMKIT_QUERY_BUDGET   largest estimated cost of one KM query (row operations, see km.Plan.Cost); beyond it 400; -1: none (default 2e9)
//	-query-memory BYTES KMKIT_QUERY_MEMORY   largest memory one KM query on memory: is estimated to hold (km.Cost.Memory); beyond it 400; -1: none (default an eighth of the machine's)
//	-seats N            KMKIT_SEATS          SCIM seat limit of a team unless the keys file's teams: sets one (default 0, unlimited)
//	-log-level LEVEL    KMKIT_LOG_LEVEL      debug, info, warn or error (default info)
//	-rate-per-hour N    KMKIT_RATE_PER_HOUR  requests per hour per key (default 6000)
//	-burst N            KMKIT_BURST          requests per second per key, in bursts of as many (default 50)
//	-concurrency N      KMKIT_CONCURRENCY    requests in flight per key (default 20)
//	-base-url URL       KMKIT_BASE_URL       public URL in absolute URLs (OData context, SCIM locations, /spec servers)
//	-trusted-proxies L  KMKIT_TRUSTED_PROXIES  CIDRs whose X-Forwarded-Proto/Host are honoured
//	-cors-origins LIST  KMKIT_CORS_ORIGINS   comma-separated origins browser apps may call from, or *
//	-metrics-addr ADDR  KMKIT_METRICS_ADDR   also serve /metrics on ADDR, without credentials
//	-watch DURATION     KMKIT_WATCH          poll the -data directory this often and reload on change
//	-version                                 print the version and the VCS revision, and exit
//	-healthcheck                             GET /healthz of the server on -addr; exit 0 on 200 (for images without a shell)
//	-h, -help                                print "Usage of kmkit:" and the flags to stderr, and exit 0
//
// Without -base-url, absolute URLs use the address of the listener a request arrived at, or
// what a trusted proxy sent in X-Forwarded-Proto and X-Forwarded-Host; never the Host
// header (see package publicurl). An X-Forwarded-Host that is not host[:port] with a port
// from 1 to 65535 is ignored and logged at level warn.
//
// When the keys file names identity providers (jwt.issuers, see package auth/keysfile), the
// server accepts their tokens with keys fetched from their JWKS, publishes OAuth 2.0
// Protected Resource Metadata at /.well-known/oauth-protected-resource (the server) and
// /.well-known/oauth-protected-resource{path} for the KM API, OData, SCIM and the MCP
// endpoint, names it in the Bearer challenge of every 401 of those APIs, and exports the
// state of each issuer's key cache: kmkit_jwks_up, kmkit_jwks_keys,
// kmkit_jwks_last_success_timestamp_seconds and kmkit_jwks_fetch_failures_total, by issuer.
//
// The MCP endpoint refuses with 403 a request whose Origin is neither the public URL's
// origin nor one of -cors-origins (package mcp, CheckOrigin).
//
// The three limits are defaults: a key of the keys file may set its own (ratePerHour, burst,
// concurrency); -1 disables a limit for the keys that set none. A request refused because of
// the burst or concurrency limit does not count against the hourly budget.
//
// Unless GOGC is set, the server runs the garbage collector at GOGC=400 (DefaultGCPercent):
// its data sets are large, live for the whole process and are never written, so collecting
// at every doubling of the heap spends CPU on marking the same tables over and over. After
// loading the data into memory it collects once and returns the loader's garbage to the
// system (debug.FreeOSMemory), so that the resident set starts at the size of the data;
// BENCHMARKS.md gives the measured resident sets and peaks for GOGC 100, 200 and 400.
//
// The server logs every request with log/slog (text to stderr): one line with the method,
// the API and route template (never the raw path or query, which carry ids and filter
// values), the status, the body bytes, the duration, the principal's name and, on a 5xx,
// the support id of the answer; 5xx lines are at level error, the others at info, so
// -log-level warn leaves only failures. It answers GET /healthz without credentials (503
// with Retry-After while the database does not answer; every API answers so too then,
// never 500), HEAD
// on every GET route (package head), CORS preflights before authentication when
// -cors-origins is set (package cors), and Prometheus metrics at GET /metrics to keys
// holding the metrics permission (package metrics; the development key holds it). It sets
// read, write and idle timeouts, and on SIGINT or SIGTERM stops accepting connections and
// lets running requests finish (up to 15 seconds).
//
// On SIGHUP (and, with -watch, when a file under the -data directory changes) the server
// reloads the Knowledge Models and their data into a new store and swaps it in at once
// (package storage/swap): requests already running finish on the old data. A definition or
// data error keeps the old data serving and logs file:line: reason. On a database the new
// data is imported with sqlstore.KMStore.Import, one transaction per changed source, before
// the swap of the definitions, so there a query running during the import may already see
// a source's new rows. Reporting elements are read at start only.
package server

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"runtime/debug"
	"syscall"
)

// DefaultGCPercent is the garbage collector's target percentage unless GOGC says otherwise.
const DefaultGCPercent = 400

// Main runs the server with the process's arguments, environment and standard output,
// until SIGINT or SIGTERM, and returns the exit code; an error goes to stderr after name.
// -h and -help print "Usage of NAME:" and the flags to stderr and return 0.
func Main(name string) int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	return exitCode(run(ctx, name, os.Args[1:], os.Getenv, os.Stdout, os.Stderr), name, os.Stderr)
}

// exitCode is the process's exit code after err, which it reports to stderr.
func exitCode(err error, name string, stderr io.Writer) int {
	switch {
	case err == nil, errors.Is(err, flag.ErrHelp):
		return 0
	default:
		fmt.Fprintln(stderr, name+":", err)
		return 1
	}
}

// Run starts the server with the given arguments and environment and serves until ctx is
// done. It prints the address and, without a keys file, the development key to stdout.
// With -h or -help it prints the usage of kmkit to stderr and returns flag.ErrHelp.
func Run(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	return run(ctx, "kmkit", args, getenv, stdout, stderr)
}

// run is Run under the command name name, which the usage text names.
func run(ctx context.Context, name string, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	cfg, err := parseConfigNamed(name, args, getenv, stderr)
	if err != nil {
		return err
	}
	if cfg.healthcheck {
		return checkHealth(ctx, cfg.addr)
	}
	if cfg.version {
		info, ok := debug.ReadBuildInfo()
		_, err := fmt.Fprintln(stdout, versionText(info, ok))
		return err
	}
	if getenv("GOGC") == "" {
		debug.SetGCPercent(DefaultGCPercent)
	}
	logger := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: cfg.logLevel}))
	app, err := newApp(cfg, logger)
	if err != nil {
		return err
	}
	defer app.close()
	return app.serve(ctx, stdout)
}
