package scim

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	elimity "github.com/elimity-com/scim"
	scimerrors "github.com/elimity-com/scim/errors"
	"github.com/elimity-com/scim/optional"
	"github.com/elimity-com/scim/schema"
	"github.com/scim2/filter-parser/v2"
)

// maxRetries bounds the optimistic retries of a PUT or PATCH without If-Match that races
// with other writes of the same resource.
const maxRetries = 32

// etag is the weak entity tag of a version.
func etag(version int64) string { return `W/"` + strconv.FormatInt(version, 10) + `"` }

// etagMatches reports whether the If-Match or If-None-Match header value matches tag,
// comparing weakly (RFC 9110 section 8.8.3.2).
func etagMatches(header, tag string) bool {
	opaque := func(t string) string { return strings.TrimPrefix(strings.TrimSpace(t), "W/") }
	want := opaque(tag)
	for _, t := range strings.Split(header, ",") {
		t = strings.TrimSpace(t)
		if t == "*" || (t != "" && opaque(t) == want) {
			return true
		}
	}
	return false
}

// update replaces a resource with change(current), retrying when another write slips in
// between, unless the client pinned a version with If-Match.
func update[T any](ifMatch string, version func(T) int64, get func() (T, error),
	change func(T) (T, error), replace func(T, int64) (T, error)) (T, error) {
	var zero T
	for attempt := 0; ; attempt++ {
		cur, err := get()
		if err != nil {
			return zero, err
		}
		if ifMatch != "" && !etagMatches(ifMatch, etag(version(cur))) {
			return zero, Errorf(ErrVersionMismatch, "If-Match %s does not match the current version %s.", ifMatch, etag(version(cur)))
		}
		next, err := change(cur)
		if err != nil {
			return zero, err
		}
		out, err := replace(next, version(cur))
		if errors.Is(err, ErrVersionMismatch) && ifMatch == "" && attempt < maxRetries {
			continue
		}
		if errors.Is(err, ErrVersionMismatch) {
			return zero, Errorf(ErrVersionMismatch, "The resource changed while the request was processed.")
		}
		return out, err
	}
}

// deleteResource deletes with the If-Match precondition checked atomically by the store.
func deleteResource[T any](ifMatch string, version func(T) int64, get func() (T, error), del func(int64) error) error {
	if ifMatch == "" {
		return del(0)
	}
	cur, err := get()
	if err != nil {
		return err
	}
	if !etagMatches(ifMatch, etag(version(cur))) {
		return Errorf(ErrVersionMismatch, "If-Match %s does not match the current version %s.", ifMatch, etag(version(cur)))
	}
	return del(version(cur))
}

// patchError turns an error of the library's ApplyPatch into a client error.
func patchError(err error) error {
	var se scimerrors.ScimError
	if errors.As(err, &se) {
		return se
	}
	var sp *scimerrors.ScimError
	if errors.As(err, &sp) {
		return *sp
	}
	return apiError(http.StatusBadRequest, TypeInvalidPath, "The PATCH operation cannot be applied: %v.", err)
}

type rootKey struct{}

func rootFrom(ctx context.Context) string {
	s, _ := ctx.Value(rootKey{}).(string)
	return s
}

// validateAttrs validates a resource object against a schema and its extensions the way
// the library validates request bodies (externalId included).
func validateAttrs(m map[string]any, s schema.Schema, exts ...schema.Schema) (map[string]any, *scimError) {
	m["schemas"] = []any{s.ID}
	out, e := withExternalID(s).Validate(m)
	if e != nil {
		return nil, e
	}
	for _, ext := range exts {
		k, ok := lookup(m, ext.ID)
		if !ok || m[k] == nil {
			continue
		}
		attrs, e := ext.ValidateExtension(m[k])
		if e != nil {
			return nil, e
		}
		out[ext.ID] = attrs
	}
	return out, nil
}

// withExternalID adds the common attribute externalId to s, as the library does when it
// validates request bodies.
func withExternalID(s schema.Schema) schema.Schema {
	s.Attributes = append(s.Attributes[:len(s.Attributes):len(s.Attributes)],
		schema.SimpleCoreAttribute(schema.SimpleStringParams(schema.StringParams{CaseExact: true, Name: "externalId"})))
	return s
}

// userFields says which of the attributes that a replacement keeps when absent were given.
type userFields struct{ active, role, sendEmail bool }

