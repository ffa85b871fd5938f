package scim

import (
	"cmp"
	"encoding/json"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"

	"github.com/scim2/filter-parser/v2"
)

// This file applies PATCH operations (RFC 7644 section 3.5.2) to the JSON form of a
// resource: core attributes at the top level, each extension's attributes in an object
// under its URN. Paths and the keys of path-less values are resolved against the
// ResourceSchema; every operation either has its effect or fails with a 400 naming the
// problem, so that no PATCH is answered 2xx without doing what it was asked.

// PatchOp is one operation of a PatchOp message (RFC 7644 section 3.5.2).
type PatchOp struct {
	// Op is add, replace or remove, in lower case.
	Op string
	// Path is "" when the operation has none.
	Path string
	// Value is the operation's value, as decoded from JSON; HasValue says whether it was
	// given (a null value is given).
	Value    any
	HasValue bool
}

// patchTarget is a resolved path.
type patchTarget struct {
	ext    string            // URN of the extension holding the attribute; "" for core
	whole  bool              // the path is an extension URN: the extension object itself
	attr   Attribute         // the top-level attribute
	sub    string            // canonical sub-attribute name, "" for none
	filter filter.Expression // value filter of a multi-valued attribute, nil for none
	text   string            // the path as the client gave it, for messages
}

func invalidPath(format string, args ...any) *Error {
	e := apiError(StatusBadRequest, TypeInvalidPath, format, args...)
	return &e
}

func noTarget(format string, args ...any) *Error {
	e := apiError(StatusBadRequest, TypeNoTarget, format, args...)
	return &e
}

func mutabilityError(format string, args ...any) *Error {
	e := apiError(StatusBadRequest, TypeMutability, format, args...)
	return &e
}

func invalidValue(format string, args ...any) *Error {
	e := badValue(format, args...)
	return &e
}

// readOnlyAttrs are attributes no PATCH may set: the service maintains them.
var readOnlyAttrs = []string{"id", "meta", "groups"}

// resolve turns a path into its target.
func (s ResourceSchema) resolve(path string) (patchTarget, *Error) {
	t := patchTarget{text: path}
	rest := strings.TrimSpace(path)
	lower := strings.ToLower(rest)
	attrs := s.Core.Attributes
	for _, ext := range s.Extensions {
		urn := strings.ToLower(ext.ID)
		if lower == urn {
			t.ext, t.whole = ext.ID, true
			return t, nil
		}
		if strings.HasPrefix(lower, urn+":") {
			t.ext, attrs, rest = ext.ID, ext.Attributes, rest[len(urn)+1:]
			break
		}
	}
	if t.ext == "" {
		if urn := strings.ToLower(s.Core.ID) + ":"; strings.HasPrefix(lower, urn) {
			rest = rest[len(urn):]
		}
	}
	for _, name := range readOnlyAttrs {
		head, _, _ := strings.Cut(rest, ".")
		head, _, _ = strings.Cut(head, "[")
		_, inSchema := s.Core.Attributes.Find(name)
		if t.ext == "" && strings.EqualFold(head, name) && (name != "groups" || inSchema) {
			return t, mutabilityError("%s is read-only: the service maintains it.", name)
		}
	}
	p, err := parsePath(rest)
	if err != nil || rest == "" {
		return t, invalidPath("The path %q is not a valid SCIM attribute path.", Echo(path))
	}
	if p.AttributePath.URIPrefix != nil {
		return t, invalidPath("The path %q names an unknown schema %s.", Echo(path), Echo(p.AttributePath.URI()))
	}
	attr, ok := attrs.Find(p.AttributePath.AttributeName)
	if !ok {
		return t, invalidPath("The path %q names no attribute of the resource.", Echo(path))
	}
	t.attr, t.filter = attr, p.ValueExpression
	if t.filter != nil && !attr.MultiValued {
		return t, invalidPath("The path %q filters %s, which is not multi-valued.", Echo(path), attr.Name)
	}
	sub := p.AttributePath.SubAttributeName()
	if sub == "" {
		sub = p.SubAttributeName()
	}
	if sub != "" {
		sa, ok := attr.Sub.Find(sub)
		if !ok {
			return t, invalidPath("The path %q names no sub-attribute of %s.", Echo(path), attr.Name)
		}
		if sa.Mutability == ReadOnly || sa.Computed {
			return t, mutabilityError("%s.%s is read-only: the service maintains it.", attr.Name, sa.Name)
		}
		t.sub = sa.Name
	}
	if attr.Mutability == ReadOnly {
		return t, mutabilityError("%s is read-only: the service maintains it.", attr.Name)
	}
	return t, nil
}

