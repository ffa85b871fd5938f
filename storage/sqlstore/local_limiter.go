package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"log/slog"
	"sync"
	"time"

	"github.com/kmkit/kmkit/auth/ratelimit"
)

// LocalLimiter is a ratelimit.Peeker that counts in memory and writes the counts to the
// DB's rate_limits table in the background, so that a request never waits for a write:
// the Limiter of a SQLite database, where every write takes the database's one write lock.
//
// A key's count is read from the table the first time the key is seen in a window (so a
// restarted server keeps its budgets), then kept in memory; every FlushEvery the requests
// counted since the last flush are added to the table in one transaction, and the counts
// read back include those of other processes on the same file, which an exact budget
// across processes needs Limiter for instead. Rows of ended windows are swept every
// minute. A crash loses the counts of at most the last FlushEvery (Close writes them on a
// graceful stop). Create it with DB.LocalLimiter and Close it before the DB.
type LocalLimiter struct {
	db     *DB
	every  time.Duration
	now    func() time.Time
	log    *slog.Logger
	mu     sync.Mutex
	counts map[string]*localCount
	ended  []pendingCount // pending counts of windows a key has left
	cancel context.CancelFunc
	done   chan struct{}
}

type pendingCount struct {
	key               string
	startNs, windowNs int64
	n                 int
}

type localCount struct {
	startNs, windowNs int64
	count             int // in this window, as far as this process knows
	pending           int // counted here and not yet written
}

// DefaultFlushEvery is how often a LocalLimiter writes its counts.
const DefaultFlushEvery = time.Second

// sweepLimiterEvery is how often the rows of ended windows are deleted.
const sweepLimiterEvery = time.Minute

// LocalLimiter returns a LocalLimiter on the DB that flushes every flushEvery
// (DefaultFlushEvery when not positive) and logs flush failures to logger (slog.Default()
// when nil).
func (db *DB) LocalLimiter(flushEvery time.Duration, logger *slog.Logger) *LocalLimiter {
	if flushEvery <= 0 {
		flushEvery = DefaultFlushEvery
	}
	if logger == nil {
		logger = slog.Default()
	}
	ctx, cancel := context.WithCancel(context.Background())
	l := &LocalLimiter{db: db, every: flushEvery, now: time.Now, log: logger, counts: map[string]*localCount{}, cancel: cancel, done: make(chan struct{})}
	go l.run(ctx)
	return l
}

func (l *LocalLimiter) run(ctx context.Context) {
	defer close(l.done)
	flush := time.NewTicker(l.every)
	defer flush.Stop()
	sweep := time.NewTicker(sweepLimiterEvery)
	defer sweep.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-flush.C:
			if err := l.Flush(ctx); err != nil && ctx.Err() == nil {
				l.log.Warn("sqlstore: rate limit counts not written; kept for the next flush", "error", err)
			}
		case <-sweep.C:
			if _, err := l.db.Limiter().Sweep(ctx, l.now()); err != nil && ctx.Err() == nil {
				l.log.Warn("sqlstore: rate limit sweep failed", "error", err)
			}
		}
	}
}

// Close stops the background work and writes the counts not yet written.
func (l *LocalLimiter) Close() error {
	l.cancel()
	<-l.done
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	return l.Flush(ctx)
}

// entry returns the count of key in the window, loading it from the table when the key is
// new in the window. It returns with l.mu held.
func (l *LocalLimiter) entry(ctx context.Context, key string, startNs, windowNs int64) (*localCount, error) {
	l.mu.Lock()
	if c := l.counts[key]; c != nil && c.startNs == startNs && c.windowNs == windowNs {
		return c, nil
	}
	l.mu.Unlock()
	var stored int
	err := l.db.sql.QueryRowContext(ctx, l.db.d.rebind(`SELECT count FROM rate_limits
		WHERE key = ? AND window_start_ns = ? AND window_ns = ?`), key, startNs, windowNs).Scan(&stored)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return nil, err
	}
	l.mu.Lock()
	c := l.counts[key]
	if c == nil || c.startNs != startNs || c.windowNs != windowNs {
		if c != nil && c.pending > 0 { // the next flush writes the ended window's count
			l.ended = append(l.ended, pendingCount{key, c.startNs, c.windowNs, c.pending})
		}
		c = &localCount{startNs: startNs, windowNs: windowNs, count: stored}
		l.counts[key] = c
	}
	return c, nil
}

