package server

import (
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"testing"
)

// TestLimitsFromFlagsAndKeysFile: the keys file's burst and ratePerHour override the
// server's -burst default for one key, and a flood refused by the burst check spends none
// of the hourly budget (only the served requests count).
func TestLimitsFromFlagsAndKeysFile(t *testing.T) {
	dir := t.TempDir()
	keys := filepath.Join(dir, "keys.yaml")
	data := "keys:\n" +
		"  - {key: \"own-key-0001\", team: acme, permissions: [km], burst: 8, ratePerHour: 1000}\n" +
		"  - {key: \"default-key-01\", team: acme, permissions: [km]}\n"
	if err := os.WriteFile(keys, []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
	a := newTestApp(t, config{keysFile: keys, db: "memory:", ratePerHour: 500, burst: 3, concurrency: 20})
	defer a.close()
	flood := func(key string) (served int, last *httptest.ResponseRecorder) {
		for range 200 {
			last = get(t, a.handler, "/intelligence/api/knowledge-models", key)
			switch last.Code {
			case 200:
				served++
			case 429:
			default:
				t.Fatalf("%d %s", last.Code, last.Body)
			}
		}
		return served, last
	}
	for _, tt := range []struct {
		key         string
		burst, rate int
	}{{"own-key-0001", 8, 1000}, {"default-key-01", 3, 500}} {
		served, last := flood(tt.key)
		// 200 requests take far less than a second here; a token or two may refill.
		if served < tt.burst || served > tt.burst+2 {
			t.Errorf("%s: %d of 200 served, want its burst of %d", tt.key, served, tt.burst)
		}
		if last.Code != 429 || last.Header().Get("X-RateLimit-Limit") != strconv.Itoa(tt.rate) ||
			last.Header().Get("X-RateLimit-Remaining") != strconv.Itoa(tt.rate-served) {
			t.Errorf("%s: last answer %d, limit %q, remaining %q; want 429, %d, %d (refused requests spend nothing)",
				tt.key, last.Code, last.Header().Get("X-RateLimit-Limit"), last.Header().Get("X-RateLimit-Remaining"), tt.rate, tt.rate-served)
		}
	}
	// 25 requests in a second, what identity providers need, pass with the default burst.
	b := newTestApp(t, config{keysFile: keys, db: "memory:", ratePerHour: 6000, burst: 50, concurrency: 20})
	defer b.close()
	for i := range 25 {
		if w := get(t, b.handler, "/intelligence/api/knowledge-models", "default-key-01"); w.Code != 200 {
			t.Fatalf("request %d of 25: %d %s", i+1, w.Code, w.Body)
		}
	}
}
