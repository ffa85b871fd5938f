package odata

import (
	"time"

	"github.com/kmkit/kmkit/km"
	"github.com/kmkit/kmkit/query"
)

// The names SPEC-NOTES fixes for every service.
const (
	// Namespace is the schema namespace of every service.
	Namespace = "ODataKnowledgeModel"
	// ContainerName is the name of the entity container.
	ContainerName = "Container"
	// EntitySetSuffix follows the record id in the name of its entity set.
	EntitySetSuffix = "_entries"
	// RowNumberKey is the name of the generated key property of a record that declares no
	// key; underscores are prepended while a field of the record has the name. Its value
	// is the row's 1-based position in its record (km.RowField), the same whatever the
	// query; it can be selected, filtered and sorted like any Edm.Int64 property.
	RowNumberKey = "ROW_NUMBER"
)

// entityType is the OData view of one record: its entity type and entity set.
type entityType struct {
	rec  *km.Record
	name string // the entity type's name: the record id
	set  string // the entity set's name: record id + "_entries"
	// props are the properties in the record's field order; a generated key comes first.
	props []property
	// key is the index of the key property in props.
	key int
	// generated is true when the key is the generated row number.
	generated bool
	// navs are the navigation properties (navigation.go), set by entityTypes.
	navs []navProp
}

// property is one property of an entity type.
type property struct {
	name  string
	field *km.Field // nil for the generated key
	typ   query.Type
	edm   string // Edm.String ...
	// nullable is false only for the key.
	nullable bool
}

// newEntityType builds the entity type of rec. A record named like the container gets a
// type name with a "_Type" suffix.
func newEntityType(rec *km.Record) *entityType {
	et := &entityType{rec: rec, name: rec.ID, set: rec.ID + EntitySetSuffix, key: -1}
	if et.name == ContainerName {
		// Entity types and the container share the schema's namespace.
		et.name += "_Type"
	}
	if keyless(rec) {
		name := RowNumberKey
		for rec.Field(name) != nil {
			name = "_" + name
		}
		et.generated = true
		et.key = 0
		et.props = append(et.props, property{name: name, typ: query.TypeInteger, edm: "Edm.Int64"})
	}
	for _, f := range rec.Fields {
		p := property{name: f.ID, field: f, typ: f.Type, edm: edmType(f.Type), nullable: true}
		if !et.generated && f.ID == rec.Key {
			p.nullable = false
			et.key = len(et.props)
		}
		et.props = append(et.props, p)
	}
	return et
}

// fieldName returns the name the store query gives property i: the field id, or
// km.RowField for the generated key.
func (et *entityType) fieldName(i int) string {
	if et.generated && i == et.key {
		return km.RowField
	}
	return et.props[i].name
}

// bindFilter binds a parsed $filter against the record's fields, any RECORD.FIELD of the
// KM and the generated key (an integer), which the store query names km.RowField; now is
// the instant now() stands for.
func (et *entityType) bindFilter(m *km.KnowledgeModel, e query.Expr, now time.Time) (query.Expr, error) {
	b, err := query.BindAt(e, et.filterSchema(m), now)
	if err != nil {
		return nil, err
	}
	return et.storeNames(b)
}

// keyless reports whether rec declares no key: its entity type's key is the generated
// row number.
func keyless(rec *km.Record) bool { return rec.Key == "" || rec.Field(rec.Key) == nil }

// filterSchema is the schema filters and key predicates of the entity set bind against.
func (et *entityType) filterSchema(m *km.KnowledgeModel) query.Schema {
	if !et.generated {
		return keySchema{Schema: m.FilterSchema(et.rec.ID), m: m}
	}
	return keySchema{Schema: m.RowKeySchema(et.rec.ID), key: et.props[et.key].name, m: m}
}

// storeNames renames the generated key in a bound expression to km.RowField.
func (et *entityType) storeNames(e query.Expr) (query.Expr, error) {
	if !et.generated {
		return e, nil
	}
	keyName := et.props[et.key].name
	return query.MapFields(e, func(r query.FieldRef) (query.FieldRef, error) {
		if r.Name == keyName {
			r.Name = km.RowField
		}
		return r, nil
	})
}

// keySchema resolves the generated key property (key, "" when the record has a key of its
// own) as an integer field besides the fields of Schema, and the row key RECORD.#row
// (km.RowField) of a keyless record of m, which a lambda's body names for the generated
// key of the related entities (x/ROW_NUMBER).
type keySchema struct {
	query.Schema
	key string
	m   *km.KnowledgeModel
}

// FieldType implements query.Schema.
func (s keySchema) FieldType(name string) (query.Type, bool) {
	if s.key != "" && name == s.key {
		return query.TypeInteger, true
	}
	if r := s.m.Record(km.RowKeyRecord(name)); r != nil && keyless(r) {
		return query.TypeInteger, true
	}
	if name == km.RowField {
		// Only under the property's name.
		return query.TypeInvalid, false
	}
	return s.Schema.FieldType(name)
}

// SuggestText implements query.Suggester with the KM's suggestions.
func (s keySchema) SuggestText(name string) string {
	if sg, ok := s.Schema.(query.Suggester); ok {
		return sg.SuggestText(name)
	}
	return ""
}

// entityTypes returns the entity types of every record of m, in record order.
func entityTypes(m *km.KnowledgeModel) []*entityType {
	out := make([]*entityType, len(m.Records))
	for i, r := range m.Records {
		out[i] = newEntityType(r)
	}
	for _, et := range out {
		et.navs = navNames(m, et.rec.ID)
	}
	return out
}

// prop returns the index of the property with the given name, or -1.
func (et *entityType) prop(name string) int {
	for i, p := range et.props {
		if p.name == name {
			return i
		}
	}
	return -1
}

// qualified returns the type's qualified name.
func (et *entityType) qualified() string { return Namespace + "." + et.name }

// edmType maps a field type to its EDM primitive type.
func edmType(t query.Type) string {
	switch t {
	case query.TypeInteger:
		return "Edm.Int64"
	case query.TypeFloat:
		return "Edm.Double"
	case query.TypeBoolean:
		return "Edm.Boolean"
	case query.TypeDate:
		return "Edm.Date"
	case query.TypeDateTime, query.TypeTimestamp:
		return "Edm.DateTimeOffset"
	case query.TypeTime:
		return "Edm.TimeOfDay"
	}
	return "Edm.String"
}

// precision is the precision facet of temporal types: values carry microseconds, and the
// facet's default (0) would forbid fractional seconds.
func precision(t query.Type) int {
	switch t {
	case query.TypeDateTime, query.TypeTimestamp, query.TypeTime:
		return 6
	}
	return -1
}
