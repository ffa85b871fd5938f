package auth

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kmkit/kmkit/principal"
)

// limitKeys returns a guard over two keys: "default-key" with the server's limits and
// "own-key" with its own burst, concurrency and budget.
func limitKeys(t *testing.T, limits Limits, now *time.Time) *Guard {
	t.Helper()
	perms := []principal.Permission{principal.PermKM}
	keys, err := NewKeySet([]Key{
		{Digest: DigestOf("default-key"), Name: "default", Permissions: perms},
		{Digest: DigestOf("own-key"), Name: "own", Permissions: perms, Burst: 6, Concurrent: 3, RatePerWindow: 8},
	})
	if err != nil {
		t.Fatal(err)
	}
	return newTestGuard(t, Config{Authenticator: keys, Limits: limits, Now: func() time.Time { return *now }})
}

// TestBurstRefusalsDoNotSpendTheBudget: a flood refused by the per-second allowance leaves
// the hourly budget to the requests that are served (issue: the budget was charged first,
// so a burst of refused requests locked the key out for the hour).
func TestBurstRefusalsDoNotSpendTheBudget(t *testing.T) {
	now := testNow
	g := limitKeys(t, Limits{PerWindow: 5, Burst: 2, Concurrent: -1}, &now)
	h := g.Wrap(FamilyKM.policy(), echo)
	statuses := map[int]int{}
	for range 100 {
		statuses[serve(h, hdr("AppKey", "default-key")).Status]++
	}
	if statuses[200] != 2 || statuses[429] != 98 {
		t.Fatalf("flood in one instant: %v, want 2 served and 98 refused", statuses)
	}
	now = now.Add(time.Second)
	for i := range 2 {
		got := serve(h, hdr("AppKey", "default-key"))
		want := []string{"2", "1"}[i]
		if got.Status != 200 || got.Headers[HeaderRateRemaining] != want {
			t.Fatalf("request %d a second later: %d remaining %q, want 200 remaining %s", i, got.Status, got.Headers[HeaderRateRemaining], want)
		}
	}
	now = now.Add(time.Second)
	if got := serve(h, hdr("AppKey", "default-key")); got.Status != 200 || got.Headers[HeaderRateRemaining] != "0" {
		t.Fatalf("fifth served request: %d remaining %q", got.Status, got.Headers[HeaderRateRemaining])
	}
	now = now.Add(time.Second)
	got := serve(h, hdr("AppKey", "default-key"))
	if got.Status != 429 || got.Body != problemBody(429, "LIMIT_RATE_EXCEEDED", "request limit of 5 per hour exceeded") {
		t.Errorf("sixth served request: %d %s, want the budget's 429", got.Status, got.Body)
	}
}

// TestConcurrencyRefusalsDoNotSpendTheBudget: requests refused because too many are in
// flight leave the budget untouched, and the slot of a request the budget refuses is freed.
func TestConcurrencyRefusalsDoNotSpendTheBudget(t *testing.T) {
	now := testNow
	g := limitKeys(t, Limits{PerWindow: 3, Burst: -1, Concurrent: 1}, &now)
	entered, release := make(chan struct{}), make(chan struct{})
	slow := g.Wrap(FamilyKM.policy(), http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		entered <- struct{}{}
		<-release
	}))
	var wg sync.WaitGroup
	wg.Go(func() { serve(slow, hdr("AppKey", "default-key")) })
	<-entered
	for range 20 {
		got := serve(slow, hdr("AppKey", "default-key"))
		if got.Status != 429 || got.Headers[HeaderRateRemaining] != "2" {
			t.Fatalf("request beyond the cap: %d remaining %q, want 429 with 2 remaining", got.Status, got.Headers[HeaderRateRemaining])
		}
	}
	close(release)
	wg.Wait()
	h := g.Wrap(FamilyKM.policy(), echo)
	for _, want := range []string{"1", "0"} {
		if got := serve(h, hdr("AppKey", "default-key")); got.Status != 200 || got.Headers[HeaderRateRemaining] != want {
			t.Fatalf("after the slow request: %d remaining %q, want 200 remaining %s", got.Status, got.Headers[HeaderRateRemaining], want)
		}
	}
	if got := serve(h, hdr("AppKey", "default-key")); got.Status != 429 {
		t.Fatalf("fourth served request: %d, want 429", got.Status)
	}
	if n := g.concurrency.InFlight("default"); n != 0 {
		t.Errorf("%d requests counted in flight after the budget refused one", n)
	}
}

