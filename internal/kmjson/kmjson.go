// Package kmjson writes the JSON bodies of Knowledge Model answers that more than one
// surface serves as is: the rows and headers of a page and the summary of a record, so that
// the KM API and the MCP tools answer the same bytes from the same km.Service results.
//
// Rows are written by hand rather than through encoding/json: they keep the order of
// their columns, and a page is encoded without a map per row. Strings are written by
// jsonenc.AppendStringNoHTMLEscape and values by jsonenc.AppendJSON, the bytes
// encoding/json writes without HTML escaping.
package kmjson

import (
	"fmt"
	"strconv"

	"github.com/kmkit/kmkit/internal/jsonenc"
	"github.com/kmkit/kmkit/km"
	"github.com/kmkit/kmkit/query"
)

// AppendRow appends one row as a JSON object with the given (pre-quoted) keys.
func AppendRow(b []byte, keys [][]byte, row []query.Value) []byte {
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

// QuoteKeys returns names quoted as JSON strings, in one allocation.
func QuoteKeys(names []string) [][]byte {
	n := 0
	for _, name := range names {
		n += len(name) + 2
	}
	buf := make([]byte, 0, n+8)
	keys := make([][]byte, len(names))
	for i, name := range names {
		start := len(buf)
		buf = jsonenc.AppendStringNoHTMLEscape(buf, name)
		keys[i] = buf[start:len(buf):len(buf)]
	}
	return keys
}

// AppendHeader appends the header entry of a column named id, a field f or a KPI k (the
// other nil); t is the column's type in the result (TypeInvalid or TypeNull: the KPI's
// declared type). Format and unit are always written ("" when there is none), as the real
// service writes them.
func AppendHeader(b []byte, id string, f *km.Field, k *km.KPI, t query.Type) []byte {
	name, format, unit, agg := "", "", "", k != nil
	if f != nil {
		name, format, unit, t = f.Name, f.Format, f.Unit, f.Type
	} else {
		name, format, unit = k.Name, k.Format, k.Unit
		if t == query.TypeInvalid || t == query.TypeNull {
			t = k.Type
		}
	}
	b = append(b, `{"id":`...)
	b = jsonenc.AppendStringNoHTMLEscape(b, id)
	b = append(b, `,"name":`...)
	b = jsonenc.AppendStringNoHTMLEscape(b, name)
	b = append(b, `,"type":`...)
	b = jsonenc.AppendStringNoHTMLEscape(b, t.String())
	b = append(b, `,"format":`...)
	b = jsonenc.AppendStringNoHTMLEscape(b, format)
	b = append(b, `,"unit":`...)
	b = jsonenc.AppendStringNoHTMLEscape(b, unit)
	b = append(b, `,"aggregation":`...)
	b = strconv.AppendBool(b, agg)
	b = append(b, `,"filterable":`...)
	b = strconv.AppendBool(b, !agg)
	b = append(b, `,"sortable":true}`...)
	return b
}

// Summary renders a record's summary (km.Service.Summarize) as
// {content: {headers, data}, shape: [rows, columns], summary: {...}}.
func Summary(res *km.SummaryResult) ([]byte, error) {
	fields, sum, sample := res.Fields, res.Summary, res.Sample.Rows
	names := make([]string, len(fields))
	for i, f := range fields {
		names[i] = f.ID
	}
	keys := QuoteKeys(names)
	b := make([]byte, 0, 512+len(fields)*(64+len(sample)*24))
	b = append(b, `{"content":{"headers":[`...)
	for i, f := range fields {
		if i > 0 {
			b = append(b, ',')
		}
		b = AppendHeader(b, f.ID, f, nil, f.Type)
	}
	b = append(b, `],"data":[`...)
	for i, row := range sample {
		if i > 0 {
			b = append(b, ',')
		}
		b = AppendRow(b, keys, row)
	}
	b = append(b, `]},"shape":[`...)
	b = strconv.AppendInt(b, int64(sum.Rows), 10)
	b = append(b, ',')
	b = strconv.AppendInt(b, int64(len(fields)), 10)
	b = append(b, `],"summary":{`...)
	for i, fs := range sum.Fields {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, keys[i]...)
		b = append(b, ':')
		js, err := fs.MarshalJSON()
		if err != nil {
			return nil, fmt.Errorf("%w (field %s)", err, fields[i].ID)
		}
		b = append(b, js...)
	}
	return append(b, "}}"...), nil
}
