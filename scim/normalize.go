package scim

import (
	"encoding/json"
	"fmt"
	"net/mail"
	"strings"
	"unicode"
	"unicode/utf8"
)

// The functions below check and normalise SCIM resource objects as decoded from JSON
// (map[string]any, numbers as json.Number), before and after PATCH operations apply; their
// errors are 400 Errors worded for the client.

// ContainsFold reports whether list holds the string want, ignoring case (as schemas
// lists are compared).
func ContainsFold(list []any, want string) bool {
	for _, v := range list {
		if s, ok := v.(string); ok && strings.EqualFold(s, want) {
			return true
		}
	}
	return false
}

// AttributeKey returns the key of m equal to name ignoring case: SCIM attribute names are
// case-insensitive (RFC 7643 section 2.1).
func AttributeKey(m map[string]any, name string) (string, bool) {
	if _, ok := m[name]; ok {
		return name, true
	}
	for k := range m {
		if strings.EqualFold(k, name) {
			return k, true
		}
	}
	return "", false
}

// extensionAttrs are the attributes of the vendor extension, in canonical case.
var extensionAttrs = []string{"role", "sendEmailOnInvitation"}

func canonicalExtAttr(name string) string {
	for _, a := range extensionAttrs {
		if strings.EqualFold(a, name) {
			return a
		}
	}
	return name
}

// NormalizeUser gathers the extension's attributes into its object (the nested object,
// then "URN:attr" keys, then top-level role and sendEmailOnInvitation, later ones winning),
// checks them and turns boolean strings into booleans. It also requires userName.
func NormalizeUser(m map[string]any) *Error {
	ext := map[string]any{}
	lowerURN := strings.ToLower(ExtensionSchema)
	if k, ok := AttributeKey(m, ExtensionSchema); ok {
		switch v := m[k].(type) {
		case map[string]any:
			for ek, ev := range v {
				ext[canonicalExtAttr(ek)] = ev
			}
		case nil:
		default:
			e := badValue("%s must be a JSON object.", ExtensionSchema)
			return &e
		}
		delete(m, k)
	}
	for k, v := range m {
		if rest, ok := strings.CutPrefix(strings.ToLower(k), lowerURN+":"); ok {
			ext[canonicalExtAttr(rest)] = v
			delete(m, k)
		}
	}
	for _, a := range extensionAttrs {
		if k, ok := AttributeKey(m, a); ok {
			ext[a] = m[k]
			delete(m, k)
		}
	}
	if v, ok := ext["role"]; ok {
		role, e := RoleOf(v)
		if e != nil {
			return e
		}
		if role == "" {
			delete(ext, "role")
		} else {
			ext["role"] = string(role)
		}
	}
	if e := boolValue(ext, "sendEmailOnInvitation"); e != nil {
		return e
	}
	if len(ext) > 0 {
		m[ExtensionSchema] = ext
	}
	if e := normalizeEnterprise(m); e != nil {
		return e
	}
	if e := boolValue(m, "active"); e != nil {
		return e
	}
	k, ok := AttributeKey(m, "userName")
	if !ok || m[k] == nil {
		e := badValue("userName is required.")
		return &e
	}
	if _, ok := m[k].(string); !ok {
		e := badValue("userName must be a string.")
		return &e
	}
	return nil
}

// normalizeEnterprise gathers the enterprise extension's "URN:attr" keys (as PATCH leaves
// them) into its object, turns a manager given as a bare id, as Entra ID sends it, into
// {"value": id}, and drops a manager whose id is empty: Entra ID clears a user's manager
// by sending one, and an empty id refers to no user.
func normalizeEnterprise(m map[string]any) *Error {
	ext := map[string]any{}
	if k, ok := AttributeKey(m, EnterpriseSchema); ok {
		switch v := m[k].(type) {
		case map[string]any:
			ext = v
		case nil:
		default:
			e := badValue("%s must be a JSON object.", EnterpriseSchema)
			return &e
		}
		delete(m, k)
	}
	prefix := strings.ToLower(EnterpriseSchema) + ":"
	for k, v := range m {
		if rest, ok := strings.CutPrefix(strings.ToLower(k), prefix); ok {
			ext[k[len(prefix):len(prefix)+len(rest)]] = v
			delete(m, k)
		}
	}
	managerObject(ext, "manager")
	if k, ok := AttributeKey(ext, "manager"); ok {
		if mgr, ok := ext[k].(map[string]any); ok {
			if vk, ok := AttributeKey(mgr, "value"); ok && mgr[vk] == "" {
				delete(ext, k)
			}
		}
	}
	if len(ext) > 0 {
		m[EnterpriseSchema] = ext
	}
	return nil
}

