package scim

import (
	"encoding/json"
	"net/http"
	"strconv"

	elimity "github.com/elimity-com/scim"
)

// serveSPC answers GET /ServiceProviderConfig with what this handler really supports. The
// library's own answer cannot say that Bulk and ETags are supported.
func (h *Handler) serveSPC(w http.ResponseWriter, root string) {
	schemes := h.authSchemes
	if schemes == nil {
		schemes = []AuthenticationScheme{}
	}
	spc := map[string]any{
		"schemas":               []string{SPCSchema},
		"patch":                 map[string]bool{"supported": true},
		"bulk":                  map[string]any{"supported": true, "maxOperations": h.maxOps, "maxPayloadSize": h.maxPayload},
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

// serveDiscovery answers /Schemas and /ResourceTypes through the library's server, which
// knows our resource types and their schemas.
func (h *Handler) serveDiscovery(w http.ResponseWriter, r *http.Request, root, path string) {
	server, err := elimity.NewServer(&elimity.ServerArgs{
		ServiceProviderConfig: &elimity.ServiceProviderConfig{MaxResults: h.pageSize},
		ResourceTypes:         h.resourceTypes,
	}, elimity.WithBaseURL(root))
	if err != nil {
		WriteError(w, http.StatusInternalServerError, "", "The SCIM server could not be built.")
		return
	}
	req := r.Clone(r.Context())
	req.URL.Path = path
	req.URL.RawPath = ""
	rec := &recorder{header: http.Header{}}
	server.ServeHTTP(rec, req)
	res := &result{status: rec.status, header: rec.header, body: rec.body.Bytes()}
	if res.status == 0 {
		res.status = http.StatusOK
	}
	// The lists get the same shaping as user and group lists: itemsPerPage is the number of
	// resources returned, and attributes/excludedAttributes apply to lists and single ones.
	isList := path == "/Schemas" || path == "/ResourceTypes"
	p := newProjection(splitList(r.URL.Query().Get("attributes")), splitList(r.URL.Query().Get("excludedAttributes")))
	if res.status == http.StatusOK && (isList || !p.empty()) {
		if err := reshape(res, isList, p); err != nil {
			WriteError(w, http.StatusInternalServerError, "", "The response could not be shaped.")
			return
		}
	}
	res.writeTo(w)
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
