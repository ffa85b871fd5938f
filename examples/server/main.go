// Command server is the kmkit reference server: the Knowledge Model API with its OData
// service, SCIM 2.0 provisioning and the reporting API on one port, from an embedded order-to-cash demo or a
// data directory.
//
//	go run ./examples/server
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
//	-max-body BYTES     KMKIT_MAX_BODY       largest request body (default 1 MiB)
//	-log-level LEVEL    KMKIT_LOG_LEVEL      debug, info, warn or error (default info)
//
// Unless GOGC is set, the server runs the garbage collector at GOGC=400 (DefaultGCPercent):
// its data sets are large, live for the whole process and are never written, so collecting
// at every doubling of the heap spends CPU on marking the same tables over and over. After
// loading the data into memory it collects once and returns the loader's garbage to the
// system (debug.FreeOSMemory), so that the resident set starts at the size of the data;
// BENCHMARKS.md gives the measured resident sets and peaks for GOGC 100, 200 and 400.
//
// The server logs every request with log/slog (text to stderr), answers GET /healthz
// without credentials, sets read, write and idle timeouts, and on SIGINT or SIGTERM stops
// accepting connections and lets running requests finish (up to 15 seconds).
package main

import (
	"context"
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

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Getenv, os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "server:", err)
		os.Exit(1)
	}
}

// run starts the server with the given arguments and environment and serves until ctx is
// done. It prints the address and, without a keys file, the development key to stdout.
func run(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	cfg, err := parseConfig(args, getenv, stderr)
	if err != nil {
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
