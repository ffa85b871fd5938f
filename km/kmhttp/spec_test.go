package kmhttp_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/google/go-cmp/cmp"
	"gopkg.in/yaml.v3"

	"github.com/kmkit/kmkit/km"
	"github.com/kmkit/kmkit/km/kmhttp"
	"github.com/kmkit/kmkit/query"
	"github.com/kmkit/kmkit/storage/memory"
)

// getSpec fetches the spec of a KM with the given query and Accept header.
func getSpec(t *testing.T, h http.Handler, kmID, rawQuery, accept string) *httptest.ResponseRecorder {
	t.Helper()
	target := api + "/" + kmID + "/spec"
	if rawQuery != "" {
		target += "?" + rawQuery
	}
	r := httptest.NewRequest("GET", target, nil)
	if accept != "" {
		r.Header.Set("Accept", accept)
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	return w
}

// loadSpec reads a served document with kin-openapi's loader (which resolves the $refs)
// and validates it.
func loadSpec(t *testing.T, body []byte) *openapi3.T {
	t.Helper()
	doc, err := openapi3.NewLoader().LoadFromData(body)
	if err != nil {
		t.Fatalf("loading the spec: %v\n%s", err, body)
	}
	if err := doc.Validate(context.Background()); err != nil {
		t.Fatalf("the spec does not validate: %v", err)
	}
	return doc
}

func pathKeys(doc *openapi3.T) []string {
	keys := doc.Paths.InMatchingOrder()
	slices.Sort(keys)
	return keys
}

func TestSpecValidatesAndHoldsTheQueryPaths(t *testing.T) {
	h := shop(t)
	tests := []struct {
		kmID, query string
		paths       []string
	}{
		{"shop", "", []string{
			api + "/shop/query",
			api + "/shop/records/CUSTOMERS/query",
			api + "/shop/records/EVENTS/query",
			api + "/shop/records/ITEMS/query",
			api + "/shop/records/ORDERS/query",
		}},
		{"shop", "curated=true", []string{ // EVENTS is auto-generated (curated: false)
			api + "/shop/query",
			api + "/shop/records/CUSTOMERS/query",
			api + "/shop/records/ITEMS/query",
			api + "/shop/records/ORDERS/query",
		}},
		{"shop", "curated=false", []string{
			api + "/shop/query",
			api + "/shop/records/CUSTOMERS/query",
			api + "/shop/records/EVENTS/query",
			api + "/shop/records/ITEMS/query",
			api + "/shop/records/ORDERS/query",
		}},
		{"shop-base", "curated=true", []string{
			api + "/shop-base/query",
			api + "/shop-base/records/CUSTOMERS/query",
			api + "/shop-base/records/ITEMS/query",
			api + "/shop-base/records/ORDERS/query",
		}},
	}
	for _, tt := range tests {
		t.Run(tt.kmID+"?"+tt.query, func(t *testing.T) {
			w := getSpec(t, h, tt.kmID, tt.query, "")
			if w.Code != 200 || w.Header().Get("Content-Type") != "application/json" {
				t.Fatalf("status %d, Content-Type %q: %s", w.Code, w.Header().Get("Content-Type"), w.Body)
			}
			doc := loadSpec(t, w.Body.Bytes())
			if d := cmp.Diff(tt.paths, pathKeys(doc)); d != "" {
				t.Errorf("paths (-want +got):\n%s", d)
			}
			if doc.OpenAPI != "3.0.3" {
				t.Errorf("openapi %q", doc.OpenAPI)
			}
			_, hasEvents := doc.Components.Schemas["EVENTS.Row"]
			if hasEvents != strings.Contains(strings.Join(tt.paths, " "), "EVENTS") {
				t.Errorf("components hold EVENTS.Row: %v", hasEvents)
			}
			// The KM query endpoint offers only the fields of the listed records.
			fields := paramEnum(t, doc, api+"/"+tt.kmID+"/query", "fields")
			if slices.Contains(fields, "EVENTS.ACTIVITY") != hasEvents {
				t.Errorf("KM fields %v: EVENTS.ACTIVITY listed is not %v", fields, hasEvents)
			}
		})
	}
}

// paramEnum returns the enum of the items of the array parameter name of path's GET.
func paramEnum(t *testing.T, doc *openapi3.T, path, name string) []string {
	t.Helper()
	item := doc.Paths.Value(path)
	if item == nil || item.Get == nil {
		t.Fatalf("no GET %s", path)
	}
	p := item.Get.Parameters.GetByInAndName("query", name)
	if p == nil {
		t.Fatalf("GET %s has no parameter %s", path, name)
	}
	var out []string
	for _, v := range p.Schema.Value.Items.Value.Enum {
		out = append(out, v.(string))
	}
	return out
}

func TestSpecContent(t *testing.T) {
	w := getSpec(t, shop(t), "shop", "", "")
	doc := loadSpec(t, w.Body.Bytes())
	t.Run("info", func(t *testing.T) {
		want := map[string]any{
			"title":       "Shop",
			"version":     "unpublished", // shop.yaml has no published time
			"description": "Query endpoints of the knowledge model shop, which extends shop-base. Every record has a query endpoint returning its rows as objects; the knowledge model query endpoint joins records and computes KPIs.",
			"x-audience":  "EX",
		}
		got := map[string]any{"title": doc.Info.Title, "version": doc.Info.Version, "description": doc.Info.Description, "x-audience": doc.Info.Extensions["x-audience"]}
		if d := cmp.Diff(want, got); d != "" {
			t.Errorf("info (-want +got):\n%s", d)
		}
		base := loadSpec(t, getSpec(t, shop(t), "shop-base", "", "").Body.Bytes())
		if base.Info.Version != "2026-01-15T10:00:00Z" {
			t.Errorf("version of shop-base %q, want its published time", base.Info.Version)
		}
	})
	t.Run("servers and security", func(t *testing.T) {
		if len(doc.Servers) != 1 || doc.Servers[0].URL != "http://example.com" {
			t.Errorf("servers %+v, want http://example.com", doc.Servers)
		}
		var names []string
		for _, req := range doc.Security {
			for name := range req {
				names = append(names, name)
			}
		}
		if d := cmp.Diff([]string{"BearerAuth", "ApiKeyAuth"}, names); d != "" {
			t.Errorf("security (-want +got):\n%s", d)
		}
		bearer := doc.Components.SecuritySchemes["BearerAuth"].Value
		key := doc.Components.SecuritySchemes["ApiKeyAuth"].Value
		if bearer.Type != "http" || bearer.Scheme != "bearer" || bearer.BearerFormat != "JWT" || key.Type != "apiKey" || key.In != "header" || key.Name != "AppKey" {
			t.Errorf("security schemes %+v %+v", bearer, key)
		}
	})
	t.Run("row schemas typed from the fields", func(t *testing.T) {
		type prop struct {
			Type, Format, Title, Description, Unit string
			Nullable                               bool
		}
		row := doc.Components.Schemas["ORDERS.Row"].Value
		got := map[string]prop{}
		for name, s := range row.Properties {
			unit, _ := s.Value.Extensions["x-unit"].(string)
			got[name] = prop{(*s.Value.Type)[0], s.Value.Format, s.Value.Title, s.Value.Description, unit, s.Value.Nullable}
		}
		want := map[string]prop{
			"ID":      {"string", "", "Order", "", "", true},
			"CUST":    {"string", "", "Customer", "", "", true},
			"DAY":     {"string", "date", "Order day", "", "", true},
			"CREATED": {"string", "date-time", "Created", "", "", true},
			"STATUS":  {"string", "", "Status", "", "", true},
			"NET":     {"number", "double", "Net value", "Unit: EUR. Display format: ,.2f.", "EUR", true},
			"LATE":    {"integer", "int64", "Days late", "", "", true},
			"EXPRESS": {"boolean", "", "Express", "", "", true},
		}
		if d := cmp.Diff(want, got); d != "" {
			t.Errorf("ORDERS.Row properties (-want +got):\n%s", d)
		}
		if row.Description != "Sales orders" || row.AdditionalProperties.Has == nil || *row.AdditionalProperties.Has {
			t.Errorf("ORDERS.Row: description %q, additionalProperties %v", row.Description, row.AdditionalProperties.Has)
		}
		if d := doc.Components.Schemas["EVENTS.Row"].Value.Description; d != "Process events (auto-generated record)" {
			t.Errorf("EVENTS.Row description %q", d)
		}
		name := doc.Components.Schemas["CUSTOMERS.Row"].Value.Properties["NAME"].Value
		if name.Description != "Legal name" {
			t.Errorf("CUSTOMERS.NAME description %q", name.Description)
		}
		kpi := doc.Components.Schemas["knowledge-model.Row"].Value.Properties["NET"].Value
		if (*kpi.Type)[0] != "number" || kpi.Title != "Net" || kpi.Extensions["x-unit"] != "EUR" {
			t.Errorf("KPI NET schema %+v", kpi)
		}
		if n := doc.Components.Schemas["knowledge-model.Row"].Value.Properties["ORDERS_N"].Value; (*n.Type)[0] != "integer" {
			t.Errorf("KPI ORDERS_N type %v, want integer", *n.Type)
		}
	})
	t.Run("parameters name the ids", func(t *testing.T) {
		rec := api + "/shop/records/ORDERS/query"
		for _, tt := range []struct {
			path, param string
			want        []string
		}{
			{rec, "fields", []string{"ID", "CUST", "DAY", "CREATED", "STATUS", "NET", "LATE", "EXPRESS"}},
			{rec, "filters", []string{"LATE", "GERMANY", "PAID", "SHIPPED"}}, // GERMANY and SHIPPED apply through relationships
			{rec, "searchField", []string{"ID", "CUST", "STATUS"}},
			{rec, "options", []string{"distinct"}},
			{api + "/shop/query", "kpis", []string{"ORDERS_N", "NET", "LATE_SHARE", "STATUS_NET", "QTY", "AVG_NET", "EVENTS_N"}},
			{api + "/shop/query", "filters", []string{"LATE", "GERMANY", "PAID", "SHIPPED"}},
		} {
			if d := cmp.Diff(tt.want, paramEnum(t, doc, tt.path, tt.param)); d != "" {
				t.Errorf("%s %s (-want +got):\n%s", tt.path, tt.param, d)
			}
		}
		var names []string
		for _, p := range doc.Paths.Value(rec).Get.Parameters {
			names = append(names, p.Value.Name)
		}
		want := []string{"fields", "filters", "sort", "searchField", "filterExpr", "options", "page", "pageSize", "searchTerm", "searchPrecision"}
		if d := cmp.Diff(want, names); d != "" {
			t.Errorf("parameters (-want +got):\n%s", d)
		}
	})
}

func TestSpecFormats(t *testing.T) {
	h := shop(t)
	tests := []struct {
		query, accept string
		status        int
		contentType   string
		want          string // exact problem body for errors
	}{
		{"", "", 200, "application/json", ""},
		{"format=json", "application/yaml", 200, "application/json", ""},
		{"format=yml", "", 200, "application/yaml", ""},
		{"format=YAML", "application/json", 200, "application/yaml", ""},
		{"", "application/yaml", 200, "application/yaml", ""},
		{"", "application/x-yaml", 200, "application/yaml", ""},
		{"", "text/yaml;q=0.9, application/json;q=0.5", 200, "application/yaml", ""},
		{"", "application/json, text/yaml;q=0.9", 200, "application/json", ""},
		{"", "application/yaml, application/json", 200, "application/json", ""}, // a tie goes to JSON
		{"", "text/html", 200, "application/json", ""},
		{"", "application/yaml;q=0", 200, "application/json", ""},
		{"", "application/yaml;q=bad, */*", 200, "application/json", ""},
		{"format=xml", "", 400, "application/problem+json",
			problemJSON(400, "GENERAL_PARAMETER_ILLEGAL", `format: "xml" is not a spec format: want json or yml`)},
		{"curated=maybe", "", 400, "application/problem+json",
			problemJSON(400, "GENERAL_PARAMETER_MISSMATCH", `curated: "maybe" is not a boolean: want true or false`)},
		{"curated=%zz", "", 400, "application/problem+json",
			problemJSON(400, "GENERAL_PARAMETER_ILLEGAL", `curated: the value has a malformed percent-escape`)},
	}
	for _, tt := range tests {
		t.Run(tt.query+" Accept: "+tt.accept, func(t *testing.T) {
			w := getSpec(t, h, "shop", tt.query, tt.accept)
			if w.Code != tt.status || w.Header().Get("Content-Type") != tt.contentType {
				t.Fatalf("status %d, Content-Type %q; want %d, %q: %s", w.Code, w.Header().Get("Content-Type"), tt.status, tt.contentType, w.Body)
			}
			if tt.want != "" {
				if d := jsonDiff(t, tt.want, w.Body.String()); d != "" {
					t.Errorf("body (-want +got):\n%s", d)
				}
				return
			}
			loadSpec(t, w.Body.Bytes())
		})
	}
	w := getSpec(t, h, "nope", "", "")
	if d := jsonDiff(t, problemJSON(404, "KM_MODEL_NOTFOUND", `no knowledge model "nope"`), w.Body.String()); w.Code != 404 || d != "" {
		t.Errorf("unknown KM: status %d (-want +got):\n%s", w.Code, d)
	}
}

// TestSpecYAMLAndJSONAgree: the YAML and the JSON answer are the same document, both as
// plain data and as read by kin-openapi.
func TestSpecYAMLAndJSONAgree(t *testing.T) {
	h := shop(t)
	for _, curated := range []string{"false", "true"} {
		jsonBody := getSpec(t, h, "shop", "curated="+curated, "").Body.Bytes()
		yamlBody := getSpec(t, h, "shop", "curated="+curated+"&format=yml", "").Body.Bytes()

		var fromJSON, fromYAML any
		if err := json.Unmarshal(jsonBody, &fromJSON); err != nil {
			t.Fatal(err)
		}
		if err := yaml.Unmarshal(yamlBody, &fromYAML); err != nil {
			t.Fatal(err)
		}
		// Normalise the YAML value's numbers and maps through JSON.
		b, err := json.Marshal(fromYAML)
		if err != nil {
			t.Fatal(err)
		}
		var normal any
		if err := json.Unmarshal(b, &normal); err != nil {
			t.Fatal(err)
		}
		if d := cmp.Diff(fromJSON, normal); d != "" {
			t.Errorf("curated=%s: YAML and JSON differ (-json +yaml):\n%s", curated, d)
		}
		a, _ := json.Marshal(loadSpec(t, jsonBody))
		c, _ := json.Marshal(loadSpec(t, yamlBody))
		if string(a) != string(c) {
			t.Errorf("curated=%s: kin-openapi reads different documents from YAML and JSON", curated)
		}
	}
}

func TestSpecServers(t *testing.T) {
	h := shop(t)
	mux := http.NewServeMux()
	mux.Handle("/tenant/a/", http.StripPrefix("/tenant/a", h))
	tests := []struct {
		name    string
		handler http.Handler
		target  string
		header  map[string]string
		want    string
	}{
		{"plain", h, "http://kmkit.example:8080" + api + "/shop/spec", nil, "http://kmkit.example:8080"},
		{"TLS", h, "https://kmkit.example" + api + "/shop/spec", nil, "https://kmkit.example"},
		{"behind a proxy", h, "http://10.0.0.1:8080" + api + "/shop/spec",
			map[string]string{"X-Forwarded-Proto": "https", "X-Forwarded-Host": "api.example.com, 10.0.0.1"}, "https://api.example.com"},
		{"mounted under a prefix", mux, "http://kmkit.example/tenant/a" + api + "/shop/spec?format=json", nil, "http://kmkit.example/tenant/a"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := httptest.NewRequest("GET", tt.target, nil)
			for k, v := range tt.header {
				r.Header.Set(k, v)
			}
			w := httptest.NewRecorder()
			tt.handler.ServeHTTP(w, r)
			if w.Code != 200 {
				t.Fatalf("status %d: %s", w.Code, w.Body)
			}
			doc := loadSpec(t, w.Body.Bytes())
			if len(doc.Servers) != 1 || doc.Servers[0].URL != tt.want {
				t.Errorf("servers %v, want [%s]", doc.Servers, tt.want)
			}
		})
	}
}

