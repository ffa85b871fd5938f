package auth

import (
	"context"
	"errors"
	"log/slog"
	"math"
	"net/http"
	"strconv"
	"time"

	"github.com/kmkit/kmkit/outage"
	"github.com/kmkit/kmkit/principal"

	"github.com/google/uuid"
	"github.com/kmkit/kmkit/auth/ratelimit"
	"github.com/kmkit/kmkit/problem"
)

// Limits configures the request limits per principal. Zero fields take the defaults; a
// negative PerWindow, Burst or Concurrent disables that limit.
type Limits struct {
	// PerWindow is the request budget of a principal per Window (default 6000). A
	// principal's positive RatePerWindow overrides it, also when PerWindow is negative.
	PerWindow int
	// Window is the length of the budget's fixed window (default, and when not positive,
	// one hour).
	Window time.Duration
	// Burst is the number of requests per second a principal may send, in bursts of as
	// many (default 50). A principal's positive Burst overrides it, also when Burst is
	// negative.
	Burst int
	// Concurrent caps the requests of a principal in flight at once (default 20). A
	// principal's positive Concurrent overrides it, also when Concurrent is negative.
	Concurrent int
}

// Defaults of Limits.
const (
	DefaultPerWindow  = 6000
	DefaultWindow     = time.Hour
	DefaultBurst      = 50
	DefaultConcurrent = 20
)

// Headers of the rate limit, in canonical form (HTTP header names are case-insensitive; Go
// writes "X-RateLimit-Limit" as "X-Ratelimit-Limit").
const (
	HeaderRateLimit     = "X-Ratelimit-Limit"
	HeaderRateRemaining = "X-Ratelimit-Remaining"
	HeaderRateReset     = "X-Ratelimit-Reset"
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
	// Refused, when set, is called for every request a limit refuses with 429, with the
	// name of the request's API (Policy.Name) and the limit: RefusedBudget, RefusedBurst or
	// RefusedConcurrency. Metrics count refusals with it; it must be quick and safe for
	// concurrent use.
	Refused func(api, reason string)
}

// The limits a request can be refused by, as Config.Refused reports them.
const (
	RefusedBudget      = "budget"
	RefusedBurst       = "burst"
	RefusedConcurrency = "concurrency"
)

// Guard is the middleware that authenticates requests, limits them per principal and checks
// the permission of their API, as the API's Policy asks. One Guard serves every API, so a
// principal's limits count its requests to all of them. Create it with NewGuard; it is safe for
// concurrent use.
type Guard struct {
	auth        Authenticator
	limiter     ratelimit.Limiter
	limits      Limits
	limitText   string // the default budget as text
	burst       *ratelimit.Burst
	concurrency *ratelimit.Concurrency
	log         *slog.Logger
	now         func() time.Time
	refused     func(string, string)
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
	g := &Guard{auth: cfg.Authenticator, limiter: cfg.Limiter, limits: l, limitText: strconv.Itoa(l.PerWindow), log: cfg.Logger, now: cfg.Now, refused: cfg.Refused}
	if g.limiter == nil {
		g.limiter = ratelimit.NewMemory()
	}
	g.burst = ratelimit.NewBurst(max(l.Burst, 1))
	g.concurrency = ratelimit.NewConcurrency(max(l.Concurrent, 1))
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

// Wrap returns next behind authentication, limits and the permission of policy p. The
// principal reaches next in the request context (principal.FromContext). Wrap panics when
// p names no Permission.
func (g *Guard) Wrap(p Policy, next http.Handler) http.Handler {
	if p.Permission == "" {
		panic("auth: Wrap needs a Policy with a Permission")
	}
	if p.WriteError == nil {
		p.WriteError = WriteProblem
	}
	pol := &p
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		caller, tenant, token, ok := g.authenticate(w, r, pol)
		if !ok {
			return
		}
		inFlight, ok := g.limit(r.Context(), w, pol, caller)
		if !ok {
			return
		}
		defer g.release(inFlight, caller)
		if pol.Tenant != nil && caller.Tenant != tenant {
			pol.writeError(w, http.StatusForbidden, "", "the API key does not belong to tenant "+tenant)
			return
		}
		if !caller.Can(pol.Permission) {
			if token {
				w.Header().Set("WWW-Authenticate", bearerChallenge("insufficient_scope", pol.metadata(r)))
			}
			pol.writeError(w, http.StatusForbidden, "", "the credentials lack the "+string(pol.Permission)+" permission")
			return
		}
		next.ServeHTTP(w, r.WithContext(principal.NewContext(r.Context(), caller)))
	})
}

