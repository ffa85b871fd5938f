package sqlstore_test

import (
	"bytes"
	"context"
	"database/sql"
	"io"
	"io/fs"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kmkit/kmkit/km"
	"github.com/kmkit/kmkit/km/kmhttp"
	"github.com/kmkit/kmkit/storage/sqlstore"
	"github.com/kmkit/kmkit/storage/storetest"
)

// ReplicaEnv names the variable holding the URL of a PostgreSQL streaming standby of the
// server PostgresEnv names (same user and database). Without it the read replica tests
// skip.
const ReplicaEnv = "KMKIT_POSTGRES_REPLICA_DSN"

// replicaOf returns the URL of the standby of ReplicaEnv that reads the schema of
// primary (a URL of postgresDSN), or skips.
func replicaOf(t testing.TB, primary string) string {
	t.Helper()
	dsn := os.Getenv(ReplicaEnv)
	if dsn == "" {
		t.Skip(ReplicaEnv + " is not set: the read replica tests need a PostgreSQL streaming standby of " + PostgresEnv)
	}
	p, err := url.Parse(primary)
	if err != nil {
		t.Fatal(err)
	}
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatal(err)
	}
	q := u.Query()
	q.Set("search_path", p.Query().Get("search_path"))
	u.RawQuery = q.Encode()
	return u.String()
}

// reads counts where the KM reads of a DB ran.
type reads struct {
	mu        sync.Mutex
	replica   int
	fallbacks map[string]int
}

func (r *reads) observe(rr sqlstore.ReplicaRead) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if rr.Replica != "" {
		r.replica++
		return
	}
	if r.fallbacks == nil {
		r.fallbacks = map[string]int{}
	}
	r.fallbacks[rr.Fallback]++
}

// take returns the counts so far and starts again from zero.
func (r *reads) take() (int, map[string]int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	n, f := r.replica, r.fallbacks
	r.replica, r.fallbacks = 0, nil
	return n, f
}

// openReplicated opens the primary dsn with the replicas, which are checked every 5 ms,
// its reads counted in rd and its log written to logs (either may be nil).
func openReplicated(t testing.TB, dsn string, replicas []string, rd *reads, logs io.Writer) *sqlstore.DB {
	t.Helper()
	db := open(t, dsn)
	opts := sqlstore.ReplicaOptions{CheckEvery: 5 * time.Millisecond}
	if rd != nil {
		opts.Observe = rd.observe
	}
	if logs != nil {
		opts.Logger = slog.New(slog.NewTextHandler(logs, nil))
	}
	if err := db.AddReplicas(replicas, opts); err != nil {
		t.Fatal(err)
	}
	return db
}

