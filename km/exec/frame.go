package exec

import (
	"fmt"
	"strings"
	"sync"

	"github.com/kmkit/kmkit/km"
	"github.com/kmkit/kmkit/query"
	"github.com/kmkit/kmkit/query/column"
)

// Frame is what the executor reads: the rows of a base table, and for each name a column
// read either directly (base columns) or through a join index (columns of joined tables).
// A Frame is immutable and safe for concurrent use; build it once per table set and reuse it.
type Frame struct {
	rows  int
	names []string
	refs  map[string]ref
	// indexes caches a *sortIndex per column name, built when a query first walks it:
	// those of columns read through a join, and the row key's.
	indexes sync.Map
	// tableIndexes, when set, caches the *sortIndex of each base column (read without an
	// index) by the column, shared with the other frames over the same base table (the
	// Source's, see Source.Warm): a base column's frame rows are the table's.
	tableIndexes *sync.Map
	// referrals, when set, holds the key each referring column refers to with the
	// relationship's children index (the Source's, see Source.children).
	referrals *sync.Map
	// codeIndexes caches a *codeRowsIndex per string column (by pointer) of few values.
	codeIndexes sync.Map
}

// ref is how a frame reads one column: cell r of the frame is cell index[r] of col, or
// null when index[r] is -1. A nil index reads col directly.
type ref struct {
	col   column.Column
	index []int32
}

// row maps a frame row to a row of the column, or -1.
func (c ref) row(r int32) int32 {
	if c.index == nil {
		return r
	}
	return c.index[r]
}

// value returns the frame cell r.
func (c ref) value(r int32) query.Value {
	cr := c.row(r)
	if cr < 0 {
		return query.Null(c.col.Type())
	}
	return c.col.Value(int(cr))
}

// FromTable returns the frame of one table, its columns named as in the table (the
// record-level form "FIELD").
func FromTable(t *column.Table) *Frame {
	f := &Frame{rows: t.Rows(), names: t.Names(), refs: make(map[string]ref, len(t.Names()))}
	for i, name := range t.Names() {
		f.refs[name] = ref{col: t.Columns()[i]}
	}
	return f
}

// Join is one many-to-one join of a frame: each row of the frame so far meets the row of
// Table whose Key equals the frame's column From, or no row (its columns then read null).
type Join struct {
	From   string        // a column of the frame so far, qualified: "ACTIVITIES.ORDER_ID"
	Record string        // the record id that qualifies the joined columns: "ORDERS"
	Table  *column.Table // the joined table
	Key    string        // its key column: "ORDER_ID"
}

// NewFrame returns the frame of the base table of record with the joins applied in order.
// Columns are named "RECORD.FIELD". A join's From may name a column of the base or of an
// earlier join, which chains joins (A -> B -> C). Key columns must have the same type, string
// or integer-like (integer, date, datetime, timestamp, time); null keys match nothing. A
// key holding a value twice, so that the join would not be many-to-one, is a
// *km.DuplicateTargetError (km.ErrDuplicateTarget).
// Building a join index costs one hash map over the joined table's keys and one pass over
// the frame's rows; joined tables are read through the index, never copied.
func NewFrame(record string, base *column.Table, joins ...Join) (*Frame, error) {
	f := &Frame{rows: base.Rows(), refs: make(map[string]ref)}
	f.add(record, base, nil)
	records := map[string]bool{record: true}
	for _, j := range joins {
		if records[j.Record] {
			return nil, fmt.Errorf("exec: record %q joined twice", j.Record)
		}
		from, ok := f.refs[j.From]
		if !ok {
			return nil, fmt.Errorf("exec: join of %s: %w %q", j.Record, ErrUnknownField, j.From)
		}
		key, ok := j.Table.Column(j.Key)
		if !ok {
			return nil, fmt.Errorf("exec: join of %s: %w %q", j.Record, ErrUnknownField, j.Record+"."+j.Key)
		}
		fromRecord, fromField, _ := strings.Cut(j.From, ".")
		rel := km.Relationship{From: km.FieldPath{Record: fromRecord, Field: fromField}, To: km.FieldPath{Record: j.Record, Field: j.Key}}
		index, err := joinIndex(f.rows, from, key, rel)
		if err != nil {
			return nil, fmt.Errorf("exec: join %s to %s.%s: %w", j.From, j.Record, j.Key, err)
		}
		f.add(j.Record, j.Table, index)
		records[j.Record] = true
	}
	return f, nil
}

func (f *Frame) add(record string, t *column.Table, index []int32) {
	for i, name := range t.Names() {
		q := record + "." + name
		f.names = append(f.names, q)
		f.refs[q] = ref{col: t.Columns()[i], index: index}
	}
}

