package scimhttp

import (
	"slices"
	"strings"

	"github.com/kmkit/kmkit/scim"
	"github.com/scim2/filter-parser/v2"
)

// projection applies attributes and excludedAttributes (RFC 7644 section 3.9) to resources.
// Names are case-insensitive, may carry their schema URN, and may name a sub-attribute
// ("name.givenName", "emails.value", "meta.version", ExtensionSchema+":role"). id and
// schemas are always returned. Unknown names select nothing and are not an error.
type projection struct {
	include map[string]*selection // nil: every attribute
	exclude map[string]*selection
}

// selection is what a list selects of one top-level attribute (keyed in lower case).
type selection struct {
	whole bool
	subs  map[string]bool // lower-case sub-attribute names
	// values are value filters ("emails[type eq \"work\"]"): of a multi-valued
	// attribute, the values matching one of them.
	values []filter.Expression
}

func newProjection(attributes, excluded []string) projection {
	return projection{include: selections(attributes), exclude: selections(excluded)}
}

// splitList splits a comma-separated query parameter value.
func splitList(v string) []string {
	if strings.TrimSpace(v) == "" {
		return nil
	}
	return strings.Split(v, ",")
}

func selections(names []string) map[string]*selection {
	var out map[string]*selection
	for _, n := range names {
		n = strings.TrimSpace(n)
		var values filter.Expression
		if i := strings.IndexByte(n, '['); i > 0 {
			// A value filter, as Microsoft's test collection sends: attribute[filter].
			p, err := filter.ParsePath([]byte(n[strings.LastIndexByte(n[:i], ':')+1:]))
			if err != nil || p.ValueExpression == nil || p.SubAttribute != nil {
				continue
			}
			n, values = n[:i], p.ValueExpression
		}
		key, sub, ok := attrKey(n)
		if !ok {
			continue
		}
		if out == nil {
			out = map[string]*selection{}
		}
		s := out[key]
		if s == nil {
			s = &selection{}
			out[key] = s
		}
		if values != nil {
			s.values = append(s.values, values)
			continue
		}
		if sub == "" {
			s.whole = true
			continue
		}
		if s.subs == nil {
			s.subs = map[string]bool{}
		}
		s.subs[sub] = true
	}
	return out
}

// attrKey returns the lower-case key of the top-level attribute a name refers to (the
// extension's URN for extension attributes) and the lower-case sub-attribute, if any.
func attrKey(name string) (key, sub string, ok bool) {
	lower := strings.ToLower(name)
	for _, urn := range extensionSchemas {
		ext := strings.ToLower(urn)
		if lower == ext {
			return ext, "", true
		}
		if rest, ok := strings.CutPrefix(lower, ext+":"); ok {
			key, _, _ := strings.Cut(rest, ".")
			return ext, key, key != ""
		}
	}
	for _, core := range []string{scim.UserSchema, scim.GroupSchema} {
		if p := strings.ToLower(core) + ":"; strings.HasPrefix(lower, p) {
			lower = lower[len(p):]
			break
		}
	}
	key, sub, _ = strings.Cut(lower, ".")
	return key, sub, key != ""
}

func alwaysReturned(key string) bool { return key == "id" || key == "schemas" }

// extensionSchemas are the URNs of the schema extensions a resource may carry, each the
// key of an object of its attributes.
var extensionSchemas = []string{scim.ExtensionSchema, scim.EnterpriseSchema}

// apply projects res in place.
func (p projection) apply(res map[string]any) {
	for k, v := range res {
		lk := strings.ToLower(k)
		if alwaysReturned(lk) {
			continue
		}
		if p.include != nil {
			s := p.include[lk]
			switch {
			case s == nil:
				delete(res, k)
				continue
			case !s.whole && len(s.values) > 0 && len(s.subs) == 0:
				res[k] = filterValues(v, s.values, true)
				v = res[k]
			case !s.whole:
				res[k] = filterSubs(v, s.subs, true)
				v = res[k]
			}
		}
		if s := p.exclude[lk]; s != nil {
			if s.whole {
				delete(res, k)
				continue
			}
			if len(s.values) > 0 {
				v = filterValues(v, s.values, false)
				res[k] = v
			}
			res[k] = filterSubs(v, s.subs, false)
		}
		if l, ok := res[k].([]any); ok && len(l) == 0 && p.filtersValues(lk) {
			delete(res, k) // no value matched: the attribute has none to return
		}
	}
	if p.include != nil || p.exclude != nil {
		narrowSchemas(res)
	}
}

// narrowSchemas leaves in the schemas of a projected resource only the extensions whose
// attributes it still has, and drops an extension object the projection left empty:
// schemas holds the URIs of the schemas that define the attributes present in the JSON
// structure (RFC 7643 section 3), so with attributes=userName a user names its core
// schema alone.
func narrowSchemas(res map[string]any) {
	schemas, ok := res["schemas"].([]any)
	if !ok {
		return
	}
	kept := make([]any, 0, len(schemas))
	for _, s := range schemas {
		urn, _ := s.(string)
		if slices.ContainsFunc(extensionSchemas, func(ext string) bool { return strings.EqualFold(ext, urn) }) && !hasAttributesOf(res, urn) {
			continue
		}
		kept = append(kept, s)
	}
	res["schemas"] = kept
}

// hasAttributesOf reports whether res has attributes of the extension urn, deleting its
// object when that is empty.
func hasAttributesOf(res map[string]any, urn string) bool {
	for k, v := range res {
		if strings.EqualFold(k, urn) {
			if m, ok := v.(map[string]any); ok && len(m) > 0 {
				return true
			}
			delete(res, k)
		}
	}
	return false
}

// filtersValues reports whether the projection filters the values of attribute key.
func (p projection) filtersValues(key string) bool {
	return (p.include[key] != nil && len(p.include[key].values) > 0) || (p.exclude[key] != nil && len(p.exclude[key].values) > 0)
}

// filterValues keeps (keep set) or drops the values of a multi-valued attribute that
// match one of filters.
func filterValues(v any, filters []filter.Expression, keep bool) any {
	list, ok := v.([]any)
	if !ok {
		return v
	}
	out := make([]any, 0, len(list))
	for _, e := range list {
		m, _ := e.(map[string]any)
		hit := false
		for _, f := range filters {
			hit = hit || (m != nil && scim.MatchesFilter(f, m, nil))
		}
		if hit == keep {
			out = append(out, e)
		}
	}
	return out
}

// filterSubs keeps (keep set) or drops the named sub-attributes of a complex value or of
// each element of a multi-valued one.
func filterSubs(v any, subs map[string]bool, keep bool) any {
	switch v := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(v))
		for k, sv := range v {
			if subs[strings.ToLower(k)] == keep {
				out[k] = sv
			}
		}
		return out
	case []any:
		out := make([]any, len(v))
		for i, e := range v {
			out[i] = filterSubs(e, subs, keep)
		}
		return out
	}
	return v
}