// userFromAttrs builds a user from validated attributes.
func userFromAttrs(attrs map[string]any) (User, userFields, error) {
	var u User
	var f userFields
	u.Attributes = map[string]any{}
	for k, v := range attrs {
		switch k {
		case "schemas", "id", "meta", "password", "groups":
			// password is write-only and never returned: this service does not keep
			// passwords. groups is read-only.
		case "userName":
			u.UserName, _ = v.(string)
		case "displayName":
			u.DisplayName, _ = v.(string)
		case "externalId":
			u.ExternalID, _ = v.(string)
		case "active":
			u.Active, f.active = v.(bool)
		case ExtensionSchema:
			ext, _ := v.(map[string]any)
			if r, ok := ext["role"].(string); ok {
				u.Role, f.role = Role(r), true
			}
			if s, ok := ext["sendEmailOnInvitation"].(bool); ok {
				u.SendEmailOnInvitation, f.sendEmail = s, true
			}
		default:
			u.Attributes[k] = v
		}
	}
	if e := checkUserName(u.UserName); e != nil {
		return User{}, f, *e
	}
	return u, f, nil
}

// keep fills what a replacement did not give from the current user.
func (f userFields) keep(u *User, cur User) {
	u.ID = cur.ID
	if !f.active {
		u.Active = cur.Active
	}
	if !f.role {
		u.Role = cur.Role
	}
	if !f.sendEmail {
		u.SendEmailOnInvitation = cur.SendEmailOnInvitation
	}
}

// userAttrs is the SCIM representation of u without id, externalId and meta. It takes
// u.Attributes over: u comes from the store, which hands out copies, and is not used again.
func userAttrs(u User) map[string]any {
	m := u.Attributes
	if m == nil {
		m = map[string]any{}
	}
	m["userName"] = u.UserName
	if u.DisplayName != "" {
		m["displayName"] = u.DisplayName
	}
	m["active"] = u.Active
	m[ExtensionSchema] = map[string]any{"role": string(u.Role), "sendEmailOnInvitation": u.SendEmailOnInvitation}
	return m
}

func userResource(u User) elimity.Resource {
	ext := optional.String{}
	if u.ExternalID != "" {
		ext = optional.NewString(u.ExternalID)
	}
	return elimity.Resource{
		ID: u.ID, ExternalID: ext, Attributes: userAttrs(u),
		Meta: elimity.Meta{Created: &u.Created, LastModified: &u.LastModified, Version: etag(u.Version)},
	}
}

// userHandler is the library's resource handler for /Users.
type userHandler struct{ h *Handler }

func (uh userHandler) Create(r *http.Request, attrs elimity.ResourceAttributes) (elimity.Resource, error) {
	u, f, err := userFromAttrs(attrs)
	if err != nil {
		return elimity.Resource{}, err
	}
	if !f.active {
		u.Active = true
	}
	if !f.role {
		u.Role = RoleMember
	}
	ctx, team := r.Context(), teamFrom(r.Context())
	created, err := uh.h.store.CreateUser(ctx, team, u)
	if err != nil {
		return elimity.Resource{}, storeError(uh.h.log, err)
	}
	if created.SendEmailOnInvitation && uh.h.notifier != nil {
		if err := uh.h.notifier.Invite(ctx, team, created.Clone()); err != nil {
			uh.h.log.Error("scim: invitation failed", "team", team, "user", created.ID, "error", err)
		}
	}
	return userResource(created), nil
}

func (uh userHandler) Get(r *http.Request, id string) (elimity.Resource, error) {
	u, err := uh.h.store.GetUser(r.Context(), teamFrom(r.Context()), id)
	if err != nil {
		return elimity.Resource{}, storeError(uh.h.log, err)
	}
	return userResource(u), nil
}

func (uh userHandler) GetAll(r *http.Request, params elimity.ListRequestParams) (elimity.Page, error) {
	q, err := listQuery(r, "User", params.StartIndex, params.Count)
	if err != nil {
		return elimity.Page{}, err
	}
	users, total, err := uh.h.store.ListUsers(r.Context(), teamFrom(r.Context()), q)
	if err != nil {
		return elimity.Page{}, storeError(uh.h.log, err)
	}
	setPageLen(r.Context(), len(users))
	page := elimity.Page{TotalResults: total, Resources: make([]elimity.Resource, len(users))}
	for i, u := range users {
		page.Resources[i] = userResource(u)
	}
	return page, nil
}

func (uh userHandler) store(r *http.Request) (context.Context, string, Store) {
	return r.Context(), teamFrom(r.Context()), uh.h.store
}

func userVersion(u User) int64 { return u.Version }

func (uh userHandler) Replace(r *http.Request, id string, attrs elimity.ResourceAttributes) (elimity.Resource, error) {
	u, f, err := userFromAttrs(attrs)
	if err != nil {
		return elimity.Resource{}, err
	}
	ctx, team, st := uh.store(r)
	out, err := update(r.Header.Get("If-Match"), userVersion,
		func() (User, error) { return st.GetUser(ctx, team, id) },
		func(cur User) (User, error) {
			next := u.Clone()
			f.keep(&next, cur)
			return next, nil
		},
		func(next User, v int64) (User, error) { return st.ReplaceUser(ctx, team, next, v) })
	if err != nil {
		return elimity.Resource{}, storeError(uh.h.log, err)
	}
	return userResource(out), nil
}

