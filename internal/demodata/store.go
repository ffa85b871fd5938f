package demodata

import (
	"github.com/kmkit/kmkit/km"
	"github.com/kmkit/kmkit/storage/memory"
)

// Store returns the demo KMs in a memory store: the embedded data when n is 0, else n
// generated orders (with n/100 customers, at least 50).
func Store(n int) (*memory.KMStore, error) {
	if n == 0 {
		return memory.LoadKMStore(FS)
	}
	models, err := km.Load(FS)
	if err != nil {
		return nil, err
	}
	tables, err := Tables(n)
	if err != nil {
		return nil, err
	}
	s := memory.NewKMStore()
	for name, t := range tables {
		s.PutTable(name, t)
	}
	for _, m := range models {
		if err := s.PutModel(m); err != nil {
			return nil, err
		}
	}
	return s, nil
}
