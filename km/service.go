package km

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/kmkit/kmkit/internal/deadline"
	"github.com/kmkit/kmkit/internal/namelist"
	"github.com/kmkit/kmkit/problem"
	"github.com/kmkit/kmkit/query"
	"github.com/kmkit/kmkit/query/fuzzy"
)

// Defaults of the Service's options.
const (
	// DefaultMaxPageSize is the default of WithMaxPageSize.
	DefaultMaxPageSize = 5000
	// DefaultMaxSampleSize is the default of WithMaxSampleSize.
	DefaultMaxSampleSize = 5000
	// DefaultSampleSize is the number of sample rows of a summary that names none.
	DefaultSampleSize = 10
	// DefaultQueryTimeout is the default of WithQueryTimeout.
	DefaultQueryTimeout = 30 * time.Second
	// DefaultSearchPrecision is the precision of a search that names none.
	DefaultSearchPrecision = fuzzy.DefaultPrecision
)

// ErrTimeLimit is wrapped by the error of a request the Service stopped at its time limit
// (WithQueryTimeout). Adapters answer it as the time limit (503), whatever the store
// returned when its context ended.
var ErrTimeLimit = errors.New("km: query time limit")

// serviceConfig is what the ServiceOptions set.
type serviceConfig struct {
	maxPageSize   int
	maxSampleSize int
	filterLimits  query.Limits
	timeout       time.Duration
	limits        Limits
}

// ServiceOption configures NewService.
type ServiceOption func(*serviceConfig)

// WithMaxPageSize bounds a request's PageSize; above it the request is refused with 400.
// Default DefaultMaxPageSize; values below 1 keep it.
func WithMaxPageSize(n int) ServiceOption {
	return func(c *serviceConfig) {
		if n > 0 {
			c.maxPageSize = n
		}
	}
}

// WithMaxSampleSize bounds the SampleSize of a summary. Default DefaultMaxSampleSize;
// values below 1 keep it.
func WithMaxSampleSize(n int) ServiceOption {
	return func(c *serviceConfig) {
		if n > 0 {
			c.maxSampleSize = n
		}
	}
}

// WithFilterLimits bounds filter expressions (length, nesting, in-list size); zero members
// take the query package's defaults.
func WithFilterLimits(l query.Limits) ServiceOption {
	return func(c *serviceConfig) { c.filterLimits = l }
}

// WithQueryTimeout bounds the time one request (or one budget, Service.Budget) may run:
// longer work is stopped (the store's context ends) and its error wraps ErrTimeLimit.
// Default DefaultQueryTimeout; negative: none; zero keeps the default.
func WithQueryTimeout(d time.Duration) ServiceOption {
	return func(c *serviceConfig) {
		if d != 0 {
			c.timeout = d
		}
	}
}

// WithMaxQueryCost sets the budget of the cost estimate (Plan.Cost, CheckCost). Default
// DefaultMaxQueryCost; negative: no budget; zero keeps the default.
func WithMaxQueryCost(n int64) ServiceOption {
	return func(c *serviceConfig) {
		if n != 0 {
			c.limits.Cost = n
		}
	}
}

// WithMaxQueryMemory bounds the memory a plan is estimated to hold on a store that runs
// plans in memory (Cost.Memory, CheckCost). Default DefaultMaxQueryMemory; negative: no
// bound; zero keeps the default.
func WithMaxQueryMemory(n int64) ServiceOption {
	return func(c *serviceConfig) {
		if n != 0 {
			c.limits.Memory = n
		}
	}
}

// Service is the one request layer of the Knowledge Model domain, over a Store as sql.DB
// is over its driver. Every surface (the KM API, OData and each of its $batch parts, the
// MCP tools, the conformance suite) reads its protocol's input into a Request (or a
// SummaryRequest) and hands it to the Service with the caller's context; the Service alone
// checks the text, looks the KM up as the caller sees it (LookupModel), compiles the plan
// (NewPlan), caps the page, refuses plans beyond the cost and memory limits (CheckCost with
// the store's sizes), bounds the time (WithQueryTimeout) and stops the store when the
// caller leaves. Its errors are client errors (*problem.Problem, *query.Error: 4xx), errors
// wrapping ErrTimeLimit, the caller's context error, or the store's.
//
// A Service is safe for concurrent use. Create it with NewService.
type Service struct {
	store Store
	cfg   serviceConfig
}

