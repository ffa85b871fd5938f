package odata

import (
	"fmt"
	"net/http"
	"strings"

	"github.com/kmkit/kmkit/internal/jsonenc"
	"github.com/kmkit/kmkit/km"
	"github.com/kmkit/kmkit/problem"
	"github.com/kmkit/kmkit/query"
)

// Navigation properties come from the KM's relationships. A relationship
// FROM.FIELD -> TO.FIELD (many rows of FROM refer to one row of TO) gives two:
//
//   - on FROM's entity type a to-one (single-valued, nullable) navigation property named
//     after the target record, TO;
//   - on TO's entity type a to-many (collection-valued) navigation property named after
//     the referring record, FROM.
//
// A record with several relationships to the same record (two fields referring to
// CUSTOMERS, or a record referring to itself), or a navigation name equal to one of the
// record's properties, gets disambiguated names instead: TO_via_FIELD for the to-one
// property and FROM_by_FIELD for the to-many one, FIELD being the referring field
// (CUSTOMERS_via_SHIP_TO, ORDERS_by_SHIP_TO). Should a name still collide, underscores are
// prepended until it does not. The two properties of one relationship are each other's
// Partner.

// navProp is one navigation property of an entity type.
type navProp struct {
	name string
	// rel is the relationship it follows.
	rel km.Relationship
	// many is true for the to-many property on the referred record.
	many bool
	// target is the record id the property leads to.
	target string
	// partner is the name of the navigation property of the other side.
	partner string
	// refKey is true for a to-one property whose relationship refers to the target's
	// key: its referential constraint can be stated.
	refKey bool
}

// navCandidate is a navigation property before naming.
type navCandidate struct {
	rel  km.Relationship
	many bool
}

func (c navCandidate) base() string {
	if c.many {
		return c.rel.From.Record
	}
	return c.rel.To.Record
}

func (c navCandidate) target() string { return c.base() }

// navNames returns the navigation properties of record rec of m in relationship order,
// named as the package documentation says, with their partners.
func navNames(m *km.KnowledgeModel, rec string) []navProp {
	out := navNamesNoPartner(m, rec)
	for i, n := range out {
		for _, o := range navNamesNoPartner(m, n.target) {
			if o.rel == n.rel && o.many != n.many {
				out[i].partner = o.name
			}
		}
	}
	return out
}

// navNamesNoPartner names the navigation properties of rec, without their partners.
func navNamesNoPartner(m *km.KnowledgeModel, rec string) []navProp {
	var cands []navCandidate
	for _, rel := range m.Relationships {
		if rel.From.Record == rec {
			cands = append(cands, navCandidate{rel: rel})
		}
		if rel.To.Record == rec {
			cands = append(cands, navCandidate{rel: rel, many: true})
		}
	}
	et := entityTypeOf(m, rec)
	taken := map[string]bool{}
	for _, p := range et.props {
		taken[p.name] = true
	}
	bases := map[string]int{}
	for _, c := range cands {
		bases[c.base()]++
	}
	out := make([]navProp, len(cands))
	for i, c := range cands {
		name := c.base()
		if bases[name] > 1 || taken[name] {
			if c.many {
				name += "_by_" + c.rel.From.Field
			} else {
				name += "_via_" + c.rel.From.Field
			}
		}
		for taken[name] {
			name = "_" + name
		}
		taken[name] = true
		out[i] = navProp{name: name, rel: c.rel, many: c.many, target: c.target()}
		if t := m.Record(c.target()); !c.many && t != nil && t.Key != "" && t.Key == c.rel.To.Field {
			out[i].refKey = true
		}
	}
	return out
}

// entityTypeOf returns the entity type of record rec of m.
func entityTypeOf(m *km.KnowledgeModel, rec string) *entityType {
	return newEntityType(m.Record(rec))
}

// step returns the join step n takes from its record to its target.
func (n navProp) step() km.Step {
	if n.many {
		return km.Step{From: n.rel.To.Record, To: n.rel.From.Record, FromField: n.rel.To.Field, ToField: n.rel.From.Field}
	}
	return km.Step{From: n.rel.From.Record, To: n.rel.To.Record, FromField: n.rel.From.Field, ToField: n.rel.To.Field, Up: true}
}

// navigation returns the navigation property name of et, or false.
func navigation(m *km.KnowledgeModel, rec, name string) (navProp, bool) {
	for _, n := range navNamesNoPartner(m, rec) {
		if n.name == name {
			return n, true
		}
	}
	return navProp{}, false
}

