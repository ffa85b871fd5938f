package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/kmkit/kmkit/km"
	"github.com/kmkit/kmkit/outage"
)

// ErrGenerationReplaced is the error of a KM read whose tables were replaced, since the
// KMStore was loaded, by an import of another KMStore (another server process's reload,
// typically), and that failed on the new tables: the store planned against columns that
// are no longer there. It is an outage.Error (503 with Retry-After): the server answers
// again once it loads the new definitions too.
var ErrGenerationReplaced = errors.New("sqlstore: the tables of this KM were replaced by another import; reload to serve them")

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
	// FallbackBehind: the replica has not replayed the imports the KMStore serves.
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
	// CheckEvery is how often each replica's km_imports is read to learn which imports
	// it has replayed; DefaultReplicaCheckEvery when zero. A replica that has just
	// caught up serves reads at most this much later.
	CheckEvery time.Duration
	// Logger logs each change of a replica's state (serving, unreachable, behind); nil
	// logs nothing.
	Logger *slog.Logger
	// Observe, when set, is called once for every KM read made while the DB has
	// replicas, with where it ran (for metrics); not for a read refused because another
	// import replaced the store's generation (ErrGenerationReplaced), which runs nowhere.
	Observe func(ReplicaRead)
}

// replica is one read replica: its pool and what its last check found.
type replica struct {
	name string // the URL without password
	sql  *sql.DB

	checking sync.Mutex // held by the check under way
	mu       sync.Mutex
	checked  time.Time         // when digests (or err) was read
	digests  map[string]string // km_imports: source -> digest, as replayed
	err      error             // the last check's or read's failure, or nil
	state    string            // the state last logged: "", "serving", FallbackUnreachable, FallbackBehind
	tokens   importTokens      // of consistentRead
}

// replicas are the read replicas of a DB.
type replicas struct {
	list []*replica
	next atomic.Uint64 // round robin
	opts ReplicaOptions
}

// AddReplicas adds read replicas to a PostgreSQL DB: PostgreSQL streaming standbys of
// its database (or any database that receives the primary's changes, km_imports
// included), named by postgres:// URLs. A replica need not be up: AddReplicas only checks
// the URLs, and a replica that cannot be reached never fails a read.
//
// The KM reads of the DB's KMStores (Query, Summarize) then go to a replica, in turn,
// when the replica has replayed the imports the store serves: every source the plan's
// KM reads has, in the replica's km_imports, the digest that the store's Import (or
// ImportGenerated) found or recorded on the primary, and the primary still has it (read
// before each such read: a store whose generation another import replaced answers
// ErrGenerationReplaced rather than a replica's old rows). Import records a source's
// digest in the transaction that replaces its table, so a replica whose km_imports shows
// the digest holds that table; the read checks it again on the replica after its
// statements (see consistentRead).
// Otherwise, and when the replica is unreachable or the read
// fails on it (for example canceled by a conflict with the replay), the read runs on the
// primary; each such fallback is reported to ReplicaOptions.Observe, and each change of
// a replica's state is logged. Models registered with PutModel alone (a host's own tables,
// whose changes kmkit does not record) are read from the primary. SCIM, reporting, the
// rate limiters, imports and migrations always use the primary.
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

// usable reports whether r has replayed want (source -> digest), reading its
// bookkeeping again when the last check is older than every, and else why not.
func (r *replica) usable(ctx context.Context, want map[string]string, every time.Duration) (bool, string) {
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
	if r.err != nil || r.digests == nil {
		return false, FallbackUnreachable
	}
	for src, d := range want {
		if r.digests[src] != d {
			return false, FallbackBehind
		}
	}
	return true, ""
}

// check reads r's km_imports.
func (r *replica) check(ctx context.Context) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), replicaCheckTimeout)
	defer cancel()
	digests, err := readDigests(ctx, r.sql, postgresDialect{}, nil)
	r.mu.Lock()
	defer r.mu.Unlock()
	r.checked = time.Now()
	r.err = err
	if err == nil {
		r.digests = digests
	}
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