// NewService returns the Service over store.
func NewService(store Store, opts ...ServiceOption) *Service {
	c := serviceConfig{maxPageSize: DefaultMaxPageSize, maxSampleSize: DefaultMaxSampleSize, timeout: DefaultQueryTimeout,
		limits: Limits{Cost: DefaultMaxQueryCost, Memory: DefaultMaxQueryMemory}}
	for _, o := range opts {
		o(&c)
	}
	return &Service{store: store, cfg: c}
}

// Store returns the store the Service runs requests on.
func (s *Service) Store() Store { return s.store }

// MaxPageSize returns the largest PageSize the Service accepts (WithMaxPageSize).
func (s *Service) MaxPageSize() int { return s.cfg.maxPageSize }

// MaxSampleSize returns the largest SampleSize of a summary (WithMaxSampleSize).
func (s *Service) MaxSampleSize() int { return s.cfg.maxSampleSize }

// DefaultSampleSize returns the sample size of a summary that names none: the package's
// DefaultSampleSize, or MaxSampleSize when that is smaller (as a query without a page
// size gets the largest page allowed).
func (s *Service) DefaultSampleSize() int { return min(DefaultSampleSize, s.cfg.maxSampleSize) }

// QueryTimeout returns the time limit of a request (WithQueryTimeout); negative: none.
func (s *Service) QueryTimeout() time.Duration { return s.cfg.timeout }

// FilterLimits returns the bounds of filter expressions (WithFilterLimits).
func (s *Service) FilterLimits() query.Limits { return s.cfg.filterLimits }

// Models returns the KMs the caller of ctx sees (VisibleModels).
func (s *Service) Models(ctx context.Context) ([]*KnowledgeModel, error) {
	return VisibleModels(ctx, s.store)
}

// Model returns the KM id as the caller of ctx sees it (LookupModel); an unknown or
// invisible KM is the 404 problem KM_MODEL_NOTFOUND.
func (s *Service) Model(ctx context.Context, id string) (*KnowledgeModel, error) {
	if err := CheckText("the knowledge model id", id); err != nil {
		return nil, err
	}
	m, err := LookupModel(ctx, s.store, id)
	if errors.Is(err, ErrModelNotFound) {
		return nil, problem.New(404, CodeModelNotFound, "no knowledge model "+strconv.Quote(id))
	}
	return m, err
}

// LookupRecord returns the record id of m, nil for "" (the KM level); an unknown record is the
// 404 problem KM_RECORD_NOTFOUND.
func LookupRecord(m *KnowledgeModel, id string) (*Record, error) {
	if id == "" {
		return nil, nil
	}
	rec := m.Record(id)
	if rec == nil {
		return nil, problem.New(404, CodeRecordNotFound, "knowledge model "+m.ID+" has no record "+strconv.Quote(id)+DidYouMean([]string{id}, m.SuggestRecord))
	}
	return rec, nil
}

// CheckText refuses text no store can hold: a NUL character or bytes that are not UTF-8
// (PostgreSQL refuses both, SQLite and the memory backend would keep them), with the 400
// problem GENERAL_PARAMETER_ILLEGAL naming where it is.
func CheckText(where, s string) error {
	nul := strings.IndexByte(s, 0) >= 0
	if !nul && utf8.ValidString(s) {
		return nil
	}
	what := "is not valid UTF-8"
	if nul {
		what = "contains a NUL character (U+0000)"
	}
	return problem.New(400, problem.CodeParameterIllegal, where+" "+what+": text in requests must be UTF-8 without NUL characters")
}

// checkTexts is CheckText over every string of texts.
func checkTexts(where string, texts []string) error {
	for _, t := range texts {
		if err := CheckText(where, t); err != nil {
			return err
		}
	}
	return nil
}