// notSupported returns a 501 with the OData+problem body: FILTER_NOT_SUPPORTED for
// $filter, ODATA_OPTION_NOT_SUPPORTED for the other options.
func notSupported(target, format string, args ...any) error {
	code := CodeOptionNotSupported
	if target == "$filter" {
		code = query.CodeFilterNotSupported // as every unsupported $filter feature
	}
	return withTarget(problem.New(http.StatusNotImplemented, code, fmt.Sprintf(format, args...)), target)
}

// resolvePath maps a path expression of a $filter or $orderby on record rec (NAV/FIELD,
// NAV/NAV/FIELD, as query.ODataSyntax parses it) to the KM-level field RECORD.FIELD the
// km compiler joins by its one join-path rule. The path must follow single-valued
// (to-one) navigation properties, and it must be the path the KM joins the two records
// along (the shortest, unambiguous one); else the error says why: a collection in the
// path is a 400 (OData wants a lambda there), another join path a 501.
func resolvePath(m *km.KnowledgeModel, rec, path, param string) (string, error) {
	return followPath(m, rec, path, param, false)
}

// followPath is resolvePath, with collection-valued (to-many) navigation properties
// allowed in the path where collections is true: a grouping property or an aggregated
// property of $apply (target "$apply"), which the KM joins by its grain rule.
func followPath(m *km.KnowledgeModel, rec, path, param string, collections bool) (string, error) {
	target := param
	if collections {
		target = "$apply"
	}
	segs := strings.Split(path, "/")
	cur := rec
	var steps []km.Step
	for i, s := range segs[:len(segs)-1] {
		n, ok := navigation(m, cur, s)
		if !ok {
			return "", withTarget(badOption(query.CodeFieldNotFound, "%s: %s has no navigation property %s%s", param, strings.Join(append([]string{rec}, segs[:i]...), "/"), s, navHint(m, cur)), target)
		}
		switch {
		case collections:
		case n.many && param == "$orderby":
			return "", withTarget(badOption(problem.CodeParameterIllegal, "$orderby: %s is a collection of %s, which has no single value of %s to sort by; sort by a property of a single-valued (to-one) navigation property", strings.Join(segs[:i+1], "/"), n.target, strings.Join(segs[i+1:], "/")), param)
		case n.many:
			return "", withTarget(badOption(problem.CodeParameterIllegal, "%s: %s is a collection of %s; a condition over it needs any or all: %s/any(x: x/%s ...)", param, strings.Join(segs[:i+1], "/"), n.target, strings.Join(segs[:i+1], "/"), segs[len(segs)-1]), param)
		}
		steps = append(steps, n.step())
		cur = n.target
	}
	field := segs[len(segs)-1]
	if m.Record(cur).Field(field) == nil {
		return "", withTarget(badOption(query.CodeFieldNotFound, "%s: entity type %s has no property %s%s", param, cur, field, km.DidYouMean([]string{field}, func(s string) []string { return m.SuggestField(m.Record(cur), s) })), target)
	}
	if err := sameJoin(m, rec, cur, steps, path, target); err != nil {
		return "", err
	}
	return cur + "." + field, nil
}

// sameJoin checks that steps, the path a navigation expression follows from rec to
// target, is the path the KM joins them along.
func sameJoin(m *km.KnowledgeModel, rec, target string, steps []km.Step, path, param string) error {
	if rec == target {
		return notSupported(param, "%s: %s leads from %s back to %s; the knowledge model cannot join a record with itself", param, path, rec, rec)
	}
	want, err := m.PathBetween(rec, target)
	if err != nil {
		return notSupported(param, "%s: %s: the knowledge model cannot join %s and %s: %v", param, path, rec, target, err)
	}
	same := len(want) == len(steps)
	for i := 0; same && i < len(steps); i++ {
		w, s := want[i], steps[i]
		same = w.From == s.From && w.To == s.To && w.FromField == s.FromField && w.ToField == s.ToField
	}
	if !same {
		return notSupported(param, "%s: %s follows %s, but the knowledge model joins %s and %s along %s only", param, path, km.Path(steps), rec, target, want)
	}
	return nil
}

// navHint lists the navigation properties of rec for an error message.
func navHint(m *km.KnowledgeModel, rec string) string {
	ns := navNamesNoPartner(m, rec)
	if len(ns) == 0 {
		return "; it has none"
	}
	names := make([]string, len(ns))
	for i, n := range ns {
		names[i] = n.name
	}
	return "; it has " + strings.Join(names, ", ")
}