// waitReplayed waits until the standby of ReplicaEnv has replayed what the primary of
// PostgresEnv has written so far.
func waitReplayed(t testing.TB) {
	t.Helper()
	primary, err := sql.Open("pgx", os.Getenv(PostgresEnv))
	if err != nil {
		t.Fatal(err)
	}
	defer primary.Close()
	standby, err := sql.Open("pgx", os.Getenv(ReplicaEnv))
	if err != nil {
		t.Fatal(err)
	}
	defer standby.Close()
	var lsn string
	if err := primary.QueryRow(`SELECT pg_current_wal_lsn()::text`).Scan(&lsn); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		var done bool
		err := standby.QueryRow(`SELECT pg_last_wal_replay_lsn() >= $1::pg_lsn`, lsn).Scan(&done)
		if err != nil {
			t.Fatal(err)
		}
		if done {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the standby has not replayed %s in 30 s", lsn)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TestReplicaKMSuite runs the KM suite (storetest.RunKM, against the reference evaluator)
// with the KM reads going to the standby of ReplicaEnv: each store imports on the primary
// and waits until the standby has replayed the import, so that its reads go to the
// standby.
func TestReplicaKMSuite(t *testing.T) {
	rd := &reads{}
	newStore := func(t *testing.T, data fs.FS) km.Store {
		dsn := postgresDSN(t)
		s := openReplicated(t, dsn, []string{replicaOf(t, dsn)}, rd, nil).KM()
		if err := s.Import(context.Background(), data); err != nil {
			t.Fatal(err)
		}
		waitReplayed(t)
		return s
	}
	postgresDSN(t) // skips without PostgresEnv
	replicaOf(t, "postgres://x/?search_path=x")
	storetest.RunKM(t, newStore)
	n, f := rd.take()
	t.Logf("reads served by the replica: %d; by the primary: %v", n, f)
	if n == 0 {
		t.Errorf("the replica served none of the suite's reads (primary: %v)", f)
	}
}

// TestReplicaBehind pauses the standby's replay: a store whose import the standby has not
// replayed reads from the primary (its new data, never the standby's old tables), the
// fallback observed as "behind" and logged once; a store of the generation the standby
// holds, which the new import replaced on the primary, reads its own generation on the
// standby; when replay resumes, the new store's reads go to the standby again.
func TestReplicaBehind(t *testing.T) {
	dsn := postgresDSN(t)
	rdsn := replicaOf(t, dsn)
	rd := &reads{}
	var logs syncBuffer
	db := openReplicated(t, dsn, []string{rdsn}, rd, &logs)
	oldData, err := storetest.DemoData(40)
	if err != nil {
		t.Fatal(err)
	}
	newData, err := storetest.DemoData(45)
	if err != nil {
		t.Fatal(err)
	}
	oldRef, err := storetest.LoadReference(oldData, "o2c")
	if err != nil {
		t.Fatal(err)
	}
	newRef, err := storetest.LoadReference(newData, "o2c")
	if err != nil {
		t.Fatal(err)
	}
	reqs := []storetest.RefRequest{
		{Record: "ORDERS", Fields: []string{"ORDER_ID", "NET_VALUE"}},
		{Fields: []string{"CUSTOMERS.COUNTRY"}, KPIs: []string{"TOTAL_NET"}},
	}
	old := db.KM()
	if err := old.Import(t.Context(), oldData); err != nil {
		t.Fatal(err)
	}
	waitReplayed(t)
	oldH := kmhttp.NewHandler(old, kmhttp.WithMaxPageSize(5000))
	for _, req := range reqs {
		checkReference(t, oldH, oldRef, req)
	}
	if n, f := rd.take(); n != len(reqs) || len(f) != 0 {
		t.Fatalf("before the pause: %d reads on the replica, %v on the primary; want %d and none", n, f, len(reqs))
	}

	pause(t, true)
	t.Cleanup(func() { pause(t, false) })
	fresh := db.KM()
	if err := fresh.Import(t.Context(), newData); err != nil {
		t.Fatal(err)
	}
	time.Sleep(20 * time.Millisecond) // a few checks of the replica
	freshH := kmhttp.NewHandler(fresh, kmhttp.WithMaxPageSize(5000))
	for range 3 {
		for _, req := range reqs {
			checkReference(t, freshH, newRef, req)
		}
	}
	if n, f := rd.take(); n != 0 || f[sqlstore.FallbackBehind] != 3*len(reqs) {
		t.Errorf("replay paused, the new store: %d reads on the replica, %v on the primary; want none and %d behind", n, f, 3*len(reqs))
	}
	if got := strings.Count(logs.String(), "has not replayed the served imports"); got != 1 {
		t.Errorf("%d log lines about the replica being behind, want 1:\n%s", got, logs.String())
	}
	// The old store's generation, no longer the primary's current one, is held by the
	// paused standby too: the old store reads it there.
	for _, req := range reqs {
		checkReference(t, oldH, oldRef, req)
	}
	if n, f := rd.take(); n != len(reqs) || len(f) != 0 {
		t.Errorf("replay paused, the old store: %d reads on the replica, %v on the primary; want %d and none", n, f, len(reqs))
	}

	pause(t, false)
	waitReplayed(t)
	time.Sleep(20 * time.Millisecond)
	for _, req := range reqs {
		checkReference(t, freshH, newRef, req)
	}
	if n, f := rd.take(); n != len(reqs) || len(f) != 0 {
		t.Errorf("replay resumed: %d reads on the replica, %v on the primary; want %d and none", n, f, len(reqs))
	}
	if !strings.Contains(logs.String(), "read replica serves KM reads") {
		t.Errorf("no log line of the replica serving again:\n%s", logs.String())
	}
}

// pause pauses (or resumes) the replay of the standby of ReplicaEnv and waits until it
// is paused.
func pause(t testing.TB, on bool) {
	t.Helper()
	standby, err := sql.Open("pgx", os.Getenv(ReplicaEnv))
	if err != nil {
		t.Fatal(err)
	}
	defer standby.Close()
	if !on {
		if _, err := standby.Exec(`SELECT pg_wal_replay_resume()`); err != nil {
			t.Error(err)
		}
		return
	}
	if _, err := standby.Exec(`SELECT pg_wal_replay_pause()`); err != nil {
		t.Fatal(err)
	}
	for range 1000 {
		var state string
		if err := standby.QueryRow(`SELECT pg_get_wal_replay_pause_state()`).Scan(&state); err != nil {
			t.Fatal(err)
		}
		if state == "paused" {
			return
		}
		time.Sleep(5 * time.Millisecond)
	}
	t.Fatal("the standby's replay did not pause")
}

// TestReplicaStopped reads through a replica that stops while the DB uses it (a proxy in
// front of the standby, closed with its connections) and through one that never was up:
// every read answers 200 with the reference's rows, from the primary, observed as
// unreachable and logged.
func TestReplicaStopped(t *testing.T) {
	dsn := postgresDSN(t)
	px, rdsn := proxied(t, replicaOf(t, dsn))
	// A port on which nothing listens.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed, err := url.Parse(rdsn)
	if err != nil {
		t.Fatal(err)
	}
	closed.Host = l.Addr().String()
	l.Close()

	data, ref := demoReference(t)
	reqs := []storetest.RefRequest{
		{Record: "ORDERS", Fields: []string{"ORDER_ID", "NET_VALUE"}},
		{Fields: []string{"CUSTOMERS.COUNTRY"}, KPIs: []string{"TOTAL_NET"}},
	}
	rd := &reads{}
	var logs syncBuffer
	s := openReplicated(t, dsn, []string{rdsn}, rd, &logs).KM()
	if err := s.Import(t.Context(), data); err != nil {
		t.Fatal(err)
	}
	waitReplayed(t)
	h := kmhttp.NewHandler(s, kmhttp.WithMaxPageSize(5000))
	for _, req := range reqs {
		checkReference(t, h, ref, req)
	}
	if n, f := rd.take(); n != len(reqs) || len(f) != 0 {
		t.Fatalf("replica up: %d reads on the replica, %v on the primary; want %d and none", n, f, len(reqs))
	}
	px.stop()
	for range 3 {
		for _, req := range reqs {
			checkReference(t, h, ref, req)
		}
	}
	n, f := rd.take()
	if n != 0 || f[sqlstore.FallbackUnreachable]+f[sqlstore.FallbackError] != 3*len(reqs) {
		t.Errorf("replica stopped: %d reads on the replica, %v on the primary; want none and %d unreachable", n, f, 3*len(reqs))
	}
	if !strings.Contains(logs.String(), "read replica unavailable") {
		t.Errorf("no log line of the replica being unavailable:\n%s", logs.String())
	}

	// A replica that is down from the start.
	rd2 := &reads{}
	s2 := openReplicated(t, dsn, []string{closed.String()}, rd2, nil).KM()
	if err := s2.Import(t.Context(), data); err != nil {
		t.Fatal(err)
	}
	h2 := kmhttp.NewHandler(s2, kmhttp.WithMaxPageSize(5000))
	for _, req := range reqs {
		checkReference(t, h2, ref, req)
	}
	if n, f := rd2.take(); n != 0 || f[sqlstore.FallbackUnreachable] != len(reqs) {
		t.Errorf("replica never up: %d reads on the replica, %v on the primary; want none and %d unreachable", n, f, len(reqs))
	}
}

// TestReplicaStoppedMidRead stops the standby's proxy while clients read through it
// (statements under way on it, connections closed under them): every answer is 200 with
// the reference's rows, those cut short answered again from the primary.
func TestReplicaStoppedMidRead(t *testing.T) {
	dsn := postgresDSN(t)
	px, rdsn := proxied(t, replicaOf(t, dsn))
	data, ref := demoReference(t)
	rd := &reads{}
	s := openReplicated(t, dsn, []string{rdsn}, rd, nil).KM()
	if err := s.Import(t.Context(), data); err != nil {
		t.Fatal(err)
	}
	waitReplayed(t)
	time.Sleep(20 * time.Millisecond)
	h := kmhttp.NewHandler(s, kmhttp.WithMaxPageSize(5000))
	reqs := []storetest.RefRequest{
		{Record: "ORDERS", Fields: []string{"ORDER_ID", "NET_VALUE"}},
		{Fields: []string{"CUSTOMERS.COUNTRY"}, KPIs: []string{"TOTAL_NET"}},
		{Fields: []string{"CUSTOMERS.COUNTRY", "ORDERS.STATUS"}, KPIs: []string{"TOTAL_NET", "ORDER_COUNT"}},
	}
	var (
		served  atomic.Int64
		stopped atomic.Bool
		wg      sync.WaitGroup
	)
	for i := range 4 {
		wg.Go(func() {
			for n := i; n < i+60; n++ {
				checkReference(t, h, ref, reqs[n%len(reqs)])
				if served.Add(1) == 60 {
					px.stop()
					stopped.Store(true)
				}
			}
		})
	}
	wg.Wait()
	n, f := rd.take()
	t.Logf("reads on the replica: %d; on the primary: %v", n, f)
	if !stopped.Load() || n == 0 || f[sqlstore.FallbackUnreachable]+f[sqlstore.FallbackError] == 0 {
		t.Errorf("reads on the replica %d, on the primary %v: want both, the replica stopped midway", n, f)
	}
}

// TestAddReplicasErrors: replicas need a PostgreSQL primary and postgres:// URLs.
func TestAddReplicasErrors(t *testing.T) {
	if err := openSQLite(t).AddReplicas([]string{"postgres://x@127.0.0.1:1/x"}, sqlstore.ReplicaOptions{}); err == nil {
		t.Error("SQLite with a replica: no error")
	}
	db := openPostgres(t)
	if err := db.AddReplicas([]string{"sqlite:/tmp/x.db"}, sqlstore.ReplicaOptions{}); err == nil || !strings.Contains(err.Error(), "postgres:// URL") {
		t.Errorf("a sqlite: replica: %v", err)
	}
	if err := db.AddReplicas([]string{"postgres://kmkit:secret@127.0.0.1:1/x"}, sqlstore.ReplicaOptions{}); err != nil {
		t.Fatal(err)
	}
	if got := db.Replicas(); len(got) != 1 || strings.Contains(got[0], "secret") {
		t.Errorf("Replicas() = %q, want one URL without its password", got)
	}
	if err := db.AddReplicas([]string{"postgres://kmkit@127.0.0.1:1/y"}, sqlstore.ReplicaOptions{}); err == nil {
		t.Error("a second AddReplicas: no error")
	}
}

// syncBuffer is a bytes.Buffer safe for concurrent writes (a log).
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

// proxy forwards TCP connections on a loopback port to target until stop, which closes
// the listener and every connection, as a server that stops would.
type proxy struct {
	l       net.Listener
	mu      sync.Mutex
	conns   []net.Conn
	stopped atomic.Bool
	wg      sync.WaitGroup
}

// proxied returns a proxy in front of the server of dsn and dsn through it.
func proxied(t testing.TB, dsn string) (*proxy, string) {
	t.Helper()
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatal(err)
	}
	px := newProxy(t, u.Host)
	u.Host = px.addr()
	return px, u.String()
}

func newProxy(t testing.TB, target string) *proxy {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &proxy{l: l}
	p.wg.Go(func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			s, err := net.Dial("tcp", target)
			if err != nil {
				c.Close()
				continue
			}
			p.mu.Lock()
			if p.stopped.Load() {
				p.mu.Unlock()
				c.Close()
				s.Close()
				return
			}
			p.conns = append(p.conns, c, s)
			p.mu.Unlock()
			p.wg.Go(func() { io.Copy(s, c); s.Close() })
			p.wg.Go(func() { io.Copy(c, s); c.Close() })
		}
	})
	t.Cleanup(p.stop)
	return p
}

