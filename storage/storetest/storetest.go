// Package storetest holds the conformance suites every kmkit storage backend runs, in the
// manner of the Go CDK's drivertest: the memory backend, SQLite and PostgreSQL run the same
// tests, so that a difference between backends is a failing test.
//
//	func TestConformance(t *testing.T) {
//		storetest.Run(t, storetest.Backend{
//			KM:        func(t *testing.T, data fs.FS) km.Store { ... load data ... },
//			SCIM:      func(t *testing.T, seats map[string]int) scim.Store { ... },
//			Reporting: func(t *testing.T) reportingtest.Store { ... },
//			Limiter:   func(t *testing.T) ratelimit.Limiter { ... },
//		})
//	}
//
// The KM suite loads a fixed data directory (Data) into the backend and runs a table of
// queries (filters of every kind with nulls and three-valued logic, date and date-time
// semantics, string functions, sorts with nulls last and ties in row order, paging,
// distinct, search, joins, KPIs) and compares every result with the memory backend's
// executor on the same data; a few results are also spelled out, and hostile inputs
// (values, field ids, sort keys and search terms written to break out of SQL) must be
// rejected or matched literally. Results must be equal to the last bit of every float. The SCIM, reporting and limiter suites are those of scim/scimtest,
// reporting/reportingtest and auth/ratelimit/limitertest.
package storetest

import (
	"context"
	"embed"
	"io/fs"
	"sync"
	"testing"

	"github.com/kmkit/kmkit/auth/ratelimit"
	"github.com/kmkit/kmkit/auth/ratelimit/limitertest"
	"github.com/kmkit/kmkit/km"
	"github.com/kmkit/kmkit/reporting/reportingtest"
	"github.com/kmkit/kmkit/scim/scimtest"
	"github.com/kmkit/kmkit/storage/memory"
)

//go:embed testdata/km
var data embed.FS

// Data returns the data directory the KM suite loads: models/suite.yaml and the CSV files
// of its sources.
func Data() fs.FS {
	sub, err := fs.Sub(data, "testdata/km")
	if err != nil {
		panic(err) // the embedded directory exists
	}
	return sub
}

// Backend gives the suites a factory per store; a nil factory skips its suite.
type Backend struct {
	// KM returns a store holding the KMs and data of the directory data.
	KM func(t *testing.T, data fs.FS) km.Store
	// SCIM returns an empty store with the given seat limits.
	SCIM scimtest.Factory
	// Reporting returns an empty store.
	Reporting func(t *testing.T) reportingtest.Store
	// Limiter returns a limiter with no counters.
	Limiter func(t *testing.T) ratelimit.Limiter
}

// Run runs every suite the backend has a factory for.
func Run(t *testing.T, b Backend) {
	if b.KM != nil {
		t.Run("KM", func(t *testing.T) { RunKM(t, b.KM) })
	}
	if b.SCIM != nil {
		t.Run("SCIM", func(t *testing.T) { scimtest.Run(t, b.SCIM) })
	}
	if b.Reporting != nil {
		t.Run("Reporting", func(t *testing.T) { reportingtest.Run(t, b.Reporting) })
	}
	if b.Limiter != nil {
		t.Run("Limiter", func(t *testing.T) { limitertest.Run(t, b.Limiter) })
	}
}

var (
	oracleOnce sync.Once
	oracle     *memory.KMStore
	oracleErr  error
)

// reference returns the memory store over Data, whose executor gives the expected results.
func reference(t *testing.T) *memory.KMStore {
	t.Helper()
	oracleOnce.Do(func() { oracle, oracleErr = memory.LoadKMStore(Data()) })
	if oracleErr != nil {
		t.Fatal(oracleErr)
	}
	return oracle
}

func suiteModel(t *testing.T, s km.Store) *km.KnowledgeModel {
	t.Helper()
	m, err := s.Model(context.Background(), "suite")
	if err != nil {
		t.Fatal(err)
	}
	return m
}
