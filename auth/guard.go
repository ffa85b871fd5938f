package auth

import (
	"context"
	"errors"
	"log/slog"
	"math"
	"net/http"
	"strconv"
	"time"

	"github.com/google/uuid"
	"github.com/kmkit/kmkit/auth/ratelimit"
	"github.com/kmkit/kmkit/problem"
)

// Limits configures the request limits per principal. Zero fields take the defaults; a
// negative field disables its limit.
type Limits struct {
	// PerWindow is the request budget of a principal per Window (default 6000); a
	// principal's RatePerWindow overrides it.
	PerWindow int
	// Window is the length of the budget's fixed window (default one hour).
	Window time.Duration
	// Burst is the number of requests per second a principal may send, in bursts of as
	// many (default 20).
	Burst int
	// Concurrent caps the requests of a principal in flight at once (default 20).
	Concurrent int
}

// Defaults of Limits.
const (
	DefaultPerWindow  = 6000
	DefaultWindow     = time.Hour
	DefaultBurst      = 20
	DefaultConcurrent = 20
)

// Headers of the rate limit.
const (
	HeaderRateLimit     = "X-RateLimit-Limit"
	HeaderRateRemaining = "X-RateLimit-Remaining"
	HeaderRateReset     = "X-RateLimit-Reset"
	HeaderRetryAfter    = "Retry-After"
)

// Config configures a Guard.
type Config struct {
	// Authenticator checks credentials. Required.
	Authenticator Authenticator
	// Limiter counts the request budgets; default a new in-memory limiter. Share one
	// database-backed Limiter between replicas to share budgets.
	Limiter ratelimit.Limiter
	// Limits sets the budgets and caps.
	Limits Limits
	// Logger receives authenticator and limiter failures (never credentials); default
	// slog.Default().
	Logger *slog.Logger
	// Now returns the current time; default time.Now.
	Now func() time.Time
}

// Guard is the middleware that authenticates requests, limits them per principal and checks
// the permission of their API family. One Guard serves every family, so a principal's
// limits count its requests to all of them. Create it with NewGuard; it is safe for
// concurrent use.
type Guard struct {
	auth        Authenticator
	limiter     ratelimit.Limiter
	limits      Limits
	burst       *ratelimit.Burst
	concurrency *ratelimit.Concurrency
	log         *slog.Logger
	now         func() time.Time
}

// NewGuard returns the Guard of cfg.
func NewGuard(cfg Config) (*Guard, error) {
	if cfg.Authenticator == nil {
		return nil, errors.New("auth: a Guard needs an Authenticator")
	}
	l := cfg.Limits
	l.PerWindow = orDefault(l.PerWindow, DefaultPerWindow)
	l.Burst = orDefault(l.Burst, DefaultBurst)
	l.Concurrent = orDefault(l.Concurrent, DefaultConcurrent)
	if l.Window <= 0 {
		l.Window = DefaultWindow
	}
	g := &Guard{auth: cfg.Authenticator, limiter: cfg.Limiter, limits: l, log: cfg.Logger, now: cfg.Now}
	if g.limiter == nil {
		g.limiter = ratelimit.NewMemory()
	}
	if l.Burst > 0 {
		g.burst = ratelimit.NewBurst(l.Burst)
	}
	if l.Concurrent > 0 {
		g.concurrency = ratelimit.NewConcurrency(l.Concurrent)
	}
	if g.log == nil {
		g.log = slog.Default()
	}
	if g.now == nil {
		g.now = time.Now
	}
	return g, nil
}

func orDefault(v, def int) int {
	if v == 0 {
		return def
	}
	return v
}

// KM protects a Knowledge Model API handler.
func (g *Guard) KM(next http.Handler) http.Handler { return g.Wrap(FamilyKM, next) }

// OData protects an OData handler.
func (g *Guard) OData(next http.Handler) http.Handler { return g.Wrap(FamilyOData, next) }

// SCIM protects a SCIM handler.
func (g *Guard) SCIM(next http.Handler) http.Handler { return g.Wrap(FamilySCIM, next) }

// Reporting protects a reporting API handler.
func (g *Guard) Reporting(next http.Handler) http.Handler { return g.Wrap(FamilyReporting, next) }

// Wrap returns next behind authentication, limits and the permission of family f. The
// principal reaches next in the request context (PrincipalFrom).
func (g *Guard) Wrap(f Family, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p, ok := g.authenticate(w, r, f)
		if !ok {
			return
		}
		release, ok := g.limit(r.Context(), w, f, p)
		if !ok {
			return
		}
		if release != nil {
			defer release()
		}
		if !p.Can(f.Permission()) {
			f.WriteError(w, http.StatusForbidden, "the credentials lack the "+string(f.Permission())+" permission")
			return
		}
		next.ServeHTTP(w, r.WithContext(WithPrincipal(r.Context(), p)))
	})
}

