package sqlstore

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/kmkit/kmkit/km"
	"github.com/kmkit/kmkit/query"
	"github.com/kmkit/kmkit/query/fuzzy"
)

// RowColumn is the column every record source must have: an integer that orders its rows
// (ties of a sort keep this order, so paging is deterministic). Import creates it; a
// host's own table or view provides it, for example as row_number() OVER (ORDER BY key).
const RowColumn = "kmkit_row"

// KMStore is the km.Store of a DB: KM definitions are held in memory (they are small and
// loaded from files), the records' data are tables or views of the database, and every
// query is translated into SQL that the database runs: nothing loads a table into the
// server. A KMStore is safe for concurrent use.
type KMStore struct {
	db *DB

	mu     sync.RWMutex
	models map[string]*km.KnowledgeModel
}

// KM returns the DB's km.Store, with no models yet (see PutModel and Import).
func (db *DB) KM() *KMStore { return &KMStore{db: db, models: map[string]*km.KnowledgeModel{}} }

// PutModel adds or replaces a KM. Every record's source must be a table or view holding
// RowColumn and a column per field.
func (s *KMStore) PutModel(ctx context.Context, m *km.KnowledgeModel) error {
	for _, r := range m.Records {
		cols := []string{quoteIdent(RowColumn)}
		for _, f := range r.Fields {
			cols = append(cols, quoteIdent(f.ID))
		}
		rows, err := s.db.sql.QueryContext(ctx, "SELECT "+strings.Join(cols, ", ")+" FROM "+quoteIdent(r.Source)+" WHERE 1 = 0")
		if err != nil {
			return fmt.Errorf("sqlstore: KM %s: record %s: source %q: %w", m.ID, r.ID, r.Source, err)
		}
		rows.Close()
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.models[m.ID] = m
	return nil
}

// Models implements km.Store.
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
		return nil, fmt.Errorf("sqlstore: KM %q: %w", id, km.ErrNotFound)
	}
	return m, nil
}

// Query implements km.Store by running the plan's legacy form (km.Plan.Legacy), which
// does not have the plan's semantics yet (KPIs at their grain, filters across records).
func (s *KMStore) Query(ctx context.Context, p *km.Plan) (*query.Result, error) {
	q, err := p.Legacy()
	if err != nil {
		return nil, err
	}
	return s.query(ctx, p.KM, q)
}

// query runs a query of the legacy form: one statement for the page and, when asked, one
// for the count; a search first reads the distinct values of the searched columns among
// the filtered rows and scores them with query/fuzzy (the memory backend's scorer).
func (s *KMStore) query(ctx context.Context, m *km.KnowledgeModel, q *km.Query) (*query.Result, error) {
	f, err := newFrame(m, q, RowColumn)
	if err != nil {
		return nil, err
	}
	var score *searchScore
	if q.Search != nil {
		if score, err = s.score(ctx, f, &q.Request); err != nil {
			return nil, err
		}
	}
	st, err := translate(s.db.d, f, &q.Request, score)
	if err != nil {
		return nil, err
	}
	res := &query.Result{Columns: st.cols, Rows: [][]query.Value{}}
	counted := false
	if !st.empty {
		if counted, err = s.page(ctx, st, res); err != nil {
			return nil, err
		}
	}
	if q.Count && !counted {
		if err := s.db.sql.QueryRowContext(ctx, st.count, st.countArgs...).Scan(&res.Count); err != nil {
			return nil, fmt.Errorf("sqlstore: count: %w", err)
		}
	}
	return res, nil
}