func (p *proxy) addr() string { return p.l.Addr().String() }

func (p *proxy) stop() {
	p.mu.Lock()
	p.stopped.Store(true)
	p.l.Close()
	for _, c := range p.conns {
		c.Close()
	}
	p.conns = nil
	p.mu.Unlock()
	p.wg.Wait()
}

// TestReplicaReadFails reads through a replica whose km_generations lists the store's
// generation tables but whose tables lack the fields (a replica that does not hold what
// it says): every read answers the reference's rows from the primary, observed as
// FallbackError and logged.
func TestReplicaReadFails(t *testing.T) {
	dsn := postgresDSN(t)
	rdsn := replicaOf(t, dsn)
	data, ref := demoReference(t)
	rd := &reads{}
	var logs syncBuffer
	// The decoy schema: the primary's km_imports, and tables of the same names with no
	// field.
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatal(err)
	}
	schema := u.Query().Get("search_path")
	decoy := schema + "_decoy"
	admin, err := sql.Open("pgx", os.Getenv(PostgresEnv))
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close()
	if _, err := admin.Exec("CREATE SCHEMA " + decoy); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { admin.Exec("DROP SCHEMA " + decoy + " CASCADE") })
	r, err := url.Parse(rdsn)
	if err != nil {
		t.Fatal(err)
	}
	q := r.Query()
	q.Set("search_path", decoy)
	r.RawQuery = q.Encode()

	db := openReplicated(t, dsn, []string{r.String()}, rd, &logs)
	s := db.KM()
	if err := s.Import(t.Context(), data); err != nil {
		t.Fatal(err)
	}
	stmts := []string{"CREATE TABLE " + decoy + ".km_generations AS SELECT * FROM " + schema + ".km_generations"}
	for _, src := range []string{"orders", "order_items", "customers", "materials", "activities"} {
		stmts = append(stmts, `CREATE TABLE `+decoy+`."`+sqlstore.GenerationOf(t, db, src)+`" (kmkit_row BIGINT)`)
	}
	for _, stmt := range stmts {
		if _, err := admin.Exec(stmt); err != nil {
			t.Fatal(err)
		}
	}
	waitReplayed(t)
	time.Sleep(20 * time.Millisecond) // a check of the replica
	h := kmhttp.NewHandler(s, kmhttp.WithMaxPageSize(5000))
	reqs := []storetest.RefRequest{
		{Record: "ORDERS", Fields: []string{"ORDER_ID", "NET_VALUE"}},
		{Fields: []string{"CUSTOMERS.COUNTRY"}, KPIs: []string{"TOTAL_NET"}},
	}
	for _, req := range reqs {
		checkReference(t, h, ref, req)
	}
	if n, f := rd.take(); n != 0 || f[sqlstore.FallbackError] != len(reqs) {
		t.Errorf("%d reads on the replica, %v on the primary; want none and %d errors", n, f, len(reqs))
	}
	if got := strings.Count(logs.String(), "KM read failed on a read replica"); got != len(reqs) {
		t.Errorf("%d log lines of reads failing on the replica, want %d:\n%s", got, len(reqs), logs.String())
	}
}

