package server

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"runtime/debug"
	"slices"
	"sync"
	"time"

	"github.com/kmkit/kmkit/km"
	"github.com/kmkit/kmkit/km/kmhttp"
	"github.com/kmkit/kmkit/principal"
	"github.com/kmkit/kmkit/problem/problemhttp"
	"github.com/kmkit/kmkit/reporting/reportinghttp"
	"github.com/kmkit/kmkit/scim/scimhttp"
	"github.com/kmkit/kmkit/web/publicurl"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/kmkit/kmkit/auth"
	"github.com/kmkit/kmkit/auth/keysfile"
	"github.com/kmkit/kmkit/internal/demodata"
	"github.com/kmkit/kmkit/internal/demodata/demostore"
	"github.com/kmkit/kmkit/mcp"
	"github.com/kmkit/kmkit/metrics"
	"github.com/kmkit/kmkit/odata"
	"github.com/kmkit/kmkit/outage"
	"github.com/kmkit/kmkit/problem"
	"github.com/kmkit/kmkit/reporting"
	"github.com/kmkit/kmkit/scim"
	"github.com/kmkit/kmkit/storage/memory"
	"github.com/kmkit/kmkit/storage/swap"
	"github.com/kmkit/kmkit/web/cors"
	"github.com/kmkit/kmkit/web/head"
)

// Server timeouts.
const (
	readHeaderTimeout = 10 * time.Second
	readTimeout       = 30 * time.Second
	writeTimeout      = 60 * time.Second
	idleTimeout       = 120 * time.Second
	shutdownTimeout   = 15 * time.Second
	maxHeaderBytes    = 64 << 10
	healthTimeout     = 2 * time.Second // for /healthz to reach the database
)

// seatLimits is the seat configuration of the SCIM stores (scim.SeatLimits).
type seatLimits interface {
	SetSeatLimit(team string, seats int)
	SetDefaultSeatLimit(seats int)
}

// app is the assembled server: stores, authentication and routes.
type app struct {
	cfg     *config
	log     *slog.Logger
	handler http.Handler
	devKey  string // "" when a keys file is used
	close   func() error
	// registry holds the metrics served at MetricsPath (and on -metrics-addr).
	registry *prometheus.Registry
	routes   routes
	// live is the KM store the APIs serve; reload swaps a new one in.
	live     *swap.KMStore
	newKM    func() kmImporter // a new, empty KM store of the backend, for reloads
	reloadMu sync.Mutex        // one reload at a time
	reloads  *prometheus.CounterVec
}

