// Package demostore loads the order-to-cash demo (package demodata) into a memory store,
// for the examples, benchmarks and tests that run on it. It is apart from demodata so that
// the data, which the conformance suite loads into every backend, links no backend.
package demostore

import (
	"context"

	"github.com/kmkit/kmkit/internal/demodata"
	"github.com/kmkit/kmkit/km"
	"github.com/kmkit/kmkit/storage/memory"
)

// Store returns the demo KMs in a memory store: the embedded data when n is 0, else n
// generated orders (with n/100 customers, at least 50).
func Store(n int) (*memory.KMStore, error) {
	ctx := context.Background()
	s := memory.New().KM()
	if n == 0 {
		if err := s.Import(ctx, demodata.FS); err != nil {
			return nil, err
		}
		return s, nil
	}
	models, err := km.Load(demodata.FS)
	if err != nil {
		return nil, err
	}
	tables, err := demodata.Tables(n)
	if err != nil {
		return nil, err
	}
	for name, t := range tables {
		s.PutTable(name, t)
	}
	for _, m := range models {
		if err := s.PutModel(ctx, m); err != nil {
			return nil, err
		}
	}
	return s, nil
}