// Request is a portable query of a KM's rows (Record set) or of the KM (fields named
// RECORD.FIELD, KPIs grouped by them), as every surface asks it.
type Request struct {
	// Record is the record of a record-level request, "" at KM level.
	Record string
	// Fields are the selected fields, as the level names them; repeated names count once.
	Fields []string
	// AllFields selects every field of Record when Fields is empty (the query endpoints
	// and MCP); without it a record-level request needs fields.
	AllFields bool
	// KPIs are KPI ids (KM level only), with KPIParams overriding their parameters:
	// KPI id -> parameter id -> value.
	KPIs      []string
	KPIParams map[string]map[string]string
	// AdHocKPIs are KPIs the KM does not define (KnowledgeModel.AdHocKPI), each selected
	// by its id in KPIs; an id there is looked up among them first.
	AdHocKPIs []*KPI
	// Filters are predefined filter ids; FilterExprs filter expressions (one each);
	// Where already bound expressions (OData's $filter). All are ANDed.
	Filters     []string
	FilterExprs []string
	Where       []query.Expr
	// Sort are the sort keys in priority order.
	Sort []query.SortTerm
	// Distinct drops repeated rows.
	Distinct bool
	// Search is the fuzzy search, or nil.
	Search *SearchRequest
	// Page (from 0) and PageSize (1 to the Service's MaxPageSize) select the page.
	Page, PageSize int
	// Skip, with Page 0, starts the page after Skip rows (OData's $skip): the answer is
	// rows [Skip, Skip+PageSize). The Service reads them as one page of the store's paging
	// that covers them, a little larger (window), and returns those rows only.
	Skip int
	// Count asks for Result.Count, the rows (or groups) before paging.
	Count bool
	// RowKey lets a record-level request name the row key (RowField).
	RowKey bool
	// Related lets a record-level request name fields of other records (see
	// PlanRequest.Related).
	Related bool
}

// SearchRequest is the fuzzy search of a Request.
type SearchRequest struct {
	// Term is the text searched for.
	Term string
	// Fields are the searched fields; none: the selected string and time fields (all of
	// the record's when none are selected).
	Fields []string
	// Precision is from 0 (every value matches) to 100 (an exact, case-insensitive
	// occurrence); negative takes DefaultSearchPrecision.
	Precision int
}

// Prepared is a checked and compiled Request, ready to Run any number of times (a plan
// cache keeps it for repeated requests).
type Prepared struct {
	// Plan is the compiled plan.
	Plan *Plan
	// Sort are the request's sort keys as answers report them ("-TOTAL").
	Sort []string
	// off and n are, for a request with Skip, the rows of the plan's page it answers.
	off, n int
}

// Result is the answer to a Request: the page of rows (Columns are Prepared.Plan.Columns)
// and, when asked, Count.
type Result struct {
	*Prepared
	*query.Result
}

// More reports whether rows follow the page; known only when the request asked for Count.
func (r *Result) More() bool {
	return r.Count > r.Plan.Page*r.Plan.PageSize+r.off+r.n
}

// Query answers r on the KM kmID as the caller of ctx sees it: Model, Prepare and Run.
func (s *Service) Query(ctx context.Context, kmID string, r *Request) (*Result, error) {
	m, err := s.Model(ctx, kmID)
	if err != nil {
		return nil, err
	}
	p, err := s.Prepare(m, r)
	if err != nil {
		return nil, err
	}
	res, err := s.Run(ctx, p)
	if err != nil {
		return nil, err
	}
	return &Result{Prepared: p, Result: res}, nil
}