func (uh userHandler) Patch(r *http.Request, id string, ops []elimity.PatchOperation) (elimity.Resource, error) {
	ctx, team, st := uh.store(r)
	out, err := update(r.Header.Get("If-Match"), userVersion,
		func() (User, error) { return st.GetUser(ctx, team, id) },
		func(cur User) (User, error) {
			attrs := userAttrs(cur)
			if cur.ExternalID != "" {
				attrs["externalId"] = cur.ExternalID
			}
			patched, err := elimity.ApplyPatch(attrs, ops, withExternalID(userSchema()), userExtensions()...)
			if err != nil {
				return User{}, patchError(err)
			}
			if e := normalizeUser(patched); e != nil {
				return User{}, *e
			}
			valid, e := validateAttrs(patched, userSchema(), userExtensions()...)
			if e != nil {
				return User{}, *e
			}
			next, f, err := userFromAttrs(valid)
			if err != nil {
				return User{}, err
			}
			f.keep(&next, cur)
			return next, nil
		},
		func(next User, v int64) (User, error) { return st.ReplaceUser(ctx, team, next, v) })
	if err != nil {
		return elimity.Resource{}, storeError(uh.h.log, err)
	}
	return userResource(out), nil
}

func (uh userHandler) Delete(r *http.Request, id string) error {
	ctx, team, st := uh.store(r)
	err := deleteResource(r.Header.Get("If-Match"), userVersion,
		func() (User, error) { return st.GetUser(ctx, team, id) },
		func(v int64) error { return st.DeleteUser(ctx, team, id, v) })
	if err != nil {
		return storeError(uh.h.log, err)
	}
	return nil
}

// groupFromAttrs builds a group from validated attributes.
func groupFromAttrs(attrs map[string]any) (Group, error) {
	var g Group
	g.DisplayName, _ = attrs["displayName"].(string)
	if strings.TrimSpace(g.DisplayName) == "" {
		return Group{}, badValue("displayName must be a non-empty string.")
	}
	g.ExternalID, _ = attrs["externalId"].(string)
	if r, ok := attrs["role"].(string); ok {
		role, e := roleValue(r)
		if e != nil {
			return Group{}, *e
		}
		g.Role = role
	}
	list, _ := attrs["members"].([]any)
	g.Members = make([]Member, 0, len(list))
	for i, v := range list {
		if e := checkMember(i, v); e != nil {
			return Group{}, *e
		}
		m := v.(map[string]any)
		k, _ := lookup(m, "value")
		g.Members = append(g.Members, Member{Value: m[k].(string)})
	}
	return g, nil
}

// groupAttrs is the SCIM representation of g without id, externalId and meta.
func groupAttrs(g Group, root string) map[string]any {
	m := map[string]any{"displayName": g.DisplayName}
	if g.Role != "" {
		m["role"] = string(g.Role)
	}
	members := make([]any, len(g.Members))
	for i, mb := range g.Members {
		members[i] = map[string]any{
			"value":   mb.Value,
			"display": mb.Display,
			"type":    "User",
			"$ref":    root + "/Users/" + url.PathEscape(mb.Value),
		}
	}
	m["members"] = members
	return m
}

func groupResource(g Group, root string) elimity.Resource {
	ext := optional.String{}
	if g.ExternalID != "" {
		ext = optional.NewString(g.ExternalID)
	}
	return elimity.Resource{
		ID: g.ID, ExternalID: ext, Attributes: groupAttrs(g, root),
		Meta: elimity.Meta{Created: &g.Created, LastModified: &g.LastModified, Version: etag(g.Version)},
	}
}

// groupHandler is the library's resource handler for /Groups.
type groupHandler struct{ h *Handler }

func groupVersion(g Group) int64 { return g.Version }

func (gh groupHandler) store(r *http.Request) (context.Context, string, Store) {
	return r.Context(), teamFrom(r.Context()), gh.h.store
}

func (gh groupHandler) Create(r *http.Request, attrs elimity.ResourceAttributes) (elimity.Resource, error) {
	g, err := groupFromAttrs(attrs)
	if err != nil {
		return elimity.Resource{}, err
	}
	ctx, team, st := gh.store(r)
	created, err := st.CreateGroup(ctx, team, g)
	if err != nil {
		return elimity.Resource{}, storeError(gh.h.log, err)
	}
	return groupResource(created, rootFrom(ctx)), nil
}