// managerObject turns the enterprise manager at key name of m (in any case), when it is
// given as a bare id as Entra ID sends it, into {"value": id}.
func managerObject(m map[string]any, name string) {
	if k, ok := AttributeKey(m, name); ok {
		if id, ok := m[k].(string); ok {
			m[k] = map[string]any{"value": id}
		}
	}
}

// RoleOf checks the JSON value of a role attribute; null gives "".
func RoleOf(v any) (Role, *Error) {
	if v == nil {
		return "", nil
	}
	s, ok := v.(string)
	role, valid := ParseRole(s)
	if !ok || !valid {
		e := badValue("role must be one of MEMBER, ANALYST or ADMIN, not %s.", jsonText(v))
		return "", &e
	}
	return role, nil
}

// boolValue turns the attribute name of m (any case) into a boolean when it is the string
// "true" or "false" (any case), drops it when null, and rejects other values.
func boolValue(m map[string]any, name string) *Error {
	k, ok := AttributeKey(m, name)
	if !ok {
		return nil
	}
	switch v := m[k].(type) {
	case bool:
	case nil:
		delete(m, k)
	case string:
		switch {
		case strings.EqualFold(v, "true"):
			m[k] = true
		case strings.EqualFold(v, "false"):
			m[k] = false
		default:
			e := badValue("%s must be true or false, not %s.", name, jsonText(v))
			return &e
		}
	default:
		e := badValue("%s must be true or false, not %s.", name, jsonText(v))
		return &e
	}
	return nil
}

// jsonText returns v in JSON, as an error quotes a value of the request (Echo).
func jsonText(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return "an unsupported value"
	}
	return fmt.Sprint(Echo(b)) // a value of the request
}

// CheckUserName enforces the rules on userName: an e-mail address of at most
// MaxUserNameLength characters.
func CheckUserName(s string) *Error {
	var e Error
	switch {
	case strings.TrimSpace(s) == "":
		e = badValue("userName must not be empty.")
	case utf8.RuneCountInString(s) > MaxUserNameLength:
		e = badValue("userName must be at most %d characters long; it has %d.", MaxUserNameLength, utf8.RuneCountInString(s))
	case !emailShaped(s):
		e = badValue("userName must be an e-mail address such as name@example.com, not %q.", Echo(s))
	default:
		return nil
	}
	return &e
}

func emailShaped(s string) bool {
	if strings.ContainsFunc(s, unicode.IsSpace) {
		return false
	}
	local, domain, ok := strings.Cut(s, "@")
	if !ok || local == "" || strings.Contains(domain, "@") {
		return false
	}
	if i := strings.LastIndexByte(domain, '.'); i <= 0 || i == len(domain)-1 {
		return false
	}
	a, err := mail.ParseAddress(s)
	return err == nil && a.Address == s
}

// CheckGroup checks the attributes of a group object whose rules its schema does not
// state (displayName, role and members) and puts role in canonical case.
func CheckGroup(m map[string]any) *Error {
	k, ok := AttributeKey(m, "displayName")
	if !ok || m[k] == nil {
		e := badValue("displayName is required.")
		return &e
	}
	if s, ok := m[k].(string); !ok || strings.TrimSpace(s) == "" {
		e := badValue("displayName must be a non-empty string.")
		return &e
	}
	if k, ok := AttributeKey(m, "role"); ok {
		role, e := RoleOf(m[k])
		if e != nil {
			return e
		}
		delete(m, k)
		if role != "" {
			m["role"] = string(role)
		}
	}
	if k, ok := AttributeKey(m, "members"); ok && m[k] != nil {
		list, ok := m[k].([]any)
		if !ok {
			e := badValue("members must be an array.")
			return &e
		}
		for i, v := range list {
			if e := CheckMemberObject(i, v); e != nil {
				return e
			}
		}
	}
	return nil
}

