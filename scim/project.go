package scim

import (
	"strings"
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

func (p projection) empty() bool { return p.include == nil && p.exclude == nil }

func selections(names []string) map[string]*selection {
	var out map[string]*selection
	for _, n := range names {
		key, sub, ok := attrKey(strings.TrimSpace(n))
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
	for _, urn := range []string{ExtensionSchema, EnterpriseSchema} {
		ext := strings.ToLower(urn)
		if lower == ext {
			return ext, "", true
		}
		if rest, ok := strings.CutPrefix(lower, ext+":"); ok {
			key, _, _ := strings.Cut(rest, ".")
			return ext, key, key != ""
		}
	}
	for _, core := range []string{UserSchema, GroupSchema} {
		if p := strings.ToLower(core) + ":"; strings.HasPrefix(lower, p) {
			lower = lower[len(p):]
			break
		}
	}
	key, sub, _ = strings.Cut(lower, ".")
	return key, sub, key != ""
}

func alwaysReturned(key string) bool { return key == "id" || key == "schemas" }

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
			res[k] = filterSubs(v, s.subs, false)
		}
	}
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
