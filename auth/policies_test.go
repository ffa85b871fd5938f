package auth

import (
	"errors"
	"net/http"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/kmkit/kmkit/km/kmhttp"
	"github.com/kmkit/kmkit/odata"
	"github.com/kmkit/kmkit/principal"
	"github.com/kmkit/kmkit/reporting/reportinghttp"
	"github.com/kmkit/kmkit/scim/scimhttp"
)

// Family names the policies the tests guard handlers with: those the APIs' packages give
// the reference server (internal/server), so that the tests check the answers each API's
// clients see.
type Family int

const (
	FamilyKM Family = iota
	FamilyOData
	FamilySCIM
	FamilyReporting
)

func (f Family) policy() Policy {
	switch f {
	case FamilyOData:
		return Policy{Permission: principal.PermOData, WriteError: odata.WriteProblem}
	case FamilySCIM:
		return Policy{Permission: principal.PermSCIM, WriteError: scimhttp.WriteProblem}
	case FamilyReporting:
		return Policy{Permission: principal.PermReporting, Credentials: APIKeyHeader,
			Tenant: reportinghttp.RequestTenant, WriteError: reportinghttp.WriteProblem}
	default:
		return Policy{Permission: principal.PermKM, WriteError: kmhttp.WriteProblem}
	}
}

// TestPolicyDefaults checks what a Policy leaves to the Guard: problem bodies when it has
// no writer, the Permission's name as its name, 400 GENERAL_PARAMETER_ILLEGAL for a tenant
// reader's plain error, and a panic for a policy without a permission.
func TestPolicyDefaults(t *testing.T) {
	var refused []string
	g := newTestGuard(t, Config{Limits: Limits{Burst: 1, Concurrent: -1}, Refused: func(api, reason string) {
		refused = append(refused, api+"/"+reason)
	}})
	h := g.Wrap(Policy{Permission: principal.PermKM}, echo)
	if got, want := serve(h, hdr()), (response{401, map[string]string{"Content-Type": ctProblem, "WWW-Authenticate": challenge},
		problemBody(401, "ADMIN_AUTHENTICATION_ERROR", "missing credentials: send the Authorization header with the AppKey or Bearer scheme, or the AppKey header")}); !cmp.Equal(got, want) {
		t.Errorf("no writer (-want +got):\n%s", cmp.Diff(want, got))
	}
	serve(h, hdr("AppKey", "km-key-0001"))
	if got := serve(h, hdr("AppKey", "km-key-0001")); got.Status != 429 || len(refused) != 1 || refused[0] != "km/burst" {
		t.Errorf("second request: %d, refusals %v; want 429 and [km/burst]", got.Status, refused)
	}

	tenant := g.Wrap(Policy{Permission: principal.PermReporting, Credentials: APIKeyHeader,
		Tenant: func(*http.Request) (string, error) { return "", errors.New("no such tenant") }}, echo)
	if got, want := serve(tenant, hdr("X-Api-Key", "report-key-0001")), (response{400, map[string]string{"Content-Type": ctProblem},
		problemBody(400, "GENERAL_PARAMETER_ILLEGAL", "no such tenant")}); !cmp.Equal(got, want) {
		t.Errorf("tenant error (-want +got):\n%s", cmp.Diff(want, got))
	}

	defer func() {
		if recover() == nil {
			t.Error("Wrap accepted a policy without a permission")
		}
	}()
	g.Wrap(Policy{}, echo)
}
