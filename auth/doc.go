// Package auth authenticates requests to the kmkit APIs and limits their rate.
//
// A request's caller becomes a *Principal carried in the request context; handlers read it
// with PrincipalFrom. Hosts that authenticate requests themselves put their own principal
// there with WithPrincipal and mount the handlers without this package's middleware.
package auth
