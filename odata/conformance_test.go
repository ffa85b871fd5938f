package odata

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/kmkit/kmkit/internal/demodata/demostore"
	"github.com/kmkit/kmkit/internal/nodetools"
)

// The tests here run real OData consumers against the handler on loopback: xmllint with
// the OASIS EDMX/EDM XSDs and ajv with the CSDL JSON Schema (both shipped in the npm
// package odata-csdl), odata-csdl's XML-to-JSON converter, @sap-ux/edmx-parser and the
// @odata/client OData client. The npm packages live in conformance/ (npm ci there).
//
// Without them the tests skip, unless KMKIT_ODATA_TOOLS names the tools directory: CI
// sets it after installing them, and then a missing tool fails the test.

// conformanceTools returns the directory holding node_modules and probe.js.
func conformanceTools(t *testing.T) string {
	t.Helper()
	return nodetools.Dir(t, "KMKIT_ODATA_TOOLS", "conformance",
		[]string{"odata-csdl", "ajv", "@sap-ux/edmx-parser", "@odata/client"}, "xmllint")
}

// run runs a command in dir and returns its standard output; a failure is fatal and
// shows standard error.
func run(t *testing.T, dir string, name string, args ...string) []byte {
	t.Helper()
	out, err := runErr(dir, name, args...)
	if err != nil {
		t.Fatalf("%s %s: %v", name, strings.Join(args, " "), err)
	}
	return out
}

func runErr(dir string, name string, args ...string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = dir
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return stdout.Bytes(), &toolError{err: err, stderr: stderr.String()}
	}
	return stdout.Bytes(), nil
}

type toolError struct {
	err    error
	stderr string
}

func (e *toolError) Error() string { return e.err.Error() + "\n" + e.stderr }

// probe runs conformance/probe.js and decodes its JSON answer into out.
func probe(t *testing.T, tools string, out any, args ...string) {
	t.Helper()
	b := run(t, tools, "node", append([]string{"probe.js"}, args...)...)
	if err := json.Unmarshal(b, out); err != nil {
		t.Fatalf("probe %s: %v in %s", args[0], err, b)
	}
}

// serveShop starts the handler over the test KM on a loopback server.
func serveShop(t *testing.T) *httptest.Server {
	mux := http.NewServeMux()
	mux.Handle(BasePath+"/", testHandler(t, WithMaxPageSize(4)))
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv
}

// fetch GETs url and writes the body to a file in dir.
func fetch(t *testing.T, url, dir, name string) string {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var b bytes.Buffer
	if _, err := b.ReadFrom(resp.Body); err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %d %s", url, resp.StatusCode, b.Bytes())
	}
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestConformanceMetadata(t *testing.T) {
	tools := conformanceTools(t)
	srv := serveShop(t)
	xmlFile, _ := checkMetadata(t, tools, srv.URL+BasePath+"/shop.svc/")
	// What the KM definition (testdata/shop/models/shop.yaml) says, written out.
	str := func(n string, null bool) edmxProp { return edmxProp{n, "Edm.String", null} }
	want := edmxSchema{
		Namespace: "ODataKnowledgeModel",
		Container: "Container",
		EntityTypes: []edmxType{
			{"ODataKnowledgeModel.CUSTOMERS", []string{"ID"}, []edmxProp{str("ID", false), str("NAME", true), str("COUNTRY", true)},
				// ORDERS.CUST -> CUSTOMERS.ID: the orders of a customer.
				[]edmxNav{{"ORDERS", "ODataKnowledgeModel.ORDERS", true, "CUSTOMERS"}}},
			{"ODataKnowledgeModel.ORDERS", []string{"ID"}, []edmxProp{str("ID", false), str("CUST", true),
				{"DAY", "Edm.Date", true}, {"CREATED", "Edm.DateTimeOffset", true}, {"SEEN", "Edm.DateTimeOffset", true},
				{"SLOT", "Edm.TimeOfDay", true}, str("STATUS", true), {"NET", "Edm.Double", true},
				{"LATE", "Edm.Int64", true}, {"EXPRESS", "Edm.Boolean", true}},
				[]edmxNav{{"CUSTOMERS", "ODataKnowledgeModel.CUSTOMERS", false, "ORDERS"}, {"EVENTS", "ODataKnowledgeModel.EVENTS", true, "ORDERS"}}},
			{"ODataKnowledgeModel.EVENTS", []string{"ROW_NUMBER"}, []edmxProp{{"ROW_NUMBER", "Edm.Int64", false},
				str("ORDER_ID", true), str("ACTIVITY", true), {"AT", "Edm.DateTimeOffset", true}},
				// EVENTS.ORDER_ID -> ORDERS.ID: the order of an event.
				[]edmxNav{{"ORDERS", "ODataKnowledgeModel.ORDERS", false, "EVENTS"}}},
		},
		EntitySets: []edmxSet{
			{"CUSTOMERS_entries", "ODataKnowledgeModel.CUSTOMERS"},
			{"ORDERS_entries", "ODataKnowledgeModel.ORDERS"},
			{"EVENTS_entries", "ODataKnowledgeModel.EVENTS"},
		},
	}
	var got edmxSchema
	probe(t, tools, &got, "edmx", xmlFile)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("@sap-ux/edmx-parser read (-want +got):\n%s", diff)
	}
}