// parsePath reads a PATCH path, attrPath or valuePath followed by an optional
// sub-attribute (RFC 7644 section 3.5.2). The filter parser's own path rule refuses a
// valFilter in parentheses, which the grammar of section 3.4.2.2 allows
// (`emails[(type eq "work")]`), so the brackets are cut here and their content parsed
// as a filter.
func parsePath(s string) (filter.Path, error) {
	open := strings.IndexByte(s, '[')
	if open < 0 {
		ap, err := filter.ParseAttrPath([]byte(s))
		return filter.Path{AttributePath: ap}, err
	}
	closing, quoted := -1, false
	for i := open + 1; i < len(s) && closing < 0; i++ {
		switch c := s[i]; {
		case quoted && c == '\\':
			i++
		case c == '"':
			quoted = !quoted
		case !quoted && c == ']':
			closing = i
		}
	}
	if closing < 0 {
		return filter.Path{}, fmt.Errorf("no closing bracket in %q", Echo(s))
	}
	ap, err := filter.ParseAttrPath([]byte(s[:open]))
	if err != nil || ap.SubAttribute != nil {
		return filter.Path{}, fmt.Errorf("invalid attribute before the filter of %q", Echo(s))
	}
	vf, err := parseFilterText(s[open+1:closing], nil)
	if err != nil {
		return filter.Path{}, err
	}
	p := filter.Path{AttributePath: ap, ValueExpression: vf}
	if rest := s[closing+1:]; rest != "" {
		sub, ok := strings.CutPrefix(rest, ".")
		if !ok || !validName(sub) {
			return filter.Path{}, fmt.Errorf("invalid sub-attribute after the filter of %q", Echo(s))
		}
		p.SubAttribute = &sub
	}
	return p, nil
}

// validName reports whether s is an ATTRNAME of RFC 7644 section 3.10: ALPHA *(nameChar).
func validName(s string) bool {
	for i, r := range s {
		letter := r < 128 && (r|0x20 >= 'a' && r|0x20 <= 'z')
		if !letter && (i == 0 || !(r == '-' || r == '_' || r == '$' || (r >= '0' && r <= '9'))) {
			return false
		}
	}
	return s != ""
}

// applyPatch applies ops in order to res, which it modifies.
func (s ResourceSchema) applyPatch(res map[string]any, ops []PatchOp) *Error {
	for i, op := range ops {
		// The value is copied: res keeps it, and a retried update applies ops again.
		op.Value = CloneValue(op.Value)
		if e := s.apply(res, op); e != nil {
			e.Detail = fmt.Sprintf("Operations[%d]: %s", i, e.Detail)
			return e
		}
	}
	return nil
}