func newApp(cfg *config, logger *slog.Logger) (_ *app, err error) {
	a := &app{cfg: cfg, log: logger}
	st, err := openStores(cfg, logger)
	if err != nil {
		return nil, err
	}
	a.close = st.close
	defer func() {
		if err != nil {
			st.close()
		}
	}()
	a.registry = prometheus.NewRegistry()
	if err := metrics.RegisterRuntime(a.registry); err != nil {
		return nil, err
	}
	if st.db != nil {
		if err := metrics.RegisterSQL(a.registry, st.db, st.backend); err != nil {
			return nil, err
		}
	}
	for _, c := range st.collectors {
		if err := a.registry.Register(c); err != nil {
			return nil, err
		}
	}
	m, err := metrics.New(a.registry)
	if err != nil {
		return nil, err
	}
	a.live = swap.NewKMStore(st.km)
	a.newKM = st.newKM
	a.reloads = prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: "kmkit", Name: "reloads_total",
		Help: "Reloads of the Knowledge Models (SIGHUP, -watch), by result: ok or failed.",
	}, []string{"result"})
	if err := a.registry.Register(a.reloads); err != nil {
		return nil, err
	}
	kmStore := m.KMStore(st.backend, a.live)
	reportingStore := m.ReportingStore(st.backend, st.reporting)
	tenants := st.tenants
	var authn auth.Authenticator
	seats, _ := st.scim.(seatLimits)
	if seats != nil {
		seats.SetDefaultSeatLimit(cfg.seats)
	}
	// The policies of the APIs; with identity providers in the keys file, those taking
	// Bearer tokens name their protected resource metadata in their 401s.
	kmPol, odataPol, scimPol, mcpPol, metricsPol := kmPolicy, odataPolicy, scimPolicy, mcpPolicy, metricsPolicy
	var oauthServers, oauthScopeList []string
	var verifier *auth.JWTVerifier
	defer func() {
		if err != nil && verifier != nil {
			verifier.Close()
		}
	}()
	if cfg.keysFile != "" {
		f, err := keysfile.Load(cfg.keysFile)
		if err != nil {
			return nil, err
		}
		if f.JWT != nil {
			f.JWT.Logger = logger
		}
		if authn, verifier, err = f.Verifier(); err != nil {
			return nil, err
		}
		if verifier != nil {
			closeStores := a.close
			a.close = func() error { verifier.Close(); return closeStores() }
			if err := registerJWKS(a.registry, verifier); err != nil {
				return nil, err
			}
			oauthServers, oauthScopeList = verifier.AuthorizationServers(), oauthScopes(f)
			kmPol, odataPol, scimPol = withResourceMetadata(kmPol, kmhttp.BasePath), withResourceMetadata(odataPol, odata.BasePath), withResourceMetadata(scimPol, scimhttp.BasePath)
			mcpPol, metricsPol = withResourceMetadata(mcpPol, mcp.BasePath), withResourceMetadata(metricsPol, "")
		}
		for team, t := range f.Teams {
			if t.Seats != nil && seats != nil {
				seats.SetSeatLimit(team, *t.Seats)
			}
		}
	} else {
		key, keys, err := developmentKey(tenants)
		if err != nil {
			return nil, err
		}
		a.devKey, authn = key, auth.KeysAndTokens(keys, nil)
	}
	guard, err := auth.NewGuard(auth.Config{Authenticator: authn, Logger: logger, Limiter: st.limiter,
		Limits:  auth.Limits{PerWindow: cfg.ratePerHour, Burst: cfg.burst, Concurrent: cfg.concurrency},
		Refused: m.LimitRefused})
	if err != nil {
		return nil, err
	}
	notifier := scimhttp.NotifierFunc(func(ctx context.Context, team string, u scim.User) error {
		logger.InfoContext(ctx, "scim: invitation e-mail", "team", team, "userName", u.UserName)
		return nil
	})
	scimHandler := scimhttp.NewHandler(m.SCIMStore(st.backend, st.scim),
		scimhttp.WithNotifier(notifier), scimhttp.WithLogger(logger), scimhttp.WithMaxBodyBytes(cfg.maxBody))
	a.routes = routes{scim: scimHandler}

	mux := http.NewServeMux()
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		if st.ping != nil {
			ctx, cancel := context.WithTimeout(r.Context(), healthTimeout)
			defer cancel()
			if err := st.ping(ctx); err != nil {
				logger.Warn("healthz: database unavailable", "error", err)
				w.Header().Set("Retry-After", outage.RetryAfterSeconds)
				w.WriteHeader(http.StatusServiceUnavailable)
				io.WriteString(w, "database unavailable\n")
				return
			}
		}
		io.WriteString(w, "ok\n")
	})
	// Every API is mounted the same way: its handler (NewHandler(store, options...)) at
	// its BasePath, behind the guard with its policy. Each request of the KM API, OData
	// and MCP is pinned to the KM store current at its start, so a reload never mixes two
	// generations of data in one answer. The KM API, OData and MCP ask one km.Service,
	// which applies the same page cap, time limit, cost budget and memory bound to all
	// three; an agent's pageSize is capped like a client's.
	kmService := km.NewService(kmStore, km.WithMaxPageSize(cfg.maxPageSize), km.WithQueryTimeout(cfg.queryTimeout),
		km.WithMaxQueryCost(cfg.queryBudget), km.WithMaxQueryMemory(cfg.queryMemory))
	mcpHandler := mcp.NewHandler(kmStore, mcp.WithService(kmService), mcp.WithMaxRows(min(cfg.maxPageSize, mcp.DefaultMaxRows)),
		mcp.WithLogger(logger), mcp.WithAllowedOrigins(cfg.corsOrigins...))
	for _, api := range []struct {
		pattern string
		policy  auth.Policy
		handler http.Handler
		// outer, when set, wraps the guarded handler: the MCP endpoint checks the
		// Origin header before the credentials.
		outer func(http.Handler) http.Handler
	}{
		{kmhttp.BasePath + "/", kmPol, a.live.Handler(kmhttp.NewHandler(kmStore, kmhttp.WithService(kmService),
			kmhttp.WithMaxBodyBytes(cfg.maxBody), kmhttp.WithLogger(logger))), nil},
		{odata.BasePath + "/", odataPol, a.live.Handler(odata.NewHandler(kmStore, odata.WithService(kmService),
			odata.WithMaxPageSize(cfg.maxPageSize), odata.WithLogger(logger))), nil},
		{scimhttp.BasePath + "/", scimPol, scimHandler, nil},
		{reportinghttp.BasePath + "/", reportingPolicy, reportinghttp.NewHandler(reportingStore, reportinghttp.WithLogger(logger)), nil},
		{mcp.BasePath, mcpPol, a.live.Handler(mcpHandler), mcpHandler.CheckOrigin},
		{"GET " + MetricsPath, metricsPol, a.metricsHandler(), nil},
	} {
		h := guard.Wrap(api.policy, notePrincipal(api.handler))
		if api.outer != nil {
			h = api.outer(h)
		}
		mux.Handle(api.pattern, h)
	}
	if len(oauthServers) > 0 {
		mountResourceMetadata(mux, oauthServers, oauthScopeList)
	}
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		problemhttp.Write(w, http.StatusNotFound, problem.CodeNotFoundPath, "no endpoint at "+r.URL.Path)
	})
	urls, err := publicurl.New(cfg.baseURL, cfg.trustedProxies, publicurl.WithLogger(logger))
	if err != nil {
		return nil, err
	}
	// From the outside in: the access log and the metrics see every request as the client
	// sent it; CORS answers preflights before authentication; HEAD runs the GET routes;
	// absolute URLs come from -base-url or a trusted proxy, never from the Host header.
	inner := cors.Handler(cfg.corsOrigins, head.Handler(limitBody(cfg.maxBody, urls.Wrap(mux))))
	a.handler = logRequests(logger, a.routes.of, m.Handler(routeOf, inner))
	return a, nil
}

