package km

import (
	"errors"
	"fmt"
	"io/fs"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"

	"gopkg.in/yaml.v3"

	"github.com/kmkit/kmkit/query"
)

// DefinitionError is an error in a KM definition file.
type DefinitionError struct {
	File   string // path of the file in the loaded file system
	Line   int    // 1-based; 0 when the error concerns the whole file
	Reason string
}

// Error returns "file:line: reason".
func (e *DefinitionError) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("%s:%d: %s", e.File, e.Line, e.Reason)
	}
	return e.File + ": " + e.Reason
}

// ModelsDir is the directory of a data directory that holds the KM definitions.
const ModelsDir = "models"

// Load reads every models/*.yaml (and *.yml) file of fsys, one KM per file, resolves
// extends, compiles the KPI expressions and predefined filters, and returns the KMs sorted
// by id. Any definition error fails the load: the error joins a *DefinitionError per
// problem found.
func Load(fsys fs.FS) ([]*KnowledgeModel, error) {
	names, err := fs.Glob(fsys, ModelsDir+"/*.yaml")
	if err != nil {
		return nil, err
	}
	yml, err := fs.Glob(fsys, ModelsDir+"/*.yml")
	if err != nil {
		return nil, err
	}
	names = append(names, yml...)
	slices.Sort(names)
	if len(names) == 0 {
		return nil, &DefinitionError{File: ModelsDir, Reason: "no *.yaml model definitions"}
	}
	var docs []*draft
	var errs []error
	for _, name := range names {
		data, err := fs.ReadFile(fsys, name)
		if err != nil {
			return nil, err
		}
		d, err := parseDraft(name, data)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		docs = append(docs, d)
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return build(docs)
}

// build resolves extends between the parsed definitions, validates them and compiles KPIs
// and filters. It returns the KMs sorted by id.
func build(defs []*draft) ([]*KnowledgeModel, error) {
	byID := map[string]*draft{}
	var errs []error
	for _, d := range defs {
		if prev, ok := byID[d.km.ID]; ok {
			errs = append(errs, d.errAt(d.idLine, "KM id %q is also defined in %s", d.km.ID, prev.file))
			continue
		}
		byID[d.km.ID] = d
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	// Merge inherited parts, bases first.
	state := map[string]int{} // 1 visiting, 2 done
	var visit func(d *draft) error
	visit = func(d *draft) error {
		switch state[d.km.ID] {
		case 1:
			return d.errAt(d.extendsLine, "extends forms a cycle through KM %q", d.km.ID)
		case 2:
			return nil
		}
		state[d.km.ID] = 1
		defer func() { state[d.km.ID] = 2 }()
		if d.km.ExtendedKMID == "" {
			return nil
		}
		base, ok := byID[d.km.ExtendedKMID]
		if !ok {
			return d.errAt(d.extendsLine, "extends unknown KM %q", d.km.ExtendedKMID)
		}
		if err := visit(base); err != nil {
			return err
		}
		d.inherit(base)
		return nil
	}
	ids := make([]string, 0, len(byID))
	for id := range byID {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	for _, id := range ids {
		if err := visit(byID[id]); err != nil {
			errs = append(errs, err)
		}
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	out := make([]*KnowledgeModel, 0, len(ids))
	for _, id := range ids {
		d := byID[id]
		if err := d.compile(); err != nil {
			errs = append(errs, err)
			continue
		}
		out = append(out, d.km)
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return out, nil
}

// at is where an item was defined.
type at struct {
	file string
	line int
}

// draft is a KM while it is loaded: the model plus where each part was defined.
type draft struct {
	file        string
	idLine      int
	extendsLine int
	km          *KnowledgeModel
	recordAt    map[*Record]at
	fieldAt     map[*Field]at
	relAt       []at // parallel to km.Relationships
	kpiAt       map[*KPI]at
	filterAt    map[*Filter]at
}

func (d *draft) errAt(line int, format string, args ...any) *DefinitionError {
	return &DefinitionError{File: d.file, Line: line, Reason: fmt.Sprintf(format, args...)}
}

func errAt(a at, format string, args ...any) *DefinitionError {
	return &DefinitionError{File: a.file, Line: a.line, Reason: fmt.Sprintf(format, args...)}
}

// inherit adds base's parts that d does not define itself (by id); base parts come first,
// in base's order, and d's own parts follow.
func (d *draft) inherit(base *draft) {
	m, b := d.km, base.km
	if len(m.Teams) == 0 {
		// An extension must not publish what its base shows to some teams only.
		m.Teams = b.Teams
	}
	var recs []*Record
	for _, r := range b.Records {
		if m.Record(r.ID) == nil {
			recs = append(recs, r)
			d.recordAt[r] = base.recordAt[r]
			for _, f := range r.Fields {
				d.fieldAt[f] = base.fieldAt[f]
			}
		}
	}
	m.Records = append(recs, m.Records...)
	var kpis []*KPI
	for _, k := range b.KPIs {
		if m.KPI(k.ID) == nil {
			kpis = append(kpis, k)
			d.kpiAt[k] = base.kpiAt[k]
		}
	}
	m.KPIs = append(kpis, m.KPIs...)
	var filters []*Filter
	for _, f := range b.Filters {
		if m.Filter(f.ID) == nil {
			filters = append(filters, f)
			d.filterAt[f] = base.filterAt[f]
		}
	}
	m.Filters = append(filters, m.Filters...)
	var rels []Relationship
	var relAt []at
	for i, r := range b.Relationships {
		if !slices.Contains(m.Relationships, r) {
			rels = append(rels, r)
			relAt = append(relAt, base.relAt[i])
		}
	}
	m.Relationships = append(rels, m.Relationships...)
	d.relAt = append(relAt, d.relAt...)
}

// compile validates the merged model and compiles its KPIs and filters. Inherited KPIs and
// filters are compiled again against this KM (a record override may change their meaning),
// into copies, so the base KM keeps its own.
func (d *draft) compile() error {
	m := d.km
	m.paths = &pathCache{}
	var errs []error
	seen := map[string]bool{}
	for _, r := range m.Records {
		if seen[r.ID] {
			errs = append(errs, errAt(d.recordAt[r], "duplicate record id %q", r.ID))
		}
		seen[r.ID] = true
	}
	for i, rel := range m.Relationships {
		_, from := m.Field(rel.From.String())
		_, to := m.Field(rel.To.String())
		switch {
		case from == nil:
			errs = append(errs, errAt(d.relAt[i], "relationship from unknown field %s", rel.From))
		case to == nil:
			errs = append(errs, errAt(d.relAt[i], "relationship to unknown field %s", rel.To))
		case rel.From.Record == rel.To.Record:
			errs = append(errs, errAt(d.relAt[i], "relationship joins record %s with itself", rel.From.Record))
		case from.Type != to.Type:
			errs = append(errs, errAt(d.relAt[i], "relationship joins %s (%s) with %s (%s): types differ", rel.From, from.Type, rel.To, to.Type))
		}
	}
	for i, rel := range m.Relationships {
		for j := range i {
			if m.Relationships[j].From.Record == rel.From.Record && m.Relationships[j].To.Record == rel.To.Record {
				errs = append(errs, errAt(d.relAt[i], "a second relationship from %s to %s (one per pair of records)", rel.From.Record, rel.To.Record))
			}
		}
	}
	errs = append(errs, d.checkDistribution()...)
	kseen := map[string]bool{}
	for i, k := range m.KPIs {
		a := d.kpiAt[k]
		if kseen[k.ID] {
			errs = append(errs, errAt(a, "duplicate KPI id %q", k.ID))
			continue
		}
		kseen[k.ID] = true
		c := *k
		if err := m.compileKPI(&c, nil); err != nil {
			errs = append(errs, errAt(a, "KPI %s: %v", k.ID, err))
			continue
		}
		m.KPIs[i] = &c
	}
	fseen := map[string]bool{}
	for i, f := range m.Filters {
		a := d.filterAt[f]
		if fseen[f.ID] {
			errs = append(errs, errAt(a, "duplicate filter id %q", f.ID))
			continue
		}
		fseen[f.ID] = true
		c := *f
		bound, err := m.compileCondition(c.Expr)
		if err != nil {
			errs = append(errs, errAt(a, "filter %s: %v", f.ID, err))
			continue
		}
		c.bound = bound
		m.Filters[i] = &c
	}
	return errors.Join(errs...)
}

// checkDistribution checks the records' distribution (see Record.Distribution): each
// names a field of its record, a record is not both distributed and reference, the
// distributed records' fields have one type (one key domain per co-location group), and
// a relationship between two distributed records joins their distribution fields.
func (d *draft) checkDistribution() []error {
	m := d.km
	var errs []error
	var first *Record // the first distributed record, whose field's type the others share
	for _, r := range m.Records {
		if r.Distribution == "" {
			continue
		}
		f := r.Field(r.Distribution)
		switch {
		case f == nil:
			errs = append(errs, errAt(d.recordAt[r], "distribution %q is not a field of record %s", r.Distribution, r.ID))
			continue
		case r.Reference:
			errs = append(errs, errAt(d.recordAt[r], "record %s declares distribution and reference: a record is distributed by a field or copied to every node, not both", r.ID))
			continue
		}
		if first == nil {
			first = r
			continue
		}
		if t := first.Field(first.Distribution).Type; f.Type != t {
			errs = append(errs, errAt(d.recordAt[r], "record %s is distributed by %s (%s) and record %s by %s (%s): the distributed records of a KM are co-located, so their distribution fields hold one key domain of one type",
				r.ID, r.Distribution, f.Type, first.ID, first.Distribution, t))
		}
	}
	for i, rel := range m.Relationships {
		from, to := m.Record(rel.From.Record), m.Record(rel.To.Record)
		if from == nil || to == nil || from.Distribution == "" || to.Distribution == "" {
			continue
		}
		if rel.From.Field != from.Distribution || rel.To.Field != to.Distribution {
			errs = append(errs, errAt(d.relAt[i], "relationship %s to %s joins two distributed records on fields other than their distribution fields (%s.%s, %s.%s): distribute them by the fields that join them, or declare one reference: true",
				rel.From, rel.To, from.ID, from.Distribution, to.ID, to.Distribution))
		}
	}
	return errs
}

// compileKPI fills k's placeholders from its parameters (overridden by values), parses and
// binds the expression and stores the metric and type in k.
func (m *KnowledgeModel) compileKPI(k *KPI, values map[string]string) error {
	metric, err := m.KPIMetric(k, values)
	if err != nil {
		return err
	}
	return m.setMetric(k, metric)
}

// setMetric stores metric, checked (checkKPIMetric), as k's and sets k's Type from it.
func (m *KnowledgeModel) setMetric(k *KPI, metric query.Metric) error {
	k.metric = metric
	grains, err := m.metricGrains(k, metric)
	if err != nil {
		return err
	}
	k.Type = query.TypeFloat
	if a, ok := metric.(*query.Aggregate); ok {
		k.Type = grains[a].Type
	}
	return nil
}

// KPIMetric returns the bound metric of k with its parameters' defaults overridden by values.
func (m *KnowledgeModel) KPIMetric(k *KPI, values map[string]string) (query.Metric, error) {
	params := make(map[string]string, len(k.Parameters))
	for _, p := range k.Parameters {
		params[p.ID] = p.Value
	}
	for id, v := range values {
		if _, ok := params[id]; !ok {
			return nil, fmt.Errorf("KPI %s has no parameter %q%s", k.ID, id, DidYouMean([]string{id}, func(id string) []string { return SuggestParameter(k, id) }))
		}
		params[id] = v
	}
	text, err := fillParams(k.Expr, params)
	if err != nil {
		return nil, err
	}
	metric, err := query.ParseAndBindKPI(text, m.schema(nil))
	if err != nil {
		return nil, err
	}
	if err := m.checkKPIMetric(k, metric); err != nil {
		return nil, err
	}
	return metric, nil
}

// checkKPIMetric checks that metric, bound against m's fields, can be k's: its fields
// can be aggregated, k's record exists and every aggregate has a grain that joins.
func (m *KnowledgeModel) checkKPIMetric(k *KPI, metric query.Metric) error {
	if err := m.checkMetric(metric); err != nil {
		return err
	}
	if k.Record != "" && m.Record(k.Record) == nil {
		return fmt.Errorf("record %s: no such record", k.Record)
	}
	_, err := m.metricGrains(k, metric)
	return err
}

// withParams returns a copy of k computed with the parameter values of values instead of
// its defaults (KPIMetric), its Parameters carrying the values used: the KPI a request
// that sets k's parameters asks for, which it hands NewPlan among PlanRequest.AdHocKPIs.
func (m *KnowledgeModel) withParams(k *KPI, values map[string]string) (*KPI, error) {
	metric, err := m.KPIMetric(k, values)
	if err != nil {
		return nil, err
	}
	c := *k
	c.metric = metric
	c.Parameters = slices.Clone(k.Parameters)
	for i, p := range c.Parameters {
		if v, ok := values[p.ID]; ok {
			c.Parameters[i].Value = v
		}
	}
	return &c, nil
}

// checkMetric verifies that every aggregate names a field of the KM of a type it can
// aggregate, and that the fields of the metric can be joined.
func (m *KnowledgeModel) checkMetric(metric query.Metric) error {
	switch x := metric.(type) {
	case *query.Arith:
		if err := m.checkMetric(x.L); err != nil {
			return err
		}
		return m.checkMetric(x.R)
	case *query.Aggregate:
		if x.Field == "" {
			return nil
		}
		_, f := m.Field(x.Field)
		if f == nil {
			return fmt.Errorf("unknown field %s", x.Field)
		}
		switch x.Func {
		case query.AggSum, query.AggAvg, query.AggMedian:
			// min and max take every type: the order is the one sort and the filter
			// language's lt use (package doc, "KPIs").
			if !f.Type.Numeric() {
				return fmt.Errorf("%s of %s: the field is %s, not numeric", x.Func, x.Field, f.Type)
			}
		}
	}
	return nil
}

// rawModel is the YAML shape of a KM definition file.
type rawModel struct {
	ID            string      `yaml:"id"`
	Name          string      `yaml:"name"`
	Extends       string      `yaml:"extends"`
	Published     string      `yaml:"published"`
	Teams         []string    `yaml:"teams"`
	Records       []yaml.Node `yaml:"records"`
	Relationships []yaml.Node `yaml:"relationships"`
	KPIs          []yaml.Node `yaml:"kpis"`
	Filters       []yaml.Node `yaml:"filters"`
}

type rawRecord struct {
	ID               string      `yaml:"id"`
	Name             string      `yaml:"name"`
	Description      string      `yaml:"description"`
	ShortDisplayName string      `yaml:"shortDisplayName"`
	InternalNote     string      `yaml:"internalNote"`
	Curated          *bool       `yaml:"curated"`
	Source           string      `yaml:"source"`
	Key              string      `yaml:"key"`
	Fields           []yaml.Node `yaml:"fields"`
	Indexes          yaml.Node   `yaml:"indexes"`
	Distribution     string      `yaml:"distribution"`
	Reference        bool        `yaml:"reference"`
}

type rawField struct {
	ID               string `yaml:"id"`
	Name             string `yaml:"name"`
	Description      string `yaml:"description"`
	ShortDisplayName string `yaml:"shortDisplayName"`
	InternalNote     string `yaml:"internalNote"`
	Type             string `yaml:"type"`
	Format           string `yaml:"format"`
	Unit             string `yaml:"unit"`
}

type rawRelationship struct {
	From string `yaml:"from"`
	To   string `yaml:"to"`
}

type rawKPI struct {
	ID          string      `yaml:"id"`
	Name        string      `yaml:"name"`
	Description string      `yaml:"description"`
	Expr        string      `yaml:"expr"`
	Format      string      `yaml:"format"`
	Unit        string      `yaml:"unit"`
	Direction   string      `yaml:"direction"`
	Target      string      `yaml:"target"`
	Record      string      `yaml:"record"`
	Parameters  []yaml.Node `yaml:"parameters"`
}

type rawParameter struct {
	ID    string `yaml:"id"`
	Name  string `yaml:"name"`
	Value string `yaml:"value"`
}

type rawFilter struct {
	ID          string `yaml:"id"`
	Name        string `yaml:"name"`
	Description string `yaml:"description"`
	Expr        string `yaml:"expr"`
}

// keysOf lists the YAML keys of a raw struct, for the unknown-key check.
var (
	modelKeys        = []string{"id", "name", "extends", "published", "teams", "records", "relationships", "kpis", "filters"}
	recordKeys       = []string{"id", "name", "description", "shortDisplayName", "internalNote", "curated", "source", "key", "fields", "indexes", "distribution", "reference"}
	fieldKeys        = []string{"id", "name", "description", "shortDisplayName", "internalNote", "type", "format", "unit"}
	relationshipKeys = []string{"from", "to"}
	kpiKeys          = []string{"id", "name", "description", "expr", "format", "unit", "direction", "target", "record", "parameters"}
	parameterKeys    = []string{"id", "name", "value"}
	filterKeys       = []string{"id", "name", "description", "expr"}
)

// decodeNode checks that n is a mapping with only the allowed keys and decodes it into v.
func decodeNode(file string, n *yaml.Node, allowed []string, what string, v any) error {
	if n.Kind != yaml.MappingNode {
		return &DefinitionError{File: file, Line: n.Line, Reason: what + " must be a mapping"}
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k := n.Content[i]
		if !slices.Contains(allowed, k.Value) {
			return &DefinitionError{File: file, Line: k.Line, Reason: fmt.Sprintf("unknown key %q in %s (allowed: %s)", k.Value, what, strings.Join(allowed, ", "))}
		}
	}
	if err := n.Decode(v); err != nil {
		line, reason := splitYAMLLine(yamlReason(err))
		if line == 0 {
			line = n.Line
		}
		return &DefinitionError{File: file, Line: line, Reason: what + ": " + reason}
	}
	return nil
}

// splitYAMLLine splits yaml.v3's "line N: reason" into N and the reason; 0 when the
// message has no line.
func splitYAMLLine(msg string) (int, string) {
	rest, ok := strings.CutPrefix(msg, "line ")
	if !ok {
		return 0, msg
	}
	n, r, ok := strings.Cut(rest, ": ")
	line, err := strconv.Atoi(n)
	if !ok || err != nil {
		return 0, msg
	}
	return line, r
}

// yamlReason strips the "yaml: " prefix and line numbers that yaml.v3 puts in its errors.
func yamlReason(err error) string {
	var te *yaml.TypeError
	if errors.As(err, &te) {
		return strings.Join(te.Errors, "; ")
	}
	return strings.TrimPrefix(err.Error(), "yaml: ")
}

// keyLine returns the line of key's value in mapping n, or n's line.
func keyLine(n *yaml.Node, key string) int {
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == key {
			return n.Content[i+1].Line
		}
	}
	return n.Line
}

func parseDraft(file string, data []byte) (*draft, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		line, msg := splitYAMLLine(yamlReason(err))
		return nil, &DefinitionError{File: file, Line: line, Reason: msg}
	}
	if doc.Kind != yaml.DocumentNode || len(doc.Content) != 1 {
		return nil, &DefinitionError{File: file, Reason: "empty definition"}
	}
	root := doc.Content[0]
	var raw rawModel
	if err := decodeNode(file, root, modelKeys, "the KM", &raw); err != nil {
		return nil, err
	}
	d := &draft{
		file:        file,
		idLine:      keyLine(root, "id"),
		extendsLine: keyLine(root, "extends"),
		km:          &KnowledgeModel{ID: raw.ID, Name: raw.Name, ExtendedKMID: raw.Extends},
		recordAt:    map[*Record]at{},
		fieldAt:     map[*Field]at{},
		kpiAt:       map[*KPI]at{},
		filterAt:    map[*Filter]at{},
	}
	var errs []error
	fail := func(line int, format string, args ...any) {
		errs = append(errs, d.errAt(line, format, args...))
	}
	if !isKMID(raw.ID) {
		fail(d.idLine, "KM id %q: want letters, digits, '.', '-' or '_'", raw.ID)
	}
	if raw.Name == "" {
		d.km.Name = raw.ID
	}
	if raw.Published != "" {
		t, err := parseTime(raw.Published)
		if err != nil {
			fail(keyLine(root, "published"), "published %q is not an RFC 3339 date-time", raw.Published)
		}
		d.km.Published = t
	}
	if err := checkTeams(raw.Teams); err != nil {
		fail(keyLine(root, "teams"), "%v", err)
	}
	d.km.Teams = raw.Teams
	if len(raw.Records) == 0 && raw.Extends == "" {
		fail(root.Line, "a KM needs at least one record")
	}
	for i := range raw.Records {
		r, err := d.parseRecord(&raw.Records[i])
		if err != nil {
			errs = append(errs, err)
			continue
		}
		d.km.Records = append(d.km.Records, r)
	}
	for i := range raw.Relationships {
		n := &raw.Relationships[i]
		var rr rawRelationship
		if err := decodeNode(file, n, relationshipKeys, "a relationship", &rr); err != nil {
			errs = append(errs, err)
			continue
		}
		from, ok1 := splitPath(rr.From)
		to, ok2 := splitPath(rr.To)
		if !ok1 || !ok2 {
			fail(n.Line, "relationship needs from and to as RECORD.FIELD, got %q and %q", rr.From, rr.To)
			continue
		}
		d.km.Relationships = append(d.km.Relationships, Relationship{From: from, To: to})
		d.relAt = append(d.relAt, at{file, n.Line})
	}
	for i := range raw.KPIs {
		n := &raw.KPIs[i]
		k, err := d.parseKPI(n)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if d.km.KPI(k.ID) != nil {
			fail(n.Line, "duplicate KPI id %q", k.ID)
			continue
		}
		d.km.KPIs = append(d.km.KPIs, k)
		d.kpiAt[k] = at{file, keyLine(n, "expr")}
	}
	for i := range raw.Filters {
		n := &raw.Filters[i]
		var rf rawFilter
		if err := decodeNode(file, n, filterKeys, "a filter", &rf); err != nil {
			errs = append(errs, err)
			continue
		}
		switch {
		case !query.IsIdentifier(rf.ID):
			fail(keyLine(n, "id"), "filter id %q: want letters, digits and '_'", rf.ID)
			continue
		case strings.TrimSpace(rf.Expr) == "":
			fail(n.Line, "filter %s has no expr", rf.ID)
			continue
		case d.km.Filter(rf.ID) != nil:
			fail(n.Line, "duplicate filter id %q", rf.ID)
			continue
		}
		f := &Filter{ID: rf.ID, Name: orDefault(rf.Name, rf.ID), Description: rf.Description, Expr: rf.Expr}
		d.km.Filters = append(d.km.Filters, f)
		d.filterAt[f] = at{file, keyLine(n, "expr")}
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return d, nil
}

func (d *draft) parseRecord(n *yaml.Node) (*Record, error) {
	var rr rawRecord
	if err := decodeNode(d.file, n, recordKeys, "a record", &rr); err != nil {
		return nil, err
	}
	if !query.IsIdentifier(rr.ID) {
		return nil, d.errAt(keyLine(n, "id"), "record id %q: want letters, digits and '_', not starting with a digit", rr.ID)
	}
	if d.km.Record(rr.ID) != nil {
		return nil, d.errAt(n.Line, "duplicate record id %q", rr.ID)
	}
	if strings.ContainsAny(rr.Source, "/\\") || strings.ContainsFunc(rr.Source, unicode.IsControl) {
		return nil, d.errAt(keyLine(n, "source"), "source %q of record %s: a source names one file data/<source>.csv and one table, so it holds no '/', '\\' or control character", rr.Source, rr.ID)
	}
	r := &Record{
		ID: rr.ID, Name: orDefault(rr.Name, rr.ID), Description: rr.Description,
		ShortDisplayName: rr.ShortDisplayName, InternalNote: rr.InternalNote,
		Curated: rr.Curated == nil || *rr.Curated, Source: orDefault(rr.Source, rr.ID), Key: rr.Key,
		Distribution: rr.Distribution, Reference: rr.Reference,
	}
	if len(rr.Fields) == 0 {
		return nil, d.errAt(n.Line, "record %s has no fields", rr.ID)
	}
	for i := range rr.Fields {
		fn := &rr.Fields[i]
		var rf rawField
		if err := decodeNode(d.file, fn, fieldKeys, "a field", &rf); err != nil {
			return nil, err
		}
		if !query.IsIdentifier(rf.ID) {
			return nil, d.errAt(keyLine(fn, "id"), "field id %q of record %s: want letters, digits and '_', not starting with a digit", rf.ID, rr.ID)
		}
		if r.Field(rf.ID) != nil {
			return nil, d.errAt(fn.Line, "duplicate field id %q in record %s", rf.ID, rr.ID)
		}
		t, ok := query.ParseType(rf.Type)
		if !ok {
			return nil, d.errAt(keyLine(fn, "type"), "field %s.%s: unknown type %q (want string, integer, float, number, boolean, date, datetime, timestamp or time)", rr.ID, rf.ID, rf.Type)
		}
		f := &Field{
			ID: rf.ID, Name: orDefault(rf.Name, rf.ID), Description: rf.Description,
			ShortDisplayName: rf.ShortDisplayName, InternalNote: rf.InternalNote,
			Type: t, TypeName: rf.Type, Format: rf.Format, Unit: rf.Unit,
		}
		r.Fields = append(r.Fields, f)
		d.fieldAt[f] = at{d.file, fn.Line}
	}
	if r.Key != "" && r.Field(r.Key) == nil {
		return nil, d.errAt(keyLine(n, "key"), "key %q is not a field of record %s", r.Key, r.ID)
	}
	if r.Distribution != "" && r.Field(r.Distribution) == nil {
		return nil, d.errAt(keyLine(n, "distribution"), "distribution %q is not a field of record %s", r.Distribution, r.ID)
	}
	if r.Distribution != "" && r.Reference {
		return nil, d.errAt(keyLine(n, "reference"), "record %s declares distribution and reference: a record is distributed by a field or copied to every node, not both", r.ID)
	}
	if rr.Indexes.Kind != 0 {
		idx, err := d.parseIndexes(r, &rr.Indexes)
		if err != nil {
			return nil, err
		}
		r.Indexes = idx
	}
	d.recordAt[r] = at{d.file, n.Line}
	return r, nil
}

// parseIndexes reads a record's indexes: a list of indexes, each a non-empty list of
// distinct field ids of the record in column order, each prefixed with '-' when the column
// is descending.
func (d *draft) parseIndexes(r *Record, n *yaml.Node) ([]Index, error) {
	if n.Kind != yaml.SequenceNode {
		return nil, d.errAt(n.Line, "indexes of record %s: want a list of indexes, each a list of field ids like [[STATUS, -NET_VALUE], [CUSTOMER_ID]]", r.ID)
	}
	var out []Index
	for _, in := range n.Content {
		if in.Kind != yaml.SequenceNode || len(in.Content) == 0 {
			return nil, d.errAt(in.Line, "an index of record %s: want a non-empty list of field ids like [STATUS, -NET_VALUE]", r.ID)
		}
		var idx Index
		for _, fn := range in.Content {
			if fn.Kind != yaml.ScalarNode {
				return nil, d.errAt(fn.Line, "an index of record %s: want field ids, not a nested list or mapping", r.ID)
			}
			field, desc := strings.CutPrefix(fn.Value, "-")
			if r.Field(field) == nil {
				return nil, d.errAt(fn.Line, "index field %q is not a field of record %s", field, r.ID)
			}
			if slices.ContainsFunc(idx, func(c IndexColumn) bool { return c.Field == field }) {
				return nil, d.errAt(fn.Line, "index field %q of record %s appears twice in one index", field, r.ID)
			}
			idx = append(idx, IndexColumn{Field: field, Descending: desc})
		}
		out = append(out, idx)
	}
	return out, nil
}

func (d *draft) parseKPI(n *yaml.Node) (*KPI, error) {
	var rk rawKPI
	if err := decodeNode(d.file, n, kpiKeys, "a KPI", &rk); err != nil {
		return nil, err
	}
	if !query.IsIdentifier(rk.ID) {
		return nil, d.errAt(keyLine(n, "id"), "KPI id %q: want letters, digits and '_', not starting with a digit", rk.ID)
	}
	if strings.TrimSpace(rk.Expr) == "" {
		return nil, d.errAt(n.Line, "KPI %s has no expr", rk.ID)
	}
	switch rk.Direction {
	case "":
		rk.Direction = "None"
	case "Up", "Down", "None":
	default:
		return nil, d.errAt(keyLine(n, "direction"), "KPI %s: direction %q (want Up, Down or None)", rk.ID, rk.Direction)
	}
	k := &KPI{
		ID: rk.ID, Name: orDefault(rk.Name, rk.ID), Description: rk.Description, Format: rk.Format,
		Unit: rk.Unit, Direction: rk.Direction, Target: rk.Target, Expr: rk.Expr, Record: rk.Record,
	}
	for i := range rk.Parameters {
		pn := &rk.Parameters[i]
		var rp rawParameter
		if err := decodeNode(d.file, pn, parameterKeys, "a KPI parameter", &rp); err != nil {
			return nil, err
		}
		if !query.IsIdentifier(rp.ID) {
			return nil, d.errAt(keyLine(pn, "id"), "KPI %s: parameter id %q: want letters, digits and '_'", rk.ID, rp.ID)
		}
		for _, p := range k.Parameters {
			if p.ID == rp.ID {
				return nil, d.errAt(pn.Line, "KPI %s: duplicate parameter %q", rk.ID, rp.ID)
			}
		}
		k.Parameters = append(k.Parameters, Parameter{ID: rp.ID, Name: orDefault(rp.Name, rp.ID), Value: rp.Value})
	}
	return k, nil
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

func splitPath(s string) (FieldPath, bool) {
	rec, field, ok := strings.Cut(strings.TrimSpace(s), ".")
	if !ok || !query.IsIdentifier(rec) || !query.IsIdentifier(field) {
		return FieldPath{}, false
	}
	return FieldPath{Record: rec, Field: field}, true
}

func isKMID(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !query.IsIdentifierChar(c) && c != '.' && c != '-' {
			return false
		}
	}
	return true
}

func parseTime(s string) (time.Time, error) {
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02 15:04:05", time.DateOnly} {
		if t, err := time.Parse(layout, s); err == nil {
			return t.UTC(), nil
		}
	}
	return time.Time{}, fmt.Errorf("bad time %q", s)
}

// checkTeams checks the teams of a KM: non-empty names without surrounding spaces, each once.
func checkTeams(teams []string) error {
	for i, t := range teams {
		if t == "" || strings.TrimSpace(t) != t {
			return fmt.Errorf("teams: %q is not a team name (want a non-empty name without surrounding spaces)", t)
		}
		if slices.Contains(teams[:i], t) {
			return fmt.Errorf("teams: %q is listed twice", t)
		}
	}
	return nil
}
