package scimhttp

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	scimerrors "github.com/elimity-com/scim/errors"
	"github.com/elimity-com/scim/schema"
	"github.com/kmkit/kmkit/scim"
)

// resourceType is one of the two resource types served, with the schemas its bodies and
// PATCH paths are checked against.
type resourceType struct {
	name        string // "User" or "Group"
	endpoint    string // "/Users" or "/Groups"
	description string
	schema      schema.Schema   // the core schema
	exts        []schema.Schema // its extensions
	attrs       scim.ResourceSchema
}

func newResourceType(name, endpoint, description string, attrs scim.ResourceSchema, core schema.Schema, exts ...schema.Schema) *resourceType {
	return &resourceType{name: name, endpoint: endpoint, description: description, schema: core, exts: exts, attrs: attrs}
}

// do answers one request on /Users or /Groups, from HTTP or from Bulk.
func (h *Handler) do(ctx context.Context, root, team string, c call) *result {
	user := c.rt == h.users
	var body map[string]any
	if c.body != nil {
		var e *scimError
		if body, e = decodeObject(c.body, "request body"); e != nil {
			return errorResult(*e)
		}
	}
	var (
		res *result
		e   *scimError
	)
	switch {
	case c.method == http.MethodGet && c.id == "":
		res, e = h.list(ctx, root, team, c)
	case c.method == http.MethodGet && user:
		res, e = h.getUser(ctx, root, team, c)
	case c.method == http.MethodGet:
		res, e = h.getGroup(ctx, root, team, c)
	case c.method == http.MethodDelete:
		e = h.deleteResource(ctx, team, c)
		res = &result{status: http.StatusNoContent, header: http.Header{}}
	case user:
		res, e = h.writeUser(ctx, root, team, c, body)
	default:
		res, e = h.writeGroup(ctx, root, team, c, body)
	}
	if e != nil {
		return errorResult(*e)
	}
	return res
}

// rendered is a resource's JSON form and what its response headers need.
type rendered struct {
	body     map[string]any
	version  int64
	location string
}

func meta(kind, location string, created, modified time.Time, version int64) map[string]any {
	return map[string]any{
		"resourceType": kind,
		"created":      created.Format(time.RFC3339),
		"lastModified": modified.Format(time.RFC3339),
		"location":     location,
		"version":      etag(version),
	}
}

// renderUser is the SCIM representation of u. schemas names an extension only when the
// user has data of it; groups lists the groups of the team that have u as a member.
func (h *Handler) renderUser(u scim.User, root string, groups []scim.Group) rendered {
	loc := root + "/Users/" + url.PathEscape(u.ID)
	m := scim.UserAttributes(u)
	m["id"] = u.ID
	if u.ExternalID != "" {
		m["externalId"] = u.ExternalID
	}
	schemas := []any{scim.UserSchema}
	for _, ext := range h.users.exts {
		if v, ok := m[ext.ID].(map[string]any); ok && len(v) > 0 {
			schemas = append(schemas, ext.ID)
		}
	}
	m["schemas"] = schemas
	if len(groups) > 0 {
		list := make([]any, len(groups))
		for i, g := range groups {
			list[i] = map[string]any{
				"value":   g.ID,
				"display": g.DisplayName,
				"type":    "direct",
				"$ref":    root + "/Groups/" + url.PathEscape(g.ID),
			}
		}
		m["groups"] = list
	}
	m["meta"] = meta("User", loc, u.Created, u.LastModified, u.Version)
	return rendered{m, u.Version, loc}
}

func renderGroup(g scim.Group, root string) rendered {
	loc := root + "/Groups/" + url.PathEscape(g.ID)
	m := scim.GroupAttributes(g)
	for _, mb := range m["members"].([]any) {
		mb := mb.(map[string]any)
		mb["$ref"] = root + "/Users/" + url.PathEscape(mb["value"].(string))
	}
	m["id"] = g.ID
	if g.ExternalID != "" {
		m["externalId"] = g.ExternalID
	}
	m["schemas"] = []any{scim.GroupSchema}
	m["meta"] = meta("Group", loc, g.Created, g.LastModified, g.Version)
	return rendered{m, g.Version, loc}
}

// projectionOf reads attributes and excludedAttributes of a request.
func projectionOf(q url.Values) projection {
	return newProjection(splitList(q.Get("attributes")), splitList(q.Get("excludedAttributes")))
}

// groupsWanted reports whether the user responses of a request carry groups.
func groupsWanted(p projection) bool {
	if p.include != nil && p.include["groups"] == nil {
		return false
	}
	s := p.exclude["groups"]
	return s == nil || !s.whole
}

// respond encodes one resource: the projection of the request, ETag, and Location for a
// creation.
func respond(status int, r rendered, c call) (*result, *scimError) {
	if c.method == http.MethodGet && c.ifNoneMatch != "" && etagMatches(c.ifNoneMatch, etag(r.version)) {
		return &result{status: http.StatusNotModified, header: http.Header{"Etag": {etag(r.version)}}}, nil
	}
	projectionOf(c.query).apply(r.body)
	body, err := json.Marshal(r.body)
	if err != nil {
		e := apiError(http.StatusInternalServerError, "", "The response could not be encoded.")
		return nil, &e
	}
	hdr := http.Header{"Content-Type": {ContentType}, "Etag": {etag(r.version)}}
	if status == http.StatusCreated {
		hdr.Set("Location", r.location)
	}
	return &result{status: status, header: hdr, body: body}, nil
}