// The policies the server guards the APIs with: each API's permission, credentials and
// error shape. The MCP server and the metrics take the KM API's credentials and errors.
var (
	kmPolicy        = auth.Policy{Permission: principal.PermKM, WriteError: kmhttp.WriteProblem}
	odataPolicy     = auth.Policy{Permission: principal.PermOData, WriteError: odata.WriteProblem}
	scimPolicy      = auth.Policy{Permission: principal.PermSCIM, WriteError: scimhttp.WriteProblem}
	reportingPolicy = auth.Policy{Permission: principal.PermReporting, Credentials: auth.APIKeyHeader,
		Tenant: reportinghttp.RequestTenant, WriteError: reportinghttp.WriteProblem}
	mcpPolicy     = auth.Policy{Permission: principal.PermMCP, WriteError: kmhttp.WriteProblem}
	metricsPolicy = auth.Policy{Permission: principal.PermMetrics, WriteError: kmhttp.WriteProblem}
)

// MetricsPath is where the server serves its Prometheus metrics.
const MetricsPath = "/metrics"

// metricsHandler serves the registry in Prometheus' formats.
func (a *app) metricsHandler() http.Handler {
	return promhttp.HandlerFor(a.registry, promhttp.HandlerOpts{
		ErrorLog: slog.NewLogLogger(a.log.Handler(), slog.LevelError), ErrorHandling: promhttp.ContinueOnError,
	})
}

// loadData returns the KM store and the reporting tenants: from -data, generated with
// -demo-rows, or the embedded demo.
func loadData(cfg *config, db *memory.DB, logger *slog.Logger) (*memory.KMStore, map[string][]reporting.Element, error) {
	start := time.Now()
	var (
		store   *memory.KMStore
		tenants map[string][]reporting.Element
		err     error
	)
	switch {
	case cfg.dataDir != "":
		store = db.KM()
		if err = store.Import(context.Background(), os.DirFS(cfg.dataDir)); err != nil {
			return nil, nil, fmt.Errorf("%s: %w", filepath.Clean(cfg.dataDir), err)
		}
		tenants, err = reporting.LoadDir(cfg.dataDir)
	default:
		if store, err = demostore.Store(cfg.demoRows); err != nil {
			return nil, nil, err
		}
		tenants, err = reporting.Load(demodata.FS)
	}
	if err != nil {
		return nil, nil, err
	}
	// Loading leaves garbage as large as the files (their bytes, cell references); with
	// GOGC=400 the runtime would keep it resident until the heap grows fivefold. Collect it
	// and return it to the system now, once, before serving.
	debug.FreeOSMemory()
	// Build the executors, the relationship indexes and the scratch memory of the queries
	// in the background (about a second at 1M orders), so that the first heavy request
	// after that runs as later ones do; the server serves meanwhile (a request needing an
	// index being built waits for it). Then return Warm's garbage (its hash maps) too.
	go func() {
		if err := store.Warm(); err != nil {
			logger.Warn("warming the store", "err", err)
			return
		}
		debug.FreeOSMemory()
	}()
	models, _ := store.Models(context.Background())
	logger.Info("data loaded", "models", len(models), "reportingTenants", len(tenants), "took", time.Since(start).Round(time.Millisecond))
	return store, tenants, nil
}

