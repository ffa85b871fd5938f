package server

import (
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestBadTextIsRefusedBeforeTheStore sends NUL characters and bytes that are not UTF-8 in
// query parameters, path segments and JSON bodies to every API, on memory, SQLite and (with
// KMKIT_POSTGRES_DSN) PostgreSQL, whose text type refuses both (SQLSTATE 22021): each is a
// 400 in the API's own error shape, the same on every database, and nothing is stored.
func TestBadTextIsRefusedBeforeTheStore(t *testing.T) {
	dir := t.TempDir()
	keys := filepath.Join(dir, "keys.yaml")
	data := "keys:\n  - key: \"all-key-0001\"\n    name: all\n    team: acme\n    tenant: 7d6c8f5e-2a4b-4c1d-9e3f-0a1b2c3d4e5f\n    permissions: [km, odata, scim, reporting]\n"
	if err := os.WriteFile(keys, []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
	dbs := map[string]string{"memory": "memory:", "sqlite": "sqlite:" + filepath.Join(dir, "kmkit.db")}
	if dsn := postgresSchemaDSN(t); dsn != "" {
		dbs["postgres"] = dsn
	}
	const (
		kmPath   = "/intelligence/api/knowledge-models/o2c"
		scimPath = "/user-provisioning/scim/v2"
		suffix   = ": text in requests must be UTF-8 without NUL characters"
		problem  = `{"title":"Bad Request","status":400,"detail":"%s","errorCode":"GENERAL_PARAMETER_ILLEGAL","type":"urn:kmkit:problem:GENERAL_PARAMETER_ILLEGAL"}`
		// OData answers carry OData's error object next to the problem members.
		odataErr = `{"title":"Bad Request","status":400,"detail":"%s","errorCode":"GENERAL_PARAMETER_ILLEGAL","type":"urn:kmkit:problem:GENERAL_PARAMETER_ILLEGAL","error":{"code":"GENERAL_PARAMETER_ILLEGAL","message":"%s","details":[]}}`
		scimErr  = `{"schemas":["urn:ietf:params:scim:api:messages:2.0:Error"],"scimType":"invalidValue","detail":"%s","status":"400"}`
	)
	nul := ` contains a NUL character (U+0000)` + suffix
	notUTF8 := ` is not valid UTF-8` + suffix
	tests := []struct {
		method, target, body, wantType, want string
	}{
		{"GET", kmPath + "/records/ORDERS/data?fields=ORDER_ID&filterExpr=STATUS%20eq%20'%00'", "", "application/problem+json",
			fmtBody(problem, `query parameter \"filterExpr\"`+nul)},
		{"GET", kmPath + "/records/ORDERS/data?fields=ORDER_ID&filterExpr=STATUS%20eq%20'%FF'", "", "application/problem+json",
			fmtBody(problem, `query parameter \"filterExpr\"`+notUTF8)},
		{"GET", kmPath + "/data?fields=ORDERS.STATUS&searchTerm=a%00", "", "application/problem+json",
			fmtBody(problem, `query parameter \"searchTerm\"`+nul)},
		{"GET", kmPath + "/records/OR%00DERS/data", "", "application/problem+json",
			fmtBody(problem, `path segment 6 \"OR\\x00DERS\"`+nul)},
		{"POST", kmPath + "/data", `{"projection":{"fields":"ORDERS.STATUS","filters":{"filterExpr":["ORDERS.STATUS eq 'a\u0000'"]}}}`, "application/problem+json",
			fmtBody(problem, `request body at byte 85 (JSON escape \\u0000)`+nul)},
		{"POST", kmPath + "/data", "{\"projection\":{\"fields\":\"ORDERS.STATUS\",\"filters\":{\"filterExpr\":[\"ORDERS.STATUS eq '\xff'\"]}}}", "application/problem+json",
			fmtBody(problem, `request body at byte 84`+notUTF8)},
		{"GET", "/intelligence/api/odata/o2c.svc/ORDERS_entries?$filter=STATUS%20eq%20'%00'", "", "application/problem+json",
			fmtBody(odataErr, `query parameter \"$filter\"`+nul)},
		{"GET", "/intelligence/api/odata/o2c.svc/ORDERS_entries?$filter=STATUS%20eq%20'%C3'", "", "application/problem+json",
			fmtBody(odataErr, `query parameter \"$filter\"`+notUTF8)},
		{"GET", "/api/v1/elements?FacetName=%00", "", "application/problem+json",
			fmtBody(problem, `query parameter \"FacetName\"`+nul)},
		{"GET", "/api/v1/elements?FacetName=%E2%82", "", "application/problem+json",
			fmtBody(problem, `query parameter \"FacetName\"`+notUTF8)},
		{"GET", scimPath + "/Users/%00", "", "application/scim+json",
			fmtBody(scimErr, `path segment 5 \"\\x00\"`+nul)},
		{"GET", scimPath + "/Groups/%FF", "", "application/scim+json",
			fmtBody(scimErr, `path segment 5 \"\\xff\"`+notUTF8)},
		{"GET", scimPath + "/Users?filter=userName%20eq%20%22a%00%22", "", "application/scim+json",
			fmtBody(scimErr, `query parameter \"filter\"`+nul)},
		{"POST", scimPath + "/Groups", `{"schemas":["urn:ietf:params:scim:schemas:core:2.0:Group"],"displayName":"a\u0000"}`, "application/scim+json",
			fmtBody(scimErr, `request body at byte 75 (JSON escape \\u0000)`+nul)},
		{"POST", scimPath + "/Groups", "{\"schemas\":[\"urn:ietf:params:scim:schemas:core:2.0:Group\"],\"displayName\":\"a\xc0\"}", "application/scim+json",
			fmtBody(scimErr, `request body at byte 75`+notUTF8)},
		{"POST", scimPath + "/Users/.search", `{"schemas":["urn:ietf:params:scim:api:messages:2.0:SearchRequest"],"filter":"userName eq \"\u0000\""}`, "application/scim+json",
			fmtBody(scimErr, `request body at byte 91 (JSON escape \\u0000)`+nul)},
	}
	for name, dsn := range dbs {
		t.Run(name, func(t *testing.T) {
			a := newTestApp(t, config{keysFile: keys, db: dsn})
			defer a.close()
			for _, tt := range tests {
				w := sendAll(a, tt.method, tt.target, tt.body)
				if w.Code != 400 || w.Body.String() != tt.want || w.Header().Get("Content-Type") != tt.wantType {
					t.Errorf("%s %q: %d %s %s\nwant 400 %s %s", tt.method, tt.target, w.Code, w.Header().Get("Content-Type"), w.Body, tt.wantType, tt.want)
				}
			}
			w := sendAll(a, "GET", scimPath+"/Groups", "")
			if w.Code != 200 || !strings.Contains(w.Body.String(), `"totalResults":0`) {
				t.Errorf("groups after the refused creates: %d %s", w.Code, w.Body)
			}
		})
	}
}

// fmtBody puts detail in place of every %s of format.
func fmtBody(format, detail string) string { return strings.ReplaceAll(format, "%s", detail) }

// sendAll sends a request with the test key in the headers of every API.
func sendAll(a *app, method, target, body string) *httptest.ResponseRecorder {
	var r *http.Request
	if body != "" {
		r = httptest.NewRequest(method, target, strings.NewReader(body))
		r.Header.Set("Content-Type", "application/json")
	} else {
		r = httptest.NewRequest(method, target, nil)
	}
	r.Header.Set("Authorization", "AppKey all-key-0001")
	r.Header.Set("x-api-key", "all-key-0001")
	r.Header.Set("x-tenant-id", "7d6c8f5e-2a4b-4c1d-9e3f-0a1b2c3d4e5f")
	w := httptest.NewRecorder()
	a.handler.ServeHTTP(w, r)
	return w
}