// userGroups returns u with its groups, both of one state (scim.Service.UserGroups), when
// the user responses of the request carry groups, and u as it is otherwise.
func (h *Handler) userGroups(ctx context.Context, team string, u scim.User, c call) (scim.User, []scim.Group, error) {
	if !groupsWanted(projectionOf(c.query)) {
		return u, nil, nil
	}
	return h.svc.UserGroups(ctx, team, u)
}

func (h *Handler) getUser(ctx context.Context, root, team string, c call) (*result, *scimError) {
	u, err := h.store.GetUser(ctx, team, c.id)
	if err != nil {
		e := h.storeError(ctx, err)
		return nil, &e
	}
	u, groups, err := h.userGroups(ctx, team, u, c)
	if err != nil {
		e := h.storeError(ctx, err)
		return nil, &e
	}
	return respond(http.StatusOK, h.renderUser(u, root, groups), c)
}

func (h *Handler) getGroup(ctx context.Context, root, team string, c call) (*result, *scimError) {
	g, err := h.store.GetGroup(ctx, team, c.id)
	if err != nil {
		e := h.storeError(ctx, err)
		return nil, &e
	}
	return respond(http.StatusOK, renderGroup(g, root), c)
}

func (h *Handler) deleteResource(ctx context.Context, team string, c call) *scimError {
	var err error
	if c.rt == h.users {
		err = deleteResource(c.ifMatch, userVersion,
			func() (scim.User, error) { return h.store.GetUser(ctx, team, c.id) },
			func(v int64) error { return h.store.DeleteUser(ctx, team, c.id, v) })
	} else {
		err = deleteResource(c.ifMatch, groupVersion,
			func() (scim.Group, error) { return h.store.GetGroup(ctx, team, c.id) },
			func(v int64) error { return h.store.DeleteGroup(ctx, team, c.id, v) })
	}
	if err != nil {
		e := h.storeError(ctx, err)
		return &e
	}
	return nil
}

// listParams reads count, startIndex, filter and sort of a list request, each once.
func (h *Handler) listParams(c call) (scim.ListQuery, *scimError) {
	var bad []string
	intParam := func(name string, def int) int {
		v := c.query.Get(name)
		if v == "" {
			return def
		}
		n, err := strconv.Atoi(v)
		if err != nil {
			bad = append(bad, name)
		}
		return n
	}
	q := scim.ListQuery{Count: intParam("count", h.pageSize), StartIndex: intParam("startIndex", 1)}
	if len(bad) > 0 {
		e := scimerrors.ScimErrorBadParams(bad)
		return q, libraryError(&e)
	}
	q.Count = min(max(q.Count, 0), h.pageSize)
	q.StartIndex = max(q.StartIndex, 1)
	if f := c.query.Get("filter"); strings.TrimSpace(f) != "" {
		terms, e := scim.ParseFilter(f, c.rt.name)
		if e != nil {
			return q, e
		}
		q.Filter = terms
	}
	k, e := scim.ParseSort(c.query.Get("sortBy"), c.query.Get("sortOrder"), c.rt.name)
	if e != nil {
		return q, e
	}
	q.Sort = k
	return q, nil
}

func (h *Handler) list(ctx context.Context, root, team string, c call) (*result, *scimError) {
	q, e := h.listParams(c)
	if e != nil {
		return nil, e
	}
	var (
		items []rendered
		total int
		err   error
	)
	if c.rt == h.users {
		var users []scim.User
		users, total, err = h.store.ListUsers(ctx, team, q)
		for _, u := range users {
			u, groups, err := h.userGroups(ctx, team, u, c)
			if errors.Is(err, scim.ErrNotFound) {
				continue // deleted since the page was read
			}
			if err != nil {
				e := h.storeError(ctx, err)
				return nil, &e
			}
			items = append(items, h.renderUser(u, root, groups))
		}
	} else {
		var groups []scim.Group
		groups, total, err = h.store.ListGroups(ctx, team, q)
		for _, g := range groups {
			items = append(items, renderGroup(g, root))
		}
	}
	if err != nil {
		e := h.storeError(ctx, err)
		return nil, &e
	}
	p := projectionOf(c.query)
	resources := make([]any, len(items))
	for i, it := range items {
		p.apply(it.body)
		resources[i] = it.body
	}
	return listResult(total, q.StartIndex, resources)
}

// listResult encodes a ListResponse; itemsPerPage is the number of resources returned.
func listResult(total, startIndex int, resources []any) (*result, *scimError) {
	body, err := json.Marshal(map[string]any{
		"schemas":      []string{scim.ListResponseSchema},
		"totalResults": total,
		"itemsPerPage": len(resources),
		"startIndex":   startIndex,
		"Resources":    resources,
	})
	if err != nil {
		e := apiError(http.StatusInternalServerError, "", "The response could not be encoded.")
		return nil, &e
	}
	return &result{status: http.StatusOK, header: http.Header{"Content-Type": {ContentType}}, body: body}, nil
}

