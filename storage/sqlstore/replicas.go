package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/kmkit/kmkit/km"
	"github.com/kmkit/kmkit/outage"
)

// ErrGenerationReplaced is the error of a KM read whose generation tables are gone: a
// later import (another server process's reload, typically) replaced them, and they were
// dropped once the DB's KeepReplaced had passed (see SetKeepReplaced). It is wrapped in
// an outage.Error (503 with Retry-After): the server answers again once it reloads.
var ErrGenerationReplaced = errors.New("sqlstore: the tables of this KM were replaced by another import and dropped; reload to serve them")

// DefaultReplicaCheckEvery is how often a replica's import bookkeeping is read again (see
// ReplicaOptions.CheckEvery).
const DefaultReplicaCheckEvery = time.Second

// replicaCheckTimeout bounds one read of a replica's bookkeeping: a replica that answers
// more slowly counts as down until the next check.
const replicaCheckTimeout = 2 * time.Second

// Fallback reasons of ReplicaRead.
const (
	// FallbackUnreachable: the replica could not be reached (or its last check failed).
	FallbackUnreachable = "unreachable"
	// FallbackBehind: the replica does not hold the generation tables the KMStore reads
	// (it has not replayed their load).
	FallbackBehind = "behind"
	// FallbackError: the read failed on the replica (a statement canceled by a
	// conflict with the replay of the primary's changes, for example) and was run again
	// on the primary.
	FallbackError = "error"
	// FallbackUnrecorded: the KM reads a source that the store did not import (a host's
	// own table registered with PutModel), whose changes no replica's km_imports shows.
	FallbackUnrecorded = "unrecorded"
)

// ReplicaRead describes where one KM read ran, for ReplicaOptions.Observe.
type ReplicaRead struct {
	// Replica is the replica that served the read (its URL without password), or ""
	// when the primary did.
	Replica string
	// Fallback says why no replica served it: FallbackUnreachable, FallbackBehind or
	// FallbackError; "" when a replica did.
	Fallback string
}

// ReplicaOptions configures the read replicas of a DB (AddReplicas).
type ReplicaOptions struct {
	// CheckEvery is how often each replica's km_generations is read to learn which
	// generation tables it holds; DefaultReplicaCheckEvery when zero. A replica that has
	// just caught up serves reads at most this much later.
	CheckEvery time.Duration
	// Logger logs each change of a replica's state (serving, unreachable, behind); nil
	// logs nothing.
	Logger *slog.Logger
	// Observe, when set, is called once for every KM read made while the DB has
	// replicas, with where it ran (for metrics).
	Observe func(ReplicaRead)
}

// replica is one read replica: its pool and what its last check found.
type replica struct {
	name string // the URL without password
	sql  *sql.DB

	checking sync.Mutex // held by the check under way
	mu       sync.Mutex
	checked  time.Time       // when tables (or err) was read
	tables   map[string]bool // the generation tables of km_generations, as replayed
	err      error           // the last check's or read's failure, or nil
	state    string          // the state last logged: "", "serving", FallbackUnreachable, FallbackBehind
}

// replicas are the read replicas of a DB.
type replicas struct {
	list []*replica
	next atomic.Uint64 // round robin
	opts ReplicaOptions
}

// AddReplicas adds read replicas to a PostgreSQL DB: PostgreSQL streaming standbys of
// its database (or any database that receives the primary's changes, km_generations
// included), named by postgres:// URLs. A replica need not be up: AddReplicas only
// checks the URLs, and a replica that cannot be reached never fails a read.
//
// The KM reads of the DB's KMStores (Query, Summarize) then go to a replica, in turn,
// when the replica holds the generation tables the store reads (those its Import or
// ImportGenerated loaded or found): a load creates a generation table and records it in
// km_generations in one transaction, which the replica replays whole, and no later load
// changes it. Otherwise, and when the replica is unreachable or the read fails on it (for
// example canceled by a conflict with the replay), the read runs on the primary; each
// such fallback is reported to ReplicaOptions.Observe, and each change of a replica's
// state is logged. Models registered with PutModel alone (a host's own tables, whose
// changes kmkit does not record) are read from the primary. SCIM, reporting, the rate
// limiters, imports and migrations always use the primary.
//
// AddReplicas is called at most once, after Open and before the DB serves.
func (db *DB) AddReplicas(dsns []string, opts ReplicaOptions) error {
	if db.d.name() != "postgres" {
		return errors.New("sqlstore: read replicas need a PostgreSQL primary")
	}
	if db.replicas != nil {
		return errors.New("sqlstore: AddReplicas was called before on this DB")
	}
	if opts.CheckEvery <= 0 {
		opts.CheckEvery = DefaultReplicaCheckEvery
	}
	rs := &replicas{opts: opts}
	for _, dsn := range dsns {
		if !strings.HasPrefix(dsn, "postgres://") && !strings.HasPrefix(dsn, "postgresql://") {
			closeReplicas(rs.list)
			return fmt.Errorf("sqlstore: replica %q: want a postgres:// URL", redact(dsn))
		}
		pool, err := openPostgresPool(dsn)
		if err != nil {
			closeReplicas(rs.list)
			return fmt.Errorf("sqlstore: replica %s: %w", redact(dsn), err)
		}
		rs.list = append(rs.list, &replica{name: redact(dsn), sql: pool})
	}
	if len(rs.list) == 0 {
		return nil
	}
	db.replicas = rs
	return nil
}

