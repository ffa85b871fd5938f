package km

import (
	"errors"
	"testing"
	"testing/fstest"
)

func FuzzLoadDefinition(f *testing.F) {
	f.Add([]byte(baseYAML))
	f.Add([]byte(childYAML))
	f.Add([]byte("id: a\nrecords: [{id: R, fields: [{id: F, type: integer}]}]\nkpis: [{id: K, expr: 'sum(R.F, R.F gt ${p})', parameters: [{id: p, value: '1'}]}]\n"))
	f.Add([]byte("id: [\n"))
	f.Add([]byte("id: a\nrecords: [{id: R, fields: [{id: F, type: integer}, {id: G, type: string}], indexes: [[F, G], [G]]}]\n"))
	f.Add([]byte("id: a\nrecords: [{id: R, fields: [{id: F, type: integer}], indexes: [[F, [F]], {}, [X]]}]\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		_, err := Load(fstest.MapFS{"models/a.yaml": {Data: data}})
		if err == nil {
			return
		}
		var de *DefinitionError
		if !errors.As(err, &de) {
			t.Fatalf("Load: error %T %v is not a *DefinitionError", err, err)
		}
	})
}
