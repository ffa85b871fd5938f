package column

import (
	"fmt"
)

// Table is a set of named columns of equal length, in order.
type Table struct {
	names []string
	cols  []Column
	index map[string]int
	rows  int
}

// NewTable returns a table of the columns cols named names. Names must be unique and the
// columns of equal length.
func NewTable(names []string, cols []Column) (*Table, error) {
	if len(names) != len(cols) {
		return nil, fmt.Errorf("column: %d names for %d columns", len(names), len(cols))
	}
	t := &Table{names: names, cols: cols, index: make(map[string]int, len(names))}
	for i, name := range names {
		if _, dup := t.index[name]; dup {
			return nil, fmt.Errorf("column: duplicate column %q", name)
		}
		t.index[name] = i
		if i == 0 {
			t.rows = cols[i].Len()
		} else if cols[i].Len() != t.rows {
			return nil, fmt.Errorf("column: column %q has %d rows, column %q has %d",
				name, cols[i].Len(), names[0], t.rows)
		}
	}
	return t, nil
}

// Rows is the number of rows.
func (t *Table) Rows() int { return t.rows }

// Names returns the column names in order. The caller must not modify the slice.
func (t *Table) Names() []string { return t.names }

// Columns returns the columns in order. The caller must not modify the slice.
func (t *Table) Columns() []Column { return t.cols }

// Column returns the column named name.
func (t *Table) Column(name string) (Column, bool) {
	i, ok := t.index[name]
	if !ok {
		return nil, false
	}
	return t.cols[i], true
}

// Bytes is the memory held by the columns.
func (t *Table) Bytes() int {
	n := 0
	for _, c := range t.cols {
		n += c.Bytes()
	}
	return n
}

// RawBytes is the natural size of the values of all columns (see Column.RawBytes).
func (t *Table) RawBytes() int {
	n := 0
	for _, c := range t.cols {
		n += c.RawBytes()
	}
	return n
}
