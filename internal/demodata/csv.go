package demodata

import (
	"encoding/csv"
	"fmt"
	"io"
	"strconv"

	"github.com/kmkit/kmkit/query"
)

// WriteCSV generates the data for n orders and writes each source as CSV (header row of
// column ids, empty cell for null) to the writer open returns for it.
func WriteCSV(n int, open func(source string) (io.Writer, error)) error {
	writers := map[string]*csv.Writer{}
	for _, s := range Sources {
		w, err := open(s.Name)
		if err != nil {
			return err
		}
		cw := csv.NewWriter(w)
		if err := cw.Write(s.Columns); err != nil {
			return err
		}
		writers[s.Name] = cw
	}
	var cells []string
	err := Generate(n, func(source string, row []query.Value) error {
		cells = cells[:0]
		for _, v := range row {
			cells = append(cells, Cell(v))
		}
		return writers[source].Write(cells)
	})
	if err != nil {
		return err
	}
	for _, s := range Sources {
		cw := writers[s.Name]
		cw.Flush()
		if err := cw.Error(); err != nil {
			return fmt.Errorf("demodata: writing %s: %w", s.Name, err)
		}
	}
	return nil
}

// Cell renders v as a CSV cell of the data directory format: "" for null, dates
// YYYY-MM-DD, instants RFC 3339 UTC, floats in their shortest exact form.
func Cell(v query.Value) string {
	if v.Null {
		return ""
	}
	switch v.Type {
	case query.TypeFloat:
		return strconv.FormatFloat(v.Float, 'f', -1, 64)
	case query.TypeInteger:
		return strconv.FormatInt(v.Int, 10)
	}
	return fmt.Sprint(v.Format())
}
