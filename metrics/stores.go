package metrics

import (
	"context"
	"time"

	"github.com/kmkit/kmkit/km"
	"github.com/kmkit/kmkit/query"
	"github.com/kmkit/kmkit/reporting"
	"github.com/kmkit/kmkit/scim"
)

// timer measures the Store calls of one backend.
type timer struct {
	m       *Metrics
	backend string
}

// observe records a call of kind that began at start and returned err.
func (t timer) observe(kind string, start time.Time, err error) {
	t.m.storeTime.WithLabelValues(t.backend, kind).Observe(time.Since(start).Seconds())
	if err != nil {
		t.m.storeErrs.WithLabelValues(t.backend, kind).Inc()
	}
}

// KMStore returns s measured as backend (such as "memory", "sqlite", "postgres"); kinds
// are models, model, query and summarize. The result implements every optional interface
// of a km.Store (km.Summarizer, km.RowCounter, km.MemorySizer): each passes to s when s
// implements it, and otherwise answers as km documents for a store without it
// (km.ErrUnsupported, an unknown row count, no memory sizes), so that wrapping a store
// never changes what the handlers can ask of it.
func (m *Metrics) KMStore(backend string, s km.Store) km.Store {
	return kmStore{Store: s, t: timer{m, backend}}
}

type kmStore struct {
	km.Store
	t timer
}

func (s kmStore) Models(ctx context.Context) ([]*km.KnowledgeModel, error) {
	start := time.Now()
	ms, err := s.Store.Models(ctx)
	s.t.observe("models", start, err)
	return ms, err
}

func (s kmStore) Model(ctx context.Context, id string) (*km.KnowledgeModel, error) {
	start := time.Now()
	m, err := s.Store.Model(ctx, id)
	s.t.observe("model", start, err)
	return m, err
}

func (s kmStore) Query(ctx context.Context, p *km.Plan) (*query.Result, error) {
	start := time.Now()
	res, err := s.Store.Query(ctx, p)
	s.t.observe("query", start, err)
	return res, err
}

// Summarize implements km.Summarizer. A store without one answers km.ErrUnsupported,
// which is not counted as an error.
func (s kmStore) Summarize(ctx context.Context, p *km.Plan) (*km.Summary, error) {
	sum, ok := s.Store.(km.Summarizer)
	if !ok {
		return nil, km.ErrUnsupported
	}
	start := time.Now()
	res, err := sum.Summarize(ctx, p)
	s.t.observe("summarize", start, err)
	return res, err
}

// DistinctCounts implements km.MemorySizer; it is not measured.
func (s kmStore) DistinctCounts(ctx context.Context, m *km.KnowledgeModel) func(record, field string) (int64, bool) {
	if ms, ok := s.Store.(km.MemorySizer); ok {
		return ms.DistinctCounts(ctx, m)
	}
	return nil
}

// RowCount implements km.RowCounter; it reads recorded counts and is not measured.
func (s kmStore) RowCount(ctx context.Context, m *km.KnowledgeModel, record string) (int64, bool) {
	if rc, ok := s.Store.(km.RowCounter); ok {
		return rc.RowCount(ctx, m, record)
	}
	return 0, false
}

// ReportingStore returns s measured as backend; kinds are elements and facets.
func (m *Metrics) ReportingStore(backend string, s reporting.Store) reporting.Store {
	return reportingStore{Store: s, t: timer{m, backend}}
}

type reportingStore struct {
	reporting.Store
	t timer
}

func (s reportingStore) Elements(ctx context.Context, tenant string, q reporting.ElementQuery) ([]reporting.Element, int, error) {
	start := time.Now()
	page, total, err := s.Store.Elements(ctx, tenant, q)
	s.t.observe("elements", start, err)
	return page, total, err
}

func (s reportingStore) Facets(ctx context.Context, tenant string, skip, take int) ([]reporting.Facet, int, error) {
	start := time.Now()
	page, total, err := s.Store.Facets(ctx, tenant, skip, take)
	s.t.observe("facets", start, err)
	return page, total, err
}

// SCIMStore returns s measured as backend; kinds are the Store methods in snake case
// (create_user, list_groups, ...). Methods the scim.Store interface gains later pass
// through unmeasured.
func (m *Metrics) SCIMStore(backend string, s scim.Store) scim.Store {
	return scimStore{Store: s, t: timer{m, backend}}
}

type scimStore struct {
	scim.Store
	t timer
}

func (s scimStore) CreateUser(ctx context.Context, team string, u scim.User) (scim.User, error) {
	start := time.Now()
	u, err := s.Store.CreateUser(ctx, team, u)
	s.t.observe("create_user", start, err)
	return u, err
}

func (s scimStore) GetUser(ctx context.Context, team, id string) (scim.User, error) {
	start := time.Now()
	u, err := s.Store.GetUser(ctx, team, id)
	s.t.observe("get_user", start, err)
	return u, err
}

func (s scimStore) ReplaceUser(ctx context.Context, team string, u scim.User, ifVersion int64) (scim.User, error) {
	start := time.Now()
	u, err := s.Store.ReplaceUser(ctx, team, u, ifVersion)
	s.t.observe("replace_user", start, err)
	return u, err
}

func (s scimStore) UpdateUser(ctx context.Context, team, id string, change scim.Change[scim.User]) (scim.User, error) {
	start := time.Now()
	u, err := s.Store.UpdateUser(ctx, team, id, change)
	s.t.observe("update_user", start, err)
	return u, err
}

func (s scimStore) DeleteUser(ctx context.Context, team, id string, ifVersion int64) error {
	start := time.Now()
	err := s.Store.DeleteUser(ctx, team, id, ifVersion)
	s.t.observe("delete_user", start, err)
	return err
}

func (s scimStore) ListUsers(ctx context.Context, team string, q scim.ListQuery) ([]scim.User, int, error) {
	start := time.Now()
	page, total, err := s.Store.ListUsers(ctx, team, q)
	s.t.observe("list_users", start, err)
	return page, total, err
}

func (s scimStore) CreateGroup(ctx context.Context, team string, g scim.Group) (scim.Group, error) {
	start := time.Now()
	g, err := s.Store.CreateGroup(ctx, team, g)
	s.t.observe("create_group", start, err)
	return g, err
}

func (s scimStore) GetGroup(ctx context.Context, team, id string) (scim.Group, error) {
	start := time.Now()
	g, err := s.Store.GetGroup(ctx, team, id)
	s.t.observe("get_group", start, err)
	return g, err
}

func (s scimStore) ReplaceGroup(ctx context.Context, team string, g scim.Group, ifVersion int64) (scim.Group, error) {
	start := time.Now()
	g, err := s.Store.ReplaceGroup(ctx, team, g, ifVersion)
	s.t.observe("replace_group", start, err)
	return g, err
}

func (s scimStore) UpdateGroup(ctx context.Context, team, id string, change scim.Change[scim.Group]) (scim.Group, error) {
	start := time.Now()
	g, err := s.Store.UpdateGroup(ctx, team, id, change)
	s.t.observe("update_group", start, err)
	return g, err
}

func (s scimStore) DeleteGroup(ctx context.Context, team, id string, ifVersion int64) error {
	start := time.Now()
	err := s.Store.DeleteGroup(ctx, team, id, ifVersion)
	s.t.observe("delete_group", start, err)
	return err
}

func (s scimStore) ListGroups(ctx context.Context, team string, q scim.ListQuery) ([]scim.Group, int, error) {
	start := time.Now()
	page, total, err := s.Store.ListGroups(ctx, team, q)
	s.t.observe("list_groups", start, err)
	return page, total, err
}
