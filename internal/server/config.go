package server

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/kmkit/kmkit/km/kmhttp"
	"github.com/kmkit/kmkit/web/publicurl"

	"github.com/kmkit/kmkit/auth"
	"github.com/kmkit/kmkit/km"
	"github.com/kmkit/kmkit/web/cors"
)

// config is the server's configuration from flags and KMKIT_* variables.
type config struct {
	addr        string
	dataDir     string
	db          string
	dbReplicas  []string // -db-replicas: PostgreSQL streaming standbys of -db for KM reads
	demoRows    int
	keysFile    string
	maxPageSize int
	maxBody     int64
	seats       int // default seat limit of a team's license; 0 is unlimited
	logLevel    slog.Level
	corsOrigins []string      // -cors-origins: origins allowed to call from a browser
	metricsAddr string        // -metrics-addr: a second listener serving /metrics without auth
	watch       time.Duration // -watch: poll the data directory this often (0: never)
	version     bool          // -version: print the build and exit
	healthcheck bool          // -healthcheck: ask a running server's /healthz and exit
	// Limits of every key that does not set its own in the keys file; negative disables.
	ratePerHour int
	burst       int
	concurrency int
	// baseURL is the public URL of absolute URLs in answers; trustedProxies the CIDRs whose
	// X-Forwarded-* headers are honoured (see package publicurl).
	baseURL        string
	trustedProxies []string
	// queryTimeout, queryBudget and queryMemory bound one KM query (kmhttp.WithQueryTimeout,
	// kmhttp.WithMaxQueryCost, kmhttp.WithMaxQueryMemory).
	queryTimeout time.Duration
	queryBudget  int64
	queryMemory  int64
}

// redactURL hides the password of a URL for error messages.
func redactURL(s string) string {
	if u, err := url.Parse(s); err == nil && u.User != nil {
		return u.Redacted()
	}
	return s
}

// parseConfig reads the flags of args; every flag's default comes from its environment
// variable, so a flag on the command line wins over the variable.
func parseConfig(args []string, getenv func(string) string, stderr io.Writer) (*config, error) {
	return parseConfigNamed("kmkit", args, getenv, stderr)
}