// closeReplicas closes the pools of rs.
func closeReplicas(rs []*replica) error {
	var errs []error
	for _, r := range rs {
		errs = append(errs, r.sql.Close())
	}
	return errors.Join(errs...)
}

// Replicas returns the URLs (without passwords) of the DB's read replicas.
func (db *DB) Replicas() []string {
	if db.replicas == nil {
		return nil
	}
	out := make([]string, len(db.replicas.list))
	for i, r := range db.replicas.list {
		out[i] = r.name
	}
	return out
}

// usable reports whether r holds the generation tables of want, reading its bookkeeping
// again when the last check is older than every, and else why not.
func (r *replica) usable(ctx context.Context, want tableNames, every time.Duration) (bool, string) {
	r.mu.Lock()
	first, stale := r.checked.IsZero(), time.Since(r.checked) >= every
	r.mu.Unlock()
	// One check at a time: the other reads go by the last one meanwhile, except before
	// the first, which they wait for.
	if first {
		r.checking.Lock()
		r.mu.Lock()
		first = r.checked.IsZero()
		r.mu.Unlock()
		if first {
			r.check(ctx)
		}
		r.checking.Unlock()
	} else if stale && r.checking.TryLock() {
		r.check(ctx)
		r.checking.Unlock()
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.err != nil || r.tables == nil {
		return false, FallbackUnreachable
	}
	for _, table := range want {
		if !r.tables[table] {
			return false, FallbackBehind
		}
	}
	return true, ""
}

// check reads r's km_generations.
func (r *replica) check(ctx context.Context) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), replicaCheckTimeout)
	defer cancel()
	tables, err := readGenerations(ctx, r.sql)
	r.mu.Lock()
	defer r.mu.Unlock()
	r.checked = time.Now()
	r.err = err
	if err == nil {
		r.tables = tables
	}
}