func (s ResourceSchema) apply(res map[string]any, op PatchOp) *Error {
	// The core schema's URN as the path names the resource itself: its value is a
	// path-less value, as an extension's URN as the path takes the extension's attributes.
	if strings.EqualFold(strings.TrimSpace(op.Path), s.Core.ID) {
		obj, ok := op.Value.(map[string]any)
		switch {
		case op.Op == "remove":
			return noTarget("The path %q names the whole resource, which remove cannot remove.", Echo(op.Path))
		case !ok:
			return invalidValue("%s on %q needs an object of attributes as its value.", op.Op, Echo(op.Path))
		}
		return s.applyObject(res, op.Op, "", obj)
	}
	if op.Path == "" {
		if op.Op == "remove" {
			return noTarget("remove needs a path.")
		}
		obj, ok := op.Value.(map[string]any)
		if !ok {
			return invalidValue("%s without a path needs an object of attributes as its value.", op.Op)
		}
		return s.applyObject(res, op.Op, "", obj)
	}
	t, e := s.resolve(op.Path)
	if e != nil {
		return e
	}
	if op.Op == "add" && (!op.HasValue || op.Value == nil) {
		return invalidValue("add on %q needs a value.", Echo(op.Path))
	}
	value := op.Value
	if op.Op == "remove" && op.HasValue && value == nil {
		// A remove that gives a value lists the values to remove; null lists none. Only a
		// remove without a value removes every value (RFC 7644 section 3.5.2.2).
		value = []any{}
	}
	return s.applyTarget(res, op.Op, t, value)
}

// applyObject applies the attributes of a path-less value (or of an extension object)
// one by one, each key being a path: "displayName", "name.givenName", a URN-prefixed
// attribute, or an extension URN whose value is an object of its attributes. Keys apply
// in their order ignoring case, so that the outcome does not depend on the order a map
// happens to give: a whole attribute ("name", "emails", an extension URN) applies before
// the keys that name parts of it ("name.givenName", "emails[type eq \"work\"].value").
func (s ResourceSchema) applyObject(res map[string]any, op, prefix string, obj map[string]any) *Error {
	keys := slices.SortedFunc(maps.Keys(obj), func(a, b string) int {
		return cmp.Or(strings.Compare(strings.ToLower(a), strings.ToLower(b)), strings.Compare(a, b))
	})
	for _, k := range keys {
		v := obj[k]
		key := k
		if prefix != "" {
			key = prefix + ":" + k
		}
		if prefix == "" {
			switch lk := strings.ToLower(k); {
			case lk == "schemas":
				continue
			case lk == strings.ToLower(s.Core.ID):
				m, ok := v.(map[string]any)
				if !ok {
					return invalidValue("%s must be an object of its attributes.", Echo(k))
				}
				if e := s.applyObject(res, op, "", m); e != nil {
					return e
				}
				continue
			case lk == "id" || lk == "meta":
				if lk == "id" && v == res["id"] {
					continue // Okta repeats the id in its path-less replace
				}
				return mutabilityError("%s is read-only: the service maintains it.", Echo(k))
			}
		}
		t, e := s.resolve(key)
		if e != nil {
			return e
		}
		if t.whole {
			m, ok := v.(map[string]any)
			if !ok && v != nil {
				return invalidValue("%s must be an object of its attributes.", t.ext)
			}
			if v == nil {
				if op == "add" {
					continue
				}
				delete(res, t.ext)
				continue
			}
			if e := s.applyObject(res, op, t.ext, m); e != nil {
				return e
			}
			continue
		}
		if op == "add" && v == nil {
			continue // adding nothing to an attribute leaves it as it is
		}
		if e := s.applyTarget(res, op, t, v); e != nil {
			return e
		}
	}
	return nil
}

// holder returns the object holding t's attribute: res, or its extension's object,
// created when create is set (nil otherwise when absent).
func holder(res map[string]any, t patchTarget, create bool) map[string]any {
	if t.ext == "" {
		return res
	}
	k, ok := AttributeKey(res, t.ext)
	if ok {
		if m, ok := res[k].(map[string]any); ok {
			return m
		}
	}
	if !create {
		return nil
	}
	m := map[string]any{}
	if ok {
		delete(res, k)
	}
	res[t.ext] = m
	return m
}

// canonicalKeys renames the keys of m that name attributes of attr (in any case) to their
// schema names, so that later operations find them.
func canonicalKeys(m map[string]any, attrs Attributes) {
	for k, v := range m {
		if a, ok := attrs.Find(k); ok && a.Name != k {
			delete(m, k)
			m[a.Name] = v
		}
	}
}

