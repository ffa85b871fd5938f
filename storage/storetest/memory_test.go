package storetest_test

import (
	"io/fs"
	"testing"

	"github.com/kmkit/kmkit/auth/ratelimit"
	"github.com/kmkit/kmkit/km"
	"github.com/kmkit/kmkit/reporting/reportingtest"
	"github.com/kmkit/kmkit/scim"
	"github.com/kmkit/kmkit/storage/memory"
	"github.com/kmkit/kmkit/storage/storetest"
)

// TestMemory runs the suites on the memory backend, the reference of the others.
func TestMemory(t *testing.T) {
	storetest.Run(t, storetest.Backend{
		KM: func(t *testing.T, data fs.FS) km.Store {
			s, err := memory.LoadKMStore(data)
			if err != nil {
				t.Fatal(err)
			}
			return s
		},
		SCIM: func(t *testing.T, seats map[string]int) scim.Store {
			s := memory.NewSCIMStore()
			for team, n := range seats {
				s.SetSeatLimit(team, n)
			}
			return s
		},
		Reporting: func(t *testing.T) reportingtest.Store { return memory.NewReportingStore() },
		Limiter:   func(t *testing.T) ratelimit.Limiter { return ratelimit.NewMemory() },
	})
}
