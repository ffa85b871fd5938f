package server

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/kmkit/kmkit/auth/ratelimit"
	"github.com/kmkit/kmkit/internal/demodata"
	"github.com/kmkit/kmkit/km"
	"github.com/kmkit/kmkit/query/column"
	"github.com/kmkit/kmkit/reporting"
	"github.com/kmkit/kmkit/scim"
	"github.com/kmkit/kmkit/storage/memory"
	"github.com/kmkit/kmkit/storage/sqlstore"
)

// limiterSweepEvery is how often the PostgreSQL limiter's ended windows are deleted.
const limiterSweepEvery = time.Minute

// stores are what the server serves: in memory (-db memory:) or in a database.
type stores struct {
	km        km.Store
	scim      scim.Store
	reporting reporting.Store
	limiter   ratelimit.Limiter // nil: the guard's in-memory limiter
	tenants   map[string][]reporting.Element
	close     func() error
	backend   string  // memory, sqlite or postgres: the backend label of the metrics
	db        *sql.DB // the database's pool, or nil in memory
	// newKM returns a new, empty KM store of the backend (memory.DB.KM, sqlstore.DB.KM),
	// for reloads.
	newKM func() kmImporter
	// ping checks that the database answers; nil in memory.
	ping func(context.Context) error
	// collectors are the metrics of the stores to register (the read replicas').
	collectors []prometheus.Collector
}

// kmImporter is the KM store of either backend: a km.Store that imports a data directory
// (memory.KMStore.Import, sqlstore.KMStore.Import).
type kmImporter interface {
	km.Store
	Import(ctx context.Context, fsys fs.FS) error
}

// openStores opens the stores cfg.db names and loads the KM data and reporting elements
// (of -data, generated with -demo-rows, or the embedded demo) into them. Into a database
// they are imported once: a restart, or a second replica, finds them there (see
// sqlstore.KMStore.Import).
func openStores(cfg *config, logger *slog.Logger) (*stores, error) {
	if cfg.db == "" || cfg.db == "memory:" {
		db := memory.New()
		kmStore, tenants, err := loadData(cfg, db, logger)
		if err != nil {
			return nil, err
		}
		rep := db.Reporting()
		if err := putTenants(tenants, rep.PutTenant); err != nil {
			return nil, err
		}
		return &stores{km: kmStore, scim: db.SCIM(), reporting: rep, tenants: tenants, close: func() error { return nil }, backend: "memory",
			newKM: func() kmImporter { return db.KM() }}, nil
	}
	ctx := context.Background()
	start := time.Now()
	db, err := sqlstore.Open(ctx, cfg.db)
	if err != nil {
		return nil, err
	}
	var replicaReads *prometheus.CounterVec
	if len(cfg.dbReplicas) > 0 {
		replicaReads = prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: "kmkit", Name: "db_replica_reads_total",
			Help: "KM reads with -db-replicas, by where they ran (served_by: replica or primary) and why not on a replica (fallback: behind, unreachable, error, unrecorded; empty on a replica).",
		}, []string{"served_by", "fallback"})
		err := db.AddReplicas(cfg.dbReplicas, sqlstore.ReplicaOptions{
			Logger: logger,
			Observe: func(r sqlstore.ReplicaRead) {
				if r.Replica != "" {
					replicaReads.WithLabelValues("replica", "").Inc()
				} else {
					replicaReads.WithLabelValues("primary", r.Fallback).Inc()
				}
			},
		})
		if err != nil {
			db.Close()
			return nil, err
		}
		logger.Info("read replicas", "replicas", db.Replicas())
	}
	st, err := importData(ctx, cfg, db, logger)
	if err != nil {
		db.Close()
		return nil, err
	}
	logger.Info("data loaded", "db", db.Dialect(), "reportingTenants", len(st.tenants), "took", time.Since(start).Round(time.Millisecond))
	if replicaReads != nil {
		st.collectors = append(st.collectors, replicaReads)
	}
	// Rate limits: on SQLite counted in memory and written every second, so that a request
	// never waits for the database's one write lock; on PostgreSQL one upsert per request,
	// exact across replicas. Either way ended windows are swept every minute.
	if db.Dialect() == "sqlite" {
		l := db.LocalLimiter(sqlstore.DefaultFlushEvery, logger)
		st.limiter, st.close = l, func() error { return errors.Join(l.Close(), db.Close()) }
	} else {
		l := db.Limiter()
		sweepCtx, stopSweep := context.WithCancel(context.Background())
		done := make(chan struct{})
		go func() { l.SweepEvery(sweepCtx, limiterSweepEvery, logger); close(done) }()
		st.limiter, st.close = l, func() error { stopSweep(); <-done; return db.Close() }
	}
	return st, nil
}

func importData(ctx context.Context, cfg *config, db *sqlstore.DB, logger *slog.Logger) (*stores, error) {
	kmStore := db.KM()
	var (
		tenants map[string][]reporting.Element
		err     error
	)
	switch {
	case cfg.dataDir != "":
		if err := kmStore.Import(ctx, os.DirFS(cfg.dataDir)); err != nil {
			return nil, fmt.Errorf("%s: %w", filepath.Clean(cfg.dataDir), err)
		}
		tenants, err = reporting.LoadDir(cfg.dataDir)
	case cfg.demoRows > 0:
		models, err := km.Load(demodata.FS)
		if err != nil {
			return nil, err
		}
		// The demo is generated only when the database does not hold it already: a
		// restart with the same -demo-rows neither generates nor imports it.
		generated, err := kmStore.ImportGenerated(ctx, models, fmt.Sprintf("demo-rows=%d", cfg.demoRows),
			func() (map[string]*column.Table, error) { return demodata.Tables(cfg.demoRows) })
		if err != nil {
			return nil, err
		}
		logger.Info("demo data", "rows", cfg.demoRows, "generated", generated)
		tenants, err = reporting.Load(demodata.FS)
		if err != nil {
			return nil, err
		}
	default:
		if err := kmStore.Import(ctx, demodata.FS); err != nil {
			return nil, err
		}
		tenants, err = reporting.Load(demodata.FS)
	}
	if err != nil {
		return nil, err
	}
	rep := db.Reporting()
	err = putTenants(tenants, func(tenant string, elements []reporting.Element) error {
		return rep.PutTenantContext(ctx, tenant, elements)
	})
	if err != nil {
		return nil, err
	}
	return &stores{km: kmStore, scim: db.SCIM(), reporting: rep, tenants: tenants, close: db.Close,
		backend: db.Dialect(), db: db.SQL(), ping: db.SQL().PingContext,
		newKM: func() kmImporter { return db.KM() }}, nil
}

// putTenants puts the elements of every tenant, in tenant order; an error names the tenant.
func putTenants(tenants map[string][]reporting.Element, put func(tenant string, elements []reporting.Element) error) error {
	for _, tenant := range slices.Sorted(maps.Keys(tenants)) {
		if err := put(tenant, tenants[tenant]); err != nil {
			return fmt.Errorf("reporting tenant %s: %w", tenant, err)
		}
	}
	return nil
}