func (s ResourceSchema) applyTarget(res map[string]any, op string, t patchTarget, value any) *Error {
	if t.whole {
		if op == "remove" || (op == "replace" && value == nil) {
			if k, ok := AttributeKey(res, t.ext); ok {
				delete(res, k)
			}
			return nil
		}
		if value == nil {
			return nil
		}
		m, ok := value.(map[string]any)
		if !ok {
			return invalidValue("%s must be an object of its attributes.", t.ext)
		}
		// The attributes given replace or add to the extension's, those not given stay
		// (RFC 7644 section 3.5.2.3, the extension being a complex value of the resource).
		return s.applyObject(res, op, t.ext, m)
	}
	if op == "replace" && value == nil {
		op = "remove" // RFC 7643 section 2.5: null is unassigned
	}
	h := holder(res, t, op != "remove")
	if h == nil {
		return nil // removing from an absent extension: nothing is there
	}
	name := t.attr.Name
	if k, ok := AttributeKey(h, name); ok && k != name {
		h[name] = h[k]
		delete(h, k)
	}
	cur, exists := h[name]
	if cur == nil {
		exists = false
	}
	if t.attr.MultiValued {
		return applyMulti(h, op, t, value, cur, exists)
	}
	switch {
	case op == "remove" && t.sub == "":
		delete(h, name)
	case op == "remove":
		if m, ok := cur.(map[string]any); ok {
			canonicalKeys(m, t.attr.Sub)
			delete(m, t.sub)
			if len(m) == 0 {
				delete(h, name)
			}
		}
	case t.sub != "":
		m, ok := cur.(map[string]any)
		if !ok {
			m = map[string]any{}
		}
		canonicalKeys(m, t.attr.Sub)
		m[t.sub] = value
		h[name] = m
	case len(t.attr.Sub) > 0:
		// A complex attribute: the sub-attributes given replace or add to the current
		// ones, those not given stay (RFC 7644 sections 3.5.2.1 and 3.5.2.3).
		in, ok := value.(map[string]any)
		if !ok {
			return invalidValue("%s must be an object of its sub-attributes.", name)
		}
		m, ok := cur.(map[string]any)
		if !ok {
			m = map[string]any{}
		}
		canonicalKeys(m, t.attr.Sub)
		for k, v := range in {
			sa, ok := t.attr.Sub.Find(k)
			if !ok {
				return invalidPath("%s has no sub-attribute %s.", name, Echo(k))
			}
			if v == nil {
				delete(m, sa.Name)
				continue
			}
			m[sa.Name] = v
		}
		if len(m) == 0 {
			delete(h, name)
			return nil
		}
		h[name] = m
	default:
		h[name] = value
	}
	return nil
}

// applyMulti applies an operation to a multi-valued attribute, then makes the values the
// operation set primary the only primary ones (RFC 7644 section 3.5.2: setting a value's
// primary to true sets it to false on the others).
func applyMulti(h map[string]any, op string, t patchTarget, value any, cur any, exists bool) *Error {
	name := t.attr.Name
	list, _ := cur.([]any)
	if exists && list == nil {
		list = []any{cur}
	}
	subs := t.attr.Sub
	for _, el := range list {
		if m, ok := el.(map[string]any); ok {
			canonicalKeys(m, subs)
		}
	}
	wasPrimary := map[uintptr]bool{}
	for _, el := range list {
		if m, ok := el.(map[string]any); ok && m["primary"] == true {
			wasPrimary[reflect.ValueOf(m).Pointer()] = true
		}
	}
	if e := applyValues(h, op, t, value, list); e != nil {
		return e
	}
	after, _ := h[name].([]any)
	var fresh []map[string]any
	primaries := 0
	for _, el := range after {
		if m, ok := el.(map[string]any); ok && m["primary"] == true {
			primaries++
			if !wasPrimary[reflect.ValueOf(m).Pointer()] {
				fresh = append(fresh, m)
			}
		}
	}
	if primaries > 1 && len(fresh) == 1 {
		for _, el := range after {
			if m, ok := el.(map[string]any); ok && m["primary"] == true &&
				reflect.ValueOf(m).Pointer() != reflect.ValueOf(fresh[0]).Pointer() {
				m["primary"] = false
			}
		}
	}
	return nil
}