// addRowKey adds the base table's row key column (values 1..n in row order) as name.
// Its sort index, built when a sort first walks it, is the identity: sorting by it sorts
// nothing. It must be called before the frame is shared.
func (f *Frame) addRowKey(name string, col *column.Int64s) {
	f.names = append(f.names, name)
	f.refs[name] = ref{col: col}
	f.indexes.Store(name, &sortIndex{identity: true})
}

// reindexed returns a frame with f's rows and columns in which the columns of each
// record of indexes ("RECORD.FIELD") read through the given index instead of their own.
// The other columns keep the sort indexes f has cached (their frame rows are the same),
// and every column its per-code rows (they are over the column's own rows).
func (f *Frame) reindexed(indexes map[string][]int32) *Frame {
	if len(indexes) == 0 {
		return f
	}
	out := &Frame{rows: f.rows, names: f.names, refs: make(map[string]ref, len(f.refs)), tableIndexes: f.tableIndexes, referrals: f.referrals}
	changed := func(name string) bool {
		rec, _, _ := strings.Cut(name, ".")
		_, ok := indexes[rec]
		return ok
	}
	for name, c := range f.refs {
		rec, _, _ := strings.Cut(name, ".")
		if idx, ok := indexes[rec]; ok {
			c.index = idx
		}
		out.refs[name] = c
	}
	f.indexes.Range(func(k, v any) bool {
		if !changed(k.(string)) {
			out.indexes.Store(k, v)
		}
		return true
	})
	f.codeIndexes.Range(func(k, v any) bool {
		out.codeIndexes.Store(k, v)
		return true
	})
	return out
}

// Rows is the number of rows of the frame (those of its base table).
func (f *Frame) Rows() int { return f.rows }

// Names returns the column names in order: the base table's, then each join's. The caller
// must not modify the slice.
func (f *Frame) Names() []string { return f.names }

// Type returns the type of the column name.
func (f *Frame) Type(name string) (query.Type, bool) {
	c, ok := f.refs[name]
	if !ok {
		return query.TypeInvalid, false
	}
	return c.col.Type(), true
}

// Value returns the cell of column name at row; ok is false for an unknown name or a row
// out of range.
func (f *Frame) Value(name string, row int) (v query.Value, ok bool) {
	c, ok := f.refs[name]
	if !ok || row < 0 || row >= f.rows {
		return query.Value{}, false
	}
	return c.value(int32(row)), true
}

// joinIndex returns, for each of the n frame rows, the row of key whose value equals the
// frame's from column, or -1. A key holding a value twice is rel's *km.DuplicateTargetError.
func joinIndex(n int, from ref, key column.Column, rel km.Relationship) ([]int32, error) {
	if from.col.Type() != key.Type() {
		return nil, fmt.Errorf("key types differ: %v and %v", from.col.Type(), key.Type())
	}
	// rowOf maps a row of the from column (not the frame) to a row of key.
	var rowOf func(r int32) int32
	switch fc := from.col.(type) {
	case *column.Strings:
		kc := key.(*column.Strings)
		byValue := make(map[string]int32, len(kc.Dict))
		for r := range kc.Codes.Len() {
			if kc.Nulls.Get(r) {
				continue
			}
			s := kc.Dict[kc.Codes.At(r)]
			if _, dup := byValue[s]; dup {
				return nil, &km.DuplicateTargetError{Relationship: rel, Value: kc.Value(r)}
			}
			byValue[s] = int32(r)
		}
		byCode := make([]int32, len(fc.Dict))
		for code, s := range fc.Dict {
			if r, ok := byValue[s]; ok {
				byCode[code] = r
			} else {
				byCode[code] = -1
			}
		}
		rowOf = func(r int32) int32 {
			if fc.Nulls.Get(int(r)) {
				return -1
			}
			return byCode[fc.Codes.At(int(r))]
		}
	case *column.Int64s:
		kc := key.(*column.Int64s)
		byValue := make(map[int64]int32, len(kc.Vals))
		for r, v := range kc.Vals {
			if kc.Nulls.Get(r) {
				continue
			}
			if _, dup := byValue[v]; dup {
				return nil, &km.DuplicateTargetError{Relationship: rel, Value: kc.Value(r)}
			}
			byValue[v] = int32(r)
		}
		rowOf = func(r int32) int32 {
			if fc.Nulls.Get(int(r)) {
				return -1
			}
			if kr, ok := byValue[fc.Vals[r]]; ok {
				return kr
			}
			return -1
		}
	default:
		return nil, fmt.Errorf("cannot join on %v columns", from.col.Type())
	}
	index := make([]int32, n)
	for r := range index {
		fr := from.row(int32(r))
		if fr < 0 {
			index[r] = -1
		} else {
			index[r] = rowOf(fr)
		}
	}
	return index, nil
}
