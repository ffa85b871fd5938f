package auth

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/golang-jwt/jwt/v5"
	"github.com/kmkit/kmkit/principal"
)

// discardWriter is a ResponseWriter that keeps nothing, so that the benchmarks measure the
// middleware rather than a recorder.
type discardWriter struct{ h http.Header }

func (w *discardWriter) Header() http.Header         { return w.h }
func (w *discardWriter) Write(b []byte) (int, error) { return len(b), nil }
func (w *discardWriter) WriteHeader(int)             {}

// BenchmarkGuard measures authentication plus limiting per request. Every limit is on, with
// budgets large enough that every request passes. "bare" is the same handler without the
// middleware, the peer of the other figures; "jwt-rs256-uncached" shows what the
// verified-token cache saves.
func BenchmarkGuard(b *testing.B) {
	keys := newTestKeySet(b)
	token := sign(b, jwt.SigningMethodRS256, testRSA, "rs", claims(nil))
	noop := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if _, ok := principal.FromContext(r.Context()); !ok && r.Header.Get("X-Bare") == "" {
			b.Fatal("no principal")
		}
	})
	limits := Limits{PerWindow: 1 << 40, Burst: 1 << 40, Concurrent: 1 << 20}
	guard := func(v *JWTVerifier) http.Handler {
		g := newTestGuard(b, Config{Authenticator: Schemes{SchemeAppKey: keys, SchemeBearer: v}, Limits: limits})
		return g.Wrap(FamilyKM.policy(), noop)
	}
	cases := []struct {
		name    string
		handler http.Handler
		header  http.Header
	}{
		{"bare", noop, hdr("X-Bare", "1")},
		{"appkey", guard(newTestVerifier(b, 0, nil)), hdr("Authorization", "AppKey km-key-0001")},
		{"jwt-rs256-cached", guard(newTestVerifier(b, 0, nil)), hdr("Authorization", "Bearer "+token)},
		{"jwt-rs256-uncached", guard(newTestVerifier(b, -1, nil)), hdr("Authorization", "Bearer "+token)},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			r := httptest.NewRequest(http.MethodGet, "/intelligence/api/knowledge-models", nil)
			r.Header = c.header
			w := &discardWriter{h: http.Header{}}
			b.ReportAllocs()
			for b.Loop() {
				clear(w.h)
				c.handler.ServeHTTP(w, r)
			}
		})
	}
}