// CheckMemberObject checks members[i] of a group object: an object whose value is a
// user id and whose type, if any, is User.
func CheckMemberObject(i int, v any) *Error {
	mm, ok := v.(map[string]any)
	if !ok {
		e := badValue("members[%d] must be an object with a value.", i)
		return &e
	}
	vk, ok := AttributeKey(mm, "value")
	if s, isString := mm[vk].(string); !ok || !isString || s == "" {
		e := badValue("members[%d].value must be the id of a user.", i)
		return &e
	}
	if tk, ok := AttributeKey(mm, "type"); ok && mm[tk] != nil {
		if t, _ := mm[tk].(string); !strings.EqualFold(t, "User") {
			e := badValue("members[%d] is of type %s: only users can be members of a group.", i, jsonText(mm[tk]))
			return &e
		}
	}
	return nil
}

// NormalizePatch checks the PatchOp message and, for users, rewrites role and
// sendEmailOnInvitation paths and keys to the extension, boolean strings to booleans, and
// an enterprise manager given as a bare id, by path or by key, to {"value": id}.
func NormalizePatch(m map[string]any, user bool) *Error {
	schemas, _ := m["schemas"].([]any)
	if !ContainsFold(schemas, PatchOpSchema) {
		e := apiError(StatusBadRequest, TypeInvalidSyntax, "schemas must contain %s.", PatchOpSchema)
		return &e
	}
	k, _ := AttributeKey(m, "Operations")
	ops, ok := m[k].([]any)
	if !ok || len(ops) == 0 {
		e := badValue("Operations must be a non-empty array of PATCH operations.")
		return &e
	}
	for i, o := range ops {
		op, ok := o.(map[string]any)
		if !ok {
			e := badValue("Operations[%d] must be an object.", i)
			return &e
		}
		ok2, _ := AttributeKey(op, "op")
		name, _ := op[ok2].(string)
		switch strings.ToLower(name) {
		case "add", "remove", "replace":
		default:
			e := badValue("Operations[%d].op must be add, remove or replace, not %s.", i, jsonText(op[ok2]))
			return &e
		}
		if !user {
			continue
		}
		pk, hasPath := AttributeKey(op, "path")
		vk, hasValue := AttributeKey(op, "value")
		path, _ := op[pk].(string)
		if hasPath && path != "" {
			if strings.EqualFold(path, EnterpriseSchema+":manager") {
				managerObject(op, vk)
			}
			if value, ok := op[vk].(map[string]any); ok && strings.EqualFold(path, EnterpriseSchema) {
				managerObject(value, "manager")
			}
			if isExtAttr(path) {
				path = ExtensionSchema + ":" + canonicalExtAttr(path)
				op[pk] = path
			}
			if hasValue {
				attr := strings.ToLower(path[strings.LastIndexByte(path, ':')+1:])
				if attr == "active" || attr == "sendemailoninvitation" {
					wrap := map[string]any{attr: op[vk]}
					if e := boolValue(wrap, attr); e != nil {
						return e
					}
					op[vk] = wrap[attr]
				}
			}
			continue
		}
		if value, ok := op[vk].(map[string]any); ok && hasValue {
			managerObject(value, EnterpriseSchema+":manager")
			if k, ok := AttributeKey(value, EnterpriseSchema); ok {
				if ext, ok := value[k].(map[string]any); ok {
					managerObject(ext, "manager")
				}
			}
			if e := boolValue(value, "active"); e != nil {
				return e
			}
			if e := boolValue(value, "sendEmailOnInvitation"); e != nil {
				return e
			}
			for _, a := range extensionAttrs {
				if k, ok := AttributeKey(value, a); ok {
					value[ExtensionSchema+":"+a] = value[k]
					delete(value, k)
				}
			}
		}
	}
	return nil
}

// isExtAttr reports whether path is one of the extension's attributes without its URN.
func isExtAttr(path string) bool {
	for _, a := range extensionAttrs {
		if strings.EqualFold(a, path) {
			return true
		}
	}
	return false
}
