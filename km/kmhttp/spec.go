package kmhttp

import (
	"bytes"
	"encoding/json"
	"mime"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/getkin/kin-openapi/openapi3"
	"gopkg.in/yaml.v3"

	"github.com/kmkit/kmkit/internal/kmspec"
	"github.com/kmkit/kmkit/internal/rawquery"
	"github.com/kmkit/kmkit/km"
	"github.com/kmkit/kmkit/problem"
	"github.com/kmkit/kmkit/web/publicurl"
)

// SpecVersion is the OpenAPI version of the documents the spec endpoint generates.
const SpecVersion = kmspec.SpecVersion

// SpecAudience is the x-audience of generated documents: the code the public description of
// the API gives for its external consumers.
const SpecAudience = kmspec.SpecAudience

// Names of the security schemes of generated documents, as the public description names them.
const (
	SchemeBearer = kmspec.SchemeBearer
	SchemeAppKey = kmspec.SchemeAppKey
)

// Media types of the spec endpoint's answers.
const (
	specJSON = "application/json"
	specYAML = "application/yaml"
)

// Spec returns the OpenAPI 3.0.3 document of m (see kmspec.Spec): one path per record
// query endpoint (only curated records when curated is true) and the KM query endpoint,
// with server as the only server (none when empty).
func Spec(m *km.KnowledgeModel, server string, curated bool) *openapi3.T {
	return kmspec.Spec(m, server, curated)
}

// serveSpec answers GET .../knowledge-models/{km_id}/spec.
func (h *Handler) serveSpec(w http.ResponseWriter, r *http.Request, m *km.KnowledgeModel) {
	params, err := rawquery.Parse(r.URL.RawQuery)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	curated := false
	v, err := lastValue(params, "curated", "true or false")
	if err != nil {
		h.fail(w, r, err)
		return
	}
	switch strings.ToLower(v) {
	case "":
	case "true":
		curated = true
	case "false":
	default:
		h.fail(w, r, badRequest(problem.CodeParameterMismatch, "curated: %q is not a boolean: want true or false", v))
		return
	}
	asYAML := false
	if v, err = lastValue(params, "format", "json or yml"); err != nil {
		h.fail(w, r, err)
		return
	}
	if v != "" {
		switch strings.ToLower(v) {
		case "json":
		case "yml", "yaml":
			asYAML = true
		default:
			h.fail(w, r, badRequest(problem.CodeParameterIllegal, "format: %q is not a spec format: want json or yml", v))
			return
		}
	} else {
		asYAML = prefersYAML(r.Header.Values("Accept"))
	}
	doc := Spec(m, baseURL(r), curated)
	var body []byte
	contentType := specJSON
	if asYAML {
		body, err = marshalYAML(doc)
		contentType = specYAML
	} else {
		body, err = json.Marshal(doc)
	}
	if err != nil {
		h.fail(w, r, err)
		return
	}
	hd := w.Header()
	hd.Set("Content-Type", contentType)
	hd.Set("Content-Length", strconv.Itoa(len(body)))
	hd.Add("Vary", "Accept")
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(body)
}

// prefersYAML reports whether the Accept header ranks a YAML media type (application/yaml,
// application/x-yaml, text/yaml) above JSON. Ties and headers naming neither give JSON.
func prefersYAML(accept []string) bool {
	yamlQ, jsonQ := -1.0, -1.0
	for _, v := range accept {
		for part := range strings.SplitSeq(v, ",") {
			mt, params, err := mime.ParseMediaType(strings.TrimSpace(part))
			if err != nil {
				continue
			}
			q := 1.0
			if s, ok := params["q"]; ok {
				if q, err = strconv.ParseFloat(s, 64); err != nil {
					continue
				}
			}
			switch mt {
			case "application/yaml", "application/x-yaml", "text/yaml", "text/x-yaml":
				yamlQ = max(yamlQ, q)
			case "application/json", "application/*", "*/*":
				jsonQ = max(jsonQ, q)
			}
		}
	}
	return yamlQ > 0 && yamlQ > jsonQ
}

// baseURL is the URL the API's paths are relative to, as the client reached the handler:
// the public URL a publicurl.Resolver in front chose, else scheme and host of the request
// (X-Forwarded-Proto and X-Forwarded-Host when a proxy set them), and the prefix a mount
// under another path (http.StripPrefix) removed.
func baseURL(r *http.Request) string {
	prefix := ""
	if u, err := url.ParseRequestURI(r.RequestURI); err == nil {
		if p, ok := strings.CutSuffix(u.Path, r.URL.Path); ok {
			prefix = strings.TrimSuffix(p, "/")
		}
	}
	if o, ok := publicurl.From(r); ok {
		return o + prefix
	}
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	if p := firstForwarded(r.Header.Get("X-Forwarded-Proto")); p == "http" || p == "https" {
		scheme = p
	}
	host := r.Host
	if h := firstForwarded(r.Header.Get("X-Forwarded-Host")); h != "" {
		host = h
	}
	if host == "" {
		return ""
	}
	return (&url.URL{Scheme: scheme, Host: host, Path: prefix}).String()
}

func firstForwarded(v string) string {
	v, _, _ = strings.Cut(v, ",")
	return strings.ToLower(strings.TrimSpace(v))
}

// marshalYAML encodes doc as YAML with the usual two-space indent.
func marshalYAML(doc *openapi3.T) ([]byte, error) {
	var buf bytes.Buffer
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(2)
	if err := enc.Encode(doc); err != nil {
		return nil, err
	}
	if err := enc.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}
