package reporting

import (
	"errors"
	"testing"
	"testing/fstest"

	"github.com/google/go-cmp/cmp"
)

const (
	tenantA = "7d6c8f5e-2a4b-4c1d-9e3f-0a1b2c3d4e5f"
	tenantB = "c0ffee00-1234-4abc-8def-0123456789ab"
	uuid1   = "11111111-1111-4111-8111-111111111111"
	uuid2   = "22222222-2222-4222-8222-222222222222"
)

func TestLoad(t *testing.T) {
	fsys := fstest.MapFS{
		"reporting/" + tenantA + ".json": {Data: []byte(`[
  {"id": "` + uuid1 + `", "facetName": "Roles", "attributes": {"name": {"en": "Buyer", "de": "Einkäufer"}}},
  {"id": "` + uuid2 + `", "facetName": "Processes", "content": ["text"]}
]`)},
		"reporting/C0FFEE00-1234-4ABC-8DEF-0123456789AB.json": {Data: []byte(`[]`)},
		"reporting/README.md":     {Data: []byte("not data")},
		"reporting/sub.json/x":    {Data: []byte("a directory named like a file is skipped")},
		"models/o2c.yaml":         {Data: []byte("id: o2c")},
		"reporting/notes.json.gz": {Data: []byte("skipped")},
	}
	got, err := Load(fsys)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string][]Element{
		tenantA: {
			{Identity: Identity{ID: uuid1, FacetName: "Roles"}, Attributes: Attributes{"name": {"en": "Buyer", "de": "Einkäufer"}}},
			{Identity: Identity{ID: uuid2, FacetName: "Processes"}, Content: []Content{{Text: "text"}}},
		},
		tenantB: {},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("Load (-want +got):\n%s", diff)
	}
}

func TestLoadWithoutReportingDir(t *testing.T) {
	got, err := Load(fstest.MapFS{"models/o2c.yaml": {Data: []byte("id: o2c")}})
	if err != nil || len(got) != 0 {
		t.Fatalf("Load = %v, %v; want an empty result", got, err)
	}
}

func TestLoadErrors(t *testing.T) {
	el := func(id, facet string) string { return `{"id": "` + id + `", "facetName": "` + facet + `"}` }
	file := "reporting/" + tenantA + ".json"
	tests := []struct {
		name  string
		files fstest.MapFS
		want  string
	}{
		{"not a UUID name", fstest.MapFS{"reporting/acme.json": {Data: []byte(`[]`)}},
			"reporting/acme.json: file name is not a tenant UUID followed by .json"},
		{"tenant twice", fstest.MapFS{
			"reporting/" + tenantB + ".json":                      {Data: []byte(`[]`)},
			"reporting/C0FFEE00-1234-4ABC-8DEF-0123456789AB.json": {Data: []byte(`[]`)},
		}, "reporting/" + tenantB + ".json: tenant " + tenantB + " already loaded from reporting/C0FFEE00-1234-4ABC-8DEF-0123456789AB.json"},
		{"object, not array", fstest.MapFS{file: {Data: []byte(`{"id": "x"}`)}},
			file + ": want a JSON array of elements"},
		{"empty file", fstest.MapFS{file: {Data: []byte(``)}},
			file + ": line 1, column 1: unexpected end of JSON input"},
		{"null", fstest.MapFS{file: {Data: []byte(`null`)}},
			file + ": want a JSON array of elements"},
		{"array of numbers", fstest.MapFS{file: {Data: []byte(`[1]`)}},
			file + ": element 0: line 1: json: cannot unmarshal number into Go value of type reporting.Element"},
		{"syntax error", fstest.MapFS{file: {Data: []byte("[\n" + el(uuid1, "R") + ",\n  {\"id\": }\n]")}},
			file + ": element 1: line 3, column 10: invalid character '}' looking for beginning of value"},
		{"unknown member", fstest.MapFS{file: {Data: []byte("[\n" + el(uuid1, "R") + ",\n" + `  {"id": "` + uuid2 + `", "attributs": {}}` + "\n]")}},
			file + `: element 1: line 3: json: unknown field "attributs"`},
		{"wrong type", fstest.MapFS{file: {Data: []byte("[\n  {\"ordering\": \"1\"}\n]")}},
			file + ": element 0: line 2: json: cannot unmarshal string into Go struct field Element.Identity.ordering of type int"},
		{"unclosed array", fstest.MapFS{file: {Data: []byte("[\n" + el(uuid1, "R"))}},
			file + ": line 2, column 65: unexpected end of JSON input"},
		{"trailing data", fstest.MapFS{file: {Data: []byte("[]\n []")}},
			file + ": line 2, column 2: invalid character '[' after top-level value"},
		{"missing facet", fstest.MapFS{file: {Data: []byte("[\n" + el(uuid1, "R") + ",\n" + el(uuid2, "") + "\n]")}},
			file + ": element 1 (id " + uuid2 + "): facetName: missing (element starts on line 3)"},
		{"missing id", fstest.MapFS{file: {Data: []byte(`[{"facetName": "R"}]`)}},
			file + ": element 0: id: missing (element starts on line 1)"},
		{"bad id", fstest.MapFS{file: {Data: []byte(`[` + el("123", "R") + `]`)}},
			file + `: element 0 (id 123): id: "123" is not a UUID (want the form xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx) (element starts on line 1)`},
		{"duplicate", fstest.MapFS{file: {Data: []byte(`[` + el(uuid1, "R") + `,` + el(uuid1, "S") + `]`)}},
			file + ": element 1 (id " + uuid1 + "): same id, variantId and versionId as element 0 (element starts on line 1)"},
		{"bad nested version", fstest.MapFS{file: {Data: []byte(`[{"id": "` + uuid1 + `", "facetName": "P", "variants": [{"id": "` + uuid1 + `", "versions": [{"id": "` + uuid1 + `", "versionId": "v2"}]}]}]`)}},
			file + `: element 0 (id ` + uuid1 + `): variants[0].versions[0].versionId: "v2" is not a UUID (want the form xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx) (element starts on line 1)`},
		{"bad reference", fstest.MapFS{file: {Data: []byte(`[{"id": "` + uuid1 + `", "facetName": "P", "related": {"uses": [{"id": "` + uuid2 + `"}, {"isReference": true}]}}]`)}},
			file + `: element 0 (id ` + uuid1 + `): related["uses"][1].id: missing (element starts on line 1)`},
		{"bad content element", fstest.MapFS{file: {Data: []byte(`[{"id": "` + uuid1 + `", "facetName": "P", "content": ["a", {"id": "` + uuid2 + `", "children": [{"id": "` + uuid1 + `", "creationId": "c"}]}]}]`)}},
			file + `: element 0 (id ` + uuid1 + `): content[1].children[0].creationId: "c" is not a UUID (want the form xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx) (element starts on line 1)`},
		{"empty relation name", fstest.MapFS{file: {Data: []byte(`[{"id": "` + uuid1 + `", "facetName": "P", "related": {"": []}}]`)}},
			file + `: element 0 (id ` + uuid1 + `): related: relation name is empty (element starts on line 1)`},
		{"bad root path", fstest.MapFS{file: {Data: []byte(`[{"id": "` + uuid1 + `", "facetName": "P", "rootPath": [{"id": "` + uuid1 + `", "variantDefinitionId": "-"}]}]`)}},
			file + `: element 0 (id ` + uuid1 + `): rootPath[0].variantDefinitionId: "-" is not a UUID (want the form xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx) (element starts on line 1)`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Load(tt.files)
			if err == nil {
				t.Fatalf("Load = %v, want error %q", got, tt.want)
			}
			if diff := cmp.Diff(tt.want, err.Error()); diff != "" {
				t.Fatalf("error (-want +got):\n%s", diff)
			}
		})
	}
}

