package server

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// syncBuffer is a log destination safe for concurrent writers.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

const countOrders = "/intelligence/api/knowledge-models/shop/query?kpis=ORDERS_N"

// TestReloadWhileServing reloads a broken and then a good definition while clients query:
// no request fails, the old data serves until the good reload swaps, the new data after.
func TestReloadWhileServing(t *testing.T) {
	dir := t.TempDir()
	if err := os.CopyFS(dir, os.DirFS("../../km/testdata/shop")); err != nil {
		t.Fatal(err)
	}
	var logs syncBuffer
	cfg := config{dataDir: dir, maxPageSize: 100, maxBody: 1 << 20, ratePerHour: -1, burst: -1, concurrency: -1}
	a, err := newApp(&cfg, slog.New(slog.NewTextHandler(&logs, nil)))
	if err != nil {
		t.Fatal(err)
	}
	count := func() string {
		w := request(a.handler, http.MethodGet, countOrders, a.devKey, nil)
		if w.Code != 200 {
			t.Errorf("GET %s: %d %s", countOrders, w.Code, w.Body)
			return ""
		}
		return w.Body.String()
	}
	old := count()
	if !strings.Contains(old, `"ORDERS_N":`) {
		t.Fatalf("unexpected answer %s", old)
	}

	// Clients query throughout; each answer is the old or (once swapped) the new one.
	var (
		answers sync.Map // body -> count
		stop    atomic.Bool
		clients sync.WaitGroup
	)
	for range 4 {
		clients.Go(func() {
			for !stop.Load() {
				body := count()
				n, _ := answers.LoadOrStore(body, new(atomic.Int64))
				n.(*atomic.Int64).Add(1)
			}
		})
	}

	// A broken definition: the reload fails with file:line: reason, and the old data stays.
	models := filepath.Join(dir, "models", "shop.yaml")
	good, err := os.ReadFile(models)
	if err != nil {
		t.Fatal(err)
	}
	broken := strings.Replace(string(good), "expr: count(EVENTS.ACTIVITY)", "expr: count(EVENTS.NOPE)", 1)
	writeFile(t, models, broken)
	err = a.reload(context.Background())
	if err == nil || !strings.Contains(err.Error(), "models/shop.yaml:") || !strings.Contains(err.Error(), "NOPE") {
		t.Fatalf("broken reload: %v", err)
	}
	if !strings.Contains(logs.String(), "reload failed; the previous data stays in service") || !strings.Contains(logs.String(), "models/shop.yaml:") {
		t.Errorf("the failure is not logged with its file and line:\n%s", logs.String())
	}
	if got := count(); got != old {
		t.Errorf("after a failed reload: %s, want the old %s", got, old)
	}

	// A good change: half the orders. The reload swaps, and new requests see it.
	writeFile(t, models, string(good))
	orders := filepath.Join(dir, "data", "orders.csv")
	data, err := os.ReadFile(orders)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitAfter(strings.TrimSuffix(string(data), "\n"), "\n")
	kept := lines[:1+(len(lines)-1)/2]
	writeFile(t, orders, strings.Join(kept, "")+"\n")
	time.Sleep(20 * time.Millisecond) // let the clients see the old data for a while
	if err := a.reload(context.Background()); err != nil {
		t.Fatal(err)
	}
	newer := count()
	stop.Store(true)
	clients.Wait()

	if newer == old {
		t.Fatalf("the reload changed nothing: %s", newer)
	}
	want := `{"page":0,"pageSize":50,"total":1,"sort":[],"content":[{"ORDERS_N":` + strconv.Itoa(len(kept)-1) + `}]}`
	if newer != want {
		t.Errorf("after the reload: %s, want %s", newer, want)
	}
	answers.Range(func(k, v any) bool {
		if body := k.(string); body != old && body != newer {
			t.Errorf("%d answers neither old nor new: %s", v.(*atomic.Int64).Load(), body)
		}
		return true
	})
	if n, ok := answers.Load(old); !ok || n.(*atomic.Int64).Load() == 0 {
		t.Error("no client saw the old data")
	}
}

// TestWatchReloads changes a file under -data and waits for the poller to swap.
func TestWatchReloads(t *testing.T) {
	dir := t.TempDir()
	if err := os.CopyFS(dir, os.DirFS("../../km/testdata/shop")); err != nil {
		t.Fatal(err)
	}
	cfg := config{dataDir: dir, maxPageSize: 100, maxBody: 1 << 20, burst: -1, concurrency: -1, watch: 20 * time.Millisecond}
	a, err := newApp(&cfg, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go a.watch(ctx, cfg.watch)
	name := "/intelligence/api/knowledge-models/shop"
	before := request(a.handler, http.MethodGet, name, a.devKey, nil).Body.String()
	if !strings.Contains(before, `"name":"Shop"`) {
		t.Fatalf("unexpected %s", before)
	}
	time.Sleep(50 * time.Millisecond)
	models := filepath.Join(dir, "models", "shop.yaml")
	data, _ := os.ReadFile(models)
	writeFile(t, models, strings.Replace(string(data), "name: Shop\n", "name: Shop renamed\n", 1))
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		if body := request(a.handler, http.MethodGet, name, a.devKey, nil).Body.String(); strings.Contains(body, `"name":"Shop renamed"`) {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatal("the watcher did not reload the changed definition")
}

// TestReloadWithoutData refuses a reload of the embedded demo.
func TestReloadWithoutData(t *testing.T) {
	a := newTestApp(t, config{})
	if err := a.reload(context.Background()); err != errNoData {
		t.Errorf("reload: %v, want errNoData", err)
	}
}