// authenticate reads and checks the credentials of r, or answers the request. When the
// policy reads a tenant, it also returns the tenant the request names; token reports that
// the credentials were a Bearer token.
func (g *Guard) authenticate(w http.ResponseWriter, r *http.Request, pol *Policy) (p *principal.Principal, tenant string, token, ok bool) {
	cred, err := pol.Credentials.parse(r.Header)
	token = err == nil && cred.Scheme == SchemeBearer
	if err == nil {
		p, err = g.auth.Authenticate(r.Context(), cred)
	}
	if err == nil && p != nil && pol.Tenant != nil {
		// The key is checked first: a wrong key is a 401 whatever the tenant.
		if tenant, err = pol.Tenant(r); err != nil {
			pol.writeTenantError(w, err)
			return nil, "", false, false
		}
	}
	switch {
	case err != nil:
		g.refuse(w, r, pol, token, err)
	case p == nil:
		g.fail(w, pol, "authenticate", errors.New("the authenticator returned no principal"))
	default:
		return p, tenant, token, true
	}
	return nil, "", false, false
}

// writeTenantError answers a request whose tenant Policy.Tenant refused.
func (p *Policy) writeTenantError(w http.ResponseWriter, err error) {
	if pr, ok := errors.AsType[*problem.Problem](err); ok {
		p.writeError(w, pr.Status, pr.ErrorCode, pr.Detail)
		return
	}
	p.writeError(w, http.StatusBadRequest, problem.CodeParameterIllegal, err.Error())
}

// refuse answers a request whose credentials were not accepted; token says they were a
// Bearer token.
func (g *Guard) refuse(w http.ResponseWriter, r *http.Request, pol *Policy, token bool, err error) {
	if ce, ok := errors.AsType[*CredentialError](err); ok {
		w.Header().Set("WWW-Authenticate", pol.challenge(r, token))
		pol.writeError(w, http.StatusUnauthorized, "", ce.Reason)
		return
	}
	g.fail(w, pol, "authenticate", err)
}

// limit applies the burst allowance, the concurrency cap and the budget of p, in that
// order, so that a request refused by the first two does not spend the budget, and sets the
// rate limit headers. On success it reports whether the request took a concurrency slot,
// which the caller releases when the request ends.
func (g *Guard) limit(ctx context.Context, w http.ResponseWriter, pol *Policy, p *principal.Principal) (inFlight, ok bool) {
	now := g.now()
	budget := g.budget(p)
	if burst := pick(p.Burst, g.limits.Burst); burst > 0 {
		if ok, wait := g.burst.AllowRate(p.Name, burst, now); !ok {
			g.peek(ctx, w, p, budget, now)
			g.tooMany(w, pol, RefusedBurst, now, now.Add(wait), "more than "+strconv.Itoa(burst)+" requests per second")
			return false, false
		}
	}
	if limit := pick(p.Concurrent, g.limits.Concurrent); limit > 0 {
		if !g.concurrency.AcquireUpTo(p.Name, limit) {
			g.peek(ctx, w, p, budget, now)
			g.tooMany(w, pol, RefusedConcurrency, now, now.Add(time.Second), "more than "+strconv.Itoa(limit)+" requests at once")
			return false, false
		}
		inFlight = true
	}
	if budget > 0 {
		d, err := g.limiter.Allow(ctx, p.Name, budget, g.limits.Window, now)
		if err != nil {
			g.release(inFlight, p)
			g.fail(w, pol, "rate limit", err)
			return false, false
		}
		g.rateHeaders(w, d)
		if !d.Allowed {
			g.release(inFlight, p)
			g.tooMany(w, pol, RefusedBudget, now, d.Reset, "request limit of "+strconv.Itoa(d.Limit)+" per "+window(g.limits.Window)+" exceeded")
			return false, false
		}
	}
	return inFlight, true
}