// Prepare checks r's text and paging and compiles it against m (a KM the caller sees:
// Model). Every error it returns is a client error.
func (s *Service) Prepare(m *KnowledgeModel, r *Request) (*Prepared, error) {
	if err := s.checkRequest(r); err != nil {
		return nil, err
	}
	rec, err := LookupRecord(m, r.Record)
	if err != nil {
		return nil, err
	}
	if err := query.CheckPaging(r.Page, r.PageSize, s.cfg.maxPageSize); err != nil {
		return nil, err
	}
	if r.Skip < 0 || r.Skip > 0 && r.Page != 0 {
		return nil, badRequest(problem.CodeConstraint, "skip %d with page %d: want skip >= 0, and page 0 with a skip", r.Skip, r.Page)
	}
	pr := &PlanRequest{Record: r.Record, RowKey: r.RowKey, Related: r.Related}
	pr.Page, pr.PageSize, pr.Count, pr.Distinct = r.Page, r.PageSize, r.Count, r.Distinct
	var off int
	if r.Skip > 0 {
		pr.Page, pr.PageSize, off = window(r.Skip, r.PageSize)
	}
	if rec != nil && len(r.KPIs) > 0 {
		return nil, badRequest(problem.CodeParameterIllegal, "kpis are only accepted by the knowledge model endpoints")
	}
	fields := namelist.Dedup(r.Fields)
	if len(fields) == 0 && rec != nil {
		if !r.AllFields {
			return nil, badRequest(problem.CodeParameterMissing, "fields is required: name at least one field of record %s", rec.ID)
		}
		for _, f := range rec.Fields {
			fields = append(fields, f.ID)
		}
	}
	pr.Fields = fields
	kpis := namelist.Dedup(r.KPIs)
	pr.KPIs, pr.AdHocKPIs = kpis, r.AdHocKPIs
	var withParams []*KPI
	for _, id := range kpis {
		vals := r.KPIParams[id]
		if len(vals) == 0 {
			continue
		}
		k := adHocKPI(r.AdHocKPIs, id)
		if k == nil {
			k = m.KPI(id)
		}
		if k == nil {
			continue // NewPlan reports it
		}
		k, err = m.withParams(k, vals)
		if err != nil {
			return nil, badRequest(problem.CodeParameterIllegal, "kpiParam of %s: %v", id, err)
		}
		withParams = append(withParams, k)
	}
	if len(withParams) > 0 {
		pr.AdHocKPIs = append(withParams, r.AdHocKPIs...)
	}
	for _, id := range slices.Sorted(maps.Keys(r.KPIParams)) {
		if !slices.Contains(kpis, id) {
			return nil, badRequest(problem.CodeParameterIllegal, "kpiParam names KPI %s, which the request does not select", id)
		}
	}
	if pr.Filters, err = CompileFilters(m, rec, r.Filters, r.FilterExprs, s.cfg.filterLimits); err != nil {
		return nil, err
	}
	pr.Filters = append(pr.Filters, r.Where...)
	if sr := r.Search; sr != nil && (sr.Term != "" || len(sr.Fields) > 0) {
		if pr.Search, err = searchSpec(m, rec, sr, fields); err != nil {
			return nil, err
		}
	}
	sorts := make([]string, 0, len(r.Sort))
	for _, k := range r.Sort {
		sorts = append(sorts, k.String())
	}
	pr.Sort = r.Sort
	p, err := NewPlan(m, pr)
	if err != nil {
		return nil, err
	}
	return &Prepared{Plan: p, Sort: sorts, off: off, n: r.PageSize}, nil
}

// window returns the page and page size that cover the rows [skip, skip+n) (n >= 1) in
// one page of the store's paging, and the offset of row skip in that page. It picks the
// smallest page size it finds, so that little more than n rows are read: a page of size
// P >= n covers the range when skip mod P <= P-n. Such a P exists not far above
// max(n, sqrt(2 skip)); page 0 of size skip+n always covers it and ends the search.
func window(skip, n int) (page, size, off int) {
	if skip == 0 {
		return 0, n, 0
	}
	limit := n + 2*int(math.Sqrt(float64(skip))) + 2
	for p := n; p <= limit && p <= skip; p++ {
		if skip%p <= p-n {
			return skip / p, p, skip % p
		}
	}
	return 0, skip + n, skip
}

// checkRequest refuses text no store can hold anywhere in r.
func (s *Service) checkRequest(r *Request) error {
	for _, c := range []struct {
		where string
		texts []string
	}{{"record", []string{r.Record}}, {"fields", r.Fields}, {"kpis", r.KPIs}, {"filters", r.Filters}, {"filterExpr", r.FilterExprs}} {
		if err := checkTexts(c.where, c.texts); err != nil {
			return err
		}
	}
	for kpi, vals := range r.KPIParams {
		if err := CheckText("kpiParam", kpi); err != nil {
			return err
		}
		for p, v := range vals {
			if err := checkTexts("kpiParam", []string{p, v}); err != nil {
				return err
			}
		}
	}
	for _, k := range r.Sort {
		if err := CheckText("sort", k.Field); err != nil {
			return err
		}
	}
	if sr := r.Search; sr != nil {
		if err := CheckText("searchTerm", sr.Term); err != nil {
			return err
		}
		if err := checkTexts("searchField", sr.Fields); err != nil {
			return err
		}
		if sr.Precision >= 0 {
			if err := query.CheckSearchPrecision(sr.Precision); err != nil {
				return err
			}
		}
	}
	return nil
}