// readDigests reads the digests of km_imports on q, of the sources of only (all when nil).
func readDigests(ctx context.Context, q querier, d dialect, only map[string]string) (map[string]string, error) {
	stmt := `SELECT source, digest FROM km_imports`
	var args []any
	if only != nil {
		srcs := make([]string, 0, len(only))
		for s := range only {
			srcs = append(srcs, s)
		}
		stmt += ` WHERE source IN (` + strings.TrimSuffix(strings.Repeat("?, ", len(srcs)), ", ") + `)`
		for _, s := range srcs {
			args = append(args, s)
		}
	}
	rows, err := q.QueryContext(ctx, d.rebind(stmt), args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[string]string{}
	for rows.Next() {
		var s, dg string
		if err := rows.Scan(&s, &dg); err != nil {
			return nil, err
		}
		out[s] = dg
	}
	return out, rows.Err()
}

// generation returns the digests (source -> digest) of the imported sources that the
// records of m read, as the store's import found them; nil when the store imported none
// of them. ok is false when some record's source was not imported by the store (a
// host's own table): then no replica is known to hold it.
func (s *KMStore) generation(m *km.KnowledgeModel) (want map[string]string, ok bool) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	ok = true
	for _, r := range m.Records {
		d, found := s.digests[r.Source]
		if !found {
			ok = false
			continue
		}
		if want == nil {
			want = map[string]string{}
		}
		want[r.Source] = d
	}
	return want, ok
}

// setDigests records the digests of the sources the store imported (see generation).
func (s *KMStore) setDigests(digests map[string]string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.digests == nil {
		s.digests = map[string]string{}
	}
	for src, d := range digests {
		s.digests[src] = d
	}
}