// budget returns the request budget of p, or 0 when p has none.
func (g *Guard) budget(p *principal.Principal) int {
	switch {
	case p.RatePerWindow > 0:
		return p.RatePerWindow
	case g.limits.PerWindow > 0:
		return g.limits.PerWindow
	default:
		return 0
	}
}

// pick returns the principal's own limit when positive, else the default.
func pick(own, def int) int {
	if own > 0 {
		return own
	}
	return def
}

func (g *Guard) release(inFlight bool, p *principal.Principal) {
	if inFlight {
		g.concurrency.Release(p.Name)
	}
}

// rateHeaders sets X-RateLimit-Limit and X-RateLimit-Remaining from d.
func (g *Guard) rateHeaders(w http.ResponseWriter, d ratelimit.Decision) {
	// One backing array for both values: the header map is on every request's path.
	limit := g.limitText
	if d.Limit != g.limits.PerWindow {
		limit = strconv.Itoa(d.Limit)
	}
	v := [2]string{limit, strconv.Itoa(d.Remaining)}
	h := w.Header()
	h[HeaderRateLimit], h[HeaderRateRemaining] = v[0:1:1], v[1:2:2]
}

// peek sets the rate limit headers of a request refused before the budget, without
// spending it: from the limiter when it is a ratelimit.Peeker, else the limit alone. A
// failing peek only leaves the headers out (the answer is a 429 anyway).
func (g *Guard) peek(ctx context.Context, w http.ResponseWriter, p *principal.Principal, budget int, now time.Time) {
	if budget <= 0 {
		return
	}
	if pk, ok := g.limiter.(ratelimit.Peeker); ok {
		if d, err := pk.Peek(ctx, p.Name, budget, g.limits.Window, now); err == nil {
			g.rateHeaders(w, d)
			return
		}
	}
	w.Header().Set(HeaderRateLimit, strconv.Itoa(budget))
}

// tooMany answers 429 with X-RateLimit-Reset, the given reset time rounded up to a whole
// second in RFC 3339 UTC, and Retry-After, the seconds until then (at least 1). It reports
// the refusal to Config.Refused.
func (g *Guard) tooMany(w http.ResponseWriter, pol *Policy, reason string, now, reset time.Time, detail string) {
	if g.refused != nil {
		g.refused(pol.name(), reason)
	}
	reset = reset.UTC()
	if t := reset.Truncate(time.Second); !t.Equal(reset) {
		reset = t.Add(time.Second)
	}
	retry := int64(math.Ceil(reset.Sub(now).Seconds()))
	h := w.Header()
	h.Set(HeaderRateReset, reset.Format(time.RFC3339))
	h.Set(HeaderRetryAfter, strconv.FormatInt(max(retry, 1), 10))
	pol.writeError(w, http.StatusTooManyRequests, "", detail)
}

// fail answers 500 with a support id that is also logged with the error, or 503 with
// Retry-After when the error is an outage of the database (package outage).
func (g *Guard) fail(w http.ResponseWriter, pol *Policy, stage string, err error) {
	if outage.Is(err) {
		g.log.Warn("auth: "+stage+": database unavailable", "api", pol.name(), "error", err)
		w.Header().Set(HeaderRetryAfter, outage.RetryAfterSeconds)
		pol.writeError(w, http.StatusServiceUnavailable, problem.CodeUnavailable, outage.Detail)
		return
	}
	id := uuid.NewString()
	g.log.Error("auth: "+stage+" failed", "supportId", id, "api", pol.name(), "error", err)
	pol.writeError(w, http.StatusInternalServerError, "", "internal error; support id "+id)
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
