package sqlstore_test

import (
	"context"
	"path/filepath"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kmkit/kmkit/auth/ratelimit"
	"github.com/kmkit/kmkit/auth/ratelimit/limitertest"
	"github.com/kmkit/kmkit/storage/sqlstore"
)

func TestLocalLimiterConformance(t *testing.T) {
	limitertest.Run(t, func(t *testing.T) ratelimit.Limiter {
		l := openSQLite(t).LocalLimiter(time.Hour, nil)
		t.Cleanup(func() { l.Close() })
		return l
	})
}

func storedCount(t *testing.T, db *sqlstore.DB, key string) int {
	t.Helper()
	var n int
	// key is a constant of the tests: quoted in the text, for both dialects' placeholders.
	if err := db.SQL().QueryRow(`SELECT coalesce(sum(count), 0) FROM rate_limits WHERE key = '` + key + `'`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// TestLocalLimiter: requests are counted without a write, the counts reach the table at
// the flush, a new limiter on the same file (a restarted server) keeps the budget, and two
// limiters on one file learn each other's counts at their flushes.
func TestLocalLimiter(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "kmkit.db")
	db := open(t, "sqlite:"+path)
	now := time.Date(2026, 1, 1, 10, 30, 0, 0, time.UTC)
	a := db.LocalLimiter(time.Hour, nil)
	for range 7 {
		if d, err := a.Allow(ctx, "k", 10, time.Hour, now); err != nil || !d.Allowed {
			t.Fatalf("Allow = %+v, %v", d, err)
		}
	}
	if n := storedCount(t, db, "k"); n != 0 {
		t.Fatalf("%d counted in the table before the flush, want 0: Allow must not write", n)
	}
	if err := a.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	if n := storedCount(t, db, "k"); n != 7 {
		t.Fatalf("%d counted in the table after the flush, want 7", n)
	}
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}

	// A restart: the budget continues from the table.
	b := db.LocalLimiter(time.Hour, nil)
	defer b.Close()
	c := open(t, "sqlite:"+path).LocalLimiter(time.Hour, nil)
	defer c.Close()
	d, err := b.Allow(ctx, "k", 10, time.Hour, now)
	if err != nil || !d.Allowed || d.Remaining != 2 {
		t.Fatalf("after a restart: %+v, %v; want 2 remaining", d, err)
	}
	// c, another process, spends 2; b learns of them at its flush.
	c.Allow(ctx, "k", 10, time.Hour, now)
	c.Allow(ctx, "k", 10, time.Hour, now)
	if err := c.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	if err := b.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	if d, _ := b.Allow(ctx, "k", 10, time.Hour, now); d.Allowed {
		t.Errorf("after the other process spent the rest: %+v, want refused", d)
	}
	// The next window starts afresh.
	if d, _ := b.Allow(ctx, "k", 10, time.Hour, now.Add(time.Hour)); !d.Allowed || d.Remaining != 9 {
		t.Errorf("next window: %+v, want 9 remaining", d)
	}
}

// TestLimiterSweepEvery: the sweep runs on its schedule and removes ended windows.
func TestLimiterSweepEvery(t *testing.T) {
	for name, open := range map[string]func(testing.TB) *sqlstore.DB{"sqlite": openSQLite, "postgres": openPostgres} {
		t.Run(name, func(t *testing.T) {
			db := open(t)
			l := db.Limiter()
			if _, err := l.Allow(t.Context(), "old", 5, time.Millisecond, time.Now().Add(-time.Hour)); err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithCancel(t.Context())
			done := make(chan struct{})
			go func() { l.SweepEvery(ctx, 10*time.Millisecond, nil); close(done) }()
			deadline := time.Now().Add(5 * time.Second)
			for storedCount(t, db, "old") != 0 {
				if time.Now().After(deadline) {
					t.Fatal("the row of an ended window was not swept within 5 s")
				}
				time.Sleep(10 * time.Millisecond)
			}
			cancel()
			<-done
		})
	}
}

// BenchmarkLimiterSQLite counts requests of 8 parallel clients on SQLite with the upsert per
// request (Limiter) and in memory with flushes (LocalLimiter), next to the in-memory
// ratelimit.Memory as the peer; it reports each as a ratio to the peer.
func BenchmarkLimiterSQLite(b *testing.B) {
	ctx := context.Background()
	now := time.Date(2026, 1, 1, 10, 30, 0, 0, time.UTC)
	run := func(b *testing.B, l ratelimit.Limiter) float64 {
		b.SetParallelism(8)
		var key atomic.Int64
		start := time.Now()
		b.RunParallel(func(pb *testing.PB) {
			k := "client-" + strconv.FormatInt(key.Add(1), 10)
			for pb.Next() {
				if _, err := l.Allow(ctx, k, 1<<30, time.Hour, now); err != nil {
					b.Error(err)
					return
				}
			}
		})
		return float64(time.Since(start).Nanoseconds()) / float64(b.N)
	}
	var peer float64
	b.Run("memory", func(b *testing.B) { peer = run(b, ratelimit.NewMemory()) })
	b.Run("upsert", func(b *testing.B) {
		ns := run(b, openSQLite(b).Limiter())
		b.ReportMetric(ns/peer, "x_memory")
	})
	b.Run("local", func(b *testing.B) {
		l := openSQLite(b).LocalLimiter(sqlstore.DefaultFlushEvery, nil)
		defer l.Close()
		ns := run(b, l)
		b.ReportMetric(ns/peer, "x_memory")
	})
}
