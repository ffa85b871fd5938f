package km

import (
	"context"
	"slices"
	"time"

	"github.com/kmkit/kmkit/principal"
	"github.com/kmkit/kmkit/query"
)

// KnowledgeModel is one Knowledge Model (KM): records with fields, the relationships that
// join them, KPIs and predefined filters. A KM that extends another already holds what it
// inherited: Records, Relationships, KPIs and Filters are the merged lists.
//
// A KnowledgeModel is immutable once loaded; stores and handlers share it between requests.
type KnowledgeModel struct {
	ID   string
	Name string
	// ExtendedKMID is the id of the base KM this one extends, or "".
	ExtendedKMID string
	// Published is the latest publication time; the zero time when unknown.
	Published time.Time
	// Teams are the teams that see the KM (the `teams:` key of its definition; a KM that
	// extends another and lists none has its base's). Empty: every team sees it. See
	// VisibleTo for the rule every API applies.
	Teams         []string
	Records       []*Record
	Relationships []Relationship
	KPIs          []*KPI
	Filters       []*Filter

	// paths caches the paths between records (see PathBetween); Load and Compile set it,
	// and a copy of the KM shares it, so a copy must keep the relationships.
	paths *pathCache
}

// Record is a business concept of a KM: a table of rows with typed fields.
type Record struct {
	ID               string
	Name             string
	Description      string
	ShortDisplayName string
	InternalNote     string
	// Curated is false for auto-generated records.
	Curated bool
	// Source names the data behind the record: data/<Source>.csv for the memory store, a
	// table or view for SQL. It defaults to the record id; Load refuses one holding '/',
	// '\' or a control character (one file, one table: sqlstore keeps its imports'
	// bookkeeping by source, beside the reporting tenants' "reporting/<tenant>").
	Source string
	// Key is the id of the record's key field, or "".
	Key    string
	Fields []*Field
	// Indexes are the indexes the definition declares for the record's sort and filter
	// fields (its indexes: key), each a list of columns in order. SQL stores create them on
	// import, next to those on the key and the relationship fields; the memory store's
	// Warm builds the sort indexes of their columns.
	Indexes []Index
	// Distribution is the id of the field a distributed SQL database (Citus) hash-distributes
	// the record's rows by, or "": the definition's `distribution: FIELD`. The distributed
	// records of a KM form one co-location group: their distribution fields hold one key
	// domain (one type), and a relationship between two of them joins their distribution
	// fields, so that the database joins their rows on the node that holds both. The
	// memory store and a database without distribution ignore it.
	Distribution string
	// Reference says that a distributed SQL database copies the record's rows to every
	// node (a dimension joined by the distributed facts): the definition's `reference:
	// true`. A record is distributed or reference, not both.
	Reference bool
}

// Index is an index a record declares: its columns in order, written in a definition as
// a list of field ids, each prefixed with '-' when descending ([STATUS, -NET_VALUE]).
type Index []IndexColumn

// IndexColumn is one column of a declared index.
type IndexColumn struct {
	// Field is the id of the record's field.
	Field string
	// Descending orders the column from its largest value, nulls last as the API's sorts
	// put them; an ascending column has its nulls last too.
	Descending bool
}

// String returns the column as a definition writes it: the field id, prefixed with '-'
// when descending.
func (c IndexColumn) String() string {
	if c.Descending {
		return "-" + c.Field
	}
	return c.Field
}

// Field is one column of a record.
type Field struct {
	ID               string
	Name             string
	Description      string
	ShortDisplayName string
	InternalNote     string
	// Type is the field's data type.
	Type query.Type
	// TypeName is the type as the definition declares it ("number" stays "number" in the
	// record details; data headers report Type).
	TypeName string
	Format   string
	Unit     string
}

// Relationship is a many-to-one join: each row of From's record refers to at most one row
// of To's record, whose To field is its key.
type Relationship struct {
	From, To FieldPath
}

// FieldPath names a field of a record in a KM: RECORD.FIELD.
type FieldPath struct {
	Record, Field string
}

// String returns "RECORD.FIELD".
func (p FieldPath) String() string { return p.Record + "." + p.Field }

// KPI is a KM-level aggregation defined by an expression of the KPI language.
type KPI struct {
	ID          string
	Name        string
	Description string
	Format      string
	Unit        string
	// Direction is the desired trend: "Up", "Down" or "None".
	Direction string
	// Target is the default target, or "".
	Target     string
	Parameters []Parameter
	// Expr is the KPI expression as written, with ${param} placeholders.
	Expr string
	// Type is the type of the KPI's values (integer for counts, else float).
	Type query.Type
	// Record is the record whose rows a bare count() of the expression counts, or "" (then
	// count() counts the rows of the only record the expression names).
	Record string

	metric query.Metric // compiled with the parameters' default values
}

// Parameter is a KPI parameter; Value is its initial (default) value.
type Parameter struct {
	ID, Name, Value string
}

// Filter is a predefined filter of a KM: a filter expression over KM-level field names.
type Filter struct {
	ID          string
	Name        string
	Description string
	// Expr is the filter expression as written.
	Expr string

	bound query.Expr // bound against the KM's fields
}

// Record returns the record with the given id, or nil.
func (m *KnowledgeModel) Record(id string) *Record {
	for _, r := range m.Records {
		if r.ID == id {
			return r
		}
	}
	return nil
}

// KPI returns the KPI with the given id, or nil.
func (m *KnowledgeModel) KPI(id string) *KPI {
	for _, k := range m.KPIs {
		if k.ID == id {
			return k
		}
	}
	return nil
}

// Filter returns the predefined filter with the given id, or nil.
func (m *KnowledgeModel) Filter(id string) *Filter {
	for _, f := range m.Filters {
		if f.ID == id {
			return f
		}
	}
	return nil
}

// Field returns the field with the given id, or nil.
func (r *Record) Field(id string) *Field {
	for _, f := range r.Fields {
		if f.ID == id {
			return f
		}
	}
	return nil
}

// Field resolves a KM-level field name "RECORD.FIELD" to its record and field.
func (m *KnowledgeModel) Field(name string) (*Record, *Field) {
	for i := 0; i < len(name); i++ {
		if name[i] != '.' {
			continue
		}
		// Record ids may not contain dots, field ids may: split at the first dot.
		r := m.Record(name[:i])
		if r == nil {
			return nil, nil
		}
		f := r.Field(name[i+1:])
		if f == nil {
			return nil, nil
		}
		return r, f
	}
	return nil, nil
}

// Metric returns the KPI's compiled expression with its parameters' default values.
func (k *KPI) Metric() query.Metric { return k.metric }

// Bound returns the filter's expression bound against its KM's fields.
func (f *Filter) Bound() query.Expr { return f.bound }

// VisibleTo reports whether the caller of ctx sees the KM: a KM without Teams is visible to
// every caller, one with Teams only to a principal (principal.FromContext) whose Team is one
// of them. A request without a principal (a host serving the handler with no auth in
// front) sees only KMs without Teams.
func (m *KnowledgeModel) VisibleTo(ctx context.Context) bool {
	if len(m.Teams) == 0 {
		return true
	}
	p, ok := principal.FromContext(ctx)
	return ok && p.Team != "" && slices.Contains(m.Teams, p.Team)
}