func TestElementErrorFields(t *testing.T) {
	_, err := Load(fstest.MapFS{"reporting/" + tenantA + ".json": {Data: []byte(`[{"id": "` + uuid1 + `"}]`)}})
	ee, ok := errors.AsType[*ElementError](err)
	if !ok {
		t.Fatalf("error %v is not an *ElementError", err)
	}
	want := &ElementError{File: "reporting/" + tenantA + ".json", Index: 0, ID: uuid1, Path: "facetName", Reason: "missing (element starts on line 1)"}
	if diff := cmp.Diff(want, ee); diff != "" {
		t.Fatalf("(-want +got):\n%s", diff)
	}
}

// TestDemoData loads the reference server's demo landscape, so that it stays valid and
// keeps what it is there to show.
func TestDemoData(t *testing.T) {
	tenants, err := LoadDir("../internal/demodata")
	if err != nil {
		t.Fatal(err)
	}
	if len(tenants) != 2 || tenants[tenantA] == nil || tenants[tenantB] == nil {
		t.Fatalf("tenants = %d, want %s and %s", len(tenants), tenantA, tenantB)
	}
	facets := map[string]int{}
	var variants, variantVersions, versions, related, children, twoLanguages, nestedContent int
	for _, e := range tenants[tenantA] {
		facets[e.FacetName]++
		variants += len(e.Variants)
		for _, v := range e.Variants {
			variantVersions += len(v.Versions)
		}
		versions += len(e.Versions)
		related += len(e.Related)
		children += len(e.Children)
		if name := e.Attributes["name"]; name["en"] != "" && name["de"] != "" {
			twoLanguages++
		}
		for _, c := range e.Content {
			if c.Element != nil {
				nestedContent++
			}
		}
	}
	wantFacets := map[string]int{"Processes": 5, "Activities": 8, "Roles": 4, "IT Systems": 3, "Documents": 5}
	if diff := cmp.Diff(wantFacets, facets); diff != "" {
		t.Errorf("facets (-want +got):\n%s", diff)
	}
	if twoLanguages != len(tenants[tenantA]) {
		t.Errorf("%d of %d elements are named in English and German", twoLanguages, len(tenants[tenantA]))
	}
	if variants == 0 || variantVersions == 0 || versions == 0 || related == 0 || children == 0 || nestedContent == 0 {
		t.Errorf("demo lacks a feature: variants %d, variant versions %d, versions %d, relations %d, children %d, content elements %d",
			variants, variantVersions, versions, related, children, nestedContent)
	}
}