// BenchmarkReplicaRead runs one KPI request of the demo (TOTAL_NET by country, 1000
// orders) through a DB without replicas (primary) and through one whose reads go to the
// standby of ReplicaEnv (standby): the cost of the route, on one machine.
func BenchmarkReplicaRead(b *testing.B) {
	data, err := storetest.DemoData(1000)
	if err != nil {
		b.Fatal(err)
	}
	dsn := postgresDSN(b)
	rdsn := replicaOf(b, dsn)
	target := queryTarget(storetest.RefRequest{Fields: []string{"CUSTOMERS.COUNTRY"}, KPIs: []string{"TOTAL_NET"}})
	for _, c := range []struct {
		name     string
		replicas []string
	}{{"primary", nil}, {"standby", []string{rdsn}}} {
		b.Run(c.name, func(b *testing.B) {
			rd := &reads{}
			db := open(b, dsn)
			if c.replicas != nil {
				db = openReplicated(b, dsn, c.replicas, rd, nil)
			}
			s := db.KM()
			if err := s.Import(context.Background(), data); err != nil {
				b.Fatal(err)
			}
			waitReplayed(b)
			time.Sleep(20 * time.Millisecond)
			h := kmhttp.NewHandler(s, kmhttp.WithMaxPageSize(5000))
			for b.Loop() {
				w := httptest.NewRecorder()
				h.ServeHTTP(w, httptest.NewRequest(http.MethodGet, target, nil))
				if w.Code != 200 {
					b.Fatalf("%d %s", w.Code, w.Body)
				}
			}
			if n, f := rd.take(); c.replicas != nil && len(f) != 0 {
				b.Errorf("%d reads on the standby, %v on the primary", n, f)
			}
		})
	}
}