// searchSpec checks the search. Without fields the searched fields are the string and
// time fields (a time is presented as a string) among the selected ones, or all such
// fields of the record (at record level) when none are selected.
func searchSpec(m *KnowledgeModel, rec *Record, sr *SearchRequest, selected []string) (*SearchRequest, error) {
	if sr.Term == "" {
		return nil, badRequest(problem.CodeParameterMissing, "searchField is given but searchTerm is missing")
	}
	s := &SearchRequest{Term: sr.Term, Precision: sr.Precision}
	if s.Precision < 0 {
		s.Precision = DefaultSearchPrecision
	}
	resolve := func(name string) *Field {
		if rec != nil {
			return rec.Field(name)
		}
		_, f := m.Field(name)
		return f
	}
	if len(sr.Fields) > 0 {
		for _, name := range sr.Fields {
			f := resolve(name)
			if f == nil {
				return nil, badRequest(query.CodeFieldNotFound, "unknown searchField %s%s%s", name, FieldHint(rec), m.FieldHints(rec, []string{name}))
			}
			if !f.Type.Searchable() {
				return nil, badRequest(problem.CodeParameterIllegal, "searchField %s is %s field; fuzzy search needs a string field", name, article(f.Type))
			}
			s.Fields = append(s.Fields, name)
		}
		return s, nil
	}
	for _, name := range selected {
		if f := resolve(name); f != nil && f.Type.Searchable() {
			s.Fields = append(s.Fields, name)
		}
	}
	if len(selected) == 0 && rec != nil {
		for _, f := range rec.Fields {
			if f.Type.Searchable() {
				s.Fields = append(s.Fields, f.ID)
			}
		}
	}
	if len(s.Fields) == 0 {
		return nil, badRequest(problem.CodeParameterIllegal, "searchTerm needs a string field to search: select one or name it in searchField")
	}
	return s, nil
}

// Run executes p for the caller of ctx: it refuses a plan beyond the cost and memory
// limits (CheckCost), bounds the time (unless ctx carries a Budget already) and checks
// the store's answer has the plan's shape. A store stopped by the time limit gives an
// error wrapping ErrTimeLimit.
func (s *Service) Run(ctx context.Context, p *Prepared) (*query.Result, error) {
	if err := CheckCost(ctx, s.store, p.Plan, s.cfg.limits); err != nil {
		return nil, err
	}
	ctx, cancel := s.Budget(ctx)
	defer cancel()
	res, err := s.store.Query(ctx, p.Plan)
	if err != nil {
		return nil, s.classify(ctx, err)
	}
	if res == nil {
		return nil, errors.New("km: the store's Query returned no result and no error")
	}
	if err := checkShape(res, len(p.Plan.Columns)); err != nil {
		return nil, err
	}
	if p.off > 0 || len(res.Rows) > p.n {
		res.Rows = res.Rows[min(p.off, len(res.Rows)):min(p.off+p.n, len(res.Rows))]
	}
	return res, nil
}

// checkShape checks that res has n columns and n values in every row.
func checkShape(res *query.Result, n int) error {
	if len(res.Columns) != n {
		return fmt.Errorf("km: store returned %d columns for a request of %d", len(res.Columns), n)
	}
	for i, row := range res.Rows {
		if len(row) != n {
			return fmt.Errorf("km: store returned row %d with %d values for %d columns", i, len(row), n)
		}
	}
	return nil
}

