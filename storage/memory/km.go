package memory

import (
	"context"
	"fmt"
	"io/fs"
	"maps"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/kmkit/kmkit/km"
	"github.com/kmkit/kmkit/km/exec"
	"github.com/kmkit/kmkit/query"
	"github.com/kmkit/kmkit/query/column"
)

// KMStore is the in-memory km.Store: Knowledge Models and the tables behind their records,
// queried with the columnar executor of package km/exec.
//
// The store holds every KM; which of them a caller sees is the KM's own rule
// (km.KnowledgeModel.Teams, applied by km.LookupModel above every store).
//
// Tables are keyed by a record's Source, so that KMs sharing a record (a KM and the KM it
// extends) share its data. The executor's frames and relationship indexes of a KM are
// built on first use and kept until a table or model changes. A KMStore is safe for concurrent use.
type KMStore struct {
	mu     sync.RWMutex
	models map[string]*km.KnowledgeModel
	tables map[string]*column.Table
	// sources holds the executor source per KM (by identity: a query still holding a
	// replaced model must not leave its source for the new one).
	sources map[*km.KnowledgeModel]*kmSource
}

// kmSource is a cached executor source, built once by whichever query needs it first.
type kmSource struct {
	once  sync.Once
	src   *exec.Source
	err   error
	built atomic.Bool // src is set (read src only after seeing this)
}

// newKMStore returns an empty store (DB.KM).
func newKMStore() *KMStore {
	return &KMStore{models: map[string]*km.KnowledgeModel{}, tables: map[string]*column.Table{}, sources: map[*km.KnowledgeModel]*kmSource{}}
}

// PutTable sets the table of a record source, replacing any previous one. It is the
// memory backend's way to serve data that are no data directory (generated, or read by the
// host): put the tables, then the models with PutModel. A table replaced under a KM the
// store holds is not checked against the KM's relationships (PutModel checks them): a
// query joining through a target it holds twice answers km.DuplicateTargetError.
func (s *KMStore) PutTable(source string, t *column.Table) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.tables[source] = t
	clear(s.sources)
}

// PutModel adds or replaces a KM, like sqlstore.KMStore.PutModel. Every record's source must
// have a table (PutTable, Import) holding each of the record's fields with its type.
func (s *KMStore) PutModel(ctx context.Context, m *km.KnowledgeModel) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := checkModel(m, s.tables); err != nil {
		return err
	}
	s.models[m.ID] = m
	clear(s.sources)
	return nil
}

// checkModel reports whether tables hold every record of m: a table per source, with a
// column of the field's type per field, and the target of each relationship holding each
// non-null value at most once (km.CheckTarget).
func checkModel(m *km.KnowledgeModel, tables map[string]*column.Table) error {
	for _, r := range m.Records {
		t, ok := tables[r.Source]
		if !ok {
			return fmt.Errorf("memory: KM %s: record %s: no table for source %q", m.ID, r.ID, r.Source)
		}
		for _, f := range r.Fields {
			c, ok := t.Column(f.ID)
			if !ok {
				return fmt.Errorf("memory: KM %s: record %s: table %q has no column %s", m.ID, r.ID, r.Source, f.ID)
			}
			if c.Type() != f.Type {
				return fmt.Errorf("memory: KM %s: record %s: column %s of table %q is %s, the field is %s", m.ID, r.ID, f.ID, r.Source, c.Type(), f.Type)
			}
		}
	}
	for _, rel := range m.Relationships {
		r := m.Record(rel.To.Record)
		if r == nil || r.Field(rel.To.Field) == nil {
			return fmt.Errorf("memory: KM %s: relationship %s -> %s: no field %s", m.ID, rel.From, rel.To, rel.To)
		}
		c, _ := tables[r.Source].Column(rel.To.Field) // checked above with the record's fields
		if err := km.CheckTarget(rel, c); err != nil {
			return fmt.Errorf("memory: KM %s: the data of source %s: %w", m.ID, r.Source, err)
		}
	}
	return nil
}

