// Package cors lets browser applications on other origins call the kmkit APIs
// (Cross-Origin Resource Sharing, as the Fetch standard defines it), on
// github.com/rs/cors.
//
// Handler answers preflight requests (OPTIONS with Access-Control-Request-Method) itself,
// before authentication: browsers send them without credentials. Every other request
// goes on to the wrapped handler, and an allowed origin's answer carries
// Access-Control-Allow-Origin and the headers a browser app needs to read.
//
// Behaviours chosen:
//
//   - Origins are compared without regard to case; "*" allows every origin, and one "*"
//     inside an origin matches any text there ("https://*.example.com"). Credentials are
//     headers (Authorization, AppKey, x-api-key), never cookies, so
//     Access-Control-Allow-Credentials is not sent.
//   - Every answer carries Vary: Origin (preflights also Vary on the requested method and
//     headers), whether the origin was allowed or not, so a shared cache never hands one
//     origin's answer to another.
//   - Preflights allow the methods GET, HEAD, POST, PUT, PATCH and DELETE and the request
//     headers of the APIs (AllowedHeaders), the MCP transport's mcp-protocol-version,
//     mcp-session-id and last-event-id included; they are cached by browsers for MaxAge.
//     A preflight for another origin, method or header is answered 204 without
//     Access-Control-Allow-* headers, which the browser takes as a refusal.
//   - Answers expose the rate limit headers, Retry-After, ETag, Location, OData-Version,
//     Preference-Applied, WWW-Authenticate (where an OAuth client finds the protected
//     resource metadata) and the MCP session and protocol headers to scripts
//     (ExposedHeaders).
package cors

import (
	"errors"
	"net/http"
	"net/url"
	"strings"
	"time"

	rscors "github.com/rs/cors"
)

// AllowedHeaders are the request headers a preflight may ask for.
var AllowedHeaders = []string{
	"Accept", "Accept-Language", "Authorization", "AppKey", "Content-Type", "If-Match", "If-None-Match",
	"OData-MaxVersion", "OData-Version", "Prefer", "X-Api-Key", "X-Tenant-Id",
	// The MCP Streamable HTTP transport's: browser-hosted agents send them on every call.
	"Mcp-Protocol-Version", "Mcp-Session-Id", "Last-Event-Id",
}

// ExposedHeaders are the answer headers scripts of an allowed origin may read.
var ExposedHeaders = []string{
	"X-Ratelimit-Limit", "X-Ratelimit-Remaining", "X-Ratelimit-Reset", "Retry-After",
	"ETag", "Location", "OData-Version", "Preference-Applied", "WWW-Authenticate",
	"Mcp-Protocol-Version", "Mcp-Session-Id",
}

// AllowedMethods are the methods a preflight may ask for.
var AllowedMethods = []string{
	http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete,
}

// MaxAge is how long browsers may cache a preflight answer.
const MaxAge = 10 * time.Minute

// ParseOrigins splits a comma-separated list of origins (as the -cors-origins flag takes
// it), dropping blanks. Each origin is "*" or scheme://host[:port], optionally with one
// "*" in the host; anything else (a path, a query, a trailing slash) is an error naming it.
func ParseOrigins(list string) ([]string, error) {
	var origins []string
	for o := range strings.SplitSeq(list, ",") {
		o = strings.TrimSpace(o)
		if o == "" {
			continue
		}
		if err := checkOrigin(o); err != nil {
			return nil, err
		}
		origins = append(origins, o)
	}
	return origins, nil
}

func checkOrigin(o string) error {
	if o == "*" {
		return nil
	}
	if strings.Count(o, "*") > 1 {
		return errors.New("cors: origin " + o + " has more than one *")
	}
	u, err := url.Parse(strings.Replace(o, "*", "wildcard", 1))
	if err != nil || u.Scheme == "" || u.Host == "" || u.Path != "" || u.RawQuery != "" || u.Fragment != "" || u.User != nil ||
		strings.HasSuffix(o, "?") || strings.HasSuffix(o, "#") {
		return errors.New("cors: origin " + o + " is not scheme://host[:port] (no path, not even a trailing /)")
	}
	return nil
}

// Handler returns next behind the CORS policy that allows origins. With no origins it
// returns next itself: no cross-origin access, no CORS headers.
func Handler(origins []string, next http.Handler) http.Handler {
	if len(origins) == 0 {
		return next
	}
	c := rscors.New(rscors.Options{
		AllowedOrigins:       origins,
		AllowedMethods:       AllowedMethods,
		AllowedHeaders:       AllowedHeaders,
		ExposedHeaders:       ExposedHeaders,
		MaxAge:               int(MaxAge / time.Second),
		OptionsSuccessStatus: http.StatusNoContent,
	})
	return c.Handler(next)
}