// requireSchema checks that a POST or PUT body names the resource's core schema.
func requireSchema(body map[string]any, core string) *scimError {
	k, _ := scim.AttributeKey(body, "schemas")
	schemas, _ := body[k].([]any)
	if !scim.ContainsFold(schemas, core) {
		e := apiError(http.StatusBadRequest, scim.TypeInvalidSyntax, "schemas must contain %s.", core)
		return &e
	}
	return nil
}

func (h *Handler) writeUser(ctx context.Context, root, team string, c call, body map[string]any) (*result, *scimError) {
	var (
		out scim.User
		err error
	)
	switch c.method {
	case http.MethodPost, http.MethodPut:
		if e := requireSchema(body, scim.UserSchema); e != nil {
			return nil, e
		}
		if e := scim.NormalizeUser(body); e != nil {
			return nil, e
		}
		if e := scim.CheckValues(body, h.users.attrs); e != nil {
			return nil, e
		}
		valid, e := validateAttrs(body, h.users.schema, h.users.exts...)
		if e != nil {
			return nil, e
		}
		u, f, uerr := scim.UserFromAttributes(valid, h.users.attrs)
		if uerr != nil {
			return nil, asScimError(uerr)
		}
		if c.method == http.MethodPost {
			return h.createUser(ctx, root, team, c, u, f)
		}
		out, err = h.svc.UpdateUser(ctx, team, c.id, precondition(c.ifMatch), nil, func(cur scim.User) (scim.User, error) {
			next := u.Clone()
			f.Keep(&next, cur)
			return next, nil
		})
		if err != nil {
			e := h.storeError(ctx, err)
			return nil, &e
		}
	case http.MethodPatch:
		ops, e := scim.ParsePatch(body, true)
		if e != nil {
			return nil, e
		}
		out, err = h.svc.PatchUser(ctx, team, c.id, ops, precondition(c.ifMatch))
		if err != nil {
			e := h.storeError(ctx, err)
			return nil, &e
		}
	}
	out, groups, err := h.userGroups(ctx, team, out, c)
	if err != nil {
		e := h.storeError(ctx, err)
		return nil, &e
	}
	return respond(http.StatusOK, h.renderUser(out, root, groups), c)
}

func (h *Handler) createUser(ctx context.Context, root, team string, c call, u scim.User, f scim.UserFields) (*result, *scimError) {
	if !f.Active {
		u.Active = true
	}
	if !f.Role {
		u.Role = scim.RoleMember
	}
	created, err := h.store.CreateUser(ctx, team, u)
	if err != nil {
		e := h.storeError(ctx, err)
		return nil, &e
	}
	if created.SendEmailOnInvitation && h.notifier != nil {
		if err := h.notifier.Invite(ctx, team, created.Clone()); err != nil {
			h.log.Error("scim: invitation failed", "team", team, "user", created.ID, "error", err)
		}
	}
	return respond(http.StatusCreated, h.renderUser(created, root, nil), c)
}

func (h *Handler) writeGroup(ctx context.Context, root, team string, c call, body map[string]any) (*result, *scimError) {
	st := h.store
	var (
		out scim.Group
		err error
	)
	switch c.method {
	case http.MethodPost, http.MethodPut:
		if e := requireSchema(body, scim.GroupSchema); e != nil {
			return nil, e
		}
		if e := scim.CheckGroup(body); e != nil {
			return nil, e
		}
		valid, e := validateAttrs(body, h.groups.schema)
		if e != nil {
			return nil, e
		}
		g, gerr := scim.GroupFromAttributes(valid)
		if gerr != nil {
			return nil, asScimError(gerr)
		}
		if c.method == http.MethodPost {
			created, err := st.CreateGroup(ctx, team, g)
			if err != nil {
				e := h.storeError(ctx, err)
				return nil, &e
			}
			return respond(http.StatusCreated, renderGroup(created, root), c)
		}
		out, err = h.svc.UpdateGroup(ctx, team, c.id, precondition(c.ifMatch), nil, func(cur scim.Group) (scim.Group, error) {
			next := g.Clone()
			next.ID = cur.ID
			return next, nil
		})
	case http.MethodPatch:
		ops, e := scim.ParsePatch(body, false)
		if e != nil {
			return nil, e
		}
		out, err = h.svc.PatchGroup(ctx, team, c.id, ops, precondition(c.ifMatch))
	}
	if err != nil {
		e := h.storeError(ctx, err)
		return nil, &e
	}
	return respond(http.StatusOK, renderGroup(out, root), c)
}

// asScimError returns err as a client error; the errors of this package's checks are
// ScimError values already.
func asScimError(err error) *scimError {
	if se, ok := err.(scimError); ok {
		return &se
	}
	e := badValue("%v", err)
	return &e
}