// Budget returns ctx bounded by the Service's time limit, which every request run in it
// (and in contexts made from it) shares: OData's $batch runs all its parts in one budget.
// When ctx carries a budget already, it is returned as is. Call cancel when done.
func (s *Service) Budget(ctx context.Context) (context.Context, context.CancelFunc) {
	if s.cfg.timeout < 0 || deadline.Enclosing(ctx, ErrTimeLimit) != nil {
		return ctx, func() {}
	}
	// A timer starts only when the store waits on the context (deadline.Context): the
	// memory store's small queries poll it.
	return deadline.New(ctx, time.Now().Add(s.cfg.timeout), ErrTimeLimit)
}

// classify wraps err with ErrTimeLimit when the budget of ctx ended it.
func (s *Service) classify(ctx context.Context, err error) error {
	if dl := deadline.Enclosing(ctx, ErrTimeLimit); dl != nil && dl.Expired() {
		return fmt.Errorf("%w of %v: %w", ErrTimeLimit, s.cfg.timeout, err)
	}
	return err
}

// SummaryRequest is a portable summary of a record's rows: per field the statistics of
// its type (Summary) and a few sample rows.
type SummaryRequest struct {
	// Record is the summarized record (required).
	Record string
	// Fields are the described fields (default: all of the record's) less ExcludeFields.
	Fields, ExcludeFields []string
	// Filters (predefined filter ids) and FilterExprs (one expression each) are ANDed.
	Filters, FilterExprs []string
	// SampleSize is the number of sample rows, 1 to the Service's MaxSampleSize; 0 takes
	// the Service's DefaultSampleSize (DefaultSampleSize, or MaxSampleSize when that is
	// smaller).
	SampleSize int
}

// SummaryResult is the answer to a SummaryRequest.
type SummaryResult struct {
	// Fields are the described fields, in order.
	Fields []*Field
	// Summary holds the statistics, Summary.Fields[i] those of Fields[i].
	Summary *Summary
	// Sample holds the first sample rows.
	Sample *query.Result
}

// Summarize answers r on m (a KM the caller sees: Model) within the Service's limits:
// from the store's Summarizer when it has one, else by describing every filtered row.
func (s *Service) Summarize(ctx context.Context, m *KnowledgeModel, r *SummaryRequest) (*SummaryResult, error) {
	for _, c := range []struct {
		where string
		texts []string
	}{{"record", []string{r.Record}}, {"fields", r.Fields}, {"excludeFields", r.ExcludeFields}, {"filters", r.Filters}, {"filterExpr", r.FilterExprs}} {
		if err := checkTexts(c.where, c.texts); err != nil {
			return nil, err
		}
	}
	if r.Record == "" {
		return nil, badRequest(problem.CodeParameterMissing, "a summary needs a record")
	}
	rec, err := LookupRecord(m, r.Record)
	if err != nil {
		return nil, err
	}
	size := r.SampleSize
	switch {
	case size == 0:
		size = s.DefaultSampleSize()
	case size < 1:
		return nil, badRequest(problem.CodeConstraint, "sampleSize: %d is below the minimum sample size 1", size)
	case size > s.cfg.maxSampleSize:
		return nil, badRequest(problem.CodeConstraint, "sampleSize: %d is above the maximum sample size %d (the server's MaxSampleSize option)", size, s.cfg.maxSampleSize)
	}
	fields, err := summaryFields(m, rec, r.Fields, r.ExcludeFields)
	if err != nil {
		return nil, err
	}
	q := &PlanRequest{Record: rec.ID}
	for _, f := range fields {
		q.Fields = append(q.Fields, f.ID)
	}
	if q.Filters, err = CompileFilters(m, rec, r.Filters, r.FilterExprs, s.cfg.filterLimits); err != nil {
		return nil, err
	}
	plan := func(page, size int, count bool) (*Plan, error) {
		r := *q
		r.Page, r.PageSize, r.Count = page, size, count
		return NewPlan(m, &r)
	}
	// The budget applies to the rows described, whichever way they are.
	cp, err := plan(0, 1, false)
	if err != nil {
		return nil, err
	}
	if err := CheckCost(ctx, s.store, cp, s.cfg.limits); err != nil {
		return nil, err
	}
	ctx, cancel := s.Budget(ctx)
	defer cancel()
	sum, sample, err := s.summarize(ctx, cp, plan, size)
	if err != nil {
		return nil, s.classify(ctx, err)
	}
	if len(sum.Fields) != len(fields) || len(sample.Columns) != len(fields) {
		return nil, fmt.Errorf("km: store summarized %d fields and sampled %d for a request of %d", len(sum.Fields), len(sample.Columns), len(fields))
	}
	return &SummaryResult{Fields: fields, Summary: sum, Sample: sample}, nil
}