func applyValues(h map[string]any, op string, t patchTarget, value any, list []any) *Error {
	name := t.attr.Name
	subs := t.attr.Sub
	set := func(l []any) {
		if len(l) == 0 {
			delete(h, name)
			return
		}
		h[name] = l
	}
	if t.filter == nil && t.sub == "" {
		values := asList(value)
		for i, v := range values {
			cv, e := canonicalValue(v, name, subs)
			if e != nil {
				return e
			}
			values[i] = cv
		}
		switch op {
		case "remove":
			if value == nil {
				// No value: the attribute and all its values are removed (RFC 7644
				// section 3.5.2.2).
				delete(h, name)
				return nil
			}
			// A remove with values takes those values out, as Entra ID removes members;
			// an empty list names none and removes nothing.
			out := list[:0:0]
			for _, el := range list {
				if !slices.ContainsFunc(values, func(v any) bool { return sameValue(v, el, subs) }) {
					out = append(out, el)
				}
			}
			if len(out) < len(list) {
				set(out)
			}
			return nil
		case "replace":
			set(values)
			return nil
		default:
			set(addValues(list, values, subs))
			return nil
		}
	}
	var matched []int
	for i, el := range list {
		m, ok := el.(map[string]any)
		if !ok {
			continue
		}
		if t.filter == nil || matches(t.filter, m, subs) {
			matched = append(matched, i)
		}
	}
	if len(matched) == 0 {
		switch {
		case op == "remove":
			return nil
		case op == "replace" && t.filter != nil:
			return noTarget("No value of %s matches the filter of %q.", name, Echo(t.text))
		}
		// add on a filtered path with no match creates the value the filter describes;
		// so does a replace of a sub-attribute of an attribute without values, which RFC
		// 7644 section 3.5.2.3 treats as an add.
		el := map[string]any{}
		if t.filter != nil {
			if !equalities(t.filter, el, subs) {
				return noTarget("No value of %s matches the filter of %q, and the filter does not describe a value to create (it must combine eq terms with and).", name, Echo(t.text))
			}
		}
		if e := setElement(el, t, value); e != nil {
			return e
		}
		// The value created is added as a path-less add would add it: to a value that is
		// the same, if there is one.
		set(addValues(list, []any{el}, subs))
		return nil
	}
	switch op {
	case "remove":
		if t.sub == "" {
			drop := map[int]bool{}
			for _, i := range matched {
				drop[i] = true
			}
			out := list[:0:0]
			for i, el := range list {
				if !drop[i] {
					out = append(out, el)
				}
			}
			set(out)
			return nil
		}
		for _, i := range matched {
			m := list[i].(map[string]any)
			delete(m, t.sub)
		}
		out := list[:0:0]
		for _, el := range list {
			if m, ok := el.(map[string]any); !ok || len(m) > 0 {
				out = append(out, el)
			}
		}
		set(out)
		return nil
	case "replace":
		if t.sub != "" {
			for _, i := range matched {
				list[i].(map[string]any)[t.sub] = value
			}
			break
		}
		cv, e := canonicalValue(value, name, subs)
		if e != nil {
			return e
		}
		m, ok := cv.(map[string]any)
		if !ok {
			return invalidValue("The values of %s are objects; the value must be one.", name)
		}
		// The values the filter matched are replaced by the one value given: in place of
		// the first, the others removed (see the package documentation).
		out := list[:0:0]
		for i, el := range list {
			switch {
			case i == matched[0]:
				out = append(out, m)
			case !slices.Contains(matched, i):
				out = append(out, el)
			}
		}
		list = out
	default:
		for _, i := range matched {
			if e := setElement(list[i].(map[string]any), t, value); e != nil {
				return e
			}
		}
	}
	set(list)
	return nil
}

