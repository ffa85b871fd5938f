package scimhttp

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"github.com/elimity-com/scim/schema"
	"github.com/google/uuid"
	"github.com/kmkit/kmkit/scim"
)

// serveSPC answers GET /ServiceProviderConfig with what this handler really supports. The
// library's own answer cannot say that Bulk and ETags are supported.
func (h *Handler) serveSPC(w http.ResponseWriter, root string) {
	schemes := h.authSchemes
	if schemes == nil {
		schemes = []AuthenticationScheme{}
	}
	spc := map[string]any{
		"schemas":               []string{scim.SPCSchema},
		"patch":                 map[string]bool{"supported": true},
		"bulk":                  map[string]any{"supported": true, "maxOperations": h.maxOps, "maxPayloadSize": h.maxBody},
		"filter":                map[string]any{"supported": true, "maxResults": h.pageSize},
		"changePassword":        map[string]bool{"supported": false},
		"sort":                  map[string]bool{"supported": true},
		"etag":                  map[string]bool{"supported": true},
		"authenticationSchemes": schemes,
		"meta": map[string]string{
			"resourceType": "ServiceProviderConfig",
			"location":     root + "/ServiceProviderConfig",
		},
	}
	if h.docURI != "" {
		spc["documentationUri"] = h.docURI
	}
	writeJSON(w, http.StatusOK, spc)
}

// schemas are the schemas /Schemas lists: those of the discovery resources, then the
// resource types' core schemas and extensions, as the library defines them.
func (h *Handler) schemas() []schema.Schema {
	out := []schema.Schema{schema.Definition(), schema.ResourceTypeSchema(), schema.ServiceProviderConfigSchema()}
	for _, rt := range []*resourceType{h.users, h.groups} {
		out = append(out, rt.schema)
		out = append(out, rt.exts...)
	}
	return out
}

// resourceTypeJSON is the /ResourceTypes entry of rt (RFC 7643 section 6).
func resourceTypeJSON(rt *resourceType, root string) map[string]any {
	exts := make([]any, len(rt.exts))
	for i, e := range rt.exts {
		exts[i] = map[string]any{"schema": e.ID, "required": false}
	}
	return map[string]any{
		"schemas":          []any{resourceTypeSchema},
		"id":               rt.name,
		"name":             rt.name,
		"description":      rt.description,
		"endpoint":         rt.endpoint,
		"schema":           rt.schema.ID,
		"schemaExtensions": exts,
		"meta":             map[string]any{"resourceType": "ResourceType", "location": root + "/ResourceTypes/" + rt.name},
	}
}

const resourceTypeSchema = "urn:ietf:params:scim:schemas:core:2.0:ResourceType"

// serveDiscovery answers /Schemas and /ResourceTypes (seg[0]) and their entries (seg[1]).
// RFC 7644 section 4: filter, sorting, count and startIndex are ignored; every list holds
// all entries. attributes and excludedAttributes apply as to users and groups.
func (h *Handler) serveDiscovery(w http.ResponseWriter, r *http.Request, root string, seg []string) {
	var all []map[string]any
	ids := map[string]int{}
	if strings.EqualFold(seg[0], "Schemas") {
		for i, s := range h.schemas() {
			all = append(all, s.ToMap())
			ids[strings.ToLower(s.ID)] = i
		}
	} else {
		for i, rt := range []*resourceType{h.users, h.groups} {
			all = append(all, resourceTypeJSON(rt, root))
			ids[strings.ToLower(rt.name)] = i
		}
	}
	q := r.URL.Query()
	for _, name := range append(splitList(q.Get("attributes")), splitList(q.Get("excludedAttributes"))...) {
		if !validAttrName(strings.TrimSpace(name)) {
			writeDiscoveryError(w, http.StatusBadRequest, "invalidAttributes",
				fmt.Sprintf("The attribute name %q is not valid.", scim.Echo(name)), map[string]any{"attribute": fmt.Sprint(scim.Echo(name))})
			return
		}
	}
	p := projectionOf(q)
	if len(seg) == 2 {
		i, ok := ids[strings.ToLower(seg[1])]
		if !ok {
			WriteError(w, http.StatusNotFound, "", fmt.Sprintf("Resource %s not found.", scim.Echo(seg[1])))
			return
		}
		p.apply(all[i])
		writeJSON(w, http.StatusOK, all[i])
		return
	}
	resources := make([]any, len(all))
	for i, m := range all {
		p.apply(m)
		resources[i] = m
	}
	res, e := listResult(len(all), 1, resources)
	if e != nil {
		writeDiscoveryError(w, e.Status, "", e.Detail, nil)
		return
	}
	res.writeTo(w)
}

// validAttrName reports whether name is an attribute name, optionally with a schema URN
// and a sub-attribute (RFC 7644 section 3.10).
func validAttrName(name string) bool {
	if name == "" {
		return false
	}
	for _, r := range name {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9':
		case strings.ContainsRune(":._-$", r):
		default:
			return false
		}
	}
	return true
}

// writeDiscoveryError writes an error of a discovery endpoint: the RFC 7644 Error body
// with, as the seed describes them, the members of FrontendHandledBackendError (400:
// frontendErrorKey, errorInformation) or ExceptionReference (500: reference, message,
// shortMessage), so that SCIM clients and the seed's clients both read it.
func writeDiscoveryError(w http.ResponseWriter, status int, key, detail string, info map[string]any) {
	body := map[string]any{"schemas": []string{scim.ErrorSchema}, "status": strconv.Itoa(status), "detail": detail}
	switch {
	case status == http.StatusBadRequest:
		if info == nil {
			info = map[string]any{}
		}
		info["message"] = detail
		body["frontendErrorKey"] = key
		body["errorInformation"] = info
	case status >= 500:
		body["reference"] = uuid.NewString()
		body["message"] = detail
		body["shortMessage"] = http.StatusText(status)
	}
	writeJSON(w, status, body)
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	body, err := json.Marshal(v)
	if err != nil {
		WriteError(w, http.StatusInternalServerError, "", "The response could not be encoded.")
		return
	}
	w.Header().Set("Content-Type", ContentType)
	w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(status)
	_, _ = w.Write(body)
}