// The demo KMs of the reference server pass the same checks, and @sap-ux/edmx-parser reads
// from their $metadata what their definitions say.
func TestConformanceDemoMetadata(t *testing.T) {
	tools := conformanceTools(t)
	store, err := demostore.Store(0)
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.Handle(BasePath+"/", NewHandler(store))
	srv := httptest.NewServer(mux)
	defer srv.Close()
	models, err := store.Models(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	// The EDM type of each definition type, written out independently of edmType.
	edm := map[string]string{"string": "Edm.String", "integer": "Edm.Int64", "float": "Edm.Double", "number": "Edm.Double",
		"boolean": "Edm.Boolean", "date": "Edm.Date", "datetime": "Edm.DateTimeOffset", "timestamp": "Edm.DateTimeOffset", "time": "Edm.TimeOfDay"}
	for _, m := range models {
		t.Run(m.ID, func(t *testing.T) {
			xmlFile, _ := checkMetadata(t, tools, srv.URL+BasePath+"/"+m.ID+".svc/")
			want := edmxSchema{Namespace: "ODataKnowledgeModel", Container: "Container"}
			for _, r := range m.Records {
				et := edmxType{Name: "ODataKnowledgeModel." + r.ID, Keys: []string{r.Key}}
				if r.Key == "" {
					et.Keys = []string{"ROW_NUMBER"}
					et.Properties = append(et.Properties, edmxProp{"ROW_NUMBER", "Edm.Int64", false})
				}
				for _, f := range r.Fields {
					et.Properties = append(et.Properties, edmxProp{f.ID, edm[f.TypeName], f.ID != r.Key})
				}
				// The demo's relationships need no disambiguation: a to-one property named
				// after the referred record, a to-many one after the referring record.
				for _, rel := range m.Relationships {
					if rel.From.Record == r.ID {
						et.Navigation = append(et.Navigation, edmxNav{rel.To.Record, "ODataKnowledgeModel." + rel.To.Record, false, rel.From.Record})
					}
					if rel.To.Record == r.ID {
						et.Navigation = append(et.Navigation, edmxNav{rel.From.Record, "ODataKnowledgeModel." + rel.From.Record, true, rel.To.Record})
					}
				}
				want.EntityTypes = append(want.EntityTypes, et)
				want.EntitySets = append(want.EntitySets, edmxSet{r.ID + "_entries", "ODataKnowledgeModel." + r.ID})
			}
			var got edmxSchema
			probe(t, tools, &got, "edmx", xmlFile)
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("@sap-ux/edmx-parser read (-want +got):\n%s", diff)
			}
		})
	}
}

// What probe.js edmx prints.
type (
	edmxProp struct {
		Name, Type string
		Nullable   bool
	}
	edmxNav struct {
		Name, Target string
		Collection   bool
		Partner      string
	}
	edmxType struct {
		Name       string
		Keys       []string
		Properties []edmxProp
		Navigation []edmxNav
	}
	edmxSet    struct{ Name, EntityType string }
	edmxSchema struct {
		Namespace, Container string
		EntityTypes          []edmxType
		EntitySets           []edmxSet
	}
)