// summarize returns the statistics of cp's rows and a result holding the first
// sampleSize of them.
func (s *Service) summarize(ctx context.Context, cp *Plan, plan func(page, size int, count bool) (*Plan, error), sampleSize int) (*Summary, *query.Result, error) {
	if sz, ok := s.store.(Summarizer); ok {
		sum, err := sz.Summarize(ctx, cp)
		switch {
		case err == nil && sum == nil:
			return nil, nil, errors.New("km: the store's Summarize returned no summary and no error")
		case err == nil:
			sp, err := plan(0, sampleSize, false)
			if err != nil {
				return nil, nil, err
			}
			sample, err := s.store.Query(ctx, sp)
			if err == nil && sample == nil {
				err = errors.New("km: the store's Query returned no result and no error")
			}
			return sum, sample, err
		case !errors.Is(err, ErrUnsupported):
			return nil, nil, err
		}
	}
	all, err := plan(0, 1<<31-1, true)
	if err != nil {
		return nil, nil, err
	}
	res, err := s.store.Query(ctx, all)
	if err != nil {
		return nil, nil, err
	}
	switch {
	case res == nil:
		return nil, nil, errors.New("km: the store's Query returned no result and no error")
	case len(res.Columns) != len(cp.Columns):
		return nil, nil, fmt.Errorf("km: store returned %d columns for a request of %d", len(res.Columns), len(cp.Columns))
	case res.Count > len(res.Rows):
		// Statistics of part of the rows would be wrong, not approximate.
		return nil, nil, fmt.Errorf("km: store returned %d of %d rows for a whole-result query", len(res.Rows), res.Count)
	}
	sum := &Summary{Rows: len(res.Rows), Fields: DescribeResult(res)}
	res.Rows = res.Rows[:min(len(res.Rows), sampleSize)]
	return sum, res, nil
}

// summaryFields returns the fields a summary describes: the named ones (all of the
// record's by default) less the excluded ones.
func summaryFields(m *KnowledgeModel, rec *Record, named, excludedNames []string) ([]*Field, error) {
	names := namelist.Dedup(named)
	if len(names) > MaxFields {
		return nil, badRequest(problem.CodeConstraint, "%d fields requested: at most %d are allowed", len(names), MaxFields)
	}
	excluded := namelist.Dedup(excludedNames)
	var unknown []string
	for _, name := range append(names, excluded...) {
		if rec.Field(name) == nil {
			unknown = append(unknown, name)
		}
	}
	if len(unknown) > 0 {
		return nil, badRequest(query.CodeFieldNotFound, "unknown field%s: %s%s%s", namelist.Plural(len(unknown)), namelist.Join(unknown), FieldHint(rec), m.FieldHints(rec, unknown))
	}
	skip := make(map[string]bool, len(excluded))
	for _, name := range excluded {
		skip[name] = true
	}
	if len(names) == 0 {
		for _, f := range rec.Fields {
			names = append(names, f.ID)
		}
	}
	var fields []*Field
	for _, name := range names {
		if !skip[name] {
			fields = append(fields, rec.Field(name))
		}
	}
	if len(fields) == 0 {
		return nil, badRequest(problem.CodeParameterIllegal, "excludeFields leaves no field of record %s to summarize", rec.ID)
	}
	return fields, nil
}

// AsProblem returns the problem an API answers err with when err is a client error (a
// *problem.Problem, or a *query.Error, which is a 400 with its code), and false for
// anything else (a failure every API answers alike: web/routing).
func AsProblem(err error) (*problem.Problem, bool) {
	var p *problem.Problem
	var qe *query.Error
	switch {
	case errors.As(err, &p):
		return p, true
	case errors.As(err, &qe):
		return problem.New(400, qe.Code, qe.Error()), true
	}
	return nil, false
}