// TestLimitsPerKey: a key's burst, concurrency and budget override the server's defaults;
// other keys keep the defaults.
func TestLimitsPerKey(t *testing.T) {
	now := testNow
	g := limitKeys(t, Limits{PerWindow: 100, Burst: 2, Concurrent: 1}, &now)
	h := g.Wrap(FamilyKM.policy(), echo)
	count := func(key string, n int) (served int) {
		for range n {
			if serve(h, hdr("AppKey", key)).Status == 200 {
				served++
			}
		}
		return served
	}
	if got := count("default-key", 10); got != 2 {
		t.Errorf("default key: %d served in one instant, want the default burst of 2", got)
	}
	if got := count("own-key", 10); got != 6 {
		t.Errorf("own key: %d served in one instant, want its burst of 6", got)
	}
	now = now.Add(time.Second)
	got := serve(h, hdr("AppKey", "own-key"))
	if got.Headers[HeaderRateLimit] != "8" || got.Headers[HeaderRateRemaining] != "1" {
		t.Errorf("own key's budget: limit %q remaining %q, want its own 8 with 1 left", got.Headers[HeaderRateLimit], got.Headers[HeaderRateRemaining])
	}
	// Concurrency: the own key holds 3 requests in flight, the default key 1.
	for key, want := range map[string]int{"default-key": 1, "own-key": 3} {
		now = now.Add(time.Hour) // a fresh budget and bucket
		entered, release := make(chan struct{}, 10), make(chan struct{})
		slow := g.Wrap(FamilyKM.policy(), http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			entered <- struct{}{}
			<-release
		}))
		var wg sync.WaitGroup
		for range want {
			wg.Go(func() { serve(slow, hdr("AppKey", key)) })
			<-entered
		}
		got := serve(slow, hdr("AppKey", key))
		if got.Status != 429 {
			t.Errorf("%s: request %d in flight got %d, want 429", key, want+1, got.Status)
		}
		close(release)
		wg.Wait()
	}
}

func TestDefaultBurst(t *testing.T) {
	if DefaultBurst < 50 {
		t.Errorf("DefaultBurst = %d, want at least 50 requests per second", DefaultBurst)
	}
	now := testNow
	g := limitKeys(t, Limits{}, &now)
	h := g.Wrap(FamilyKM.policy(), echo)
	served := 0
	for range 60 {
		if serve(h, hdr("AppKey", "default-key")).Status == 200 {
			served++
		}
	}
	if served != DefaultBurst {
		t.Errorf("%d served in one instant with the default limits, want %d", served, DefaultBurst)
	}
}

// TestConcurrencyReleasedOnPanicAndCancel: a request that panics (net/http recovers it,
// http.ErrAbortHandler included) or whose client goes away gives its concurrency slot back,
// so a principal is never locked out by requests that ended badly. Parallel requests
// under -race never hold more slots than the cap.
func TestConcurrencyReleasedOnPanicAndCancel(t *testing.T) {
	g := newTestGuard(t, Config{Limits: Limits{Burst: -1, Concurrent: 2, PerWindow: -1}})
	name := testKeysName(t, "km-key-0001")
	key := hdr("Authorization", "AppKey km-key-0001")
	for _, c := range []struct {
		name    string
		handler http.HandlerFunc
	}{
		{"panic", func(http.ResponseWriter, *http.Request) { panic("boom") }},
		{"abort", func(http.ResponseWriter, *http.Request) { panic(http.ErrAbortHandler) }},
		{"cancelled", func(w http.ResponseWriter, r *http.Request) { <-r.Context().Done() }},
	} {
		t.Run(c.name, func(t *testing.T) {
			h := g.Wrap(FamilyKM.policy(), c.handler)
			for range 3 { // more than the cap: each must have given its slot back
				ctx, cancel := context.WithCancel(context.Background())
				r := httptest.NewRequest(http.MethodGet, "/x", nil).WithContext(ctx)
				r.Header = key
				cancel()
				func() {
					defer func() { recover() }()
					h.ServeHTTP(httptest.NewRecorder(), r)
				}()
			}
			if n := g.concurrency.InFlight(name); n != 0 {
				t.Errorf("%d slots still held", n)
			}
		})
	}
	var inFlight, most atomic.Int64
	h := g.Wrap(FamilyKM.policy(), http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := inFlight.Add(1)
		for m := most.Load(); n > m && !most.CompareAndSwap(m, n); m = most.Load() {
		}
		time.Sleep(time.Millisecond)
		inFlight.Add(-1)
	}))
	var wg sync.WaitGroup
	var ok, refused atomic.Int64
	for range 16 {
		wg.Go(func() {
			for range 20 {
				switch serve(h, key).Status {
				case 200:
					ok.Add(1)
				case 429:
					refused.Add(1)
				default:
					t.Error("neither 200 nor 429")
				}
			}
		})
	}
	wg.Wait()
	if most.Load() > 2 || ok.Load() == 0 || refused.Load() == 0 || g.concurrency.InFlight(name) != 0 {
		t.Errorf("at most %d in flight (cap 2), %d served, %d refused, %d slots left held", most.Load(), ok.Load(), refused.Load(), g.concurrency.InFlight(name))
	}
}