// addValues adds values to list (RFC 7644 section 3.5.2.1). A value equal to one of list
// (sameValue) is not added again: the sub-attributes it gives are set on that one, which
// leaves it as it was when they are the same.
func addValues(list, values []any, subs Attributes) []any {
	for _, v := range values {
		i := slices.IndexFunc(list, func(el any) bool { return sameValue(v, el, subs) })
		if i < 0 {
			list = append(list, v)
			continue
		}
		in, ok := v.(map[string]any)
		el, isMap := list[i].(map[string]any)
		if ok && isMap {
			for k, x := range in {
				sa, known := subs.Find(k)
				if y, there := el[k]; there && known && equalJSON(x, y, sa.CaseExact) {
					continue // the value as stored is kept: n1@x and N1@X are one address
				}
				el[k] = x
			}
		}
	}
	return list
}

// sameValue reports whether the value v, given in a PATCH, denotes the value el of a
// multi-valued attribute of sub-attributes subs. Values with a "value" sub-attribute are
// the same when their values are equal and, if both have a type, their types are: one
// e-mail address may be both work and home (RFC 7643 section 2.4), and a group member
// sent without a type is the member already there. Other values are the same when all
// their sub-attributes are. Strings compare ignoring case unless the sub-attribute is
// caseExact, names always ignoring case (RFC 7643 section 2.1).
func sameValue(v, el any, subs Attributes) bool {
	a, aok := v.(map[string]any)
	b, bok := el.(map[string]any)
	if !aok || !bok {
		return equalJSON(v, el, false)
	}
	get := func(m map[string]any, name string) (any, bool) {
		k, ok := AttributeKey(m, name)
		if !ok || m[k] == nil {
			return nil, false
		}
		return m[k], true
	}
	caseExact := func(name string) bool {
		sa, ok := subs.Find(name)
		return ok && sa.CaseExact
	}
	if _, hasValue := subs.Find("value"); hasValue {
		av, aok := get(a, "value")
		bv, bok := get(b, "value")
		if aok && bok {
			if !equalJSON(av, bv, caseExact("value")) {
				return false
			}
			at, aok := get(a, "type")
			bt, bok := get(b, "type")
			return !aok || !bok || equalJSON(at, bt, caseExact("type"))
		}
	}
	count := func(m map[string]any) int {
		n := 0
		for _, x := range m {
			if x != nil {
				n++
			}
		}
		return n
	}
	if count(a) != count(b) {
		return false
	}
	for k, x := range a {
		if x == nil {
			continue
		}
		y, ok := get(b, k)
		if !ok || !equalJSON(x, y, caseExact(k)) {
			return false
		}
	}
	return true
}

// equalJSON compares two JSON values, strings ignoring case unless caseExact.
func equalJSON(a, b any, caseExact bool) bool {
	as, aok := a.(string)
	bs, bok := b.(string)
	if aok && bok {
		return as == bs || (!caseExact && strings.EqualFold(as, bs))
	}
	if reflect.DeepEqual(a, b) {
		return true
	}
	return isNumber(a) && isNumber(b) && fmt.Sprint(a) == fmt.Sprint(b)
}

// isNumber reports whether v is a JSON number as decoding or a store may give it.
func isNumber(v any) bool {
	switch v.(type) {
	case json.Number, float64, float32, int, int64, int32:
		return true
	}
	return false
}

// canonicalValue returns v with the keys that name sub-attributes of subs, in any case,
// renamed to their schema names; a key that names none is a 400 invalidPath, as the
// value could not be stored as given.
func canonicalValue(v any, name string, subs Attributes) (any, *Error) {
	if m, ok := v.(map[string]any); ok {
		for k := range m {
			if _, ok := subs.Find(k); !ok {
				return nil, invalidPath("%s has no sub-attribute %s.", name, Echo(k))
			}
		}
		canonicalKeys(m, subs)
	}
	return v, nil
}