// page runs the page statement into res and reports whether it set res.Count (a page
// that counts and has rows).
func (s *KMStore) page(ctx context.Context, st *statement, res *query.Result) (bool, error) {
	rows, err := s.db.sql.QueryContext(ctx, st.page, st.pageArgs...)
	if err != nil {
		return false, fmt.Errorf("sqlstore: query: %w", err)
	}
	defer rows.Close()
	n := len(st.cols)
	raw := make([]any, n, n+1)
	ptrs := make([]any, n, n+1)
	for i := range raw {
		ptrs[i] = &raw[i]
	}
	if st.pageCounts {
		ptrs = append(ptrs, &res.Count)
	}
	for rows.Next() {
		if err := rows.Scan(ptrs...); err != nil {
			return false, err
		}
		row := make([]query.Value, n)
		for i, c := range st.cols {
			if row[i], err = toValue(raw[i], c.Type); err != nil {
				return false, fmt.Errorf("sqlstore: column %s: %w", c.Name, err)
			}
		}
		res.Rows = append(res.Rows, row)
	}
	return st.pageCounts && len(res.Rows) > 0, rows.Err()
}

// toValue converts a scanned cell to a value of type t.
func toValue(v any, t query.Type) (query.Value, error) {
	if v == nil {
		return query.Null(t), nil
	}
	out := query.Value{Type: t}
	switch t {
	case query.TypeString:
		switch v := v.(type) {
		case string:
			out.Str = v
		case []byte:
			out.Str = string(v)
		default:
			return out, fmt.Errorf("%T for a string", v)
		}
	case query.TypeFloat:
		switch v := v.(type) {
		case float64:
			out.Float = v
		case int64:
			out.Float = float64(v)
		default:
			return out, fmt.Errorf("%T for a float", v)
		}
	case query.TypeBoolean:
		switch v := v.(type) {
		case bool:
			out.Bool = v
		case int64:
			out.Bool = v != 0
		default:
			return out, fmt.Errorf("%T for a boolean", v)
		}
	default:
		switch v := v.(type) {
		case int64:
			out.Int = v
		case float64:
			out.Int = int64(v)
		default:
			return out, fmt.Errorf("%T for an integer", v)
		}
	}
	return out, nil
}

// score resolves the searched columns and scores their distinct values among the filtered
// rows: what SQL decides (the filter, the distinct values) is pushed down, and the same
// scorer as the memory backend decides the score of each value.
func (s *KMStore) score(ctx context.Context, f *frame, req *query.Request) (*searchScore, error) {
	names := req.Search.Fields
	explicit := len(names) > 0
	if !explicit {
		names = req.Fields
		if len(names) == 0 {
			names = f.names
		}
	}
	sc := &searchScore{}
	for _, name := range names {
		c, err := f.lookup(name)
		if err != nil {
			return nil, err
		}
		if c.typ != query.TypeString {
			if explicit {
				return nil, fmt.Errorf("%w: search field %q is a %v field, not a string field", ErrInvalidRequest, name, c.typ)
			}
			continue
		}
		sc.cols = append(sc.cols, c)
	}
	m := fuzzy.New(req.Search.Term)
	for _, c := range sc.cols {
		b := &builder{d: s.db.d}
		where := c.expr + " IS NOT NULL"
		if req.Filter != nil {
			w, err := b.filter(f, req.Filter)
			if err != nil {
				return nil, err
			}
			where += " AND " + w
		}
		rows, err := s.db.sql.QueryContext(ctx, "SELECT DISTINCT "+c.expr+" FROM "+f.from+" WHERE "+where, b.args...)
		if err != nil {
			return nil, fmt.Errorf("sqlstore: search values: %w", err)
		}
		var vals []string
		for rows.Next() {
			var v string
			if err := rows.Scan(&v); err != nil {
				rows.Close()
				return nil, err
			}
			vals = append(vals, v)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return nil, err
		}
		byScore := map[int][]string{}
		for i, sv := range m.ScoreAll(vals) {
			if sv > 0 {
				byScore[int(sv)] = append(byScore[int(sv)], vals[i])
			}
		}
		var buckets []scoreBucket
		for score, vs := range byScore {
			buckets = append(buckets, scoreBucket{score: score, values: vs})
		}
		slices.SortFunc(buckets, func(a, b scoreBucket) int { return b.score - a.score })
		sc.buckets = append(sc.buckets, buckets)
	}
	return sc, nil
}

var _ km.Store = (*KMStore)(nil)
