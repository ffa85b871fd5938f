package auth

import (
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"testing"
)

// TestRefusedReportsTheLimit checks that Config.Refused hears of every 429 with the limit
// that refused it, and of nothing else.
func TestRefusedReportsTheLimit(t *testing.T) {
	var (
		mu   sync.Mutex
		seen []string
	)
	record := func(api, reason string) {
		mu.Lock()
		defer mu.Unlock()
		seen = append(seen, api+"/"+reason)
	}
	send := func(h http.Handler) int {
		r := httptest.NewRequest(http.MethodGet, "/", nil)
		r.Header.Set("Authorization", "AppKey km-key-0001")
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		return w.Code
	}
	burst := newTestGuard(t, Config{Limits: Limits{Burst: 2, Concurrent: -1}, Refused: record})
	budget := newTestGuard(t, Config{Limits: Limits{PerWindow: 1, Burst: -1, Concurrent: -1}, Refused: record})
	var codes []int
	for range 3 {
		codes = append(codes, send(burst.Wrap(FamilyKM.policy(), echo)))
	}
	for range 2 {
		codes = append(codes, send(budget.Wrap(FamilyOData.policy(), echo)))
	}
	if want := []int{200, 200, 429, 200, 429}; !slices.Equal(codes, want) {
		t.Fatalf("statuses %v, want %v", codes, want)
	}
	if want := []string{"km/burst", "odata/budget"}; !slices.Equal(seen, want) {
		t.Errorf("refusals %v, want %v", seen, want)
	}
}
