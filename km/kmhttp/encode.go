package kmhttp

import (
	"github.com/kmkit/kmkit/internal/jsonenc"
	"github.com/kmkit/kmkit/query"
)

// The data endpoints write rows by hand rather than through encoding/json: rows keep the
// order of their columns, and a page of rows is encoded without a map per row. Strings
// are written by jsonenc.AppendStringNoHTMLEscape and values by jsonenc.AppendJSON, the
// bytes encoding/json writes without HTML escaping.

// appendRow appends one row as a JSON object with the given (pre-quoted) keys.
func appendRow(b []byte, keys [][]byte, row []query.Value) []byte {
	b = append(b, '{')
	for i, v := range row {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, keys[i]...)
		b = append(b, ':')
		b = jsonenc.AppendJSON(b, v)
	}
	return append(b, '}')
}