// readGenerations reads the generation tables of km_generations on a PostgreSQL pool.
func readGenerations(ctx context.Context, q querier) (map[string]bool, error) {
	rows, err := q.QueryContext(ctx, `SELECT table_name FROM km_generations`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[string]bool{}
	for rows.Next() {
		var t string
		if err := rows.Scan(&t); err != nil {
			return nil, err
		}
		out[t] = true
	}
	return out, rows.Err()
}

// down records that a read could not reach r: it serves no read until its next check.
func (r *replica) down(err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.err = err
	r.checked = time.Now()
}

// logState logs r's state when it changed since it was last logged.
func (r *replica) logState(log *slog.Logger, state string, err error) {
	r.mu.Lock()
	changed := r.state != state
	r.state = state
	r.mu.Unlock()
	if !changed || log == nil {
		return
	}
	switch state {
	case "serving":
		log.Info("read replica serves KM reads", "replica", r.name)
	case FallbackBehind:
		log.Warn("read replica has not replayed the served imports: KM reads go to the primary", "replica", r.name)
	default:
		log.Warn("read replica unavailable: KM reads go to the primary", "replica", r.name, "reason", state, "err", err)
	}
}

// ofModel returns the generation tables (source -> table) of the sources that the
// records of m read; nil when t has none of them. ok is false when some record's source
// is not in t (a host's own table): then no replica is known to hold it.
func (t tableNames) ofModel(m *km.KnowledgeModel) (want tableNames, ok bool) {
	ok = true
	for _, r := range m.Records {
		table, found := t[r.Source]
		if !found {
			ok = false
			continue
		}
		if want == nil {
			want = tableNames{}
		}
		want[r.Source] = table
	}
	return want, ok
}

// generationTables returns the generation tables of the sources the store imported.
func (s *KMStore) generationTables() tableNames {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.tables
}

// setTables records the generation tables of the sources the store imported, and the
// relationship targets of srcs (each a field of its generation table) as checked unique:
// loadTable refused a table holding a target value twice, and a table found current was
// loaded with the same targets (they are part of its digest).
func (s *KMStore) setTables(tables tableNames, srcs []source) {
	s.mu.Lock()
	defer s.mu.Unlock()
	next := maps.Clone(s.tables)
	if next == nil {
		next = tableNames{}
	}
	maps.Copy(next, tables)
	s.tables = next
	// The targets of the tables still read, and those of srcs.
	read := map[string]bool{}
	for _, table := range next {
		read[table] = true
	}
	unique := map[uniqueField]bool{}
	for f := range s.unique {
		if read[f.table] {
			unique[f] = true
		}
	}
	for _, src := range srcs {
		for _, rel := range src.targets {
			unique[uniqueField{tables.of(src.name), rel.To.Field}] = true
		}
	}
	s.unique = unique
}

// read runs one KM read of p with the generation tables of the store: on a replica that
// holds them when there is one (see AddReplicas), else, or when it fails there, on the
// primary. A generation table is never changed once loaded, so all the statements of a
// read see one import of each source, whatever other servers import meanwhile. A read of
// a generation table that is gone (replaced, then dropped after the DB's KeepReplaced)
// answers ErrGenerationReplaced, as an outage.
func (s *KMStore) read(ctx context.Context, p *km.Plan, run func(q querier, tables tableNames) error) error {
	tables := s.generationTables()
	if rs := s.db.replicas; rs != nil {
		fallback := FallbackUnrecorded
		if want, all := tables.ofModel(p.KM); all && len(want) > 0 {
			n := uint64(len(rs.list))
			start := rs.next.Add(1)
			for i := range n {
				r := rs.list[(start+i)%n]
				ok, why := r.usable(ctx, want, rs.opts.CheckEvery)
				if !ok {
					r.logState(rs.opts.Logger, why, r.lastErr())
					fallback = why
					continue
				}
				err := run(r.sql, tables)
				if err == nil {
					r.logState(rs.opts.Logger, "serving", nil)
					rs.observe(ReplicaRead{Replica: r.name})
					return nil
				}
				if ctx.Err() != nil || sameOnPrimary(err) {
					return err
				}
				if undefinedTable(err) {
					// Its tables changed since its last check.
					r.logState(rs.opts.Logger, FallbackBehind, nil)
					fallback = FallbackBehind
					continue
				}
				// Any other failure runs again on the primary: a statement canceled by
				// a conflict with the replay, say. Those of the database are logged.
				var pe *pgconn.PgError
				if Unavailable(err) {
					r.down(err)
					r.logState(rs.opts.Logger, FallbackUnreachable, err)
				} else if errors.As(err, &pe) && rs.opts.Logger != nil {
					rs.opts.Logger.Warn("KM read failed on a read replica: read from the primary", "replica", r.name, "err", err)
				}
				fallback = FallbackError
				break
			}
		}
		rs.observe(ReplicaRead{Fallback: fallback})
	}
	err := run(s.db.sql, tables)
	if undefinedTable(err) {
		if want, _ := tables.ofModel(p.KM); len(want) == 0 {
			return err // a host's own table is missing: not a generation's
		}
		return &outage.Error{Err: fmt.Errorf("%w: %w", ErrGenerationReplaced, err)}
	}
	return err
}

// lastErr returns the replica's last failure.
func (r *replica) lastErr() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.err
}

// observe reports a read to the options' Observe.
func (rs *replicas) observe(r ReplicaRead) {
	if rs.opts.Observe != nil {
		rs.opts.Observe(r)
	}
}

// sameOnPrimary reports whether err, the error of a read on a replica, would be the
// same on the primary: a value out of range or another data exception of the request's
// own (SQLSTATE class 22), which is not run twice.
func sameOnPrimary(err error) bool {
	var pe *pgconn.PgError
	return errors.As(err, &pe) && strings.HasPrefix(pe.Code, "22")
}
