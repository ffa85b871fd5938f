package scim

import (
	"fmt"
	"strings"
)

// The attribute descriptions below are the part of the schemas of RFC 7643 (and of the
// extensions this package knows) that PATCH paths are resolved against and its results
// checked with: names, types, plurality, case sensitivity and mutability. The full
// /Schemas documents, with descriptions, are the HTTP adapter's; its schema library
// links net/http, which this package must not.

// Kind is the data type of an attribute (RFC 7643 section 2.3).
type Kind int

// The data types of RFC 7643 section 2.3.
const (
	KindString Kind = iota
	KindBoolean
	KindDecimal
	KindInteger
	KindDateTime
	KindBinary
	KindReference
	KindComplex
)

// Mutability says whether and how an attribute may be written (RFC 7643 section 7).
type Mutability int

// The mutabilities of RFC 7643 section 7.
const (
	ReadWrite Mutability = iota
	ReadOnly
	Immutable
	WriteOnly
)

// Attribute describes one attribute or sub-attribute of a resource.
type Attribute struct {
	Name        string
	Kind        Kind
	MultiValued bool
	CaseExact   bool
	Mutability  Mutability
	// Computed sub-attributes are filled in by the service although the schema declares
	// them writable (members.display); PATCH refuses them like read-only ones.
	Computed bool
	// Sub are the sub-attributes of a complex attribute.
	Sub Attributes
}

// Attributes is a list of attribute descriptions.
type Attributes []Attribute

// Find returns the attribute named name, ignoring case (RFC 7643 section 2.1).
func (as Attributes) Find(name string) (Attribute, bool) {
	for _, a := range as {
		if strings.EqualFold(a.Name, name) {
			return a, true
		}
	}
	return Attribute{}, false
}

// Schema is the URN of a schema and its attributes.
type Schema struct {
	ID         string
	Attributes Attributes
}

// ResourceSchema is what a resource type's objects are made of: its core schema (with
// the common attributes id, externalId and meta) and its extensions.
type ResourceSchema struct {
	Core       Schema
	Extensions []Schema
}

func str(name string) Attribute   { return Attribute{Name: name} }
func exact(name string) Attribute { return Attribute{Name: name, CaseExact: true} }
func boolean(name string) Attribute {
	return Attribute{Name: name, Kind: KindBoolean}
}
func ref(name string) Attribute { return Attribute{Name: name, Kind: KindReference, CaseExact: true} }
func complexAttr(name string, multi bool, sub ...Attribute) Attribute {
	return Attribute{Name: name, Kind: KindComplex, MultiValued: multi, Sub: sub}
}

// plural is the multi-valued attribute of value, display, type and primary of RFC 7643
// section 2.4, with value of the given description.
func plural(name string, value Attribute) Attribute {
	return complexAttr(name, true, value, str("display"), str("type"), boolean("primary"))
}

var common = Attributes{
	{Name: "id", CaseExact: true, Mutability: ReadOnly},
	exact("externalId"),
	{Name: "meta", Kind: KindComplex, Mutability: ReadOnly},
}

// UserResource is the User resource type: RFC 7643's core User schema, the vendor
// extension (ExtensionSchema) and the enterprise extension (EnterpriseSchema).
func UserResource() ResourceSchema {
	core := append(Attributes{
		str("userName"),
		complexAttr("name", false, str("formatted"), str("familyName"), str("givenName"), str("middleName"),
			str("honorificPrefix"), str("honorificSuffix")),
		str("displayName"), str("nickName"), ref("profileUrl"), str("title"), str("userType"),
		str("preferredLanguage"), str("locale"), str("timezone"), boolean("active"),
		{Name: "password", Mutability: WriteOnly},
		plural("emails", str("value")),
		plural("phoneNumbers", str("value")),
		plural("ims", str("value")),
		plural("photos", ref("value")),
		complexAttr("addresses", true, str("formatted"), str("streetAddress"), str("locality"), str("region"),
			str("postalCode"), str("country"), str("type"), boolean("primary")),
		{Name: "groups", Kind: KindComplex, MultiValued: true, Mutability: ReadOnly, Sub: Attributes{
			{Name: "value", Mutability: ReadOnly}, {Name: "$ref", Kind: KindReference, CaseExact: true, Mutability: ReadOnly},
			{Name: "display", Mutability: ReadOnly}, {Name: "type", Mutability: ReadOnly}}},
		plural("entitlements", str("value")),
		plural("roles", str("value")),
		plural("x509Certificates", Attribute{Name: "value", Kind: KindBinary}),
	}, common...)
	return ResourceSchema{
		Core: Schema{ID: UserSchema, Attributes: core},
		Extensions: []Schema{
			{ID: ExtensionSchema, Attributes: Attributes{str("role"), boolean("sendEmailOnInvitation")}},
			{ID: EnterpriseSchema, Attributes: Attributes{
				str("employeeNumber"), str("costCenter"), str("organization"), str("division"), str("department"),
				complexAttr("manager", false, str("value"), ref("$ref"), Attribute{Name: "displayName", Mutability: ReadOnly}),
			}},
		},
	}
}