// Allow implements ratelimit.Limiter. It reads the table the first time a key is seen in a
// window and never writes.
func (l *LocalLimiter) Allow(ctx context.Context, key string, limit int, window time.Duration, now time.Time) (ratelimit.Decision, error) {
	if window <= 0 {
		window = 1
	}
	start := ratelimit.WindowStart(now, window)
	d := ratelimit.Decision{Limit: limit, Reset: start.Add(window)}
	if limit < 1 {
		return d, nil
	}
	c, err := l.entry(ctx, key, start.UnixNano(), int64(window))
	if err != nil {
		return d, err
	}
	defer l.mu.Unlock()
	if c.count >= limit {
		return d, nil
	}
	c.count++
	c.pending++
	d.Allowed = true
	d.Remaining = limit - c.count
	return d, nil
}

// Peek implements ratelimit.Peeker.
func (l *LocalLimiter) Peek(ctx context.Context, key string, limit int, window time.Duration, now time.Time) (ratelimit.Decision, error) {
	if window <= 0 {
		window = 1
	}
	start := ratelimit.WindowStart(now, window)
	d := ratelimit.Decision{Limit: limit, Reset: start.Add(window)}
	c, err := l.entry(ctx, key, start.UnixNano(), int64(window))
	if err != nil {
		return d, err
	}
	defer l.mu.Unlock()
	d.Remaining = max(limit-c.count, 0)
	d.Allowed = d.Remaining > 0
	return d, nil
}

// Flush writes the counts not yet written, in one transaction, and takes back the counts
// of the table (which include other processes' requests). Entries of ended windows are
// dropped from memory once written. On failure the counts stay pending.
func (l *LocalLimiter) Flush(ctx context.Context) error {
	nowNs := l.now().UnixNano()
	l.mu.Lock()
	todo := l.ended
	l.ended = nil
	for key, c := range l.counts {
		switch {
		case c.pending > 0:
			todo = append(todo, pendingCount{key, c.startNs, c.windowNs, c.pending})
			c.pending = 0
		case c.startNs+c.windowNs <= nowNs:
			delete(l.counts, key)
		}
	}
	l.mu.Unlock()
	if len(todo) == 0 {
		return nil
	}
	totals := make([]int, len(todo))
	err := l.db.tx(ctx, func(tx *sql.Tx) error {
		stmt, err := tx.PrepareContext(ctx, l.db.d.rebind(`INSERT INTO rate_limits (key, window_start_ns, window_ns, count)
			VALUES (?, ?, ?, ?)
			ON CONFLICT (key) DO UPDATE SET
				count = CASE WHEN rate_limits.window_start_ns = excluded.window_start_ns AND rate_limits.window_ns = excluded.window_ns
					THEN rate_limits.count + excluded.count ELSE excluded.count END,
				window_start_ns = excluded.window_start_ns,
				window_ns = excluded.window_ns
			WHERE rate_limits.window_start_ns <= excluded.window_start_ns
			RETURNING count`))
		if err != nil {
			return err
		}
		defer stmt.Close()
		for i, p := range todo {
			err := stmt.QueryRowContext(ctx, p.key, p.startNs, p.windowNs, p.n).Scan(&totals[i])
			if errors.Is(err, sql.ErrNoRows) { // the table holds a later window
				totals[i] = -1
				continue
			}
			if err != nil {
				return err
			}
		}
		return nil
	})
	l.mu.Lock()
	defer l.mu.Unlock()
	for i, p := range todo {
		c := l.counts[p.key]
		if c == nil || c.startNs != p.startNs || c.windowNs != p.windowNs {
			if err != nil {
				l.ended = append(l.ended, p)
			}
			continue
		}
		if err != nil {
			c.pending += p.n
		} else if totals[i] > c.count {
			c.count = totals[i]
		}
	}
	return err
}

var _ ratelimit.Peeker = (*LocalLimiter)(nil)

// SweepEvery deletes the counters of ended windows every interval until ctx is done. Run
// it in a goroutine next to a Limiter (a LocalLimiter sweeps by itself).
func (l *Limiter) SweepEvery(ctx context.Context, interval time.Duration, logger *slog.Logger) {
	if logger == nil {
		logger = slog.Default()
	}
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case now := <-t.C:
			if _, err := l.Sweep(ctx, now); err != nil && ctx.Err() == nil {
				logger.Warn("sqlstore: rate limit sweep failed", "error", err)
			}
		}
	}
}