// checkMetadata fetches the CSDL XML and JSON of the service at root and checks them:
// the XML against the OASIS EDMX/EDM XSDs (xmllint), the JSON against the CSDL JSON
// Schema (ajv), and the XML converted by odata-csdl equal to the JSON. It returns the
// files' paths.
func checkMetadata(t *testing.T, tools, root string) (xmlFile, jsonFile string) {
	t.Helper()
	dir := t.TempDir()
	xmlFile = fetch(t, root+"$metadata", dir, "metadata.xml")
	jsonFile = fetch(t, root+"$metadata?$format=json", dir, "metadata.json")
	t.Run("XSD", func(t *testing.T) {
		xsd := filepath.Join(tools, "node_modules", "odata-csdl", "schemas", "edmx.xsd")
		run(t, dir, "xmllint", "--noout", "--nonet", "--schema", xsd, xmlFile)
		// The check can fail: a broken facet is refused.
		xml, err := os.ReadFile(xmlFile)
		if err != nil {
			t.Fatal(err)
		}
		bad := filepath.Join(dir, "bad.xml")
		if err := os.WriteFile(bad, bytes.Replace(xml, []byte(`Nullable="true"`), []byte(`Nullable="maybe"`), 1), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := runErr(dir, "xmllint", "--noout", "--nonet", "--schema", xsd, bad); err == nil {
			t.Error("xmllint accepted Nullable=\"maybe\"")
		}
	})

	t.Run("JSONSchema", func(t *testing.T) {
		var got struct {
			Valid  bool
			Errors []any
		}
		probe(t, tools, &got, "csdl-schema", jsonFile)
		if !got.Valid {
			t.Errorf("CSDL JSON invalid: %v", got.Errors)
		}
		bad := filepath.Join(dir, "bad.json")
		if err := os.WriteFile(bad, []byte(`{"$Version":4.01,"ODataKnowledgeModel":{"T":{"$Kind":"EntityType","$Key":"ID"}}}`), 0o644); err != nil {
			t.Fatal(err)
		}
		probe(t, tools, &got, "csdl-schema", bad)
		if got.Valid {
			t.Error("the CSDL JSON Schema accepted a numeric $Version and a string $Key")
		}
	})

	t.Run("XML2JSON", func(t *testing.T) {
		var got struct {
			JSON     map[string]any
			Messages []string
		}
		probe(t, tools, &got, "xml2json", xmlFile)
		if len(got.Messages) > 0 {
			t.Errorf("xml2json reported: %q", got.Messages)
		}
		var ours map[string]any
		b, err := os.ReadFile(jsonFile)
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(b, &ours); err != nil {
			t.Fatal(err)
		}
		// Both state version 4.0, the payloads' version; the documents differ by design
		// only in that ours states the defaults $Type Edm.String and $Nullable false.
		if ours["$Version"] != "4.0" || got.JSON["$Version"] != "4.0" {
			t.Errorf("$Version: ours %v, converted %v; want 4.0 in both", ours["$Version"], got.JSON["$Version"])
		}
		dropDefaults(ours)
		if diff := cmp.Diff(got.JSON, ours); diff != "" {
			t.Errorf("converted XML (-) and our JSON (+) differ:\n%s", diff)
		}
	})

	return xmlFile, jsonFile
}

// dropDefaults removes the members CSDL JSON lets a document leave out because they hold
// the default: "$Type": "Edm.String" and "$Nullable": false.
func dropDefaults(v any) {
	switch v := v.(type) {
	case map[string]any:
		if v["$Type"] == "Edm.String" {
			delete(v, "$Type")
		}
		if v["$Nullable"] == false {
			delete(v, "$Nullable")
		}
		for _, x := range v {
			dropDefaults(x)
		}
	case []any:
		for _, x := range v {
			dropDefaults(x)
		}
	}
}

func TestConformanceClient(t *testing.T) {
	tools := conformanceTools(t)
	srv := serveShop(t)
	root := srv.URL + BasePath + "/shop.svc/"
	type result struct {
		Count int
		Rows  []map[string]any
	}
	tests := []struct {
		name, set, filter, orderby, top string
		want                            result
	}{
		{"numbers", "ORDERS_entries", "NET gt 0 and STATUS ne 'SHIPPED'", "NET desc", "3", result{Count: 4, Rows: []map[string]any{
			{"ID": "O4", "CUST": "C3", "DAY": "2025-03-01", "CREATED": "2025-03-01T09:15:00Z", "SEEN": "2025-03-01T09:15:00Z",
				"SLOT": nil, "STATUS": "OPEN", "NET": 1200.0, "LATE": nil, "EXPRESS": false},
			{"ID": "O2", "CUST": "C1", "DAY": "2025-02-10", "CREATED": "2025-02-10T08:30:00Z", "SEEN": "2025-02-10T08:30:00Z",
				"SLOT": "12:00:00", "STATUS": "PAID", "NET": 250.0, "LATE": 2.0, "EXPRESS": true},
			{"ID": "O1", "CUST": "C1", "DAY": "2025-01-05", "CREATED": "2025-01-05T10:00:00Z", "SEEN": "2025-01-05T10:00:00.25Z",
				"SLOT": "08:30:00", "STATUS": "OPEN", "NET": 100.5, "LATE": nil, "EXPRESS": false},
		}}},
		{"text and dates", "CUSTOMERS_entries", "COUNTRY eq 'DE' or contains(NAME,'''')", "NAME asc", "10", result{Count: 3, Rows: []map[string]any{
			{"ID": "C4", "NAME": "Berg+Co", "COUNTRY": "DE"},
			{"ID": "C1", "NAME": "Müller & Söhne <GmbH>", "COUNTRY": "DE"},
			{"ID": "C2", "NAME": `O'Brien "Ltd"`, "COUNTRY": "IE"},
		}}},
		// Navigation (testdata/shop): O1 and O2 belong to C1, O5 to C4, the customers in
		// DE; O2 and O3 are PAID, of C1 and C2; O2 and O5 have a Ship event in February
		// or later (O1's is in January).
		{"path", "ORDERS_entries", "CUSTOMERS/COUNTRY eq 'DE' and NET gt 1", "NET desc", "10", result{Count: 2, Rows: []map[string]any{
			{"ID": "O2", "CUST": "C1", "DAY": "2025-02-10", "CREATED": "2025-02-10T08:30:00Z", "SEEN": "2025-02-10T08:30:00Z",
				"SLOT": "12:00:00", "STATUS": "PAID", "NET": 250.0, "LATE": 2.0, "EXPRESS": true},
			{"ID": "O1", "CUST": "C1", "DAY": "2025-01-05", "CREATED": "2025-01-05T10:00:00Z", "SEEN": "2025-01-05T10:00:00.25Z",
				"SLOT": "08:30:00", "STATUS": "OPEN", "NET": 100.5, "LATE": nil, "EXPRESS": false},
		}}},
		{"any", "CUSTOMERS_entries", "ORDERS/any(o: o/STATUS eq 'PAID')", "NAME asc", "10", result{Count: 2, Rows: []map[string]any{
			{"ID": "C1", "NAME": "Müller & Söhne <GmbH>", "COUNTRY": "DE"},
			{"ID": "C2", "NAME": `O'Brien "Ltd"`, "COUNTRY": "IE"},
		}}},
		{"any, two conditions on one event", "ORDERS_entries", "EVENTS/any(e: e/ACTIVITY eq 'Ship' and e/AT ge 2025-02-01T00:00:00Z)", "ID asc", "10", result{Count: 2, Rows: []map[string]any{
			{"ID": "O2", "CUST": "C1", "DAY": "2025-02-10", "CREATED": "2025-02-10T08:30:00Z", "SEEN": "2025-02-10T08:30:00Z",
				"SLOT": "12:00:00", "STATUS": "PAID", "NET": 250.0, "LATE": 2.0, "EXPRESS": true},
			{"ID": "O5", "CUST": "C4", "DAY": "2025-03-02", "CREATED": "2025-03-02T23:59:59Z", "SEEN": "2025-03-02T23:59:59Z",
				"SLOT": "09:00:00", "STATUS": "SHIPPED", "NET": 0.1, "LATE": 5.0, "EXPRESS": true},
		}}},
		// More rows than a server page (4): the answer is the first page. The generated
		// key is the row's position in events.csv.
		{"keyless, paged", "EVENTS_entries", "AT ge 2025-02-01T00:00:00+01:00", "AT asc", "6", result{Count: 7, Rows: []map[string]any{
			{"ROW_NUMBER": 3.0, "ORDER_ID": "O2", "ACTIVITY": "Create", "AT": "2025-02-10T08:30:00Z"},
			{"ROW_NUMBER": 6.0, "ORDER_ID": "O3", "ACTIVITY": "Create", "AT": "2025-02-11T12:00:00Z"},
			{"ROW_NUMBER": 4.0, "ORDER_ID": "O2", "ACTIVITY": "Ship", "AT": "2025-02-12T08:30:00Z"},
			{"ROW_NUMBER": 5.0, "ORDER_ID": "O2", "ACTIVITY": "Pay", "AT": "2025-02-20T08:30:00Z"},
		}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got result
			probe(t, tools, &got, "client", root, tt.set, tt.filter, tt.orderby, tt.top)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("@odata/client got (-want +got):\n%s", diff)
			}
		})
	}
}
