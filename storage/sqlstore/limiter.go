package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"time"

	"github.com/kmkit/kmkit/auth/ratelimit"
)

// Limiter is a ratelimit.Limiter whose counters live in the DB's rate_limits table, so that
// every replica on the database shares one budget per key. Each Allow is one statement: an
// upsert that starts a new window or counts the request only while it fits, and returns
// the new count (no row when the request is refused).
type Limiter struct{ db *DB }

// Limiter returns a ratelimit.Limiter backed by the DB.
func (db *DB) Limiter() *Limiter { return &Limiter{db: db} }

// Allow implements ratelimit.Limiter. A limit below 1 refuses every request without
// touching the database; a window below one nanosecond is treated as one nanosecond.
func (l *Limiter) Allow(ctx context.Context, key string, limit int, window time.Duration, now time.Time) (ratelimit.Decision, error) {
	if window <= 0 {
		window = 1
	}
	start := ratelimit.WindowStart(now, window)
	d := ratelimit.Decision{Limit: limit, Reset: start.Add(window)}
	if limit < 1 {
		return d, nil
	}
	// Window starts are kept in nanoseconds since the epoch; windows shorter than that
	// resolution would not be told apart. The counter only moves forward: a request of a
	// window older than the stored one (a process whose clock is a little behind, or
	// whose request reached the database late, at a window's end) counts in the stored
	// window, so that it never restarts the budget of a window under way.
	startNs := start.UnixNano()
	var count int
	var counted int64 // the start of the window the request counts in
	greatest := l.db.d.greatest([]string{"rate_limits.window_start_ns", "excluded.window_start_ns"})
	err := l.db.sql.QueryRowContext(ctx, l.db.d.rebind(`INSERT INTO rate_limits (key, window_start_ns, window_ns, count)
		VALUES (?, ?, ?, 1)
		ON CONFLICT (key) DO UPDATE SET
			count = CASE WHEN rate_limits.window_start_ns >= excluded.window_start_ns AND rate_limits.window_ns = excluded.window_ns
				THEN rate_limits.count + 1 ELSE 1 END,
			window_start_ns = CASE WHEN rate_limits.window_ns = excluded.window_ns
				THEN `+greatest+` ELSE excluded.window_start_ns END,
			window_ns = excluded.window_ns
		WHERE rate_limits.window_start_ns < excluded.window_start_ns OR rate_limits.window_ns <> excluded.window_ns
			OR rate_limits.count < ?
		RETURNING count, window_start_ns`), key, startNs, int64(window), limit).Scan(&count, &counted)
	if errors.Is(err, sql.ErrNoRows) {
		return d, nil
	}
	if err != nil {
		return d, err
	}
	d.Allowed = true
	d.Remaining = limit - count
	d.Reset = time.Unix(0, counted).UTC().Add(window)
	return d, nil
}

// Peek implements ratelimit.Peeker: the key's budget left in the window of now, read
// without counting a request.
func (l *Limiter) Peek(ctx context.Context, key string, limit int, window time.Duration, now time.Time) (ratelimit.Decision, error) {
	if window <= 0 {
		window = 1
	}
	start := ratelimit.WindowStart(now, window)
	d := ratelimit.Decision{Limit: limit, Reset: start.Add(window)}
	var count int
	err := l.db.sql.QueryRowContext(ctx, l.db.d.rebind(`SELECT count FROM rate_limits
		WHERE key = ? AND window_start_ns = ? AND window_ns = ?`), key, start.UnixNano(), int64(window)).Scan(&count)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return d, err
	}
	d.Remaining = max(limit-count, 0)
	d.Allowed = d.Remaining > 0
	return d, nil
}

// Sweep deletes the counters whose window ended before now, and returns how many.
// Run it now and then (the counters of idle keys are otherwise kept).
func (l *Limiter) Sweep(ctx context.Context, now time.Time) (int64, error) {
	res, err := l.db.sql.ExecContext(ctx, l.db.d.rebind(`DELETE FROM rate_limits WHERE window_start_ns + window_ns <= ?`), now.UnixNano())
	if err != nil {
		return 0, err
	}
	return res.RowsAffected()
}

var _ ratelimit.Peeker = (*Limiter)(nil)
