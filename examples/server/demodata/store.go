package demodata

import (
	"github.com/kmkit/kmkit/km"
	"github.com/kmkit/kmkit/query"
	"github.com/kmkit/kmkit/query/column"
	"github.com/kmkit/kmkit/storage/memory"
)

// Tables generates the data for n orders straight into columns, one table per source.
func Tables(n int) (map[string]*column.Table, error) {
	builders := map[string][]*column.Builder{}
	for _, s := range Sources {
		bs := make([]*column.Builder, len(s.Types))
		for i, t := range s.Types {
			bs[i] = column.NewBuilder(t)
		}
		builders[s.Name] = bs
	}
	err := Generate(n, func(source string, row []query.Value) error {
		for i, v := range row {
			if err := builders[source][i].Append(v); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	tables := make(map[string]*column.Table, len(Sources))
	for _, s := range Sources {
		cols := make([]column.Column, len(s.Columns))
		for i, b := range builders[s.Name] {
			cols[i] = b.Build()
		}
		t, err := column.NewTable(s.Columns, cols)
		if err != nil {
			return nil, err
		}
		tables[s.Name] = t
	}
	return tables, nil
}

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
