package storetest_test

import (
	"testing"

	"github.com/kmkit/kmkit/auth/ratelimit"
	"github.com/kmkit/kmkit/reporting/reportingtest"
	"github.com/kmkit/kmkit/storage/memory"
	"github.com/kmkit/kmkit/storage/storetest"
)

// TestMemory runs the suites on the memory backend, each on a new memory.DB opened as a
// host opens it.
func TestMemory(t *testing.T) {
	storetest.Run(t, storetest.Backend{
		KM:        storetest.ImportKM(func(*testing.T) *memory.KMStore { return memory.New().KM() }),
		SCIM:      storetest.SeatedSCIM(func(*testing.T) *memory.SCIMStore { return memory.New().SCIM() }),
		Reporting: func(t *testing.T) reportingtest.Store { return memory.New().Reporting() },
		Limiter:   func(t *testing.T) ratelimit.Limiter { return ratelimit.NewMemory() },
		Importer:  func(*testing.T) storetest.Importer { return memory.New().KM() },
	})
}