// Import reads a data directory into the store, like sqlstore.KMStore.Import: the KMs of
// models/*.yaml (see km.Load) and, for each record source, data/<source>.csv, whose header
// must name exactly the fields of the records using it. The tables of the directory's
// sources replace those of the same names and its KMs those of the same ids; the rest of
// the store stays. Errors name the file and, for definitions and cells, the line; on error
// the store is unchanged. Every file is read on each Import (memory holds nothing across
// restarts to compare it with).
func (s *KMStore) Import(ctx context.Context, fsys fs.FS) error {
	models, err := km.Load(fsys)
	if err != nil {
		return err
	}
	schemas, err := kmSourceSchemas(models)
	if err != nil {
		return err
	}
	tables := make(map[string]*column.Table, len(schemas))
	var loader column.Loader // one scratch memory for all the files
	for _, src := range slices.Sorted(maps.Keys(schemas)) {
		if err := ctx.Err(); err != nil {
			return err
		}
		name := "data/" + src + ".csv"
		f, err := fsys.Open(name)
		if err != nil {
			return fmt.Errorf("memory: the data of source %s: %w", src, err)
		}
		t, err := loader.Load(f, schemas[src])
		f.Close()
		if err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		tables[src] = t
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	next := maps.Clone(s.tables)
	maps.Copy(next, tables)
	nextModels := maps.Clone(s.models)
	for _, m := range models {
		nextModels[m.ID] = m
	}
	// Every KM the store will hold must fit the tables, also one a replaced table serves.
	for _, id := range slices.Sorted(maps.Keys(nextModels)) {
		if err := checkModel(nextModels[id], next); err != nil {
			return err
		}
	}
	s.tables, s.models = next, nextModels
	clear(s.sources)
	return nil
}

// kmSourceSchemas returns the fields each source must hold: the union over the records
// using it. Two records giving one field different types is an error.
func kmSourceSchemas(models []*km.KnowledgeModel) (map[string]column.Schema, error) {
	out := map[string]column.Schema{}
	for _, m := range models {
		for _, r := range m.Records {
			sc := out[r.Source]
			if sc == nil {
				sc = column.Schema{}
				out[r.Source] = sc
			}
			for _, f := range r.Fields {
				if t, ok := sc[f.ID]; ok && t != f.Type {
					return nil, fmt.Errorf("memory: source %s: field %s is %s in one record and %s in another (KM %s, record %s)", r.Source, f.ID, t, f.Type, m.ID, r.ID)
				}
				sc[f.ID] = f.Type
			}
		}
	}
	return out, nil
}

// Models implements km.Store: every KM of the store.
func (s *KMStore) Models(context.Context) ([]*km.KnowledgeModel, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	out := make([]*km.KnowledgeModel, 0, len(s.models))
	for _, m := range s.models {
		out = append(out, m)
	}
	slices.SortFunc(out, func(a, b *km.KnowledgeModel) int { return strings.Compare(a.ID, b.ID) })
	return out, nil
}

// Model implements km.Store.
func (s *KMStore) Model(_ context.Context, id string) (*km.KnowledgeModel, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	m, ok := s.models[id]
	if !ok {
		return nil, fmt.Errorf("memory: KM %q: %w", id, km.ErrModelNotFound)
	}
	return m, nil
}

// Query implements km.Store: it runs the plan with the columnar executor (exec.Source)
// over the tables of the plan's KM, bounded by ctx (exec.Source.RunContext).
func (s *KMStore) Query(ctx context.Context, p *km.Plan) (*query.Result, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	src, err := s.source(p.KM)
	if err != nil {
		return nil, err
	}
	return src.RunContext(ctx, p)
}

// Warm readies the store for its first requests after a load: it builds the executor of
// every KM it holds with the indexes of its relationships, and the scratch memory of its
// runs (exec.Source.Warm), so that the first heavy request runs as later ones do instead
// of paying for the indexes and for fresh memory (a page fault per 4 KiB), and the sort
// indexes of each record's key and declared index columns (km.Record.Indexes), or of
// every column of a small record (at most 65,536 rows), which the first page sorted by
// one of them would otherwise build, the fuzzy index of each string dictionary of up to
// 128Ki values (fuzzy.Index), which the first search of one would otherwise build, and
// the rows where the conditions of the KPIs hold (a bit a row, at most 4 MiB a KM). It
// costs about four int32s per row of each table size, at most two per row of each
// column sorted (about 110 MiB for the 1M-order demo), and the dictionaries' text once
// or twice more plus 21 to 37 bytes a value (1.6 MB for the demo), kept while the data
// stay, and leaves garbage (the hash maps of
// the index builds, the sorts' keys) that a collection frees. A host calls it once its
// tables and models are in place (the reference server does after loading); without it
// each executor is built by its first request. A later PutTable, PutModel or Import drops
// the executors: call Warm again after it.
func (s *KMStore) Warm() error {
	s.mu.RLock()
	models := slices.Collect(maps.Values(s.models))
	s.mu.RUnlock()
	for _, m := range models {
		src, err := s.source(m)
		if err != nil {
			return err
		}
		src.Warm()
	}
	return nil
}

// sharedLocked returns the executor of another KM of the store, already built over the
// store's tables (they change only with a clear of the sources), whose scratch memory and
// fuzzy scores a new one shares, or nil. The caller holds s.mu.
func (s *KMStore) sharedLocked(self *kmSource) *exec.Source {
	for _, e := range s.sources {
		if e != self && e.built.Load() {
			return e.src
		}
	}
	return nil
}

// source returns the (cached) executor source of m's tables.
func (s *KMStore) source(m *km.KnowledgeModel) (*exec.Source, error) {
	s.mu.Lock()
	e, ok := s.sources[m]
	if !ok {
		e = &kmSource{}
		s.sources[m] = e
	}
	s.mu.Unlock()
	e.once.Do(func() {
		s.mu.RLock()
		defer s.mu.RUnlock()
		tables := make(map[string]*column.Table, len(m.Records))
		for _, r := range m.Records {
			t, ok := s.tables[r.Source]
			if !ok {
				e.err = fmt.Errorf("memory: no table for source %q of record %s", r.Source, r.ID)
				return
			}
			tables[r.ID] = t
		}
		e.src = exec.NewSourceSharing(m, tables, s.sharedLocked(e))
		e.built.Store(true)
	})
	return e.src, e.err
}

// DistinctCounts implements km.MemorySizer: the size of a string column's dictionary, the
// range of an integer, date or date-time column, 2 for a boolean (each at most the
// table's rows), for the memory estimate of a plan; unknown for other columns.
func (s *KMStore) DistinctCounts(_ context.Context, m *km.KnowledgeModel) func(record, field string) (int64, bool) {
	return func(record, field string) (int64, bool) { return s.distinctCount(m, record, field) }
}

func (s *KMStore) distinctCount(m *km.KnowledgeModel, record, field string) (int64, bool) {
	r := m.Record(record)
	if r == nil {
		return 0, false
	}
	s.mu.RLock()
	t, ok := s.tables[r.Source]
	s.mu.RUnlock()
	if !ok {
		return 0, false
	}
	c, ok := t.Column(field)
	if !ok {
		return 0, false
	}
	rows := int64(t.Rows())
	switch c := c.(type) {
	case *column.Strings:
		return min(int64(len(c.Dict)), rows), true
	case *column.Int64s:
		if lo, hi, ok := c.Range(); ok && hi-lo >= 0 {
			return min(hi-lo+1, rows), true
		}
		return min(1, rows), true // only nulls
	case *column.Bools:
		return min(2, rows), true
	}
	return 0, false
}

// RowCount implements km.RowCounter: the rows of the table of a record of m, for the cost
// estimate of a plan.
func (s *KMStore) RowCount(_ context.Context, m *km.KnowledgeModel, record string) (int64, bool) {
	r := m.Record(record)
	if r == nil {
		return 0, false
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	t, ok := s.tables[r.Source]
	if !ok {
		return 0, false
	}
	return int64(t.Rows()), true
}
