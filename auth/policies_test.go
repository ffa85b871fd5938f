package auth

import (
	"github.com/kmkit/kmkit/km"
	"github.com/kmkit/kmkit/odata"
	"github.com/kmkit/kmkit/principal"
	"github.com/kmkit/kmkit/reporting"
	"github.com/kmkit/kmkit/scim"
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
		return Policy{Permission: principal.PermSCIM, WriteError: scim.WriteProblem}
	case FamilyReporting:
		return Policy{Permission: principal.PermReporting, Credentials: APIKeyHeader,
			Tenant: reporting.RequestTenant, WriteError: reporting.WriteProblem}
	default:
		return Policy{Permission: principal.PermKM, WriteError: km.WriteProblem}
	}
}