// TestSpecFunction: Spec used directly (without the handler) builds a document that
// kin-openapi validates as it is, $refs and all; with no server it lists none.
func TestSpecFunction(t *testing.T) {
	s := memory.New().KM()
	err := s.Import(context.Background(), os.DirFS("../testdata/shop"))
	if err != nil {
		t.Fatal(err)
	}
	m, err := s.Model(context.Background(), "shop")
	if err != nil {
		t.Fatal(err)
	}
	doc := kmhttp.Spec(m, "", false)
	body, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	loaded := loadSpec(t, body)
	if len(loaded.Servers) != 0 {
		t.Errorf("servers %v, want none", loaded.Servers)
	}
	var zero km.KnowledgeModel
	zero.ID, zero.Name = "empty", "Empty"
	doc = kmhttp.Spec(&zero, "http://x", true)
	if doc.Info.Version != "unpublished" {
		t.Errorf("version of an unpublished KM %q", doc.Info.Version)
	}
	body, _ = json.Marshal(doc)
	if got := pathKeys(loadSpec(t, body)); !slices.Equal(got, []string{api + "/empty/query"}) {
		t.Errorf("paths of an empty KM %v", got)
	}

	// A record whose id looks like a component name of the KM's own schemas.
	odd := &km.KnowledgeModel{ID: "odd", Name: "Odd", Records: []*km.Record{
		{ID: "KM", Fields: []*km.Field{{ID: "X", Type: query.TypeString}}},
		{ID: "Problem", Fields: []*km.Field{{ID: "Y", Type: query.TypeInteger}}},
	}}
	if err := odd.Compile(); err != nil {
		t.Fatal(err)
	}
	body, _ = json.Marshal(kmhttp.Spec(odd, "", false))
	var schemas []string
	for name := range loadSpec(t, body).Components.Schemas {
		schemas = append(schemas, name)
	}
	slices.Sort(schemas)
	want := []string{"AuthError", "KM.Page", "KM.Row", "Problem", "Problem.Page", "Problem.Row", "knowledge-model.Page", "knowledge-model.Row"}
	if d := cmp.Diff(want, schemas); d != "" {
		t.Errorf("schemas (-want +got):\n%s", d)
	}
}