// setElement sets the target's sub-attribute of el to value, or merges an object value
// into el.
func setElement(el map[string]any, t patchTarget, value any) *Error {
	if t.sub != "" {
		el[t.sub] = value
		return nil
	}
	m, ok := value.(map[string]any)
	if !ok {
		return invalidValue("The values of %s are objects; the value must be one.", t.attr.Name)
	}
	for k, v := range m {
		sa, ok := t.attr.Sub.Find(k)
		if !ok {
			return invalidPath("%s has no sub-attribute %s.", t.attr.Name, Echo(k))
		}
		el[sa.Name] = v
	}
	return nil
}

func asList(v any) []any {
	switch v := v.(type) {
	case nil:
		return nil
	case []any:
		return v
	}
	return []any{v}
}

// matches evaluates a value filter on one value of a multi-valued attribute.
func matches(e filter.Expression, el map[string]any, subs Attributes) bool {
	switch e := e.(type) {
	case *filter.LogicalExpression:
		if e.Operator == filter.AND {
			return matches(e.Left, el, subs) && matches(e.Right, el, subs)
		}
		return matches(e.Left, el, subs) || matches(e.Right, el, subs)
	case *filter.NotExpression:
		return !matches(e.Expression, el, subs)
	case *filter.AttributeExpression:
		name := e.AttributePath.AttributeName
		caseExact := false
		if sa, ok := subs.Find(name); ok {
			name, caseExact = sa.Name, sa.CaseExact
		}
		k, present := AttributeKey(el, name)
		v := el[k]
		return compare(e.Operator, v, present && v != nil, e.CompareValue, caseExact)
	}
	return false
}

// compare applies a filter operator (RFC 7644 section 3.4.2.2) to a value.
func compare(op filter.CompareOperator, v any, present bool, want any, caseExact bool) bool {
	if op == filter.PR {
		return present
	}
	if !present {
		return false
	}
	if b, ok := v.(bool); ok {
		w, ok := want.(bool)
		switch op {
		case filter.EQ:
			return ok && b == w
		case filter.NE:
			return !ok || b != w
		}
		return false
	}
	a, b := fmt.Sprint(v), fmt.Sprint(want)
	if !caseExact {
		a, b = strings.ToLower(a), strings.ToLower(b)
	}
	switch op {
	case filter.EQ:
		return a == b
	case filter.NE:
		return a != b
	case filter.CO:
		return strings.Contains(a, b)
	case filter.SW:
		return strings.HasPrefix(a, b)
	case filter.EW:
		return strings.HasSuffix(a, b)
	case filter.GT:
		return a > b
	case filter.GE:
		return a >= b
	case filter.LT:
		return a < b
	case filter.LE:
		return a <= b
	}
	return false
}

// equalities fills el with the attribute values a filter of eq terms joined by and
// requires, and reports whether the filter is of that form.
func equalities(e filter.Expression, el map[string]any, subs Attributes) bool {
	switch e := e.(type) {
	case *filter.LogicalExpression:
		return e.Operator == filter.AND && equalities(e.Left, el, subs) && equalities(e.Right, el, subs)
	case *filter.AttributeExpression:
		if e.Operator != filter.EQ || e.AttributePath.SubAttribute != nil {
			return false
		}
		sa, ok := subs.Find(e.AttributePath.AttributeName)
		if !ok {
			return false
		}
		el[sa.Name] = e.CompareValue
		return true
	}
	return false
}

// MatchesFilter reports whether el, one value of a multi-valued attribute whose
// sub-attributes are subs, matches the value filter e (RFC 7644 section 3.4.2.2). Strings
// compare ignoring case unless their sub-attribute is caseExact.
func MatchesFilter(e filter.Expression, el map[string]any, subs Attributes) bool {
	return matches(e, el, subs)
}