// developmentKey returns a random key allowed everything, for the team "demo" and the
// first reporting tenant.
func developmentKey(tenants map[string][]reporting.Element) (string, *auth.KeySet, error) {
	var raw [24]byte
	if _, err := rand.Read(raw[:]); err != nil {
		return "", nil, err
	}
	key := "kmkit-dev-" + base64.RawURLEncoding.EncodeToString(raw[:])
	var tenant string
	if len(tenants) > 0 {
		ids := make([]string, 0, len(tenants))
		for id := range tenants {
			ids = append(ids, id)
		}
		tenant = slices.Min(ids)
	}
	keys, err := auth.NewKeySet([]auth.Key{{
		Digest: auth.DigestOf(key), Name: "development", Team: "demo", Tenant: tenant,
		Permissions: []principal.Permission{principal.PermKM, principal.PermOData, principal.PermSCIM, principal.PermReporting, principal.PermMetrics, principal.PermMCP},
	}})
	return key, keys, err
}

// serve listens and serves until ctx is done, then shuts down gracefully.
func (a *app) serve(ctx context.Context, stdout io.Writer) error {
	ln, err := net.Listen("tcp", a.cfg.addr)
	if err != nil {
		return err
	}
	srv := &http.Server{
		Handler:           a.handler,
		ReadHeaderTimeout: readHeaderTimeout,
		ReadTimeout:       readTimeout,
		WriteTimeout:      writeTimeout,
		IdleTimeout:       idleTimeout,
		MaxHeaderBytes:    maxHeaderBytes,
		ErrorLog:          slog.NewLogLogger(a.log.Handler(), slog.LevelWarn),
	}
	fmt.Fprintf(stdout, "kmkit listening on http://%s\n", ln.Addr())
	if a.devKey != "" {
		fmt.Fprintf(stdout, "development key (valid until the server stops): %s\n", a.devKey)
		fmt.Fprintf(stdout, "try: curl -H 'Authorization: AppKey %s' http://%s%s/knowledge-models\n", a.devKey, ln.Addr(), kmhttp.BasePath)
	}
	servers := []*http.Server{srv}
	listeners := []net.Listener{ln}
	if a.cfg.metricsAddr != "" {
		mln, err := net.Listen("tcp", a.cfg.metricsAddr)
		if err != nil {
			ln.Close()
			return fmt.Errorf("-metrics-addr: %w", err)
		}
		mux := http.NewServeMux()
		mux.Handle("GET "+MetricsPath, a.metricsHandler())
		msrv := &http.Server{
			Handler: mux, ReadHeaderTimeout: readHeaderTimeout, ReadTimeout: readTimeout,
			WriteTimeout: writeTimeout, IdleTimeout: idleTimeout, MaxHeaderBytes: maxHeaderBytes,
			ErrorLog: srv.ErrorLog,
		}
		servers, listeners = append(servers, msrv), append(listeners, mln)
		fmt.Fprintf(stdout, "metrics without credentials on http://%s%s\n", mln.Addr(), MetricsPath)
	}
	go a.reloadOnSignal(ctx)
	if a.cfg.watch > 0 {
		go a.watch(ctx, a.cfg.watch)
	}
	errc := make(chan error, len(servers))
	for i, s := range servers {
		go func() { errc <- s.Serve(listeners[i]) }()
	}
	var serveErr error
	select {
	case serveErr = <-errc:
	case <-ctx.Done():
	}
	a.log.Info("shutting down", "grace", shutdownTimeout)
	sctx, cancel := context.WithTimeout(context.Background(), shutdownTimeout)
	defer cancel()
	for _, s := range servers {
		if err := s.Shutdown(sctx); err != nil {
			return fmt.Errorf("shutdown: %w", err)
		}
	}
	if serveErr != nil {
		return serveErr
	}
	for range servers {
		if err := <-errc; !errors.Is(err, http.ErrServerClosed) {
			return err
		}
	}
	a.log.Info("stopped")
	return nil
}