// parseConfigNamed is parseConfig for the command name, which the usage text names.
func parseConfigNamed(name string, args []string, getenv func(string) string, stderr io.Writer) (*config, error) {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	env := func(name, def string) string {
		if v := getenv(name); v != "" {
			return v
		}
		return def
	}
	envInt := func(name string, def int) (int, error) {
		v := getenv(name)
		if v == "" {
			return def, nil
		}
		n, err := strconv.Atoi(v)
		if err != nil {
			return 0, fmt.Errorf("%s=%q is not an integer", name, v)
		}
		return n, nil
	}
	cfg := &config{}
	demoRows, err := envInt("KMKIT_DEMO_ROWS", 0)
	if err != nil {
		return nil, err
	}
	maxPage, err := envInt("KMKIT_MAX_PAGE_SIZE", kmhttp.DefaultMaxPageSize)
	if err != nil {
		return nil, err
	}
	maxBody, err := envInt("KMKIT_MAX_BODY", kmhttp.DefaultMaxBodyBytes)
	if err != nil {
		return nil, err
	}
	watch := env("KMKIT_WATCH", "0s")
	seats, err := envInt("KMKIT_SEATS", 0)
	if err != nil {
		return nil, err
	}
	rate, err := envInt("KMKIT_RATE_PER_HOUR", auth.DefaultPerWindow)
	if err != nil {
		return nil, err
	}
	burst, err := envInt("KMKIT_BURST", auth.DefaultBurst)
	if err != nil {
		return nil, err
	}
	concurrency, err := envInt("KMKIT_CONCURRENCY", auth.DefaultConcurrent)
	if err != nil {
		return nil, err
	}
	var level, origins, proxies, replicas string
	queryTimeout := env("KMKIT_QUERY_TIMEOUT", kmhttp.DefaultQueryTimeout.String())
	queryBudget, err := envInt("KMKIT_QUERY_BUDGET", km.DefaultMaxQueryCost)
	if err != nil {
		return nil, err
	}
	queryMemory, err := envInt("KMKIT_QUERY_MEMORY", int(defaultQueryMemory()))
	if err != nil {
		return nil, err
	}
	fs.StringVar(&cfg.addr, "addr", env("KMKIT_ADDR", ":8080"), "listen address (KMKIT_ADDR)")
	fs.StringVar(&cfg.dataDir, "data", env("KMKIT_DATA", ""), "serve this data directory instead of the demo (KMKIT_DATA)")
	fs.StringVar(&cfg.db, "db", env("KMKIT_DB", "sqlite:kmkit.db"), "sqlite:PATH, memory: or a postgres:// URL (KMKIT_DB)")
	fs.StringVar(&replicas, "db-replicas", env("KMKIT_DB_REPLICAS", ""), "comma-separated postgres:// URLs of streaming standbys of -db that serve KM reads once they have replayed the served import (KMKIT_DB_REPLICAS)")
	fs.IntVar(&cfg.demoRows, "demo-rows", demoRows, "generate the demo with this many orders (KMKIT_DEMO_ROWS)")
	fs.StringVar(&cfg.keysFile, "keys", env("KMKIT_KEYS", ""), "keys file; without it a development key is printed (KMKIT_KEYS)")
	fs.IntVar(&cfg.maxPageSize, "max-page-size", maxPage, "largest pageSize of the KM API (KMKIT_MAX_PAGE_SIZE)")
	fs.Int64Var(&cfg.maxBody, "max-body", int64(maxBody), "largest request body in bytes (KMKIT_MAX_BODY)")
	fs.IntVar(&cfg.seats, "seats", seats, "seat limit of a team's license unless the keys file sets one; 0 is unlimited (KMKIT_SEATS)")
	fs.IntVar(&cfg.ratePerHour, "rate-per-hour", rate, "requests per hour per key unless the keys file says otherwise; -1: no budget (KMKIT_RATE_PER_HOUR)")
	fs.IntVar(&cfg.burst, "burst", burst, "requests per second per key unless the keys file says otherwise; -1: no limit (KMKIT_BURST)")
	fs.IntVar(&cfg.concurrency, "concurrency", concurrency, "requests in flight per key unless the keys file says otherwise; -1: no limit (KMKIT_CONCURRENCY)")
	fs.StringVar(&cfg.baseURL, "base-url", env("KMKIT_BASE_URL", ""), "public URL of the server in absolute URLs, e.g. https://api.example.com; default: the listener's address (KMKIT_BASE_URL)")
	fs.StringVar(&proxies, "trusted-proxies", env("KMKIT_TRUSTED_PROXIES", ""), "comma-separated CIDRs of proxies whose X-Forwarded-Proto and X-Forwarded-Host are honoured (KMKIT_TRUSTED_PROXIES)")
	fs.StringVar(&queryTimeout, "query-timeout", queryTimeout, "longest run of one KM query before it is stopped with 503, e.g. 30s (KMKIT_QUERY_TIMEOUT)")
	fs.Int64Var(&cfg.queryBudget, "query-budget", int64(queryBudget), "largest estimated cost (row operations) of one KM query; beyond it 400; -1: no budget (KMKIT_QUERY_BUDGET)")
	fs.Int64Var(&cfg.queryMemory, "query-memory", int64(queryMemory), "largest memory in bytes one KM query on -db memory: is estimated to hold; beyond it 400; -1: no bound; default an eighth of the machine's (KMKIT_QUERY_MEMORY)")
	fs.StringVar(&level, "log-level", env("KMKIT_LOG_LEVEL", "info"), "debug, info, warn or error (KMKIT_LOG_LEVEL)")
	fs.StringVar(&origins, "cors-origins", env("KMKIT_CORS_ORIGINS", ""), "comma-separated origins browsers may call from, or * (KMKIT_CORS_ORIGINS)")
	fs.StringVar(&cfg.metricsAddr, "metrics-addr", env("KMKIT_METRICS_ADDR", ""), "also serve /metrics, without credentials, on this address (KMKIT_METRICS_ADDR)")
	fs.StringVar(&watch, "watch", watch, "poll the -data directory this often and reload on change, e.g. 10s (KMKIT_WATCH)")
	fs.BoolVar(&cfg.version, "version", false, "print the version and exit")
	fs.BoolVar(&cfg.healthcheck, "healthcheck", false, "ask the server listening on -addr for /healthz; exit 0 when it answers 200 (container health checks)")
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	if fs.NArg() > 0 {
		return nil, fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	switch {
	case cfg.demoRows < 0:
		return nil, errors.New("-demo-rows must not be negative")
	case cfg.demoRows > 0 && cfg.dataDir != "":
		return nil, errors.New("-demo-rows and -data exclude each other")
	case cfg.maxPageSize < 1:
		return nil, errors.New("-max-page-size must be at least 1")
	case cfg.maxBody < 1:
		return nil, errors.New("-max-body must be at least 1")
	case cfg.queryBudget == 0:
		return nil, errors.New("-query-budget must be positive, or -1 for no budget")
	case cfg.queryMemory == 0:
		return nil, errors.New("-query-memory must be positive, or -1 for no bound")
	case cfg.seats < 0:
		return nil, errors.New("-seats must not be negative")
	case cfg.ratePerHour == 0 || cfg.burst == 0 || cfg.concurrency == 0:
		return nil, errors.New("-rate-per-hour, -burst and -concurrency must be positive, or -1 for no limit")
	}
	if cfg.queryTimeout, err = time.ParseDuration(queryTimeout); err != nil || cfg.queryTimeout <= 0 {
		return nil, fmt.Errorf("-query-timeout %q: want a positive duration such as 30s", queryTimeout)
	}
	for s := range strings.SplitSeq(replicas, ",") {
		if s = strings.TrimSpace(s); s != "" {
			if !strings.HasPrefix(s, "postgres://") && !strings.HasPrefix(s, "postgresql://") {
				return nil, fmt.Errorf("-db-replicas: %q is not a postgres:// URL", redactURL(s))
			}
			cfg.dbReplicas = append(cfg.dbReplicas, s)
		}
	}
	if len(cfg.dbReplicas) > 0 && !strings.HasPrefix(cfg.db, "postgres://") && !strings.HasPrefix(cfg.db, "postgresql://") {
		return nil, errors.New("-db-replicas needs a PostgreSQL -db (postgres://...)")
	}
	for s := range strings.SplitSeq(proxies, ",") {
		if s = strings.TrimSpace(s); s != "" {
			cfg.trustedProxies = append(cfg.trustedProxies, s)
		}
	}
	if _, err := publicurl.New(cfg.baseURL, cfg.trustedProxies); err != nil {
		return nil, fmt.Errorf("-base-url or -trusted-proxies: %w", err)
	}
	if cfg.corsOrigins, err = cors.ParseOrigins(origins); err != nil {
		return nil, fmt.Errorf("-cors-origins: %w", err)
	}
	if cfg.watch, err = time.ParseDuration(watch); err != nil || cfg.watch < 0 {
		return nil, fmt.Errorf("-watch %q: want a duration such as 10s", watch)
	}
	if cfg.watch > 0 && cfg.dataDir == "" {
		return nil, errors.New("-watch needs -data")
	}
	if err := cfg.logLevel.UnmarshalText([]byte(strings.ToUpper(level))); err != nil {
		return nil, fmt.Errorf("-log-level %q: want debug, info, warn or error", level)
	}
	return cfg, nil
}