// read runs one KM read of p, all its statements on the tables of one import (see
// consistentRead): on a
// replica that has replayed the store's generation when there is one (see AddReplicas),
// else, or when it fails there, on the primary. A read of a KM whose tables another
// import replaced since the store loaded them answers ErrGenerationReplaced, as an
// outage, without running: the store's definitions and what it knows of the tables are
// of its own generation, and a replica that has not replayed the import would answer
// rows the primary no longer holds.
func (s *KMStore) read(ctx context.Context, p *km.Plan, run func(q querier) error) error {
	want, all := s.generation(p.KM)
	if rs := s.db.replicas; rs != nil {
		fallback := FallbackUnrecorded
		if all && len(want) > 0 {
			// The generation must still be the primary's: a replica that holds it
			// would otherwise answer what another import has replaced. The primary is
			// asked while the replica reads (one round trip less), and a replica's
			// answer is returned only once the primary has said so.
			current := make(chan error, 1)
			go func() { current <- s.current(ctx, want) }()
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
				err := consistentRead(ctx, r.sql, postgresDialect{}, &r.tokens, want, run)
				if err == nil {
					if err := <-current; err != nil {
						return err
					}
					r.logState(rs.opts.Logger, "serving", nil)
					rs.observe(ReplicaRead{Replica: r.name})
					return nil
				}
				if ctx.Err() != nil || sameOnPrimary(err) {
					return err
				}
				if errors.As(err, new(*otherGeneration)) {
					// Replayed another import since its last check: it holds not
					// the store's generation.
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
	err := consistentRead(ctx, s.db.sql, s.db.d, &s.db.tokens, want, run)
	if og := (*otherGeneration)(nil); errors.As(err, &og) {
		return og.replaced()
	}
	return err
}

// current returns nil when every source of want has its digest in the primary's
// km_imports, else the outage of ErrGenerationReplaced (or the error of the read).
func (s *KMStore) current(ctx context.Context, want map[string]string) error {
	now, err := readDigests(ctx, s.db.sql, s.db.d, want)
	if err != nil {
		return err
	}
	if src, changed := changedSource(want, now); changed {
		return (&otherGeneration{source: src}).replaced()
	}
	return nil
}

// otherGeneration is the error of a read whose tables, as km_imports shows, are of
// another import of a source than the store's.
type otherGeneration struct{ source string }

func (e *otherGeneration) Error() string {
	return "sqlstore: source " + e.source + " holds another import than the store's"
}

// replaced returns the outage of ErrGenerationReplaced for e.
func (e *otherGeneration) replaced() error {
	return &outage.Error{Err: fmt.Errorf("%w (source %s)", ErrGenerationReplaced, e.source)}
}

// changedSource returns a source whose digest in now is not its digest in want.
func changedSource(want, now map[string]string) (string, bool) {
	for src, d := range want {
		if now[src] != d {
			return src, true
		}
	}
	return "", false
}

// importToken is what a read knows of a source's import on one server: its digest and
// the version of its km_imports row (PostgreSQL's xmin), which every import of the
// source changes, whether or not the digest does.
type importToken struct{ digest, version string }

// importTokens are the import tokens of the sources one server (the primary, or a
// replica) was last seen to hold, for consistentRead.
type importTokens struct {
	mu sync.Mutex
	m  map[string]importToken
}

// get returns the tokens of the sources of want, or nil when one is unknown.
func (t *importTokens) get(want map[string]string) map[string]importToken {
	t.mu.Lock()
	defer t.mu.Unlock()
	out := make(map[string]importToken, len(want))
	for src := range want {
		tok, ok := t.m[src]
		if !ok {
			return nil
		}
		out[src] = tok
	}
	return out
}

// set records tokens.
func (t *importTokens) set(tokens map[string]importToken) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.m == nil {
		t.m = map[string]importToken{}
	}
	for src, tok := range tokens {
		t.m[src] = tok
	}
}

// readTokens reads the import tokens of the sources of want on q (PostgreSQL).
func readTokens(ctx context.Context, q querier, want map[string]string) (map[string]importToken, error) {
	srcs := make([]string, 0, len(want))
	for src := range want {
		srcs = append(srcs, src)
	}
	rows, err := q.QueryContext(ctx, `SELECT source, digest, xmin::text FROM km_imports WHERE source = ANY($1)`, srcs)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := make(map[string]importToken, len(srcs))
	for rows.Next() {
		var src string
		var tok importToken
		if err := rows.Scan(&src, &tok.digest, &tok.version); err != nil {
			return nil, err
		}
		out[src] = tok
	}
	return out, rows.Err()
}

// changedToken returns a source of want whose digest in now is not the store's, and
// whether one is.
func changedToken(want map[string]string, now map[string]importToken) (string, bool) {
	for src, d := range want {
		if now[src].digest != d {
			return src, true
		}
	}
	return "", false
}

// consistentReadHook, when set (by tests), is called on PostgreSQL before a read's
// statements (false) and after them (true).
var consistentReadHook func(after bool)

// consistentReadTries bounds the reads of consistentRead that imports of the store's own
// digests (a restart's, which claims the rows again) overtake.
const consistentReadTries = 3

// consistentRead runs run on pool so that all its statements read the tables of the
// store's generation (the digests of want): never a page of one import and its count
// of another, or the tables of a KPI's joins from two imports, and never the tables of
// another import than the store's, which it answers with an *otherGeneration instead.
//
// On SQLite run gets one read transaction, one snapshot of the whole file (its schema
// included) in WAL mode, which first checks the digests.
//
// On PostgreSQL a transaction would not do: an import replaces a table by DROP, CREATE
// and COPY FREEZE, whose frozen rows every snapshot sees, and locking the tables first
// costs round trips that double the time of a small page. Instead every import changes
// the version (xmin) of the source's km_imports row, in the transaction that replaces the
// table, and each statement of a read (READ COMMITTED) sees the tables as of its own
// start, after its locks. The read runs its statements on the pool, then reads the
// tokens again: when they are the tokens known before the read (those of an earlier
// read, or read first), no import committed in between and every statement read the
// same tables, of the store's digests; when an import did, the read runs again, and
// when the digests are no longer the store's, the read answers *otherGeneration. A
// query's page and count statements carry the tokens they read (generationReader): when
// every statement of the read carried the same tokens, of the store's digests, the read
// is answered without reading them again; any other read costs one statement more than
// its own.
func consistentRead(ctx context.Context, pool *sql.DB, d dialect, known *importTokens, want map[string]string, run func(q querier) error) error {
	if len(want) == 0 {
		return run(pool)
	}
	if d.name() != "postgres" {
		return readTx(ctx, pool, d, func(tx *sql.Tx) error {
			now, err := readDigests(ctx, tx, d, want)
			if err != nil {
				return err
			}
			if src, changed := changedSource(want, now); changed {
				return &otherGeneration{source: src}
			}
			return run(tx)
		})
	}
	for try := 1; ; try++ {
		before := known.get(want)
		if before == nil {
			now, err := readTokens(ctx, pool, want)
			if err != nil {
				return err
			}
			known.set(now)
			if src, changed := changedToken(want, now); changed {
				return &otherGeneration{source: src}
			}
			before = now
		}
		if consistentReadHook != nil {
			consistentReadHook(false)
		}
		gr := &generationReader{querier: pool, tokens: tokensQuery(want)}
		err := run(gr)
		if ctx.Err() != nil {
			return err
		}
		if consistentReadHook != nil {
			consistentReadHook(true)
		}
		if now, ok := gr.oneImport(); ok {
			if _, changed := changedToken(want, now); !changed {
				// Every statement read the store's import, and the same one: no
				// statement more (a page and its count, say, each carried the tokens).
				known.set(now)
				return err
			}
		}
		after, aerr := readTokens(ctx, pool, want)
		if aerr != nil {
			if err != nil {
				return err
			}
			return aerr
		}
		known.set(after)
		if src, changed := changedToken(want, after); changed {
			return &otherGeneration{source: src}
		}
		same := true
		for src, tok := range before {
			same = same && after[src] == tok
		}
		if same {
			return err // the tables of the store's generation throughout: its answer or error
		}
		if try == consistentReadTries {
			// Imports keep overtaking the read.
			if err != nil {
				return err
			}
			return &otherGeneration{source: "(imports under way)"}
		}
	}
}

// generationReader is the querier of one try of consistentRead on PostgreSQL. A
// statement is consistent by itself: PostgreSQL locks its tables before it takes its
// snapshot, so the km_imports rows it reads are those of the imports whose tables it
// reads (an import replaces a table and updates its row in one transaction). So the page
// and count statements of a query carry the import tokens of the read's sources in a
// column of their own (carry), and report them (saw); when every statement of the read
// reported, and all the same tokens, the read knows which one import it read without a
// statement more. Any other statement (a search's scores, a summary's) leaves the check
// to the statement after the read.
type generationReader struct {
	querier
	tokens     string // the scalar subquery of the tokens (tokensQuery)
	statements int
	seen       []string
}

// QueryContext counts the statement and runs it.
func (g *generationReader) QueryContext(ctx context.Context, q string, args ...any) (*sql.Rows, error) {
	g.statements++
	return g.querier.QueryContext(ctx, q, args...)
}

// QueryRowContext counts the statement and runs it.
func (g *generationReader) QueryRowContext(ctx context.Context, q string, args ...any) *sql.Row {
	g.statements++
	return g.querier.QueryRowContext(ctx, q, args...)
}

// carry returns st with its page and count statements selecting the tokens after their
// own columns. The page keeps its order: PostgreSQL returns a subquery's rows as it
// produces them when the query around it only adds a column.
func (g *generationReader) carry(st *statement) *statement {
	c := *st
	c.page = "SELECT q.*, " + g.tokens + " AS kmkit_generation FROM (" + st.page + ") q"
	c.count = "SELECT q.*, " + g.tokens + " AS kmkit_generation FROM (" + st.count + ") q"
	c.generation = true
	return &c
}

// saw records the tokens one statement read.
func (g *generationReader) saw(tokens string) { g.seen = append(g.seen, tokens) }

// oneImport returns the tokens the read's statements read when every statement
// reported them and they are all the same.
func (g *generationReader) oneImport() (map[string]importToken, bool) {
	if g.statements == 0 || len(g.seen) != g.statements {
		return nil, false
	}
	for _, t := range g.seen[1:] {
		if t != g.seen[0] {
			return nil, false
		}
	}
	out := map[string]importToken{}
	for _, rec := range strings.Split(g.seen[0], "\x1e") {
		f := strings.Split(rec, "\x1f")
		if len(f) != 3 {
			return nil, false
		}
		out[f[0]] = importToken{digest: f[1], version: f[2]}
	}
	return out, true
}

// tokensQuery is the scalar subquery of the import tokens of the sources of want, as
// readTokens reads them, in one text: source, digest and version of each, sorted.
func tokensQuery(want map[string]string) string {
	srcs := make([]string, 0, len(want))
	for src := range want {
		srcs = append(srcs, quoteLiteral(src))
	}
	slices.Sort(srcs)
	return "(SELECT string_agg(source || chr(31) || digest || chr(31) || xmin::text, chr(30) ORDER BY source)" +
		" FROM km_imports WHERE source IN (" + strings.Join(srcs, ", ") + "))"
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