// resolvePaths rewrites the path expressions of an unbound $filter (or of a filter step of
// $apply: param names the option) to KM-level names.
func resolvePaths(m *km.KnowledgeModel, rec string, e query.Expr, param string) (query.Expr, error) {
	return query.MapFields(e, func(r query.FieldRef) (query.FieldRef, error) {
		if !strings.Contains(r.Name, "/") {
			if n, ok := navigation(m, rec, r.Name); ok && m.Record(rec).Field(r.Name) == nil {
				// CUSTOMERS eq null: valid OData, a navigation property used as a value.
				hint := "compare its properties, as " + n.name + "/PROPERTY"
				if n.many {
					hint = "ask " + n.name + "/any() or not " + n.name + "/any()"
				}
				return r, notSupported(param, "%s: %s is a navigation property; using it as a value is not supported: %s", param, n.name, hint)
			}
			return r, nil
		}
		name, err := resolvePath(m, rec, r.Name, param)
		if err != nil {
			return r, err
		}
		r.Name = name
		return r, nil
	})
}

// isPath reports whether s is a path expression: identifiers joined by "/".
func isPath(s string) bool {
	segs := strings.Split(s, "/")
	if len(segs) < 2 {
		return false
	}
	for _, seg := range segs {
		if !isIdentifier(seg) {
			return false
		}
	}
	return true
}

// typeName returns the qualified entity type name of record rec.
func typeName(rec string) string {
	name := rec
	if name == ContainerName {
		name += "_Type"
	}
	return Namespace + "." + name
}

// appendNavXML appends the NavigationProperty elements of et.
func appendNavXML(b []byte, et *entityType) []byte {
	for _, n := range et.navs {
		b = append(b, `<NavigationProperty Name="`...)
		b = appendXMLText(b, n.name, true)
		b = append(b, `" Type="`...)
		if n.many {
			b = append(b, `Collection(`...)
			b = appendXMLText(b, typeName(n.target), true)
			b = append(b, `)`...)
		} else {
			b = appendXMLText(b, typeName(n.target), true)
			b = append(b, `" Nullable="true`...)
		}
		if n.partner != "" {
			b = append(b, `" Partner="`...)
			b = appendXMLText(b, n.partner, true)
		}
		if !n.refKey {
			b = append(b, `"/>`...)
			continue
		}
		b = append(b, `"><ReferentialConstraint Property="`...)
		b = appendXMLText(b, n.rel.From.Field, true)
		b = append(b, `" ReferencedProperty="`...)
		b = appendXMLText(b, n.rel.To.Field, true)
		b = append(b, `"/></NavigationProperty>`...)
	}
	return b
}

// appendBindingsXML appends the NavigationPropertyBinding elements of et's entity set.
func appendBindingsXML(b []byte, et *entityType) []byte {
	for _, n := range et.navs {
		b = append(b, `<NavigationPropertyBinding Path="`...)
		b = appendXMLText(b, n.name, true)
		b = append(b, `" Target="`...)
		b = appendXMLText(b, n.target+EntitySetSuffix, true)
		b = append(b, `"/>`...)
	}
	return b
}

// appendNavJSON appends the navigation properties of et as CSDL JSON members.
func appendNavJSON(b []byte, et *entityType) []byte {
	for _, n := range et.navs {
		b = append(b, ',')
		b = jsonenc.AppendStringNoHTMLEscape(b, n.name)
		b = append(b, `:{"$Kind":"NavigationProperty",`...)
		if n.many {
			b = append(b, `"$Collection":true,`...)
		}
		b = append(b, `"$Type":`...)
		b = jsonenc.AppendStringNoHTMLEscape(b, typeName(n.target))
		if !n.many {
			b = append(b, `,"$Nullable":true`...)
		}
		if n.partner != "" {
			b = append(b, `,"$Partner":`...)
			b = jsonenc.AppendStringNoHTMLEscape(b, n.partner)
		}
		if n.refKey {
			b = append(b, `,"$ReferentialConstraint":{`...)
			b = jsonenc.AppendStringNoHTMLEscape(b, n.rel.From.Field)
			b = append(b, ':')
			b = jsonenc.AppendStringNoHTMLEscape(b, n.rel.To.Field)
			b = append(b, '}')
		}
		b = append(b, '}')
	}
	return b
}

// appendBindingsJSON appends the $NavigationPropertyBinding member of et's entity set.
func appendBindingsJSON(b []byte, et *entityType) []byte {
	if len(et.navs) == 0 {
		return b
	}
	b = append(b, `,"$NavigationPropertyBinding":{`...)
	for i, n := range et.navs {
		if i > 0 {
			b = append(b, ',')
		}
		b = jsonenc.AppendStringNoHTMLEscape(b, n.name)
		b = append(b, ':')
		b = jsonenc.AppendStringNoHTMLEscape(b, n.target+EntitySetSuffix)
	}
	return append(b, '}')
}