func (gh groupHandler) Get(r *http.Request, id string) (elimity.Resource, error) {
	ctx, team, st := gh.store(r)
	g, err := st.GetGroup(ctx, team, id)
	if err != nil {
		return elimity.Resource{}, storeError(gh.h.log, err)
	}
	return groupResource(g, rootFrom(ctx)), nil
}

func (gh groupHandler) GetAll(r *http.Request, params elimity.ListRequestParams) (elimity.Page, error) {
	q, err := listQuery(r, "Group", params.StartIndex, params.Count)
	if err != nil {
		return elimity.Page{}, err
	}
	ctx, team, st := gh.store(r)
	groups, total, err := st.ListGroups(ctx, team, q)
	if err != nil {
		return elimity.Page{}, storeError(gh.h.log, err)
	}
	setPageLen(ctx, len(groups))
	page := elimity.Page{TotalResults: total, Resources: make([]elimity.Resource, len(groups))}
	for i, g := range groups {
		page.Resources[i] = groupResource(g, rootFrom(ctx))
	}
	return page, nil
}

func (gh groupHandler) Replace(r *http.Request, id string, attrs elimity.ResourceAttributes) (elimity.Resource, error) {
	g, err := groupFromAttrs(attrs)
	if err != nil {
		return elimity.Resource{}, err
	}
	ctx, team, st := gh.store(r)
	out, err := update(r.Header.Get("If-Match"), groupVersion,
		func() (Group, error) { return st.GetGroup(ctx, team, id) },
		func(cur Group) (Group, error) {
			next := g.Clone()
			next.ID = cur.ID
			return next, nil
		},
		func(next Group, v int64) (Group, error) { return st.ReplaceGroup(ctx, team, next, v) })
	if err != nil {
		return elimity.Resource{}, storeError(gh.h.log, err)
	}
	return groupResource(out, rootFrom(ctx)), nil
}

// isMembersPath reports whether p is the bare "members" attribute.
func isMembersPath(p *filter.Path) bool {
	return p != nil && p.ValueExpression == nil && p.SubAttribute == nil && p.AttributePath.SubAttribute == nil &&
		strings.EqualFold(p.AttributePath.AttributeName, "members")
}

func (gh groupHandler) Patch(r *http.Request, id string, ops []elimity.PatchOperation) (elimity.Resource, error) {
	ctx, team, st := gh.store(r)
	root := rootFrom(ctx)
	out, err := update(r.Header.Get("If-Match"), groupVersion,
		func() (Group, error) { return st.GetGroup(ctx, team, id) },
		func(cur Group) (Group, error) {
			attrs := groupAttrs(cur, root)
			if cur.ExternalID != "" {
				attrs["externalId"] = cur.ExternalID
			}
			for _, op := range ops {
				// Entra ID removes members by listing them as the value of a remove on "members".
				if list, ok := op.Value.([]any); ok && op.Op == elimity.PatchOperationRemove && isMembersPath(op.Path) {
					attrs["members"] = removeMembers(attrs["members"], list)
					continue
				}
				var err error
				if attrs, err = elimity.ApplyPatch(attrs, []elimity.PatchOperation{op}, withExternalID(groupSchema())); err != nil {
					return Group{}, patchError(err)
				}
			}
			if e := checkGroupBody(attrs); e != nil {
				return Group{}, *e
			}
			valid, e := validateAttrs(attrs, groupSchema())
			if e != nil {
				return Group{}, *e
			}
			next, err := groupFromAttrs(valid)
			if err != nil {
				return Group{}, err
			}
			next.ID = cur.ID
			return next, nil
		},
		func(next Group, v int64) (Group, error) { return st.ReplaceGroup(ctx, team, next, v) })
	if err != nil {
		return elimity.Resource{}, storeError(gh.h.log, err)
	}
	return groupResource(out, root), nil
}

// removeMembers drops from members those whose value is the value of an entry of list.
func removeMembers(members any, list []any) []any {
	drop := map[string]bool{}
	for _, v := range list {
		if m, ok := v.(map[string]any); ok {
			if k, ok := lookup(m, "value"); ok {
				if s, ok := m[k].(string); ok {
					drop[s] = true
				}
			}
		}
	}
	cur, _ := members.([]any)
	out := make([]any, 0, len(cur))
	for _, v := range cur {
		if m, ok := v.(map[string]any); ok {
			if s, _ := m["value"].(string); drop[s] {
				continue
			}
		}
		out = append(out, v)
	}
	return out
}

func (gh groupHandler) Delete(r *http.Request, id string) error {
	ctx, team, st := gh.store(r)
	err := deleteResource(r.Header.Get("If-Match"), groupVersion,
		func() (Group, error) { return st.GetGroup(ctx, team, id) },
		func(v int64) error { return st.DeleteGroup(ctx, team, id, v) })
	if err != nil {
		return storeError(gh.h.log, err)
	}
	return nil
}