// authenticate reads and checks the credentials of r, or answers the request.
func (g *Guard) authenticate(w http.ResponseWriter, r *http.Request, f Family) (*Principal, bool) {
	var (
		cred   Credential
		tenant string
		err    error
	)
	if f == FamilyReporting {
		cred, tenant, err = ParseAPIKey(r.Header)
	} else {
		cred, err = ParseAuthorization(r.Header)
	}
	var p *Principal
	if err == nil {
		p, err = g.auth.Authenticate(r.Context(), cred)
	}
	var ce *CredentialError
	var te *TenantError
	switch {
	case err == nil && p == nil:
		g.fail(w, f, "authenticate", errors.New("the authenticator returned no principal"))
	case errors.As(err, &ce):
		f.WriteError(w, http.StatusUnauthorized, ce.Reason)
	case errors.As(err, &te) && te.Missing:
		f.writeError(w, http.StatusBadRequest, problem.CodeParameterMissing, te.Reason)
	case errors.As(err, &te):
		f.writeError(w, http.StatusBadRequest, problem.CodeParameterIllegal, te.Reason)
	case err != nil:
		g.fail(w, f, "authenticate", err)
	case f == FamilyReporting && p.Tenant != tenant:
		f.WriteError(w, http.StatusForbidden, "the API key does not belong to tenant "+tenant)
	default:
		return p, true
	}
	return nil, false
}

// limit applies the budget, the burst allowance and the concurrency cap of p, in that
// order, and sets the rate limit headers. On success it returns the function that ends the
// request's concurrency slot (nil when there is no cap).
func (g *Guard) limit(ctx context.Context, w http.ResponseWriter, f Family, p *Principal) (func(), bool) {
	now := g.now()
	h := w.Header()
	if budget := g.budget(p); budget > 0 {
		d, err := g.limiter.Allow(ctx, p.Name, budget, g.limits.Window, now)
		if err != nil {
			g.fail(w, f, "rate limit", err)
			return nil, false
		}
		h.Set(HeaderRateLimit, strconv.Itoa(d.Limit))
		h.Set(HeaderRateRemaining, strconv.Itoa(d.Remaining))
		if !d.Allowed {
			g.tooMany(w, f, now, d.Reset, "request limit of "+strconv.Itoa(d.Limit)+" per "+window(g.limits.Window)+" exceeded")
			return nil, false
		}
	}
	if g.burst != nil {
		if ok, wait := g.burst.Allow(p.Name, now); !ok {
			g.tooMany(w, f, now, now.Add(wait), "more than "+strconv.Itoa(g.limits.Burst)+" requests per second")
			return nil, false
		}
	}
	if g.concurrency != nil {
		if !g.concurrency.Acquire(p.Name) {
			g.tooMany(w, f, now, now.Add(time.Second), "more than "+strconv.Itoa(g.limits.Concurrent)+" requests at once")
			return nil, false
		}
		return func() { g.concurrency.Release(p.Name) }, true
	}
	return nil, true
}

func (g *Guard) budget(p *Principal) int {
	if g.limits.PerWindow < 0 {
		return 0
	}
	if p.RatePerWindow > 0 {
		return p.RatePerWindow
	}
	return g.limits.PerWindow
}

// tooMany answers 429 with X-RateLimit-Reset, the given reset time rounded up to a whole
// second in RFC 3339 UTC, and Retry-After, the seconds until then (at least 1).
func (g *Guard) tooMany(w http.ResponseWriter, f Family, now, reset time.Time, detail string) {
	reset = reset.UTC()
	if t := reset.Truncate(time.Second); !t.Equal(reset) {
		reset = t.Add(time.Second)
	}
	retry := int64(math.Ceil(reset.Sub(now).Seconds()))
	h := w.Header()
	h.Set(HeaderRateReset, reset.Format(time.RFC3339))
	h.Set(HeaderRetryAfter, strconv.FormatInt(max(retry, 1), 10))
	f.WriteError(w, http.StatusTooManyRequests, detail)
}

// fail answers 500 with a support id that is also logged with the error.
func (g *Guard) fail(w http.ResponseWriter, f Family, stage string, err error) {
	id := uuid.NewString()
	g.log.Error("auth: "+stage+" failed", "supportId", id, "family", f.String(), "error", err)
	f.WriteError(w, http.StatusInternalServerError, "internal error; support id "+id)
}

// window describes a window length in the detail of a 429 answer.
func window(d time.Duration) string {
	switch d {
	case time.Hour:
		return "hour"
	case time.Minute:
		return "minute"
	case 24 * time.Hour:
		return "day"
	}
	return d.String()
}