// GroupResource is the Group resource type: RFC 7643's core Group schema with the
// group's role. members.display and members.$ref are filled in by the service.
func GroupResource() ResourceSchema {
	core := append(Attributes{
		str("displayName"),
		complexAttr("members", true,
			Attribute{Name: "value", Mutability: Immutable},
			Attribute{Name: "$ref", Kind: KindReference, CaseExact: true, Mutability: Immutable, Computed: true},
			Attribute{Name: "type", Mutability: Immutable},
			Attribute{Name: "display", Mutability: Immutable, Computed: true}),
		str("role"),
	}, common...)
	return ResourceSchema{Core: Schema{ID: GroupSchema, Attributes: core}}
}

// CheckValues checks the attributes of a resource object that rs describes (core
// attributes at the top level, each extension's in an object under its URN) against
// their types (RFC 7643 section 2.3), and the values of its multi-valued attributes: each
// value at most once (values compare as sameValue says) and at most one of them primary
// (RFC 7643 section 2.4). Its 400 invalidValue errors name the attribute, the value and
// the rule. Keys that name no attribute or sub-attribute are left for the caller.
func CheckValues(m map[string]any, rs ResourceSchema) *Error {
	return checkValues(m, rs, nil)
}

// checkValues is CheckValues, skipping the attributes ("name", or "URN:name" for an
// extension's) whose values are as in before (their JSON text): a PATCH answers for what
// it changes, not for values stored before a rule was enforced.
func checkValues(m map[string]any, rs ResourceSchema, before map[string]string) *Error {
	if e := checkObject(m, rs.Core.Attributes, "", before); e != nil {
		return e
	}
	for _, ext := range rs.Extensions {
		k, ok := AttributeKey(m, ext.ID)
		if !ok || m[k] == nil {
			continue
		}
		obj, ok := m[k].(map[string]any)
		if !ok {
			e := badValue("%s must be an object of its attributes, not %s.", ext.ID, jsonText(m[k]))
			return &e
		}
		if e := checkObject(obj, ext.Attributes, ext.ID+":", before); e != nil {
			return e
		}
	}
	return nil
}

func checkObject(m map[string]any, attrs Attributes, prefix string, before map[string]string) *Error {
	for k, v := range m {
		a, ok := attrs.Find(k)
		if !ok || v == nil || a.Mutability == ReadOnly {
			continue
		}
		if old, ok := before[prefix+a.Name]; ok && old == jsonText(v) {
			continue
		}
		if e := checkAttr(a, prefix+a.Name, v); e != nil {
			return e
		}
	}
	return nil
}

func checkAttr(a Attribute, name string, v any) *Error {
	if !a.MultiValued {
		return checkSingle(a, name, v)
	}
	list, ok := v.([]any)
	if !ok {
		e := badValue("%s is multi-valued: its value must be an array, not %s.", name, jsonText(v))
		return &e
	}
	var primary []string
	for i, el := range list {
		if e := checkSingle(a, fmt.Sprintf("%s[%d]", name, i), el); e != nil {
			return e
		}
		if m, ok := el.(map[string]any); ok {
			if k, ok := AttributeKey(m, "primary"); ok && m[k] == true {
				primary = append(primary, jsonText(el))
			}
		}
		for _, prev := range list[:i] {
			if sameValue(el, prev, a.Sub) {
				e := badValue("%s holds the value %s twice: a multi-valued attribute holds each value once.", name, jsonText(el))
				return &e
			}
		}
	}
	if len(primary) > 1 {
		e := badValue("%s has %d values with primary true (%s): at most one value may be primary (RFC 7643 section 2.4).",
			name, len(primary), strings.Join(primary, ", "))
		return &e
	}
	return nil
}

func checkSingle(a Attribute, name string, v any) *Error {
	var ok bool
	var want string
	switch a.Kind {
	case KindBoolean:
		_, ok = v.(bool)
		want = "true or false"
	case KindInteger, KindDecimal:
		ok = isNumber(v)
		want = "a number"
	case KindComplex:
		var m map[string]any
		m, ok = v.(map[string]any)
		want = "an object of its sub-attributes"
		if ok {
			for k, sv := range m {
				sa, known := a.Sub.Find(k)
				if !known || sv == nil || sa.Mutability == ReadOnly {
					continue
				}
				if e := checkSingle(sa, name+"."+sa.Name, sv); e != nil {
					return e
				}
			}
		}
	default:
		_, ok = v.(string)
		want = "a string"
	}
	if !ok {
		e := badValue("%s must be %s, not %s.", name, want, jsonText(v))
		return &e
	}
	return nil
}

// valueTexts returns the JSON text of each attribute of a resource object, keyed as
// checkValues skips them.
func valueTexts(m map[string]any, rs ResourceSchema) map[string]string {
	out := map[string]string{}
	for k, v := range m {
		if a, ok := rs.Core.Attributes.Find(k); ok {
			out[a.Name] = jsonText(v)
		}
	}
	for _, ext := range rs.Extensions {
		if k, ok := AttributeKey(m, ext.ID); ok {
			obj, _ := m[k].(map[string]any)
			for ek, ev := range obj {
				if a, ok := ext.Attributes.Find(ek); ok {
					out[ext.ID+":"+a.Name] = jsonText(ev)
				}
			}
		}
	}
	return out
}
