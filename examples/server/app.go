package main

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
	"time"

	"github.com/kmkit/kmkit/auth"
	"github.com/kmkit/kmkit/auth/keysfile"
	"github.com/kmkit/kmkit/examples/server/demodata"
	"github.com/kmkit/kmkit/km"
	"github.com/kmkit/kmkit/odata"
	"github.com/kmkit/kmkit/problem"
	"github.com/kmkit/kmkit/reporting"
	"github.com/kmkit/kmkit/scim"
	"github.com/kmkit/kmkit/storage/memory"
)

// Server timeouts.
const (
	readHeaderTimeout = 10 * time.Second
	readTimeout       = 30 * time.Second
	writeTimeout      = 60 * time.Second
	idleTimeout       = 120 * time.Second
	shutdownTimeout   = 15 * time.Second
	maxHeaderBytes    = 64 << 10
)

// app is the assembled server: stores, authentication and routes.
type app struct {
	cfg     *config
	log     *slog.Logger
	handler http.Handler
	devKey  string // "" when a keys file is used
	close   func() error
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
	kmStore, tenants, reportingStore := st.km, st.tenants, st.reporting
	var authn auth.Authenticator
	if cfg.keysFile != "" {
		f, err := keysfile.Load(cfg.keysFile)
		if err != nil {
			return nil, err
		}
		if authn, err = f.Authenticator(); err != nil {
			return nil, err
		}
	} else {
		key, keys, err := developmentKey(tenants)
		if err != nil {
			return nil, err
		}
		a.devKey, authn = key, auth.KeysAndTokens(keys, nil)
	}
	guard, err := auth.NewGuard(auth.Config{Authenticator: authn, Logger: logger, Limiter: st.limiter})
	if err != nil {
		return nil, err
	}
	notifier := scim.NotifierFunc(func(ctx context.Context, team string, u scim.User) error {
		logger.InfoContext(ctx, "scim: invitation e-mail", "team", team, "userName", u.UserName)
		return nil
	})

	mux := http.NewServeMux()
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		io.WriteString(w, "ok\n")
	})
	mux.Handle(km.BasePath+"/", guard.KM(km.NewHandler(kmStore, km.Options{
		MaxPageSize: cfg.maxPageSize, MaxBodyBytes: cfg.maxBody, Logger: logger,
	})))
	mux.Handle(odata.BasePath+"/", odata.VersionHeader(guard.OData(odata.NewHandler(kmStore, odata.Options{
		MaxPageSize: cfg.maxPageSize, Logger: logger,
	}))))
	mux.Handle(scim.DefaultPrefix+"/", guard.SCIM(scim.NewHandler(st.scim,
		scim.WithNotifier(notifier), scim.WithLogger(logger), scim.WithMaxBodyBytes(cfg.maxBody))))
	mux.Handle("/api/v1/", guard.Reporting(reporting.NewHandler(reportingStore, reporting.WithLogger(logger))))
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		problem.Write(w, http.StatusNotFound, problem.CodeNotFoundPath, "no endpoint at "+r.URL.Path)
	})
	a.handler = logRequests(logger, limitBody(cfg.maxBody, mux))
	return a, nil
}

// loadData returns the KM store and the reporting tenants: from -data, generated with
// -demo-rows, or the embedded demo.
func loadData(cfg *config, logger *slog.Logger) (*memory.KMStore, map[string][]reporting.Element, error) {
	start := time.Now()
	var (
		store   *memory.KMStore
		tenants map[string][]reporting.Element
		err     error
	)
	switch {
	case cfg.dataDir != "":
		if store, err = memory.LoadKMStore(os.DirFS(cfg.dataDir)); err != nil {
			return nil, nil, fmt.Errorf("%s: %w", filepath.Clean(cfg.dataDir), err)
		}
		tenants, err = reporting.LoadDir(cfg.dataDir)
	default:
		if store, err = demodata.Store(cfg.demoRows); err != nil {
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
		Permissions: []auth.Permission{auth.PermKM, auth.PermOData, auth.PermSCIM, auth.PermReporting},
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
		fmt.Fprintf(stdout, "try: curl -H 'Authorization: AppKey %s' http://%s%s/knowledge-models\n", a.devKey, ln.Addr(), km.BasePath)
	}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	a.log.Info("shutting down", "grace", shutdownTimeout)
	sctx, cancel := context.WithTimeout(context.Background(), shutdownTimeout)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil {
		return fmt.Errorf("shutdown: %w", err)
	}
	if err := <-errc; !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	a.log.Info("stopped")
	return nil
}
