package server

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestParseConfig(t *testing.T) {
	tests := []struct {
		name string
		args []string
		env  map[string]string
		want config
		err  string
	}{
		{name: "defaults", want: config{addr: ":8080", db: "sqlite:kmkit.db", maxPageSize: 5000, maxBody: 1 << 20, ratePerHour: 6000, burst: 50, concurrency: 20}},
		{name: "environment", env: map[string]string{"KMKIT_ADDR": ":9000", "KMKIT_DEMO_ROWS": "100", "KMKIT_MAX_PAGE_SIZE": "10", "KMKIT_LOG_LEVEL": "debug", "KMKIT_KEYS": "k.yaml"},
			want: config{addr: ":9000", db: "sqlite:kmkit.db", demoRows: 100, maxPageSize: 10, maxBody: 1 << 20, ratePerHour: 6000, burst: 50, concurrency: 20, keysFile: "k.yaml", logLevel: slog.LevelDebug}},
		{name: "flags win", args: []string{"-addr", ":1", "-max-page-size", "20", "-data", "dir"}, env: map[string]string{"KMKIT_ADDR": ":9000", "KMKIT_MAX_PAGE_SIZE": "10"},
			want: config{addr: ":1", db: "sqlite:kmkit.db", maxPageSize: 20, maxBody: 1 << 20, ratePerHour: 6000, burst: 50, concurrency: 20, dataDir: "dir"}},
		{name: "limits", args: []string{"-burst", "100", "-concurrency", "-1"}, env: map[string]string{"KMKIT_RATE_PER_HOUR": "20000", "KMKIT_BURST": "7"},
			want: config{addr: ":8080", db: "sqlite:kmkit.db", maxPageSize: 5000, maxBody: 1 << 20, ratePerHour: 20000, burst: 100, concurrency: -1}},
		{name: "zero burst", args: []string{"-burst", "0"}, err: "-rate-per-hour, -burst and -concurrency must be positive, or -1 for no limit"},
		{name: "bad variable", env: map[string]string{"KMKIT_DEMO_ROWS": "many"}, err: `KMKIT_DEMO_ROWS="many" is not an integer`},
		{name: "demo rows and data", args: []string{"-demo-rows", "5", "-data", "x"}, err: "-demo-rows and -data exclude each other"},
		{name: "negative rows", args: []string{"-demo-rows", "-1"}, err: "-demo-rows must not be negative"},
		{name: "page size", args: []string{"-max-page-size", "0"}, err: "-max-page-size must be at least 1"},
		{name: "log level", args: []string{"-log-level", "loud"}, err: `-log-level "loud": want debug, info, warn or error`},
		{name: "operations", args: []string{"-cors-origins", "https://a.example, http://localhost:3000", "-metrics-addr", ":9090", "-data", "d", "-watch", "5s", "-version"},
			want: config{addr: ":8080", db: "sqlite:kmkit.db", maxPageSize: 5000, maxBody: 1 << 20, ratePerHour: 6000, burst: 50, concurrency: 20, dataDir: "d",
				corsOrigins: []string{"https://a.example", "http://localhost:3000"}, metricsAddr: ":9090", watch: 5 * time.Second, version: true}},
		{name: "cors from the environment", env: map[string]string{"KMKIT_CORS_ORIGINS": "*"},
			want: config{addr: ":8080", db: "sqlite:kmkit.db", maxPageSize: 5000, maxBody: 1 << 20, ratePerHour: 6000, burst: 50, concurrency: 20, corsOrigins: []string{"*"}}},
		{name: "bad origin", args: []string{"-cors-origins", "https://a.example/"}, err: "-cors-origins: cors: origin https://a.example/ is not scheme://host[:port] (no path, not even a trailing /)"},
		{name: "bad watch", args: []string{"-data", "d", "-watch", "often"}, err: `-watch "often": want a duration such as 10s`},
		{name: "watch without data", args: []string{"-watch", "1s"}, err: "-watch needs -data"},
		{name: "query bounds", args: []string{"-query-timeout", "5s", "-query-budget", "-1"}, env: map[string]string{"KMKIT_QUERY_TIMEOUT": "1m", "KMKIT_QUERY_BUDGET": "7"},
			want: config{addr: ":8080", db: "sqlite:kmkit.db", maxPageSize: 5000, maxBody: 1 << 20, ratePerHour: 6000, burst: 50, concurrency: 20, queryTimeout: 5 * time.Second, queryBudget: -1}},
		{name: "query bounds from the environment", env: map[string]string{"KMKIT_QUERY_TIMEOUT": "1m", "KMKIT_QUERY_BUDGET": "7"},
			want: config{addr: ":8080", db: "sqlite:kmkit.db", maxPageSize: 5000, maxBody: 1 << 20, ratePerHour: 6000, burst: 50, concurrency: 20, queryTimeout: time.Minute, queryBudget: 7}},
		{name: "bad query timeout", args: []string{"-query-timeout", "0s"}, err: `-query-timeout "0s": want a positive duration such as 30s`},
		{name: "zero query budget", args: []string{"-query-budget", "0"}, err: "-query-budget must be positive, or -1 for no budget"},
		{name: "query memory", args: []string{"-query-memory", "-1"}, env: map[string]string{"KMKIT_QUERY_MEMORY": "7"},
			want: config{addr: ":8080", db: "sqlite:kmkit.db", maxPageSize: 5000, maxBody: 1 << 20, ratePerHour: 6000, burst: 50, concurrency: 20, queryMemory: -1}},
		{name: "query memory from the environment", env: map[string]string{"KMKIT_QUERY_MEMORY": "1048576"},
			want: config{addr: ":8080", db: "sqlite:kmkit.db", maxPageSize: 5000, maxBody: 1 << 20, ratePerHour: 6000, burst: 50, concurrency: 20, queryMemory: 1 << 20}},
		{name: "zero query memory", args: []string{"-query-memory", "0"}, err: "-query-memory must be positive, or -1 for no bound"},
		{name: "read replicas", args: []string{"-db", "postgres://p/kmkit", "-db-replicas", "postgres://r1/kmkit, postgresql://r2/kmkit"},
			want: config{addr: ":8080", db: "postgres://p/kmkit", dbReplicas: []string{"postgres://r1/kmkit", "postgresql://r2/kmkit"}, maxPageSize: 5000, maxBody: 1 << 20, ratePerHour: 6000, burst: 50, concurrency: 20}},
		{name: "read replicas from the environment", env: map[string]string{"KMKIT_DB": "postgres://p/kmkit", "KMKIT_DB_REPLICAS": "postgres://r1/kmkit"},
			want: config{addr: ":8080", db: "postgres://p/kmkit", dbReplicas: []string{"postgres://r1/kmkit"}, maxPageSize: 5000, maxBody: 1 << 20, ratePerHour: 6000, burst: 50, concurrency: 20}},
		{name: "read replicas on SQLite", args: []string{"-db-replicas", "postgres://r1/kmkit"}, err: "-db-replicas needs a PostgreSQL -db (postgres://...)"},
		{name: "read replica not postgres", args: []string{"-db", "postgres://p/kmkit", "-db-replicas", "mysql://u:secret@r1/kmkit"}, err: `-db-replicas: "mysql://u:xxxxx@r1/kmkit" is not a postgres:// URL`},
		{name: "stray argument", args: []string{"serve"}, err: `unexpected arguments ["serve"]`},
		{name: "unknown flag", args: []string{"-port", "1"}, err: "flag provided but not defined: -port"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, err := parseConfig(tt.args, func(k string) string { return tt.env[k] }, io.Discard)
			if tt.err != "" {
				if err == nil || err.Error() != tt.err {
					t.Fatalf("error %v, want %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			want := tt.want
			if want.queryTimeout == 0 {
				want.queryTimeout = 30 * time.Second // the defaults, given here once
			}
			if want.queryBudget == 0 {
				want.queryBudget = 2_000_000_000
			}
			if want.queryMemory == 0 {
				want.queryMemory = defaultQueryMemory()
			}
			if diff := cmp.Diff(want, *cfg, cmp.AllowUnexported(config{})); diff != "" {
				t.Errorf("config (-want +got):\n%s", diff)
			}
		})
	}
}

// newTestApp assembles the server in process.
func newTestApp(t *testing.T, cfg config) *app {
	t.Helper()
	if cfg.maxPageSize == 0 {
		cfg.maxPageSize = 5000
	}
	if cfg.maxBody == 0 {
		cfg.maxBody = 1 << 20
	}
	a, err := newApp(&cfg, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	return a
}

func get(t *testing.T, h http.Handler, target, key string) *httptest.ResponseRecorder {
	t.Helper()
	r := httptest.NewRequest(http.MethodGet, target, nil)
	if key != "" {
		r.Header.Set("Authorization", "AppKey "+key)
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	return w
}

func TestDemoRowsGeneratesTheRequestedOrders(t *testing.T) {
	a := newTestApp(t, config{demoRows: 3000})
	w := get(t, a.handler, "/intelligence/api/knowledge-models/o2c-base/query?kpis=ORDER_COUNT", a.devKey)
	if w.Code != 200 || w.Body.String() != `{"page":0,"pageSize":50,"total":1,"sort":[],"content":[{"ORDER_COUNT":3000}]}` {
		t.Fatalf("status %d: %s", w.Code, w.Body)
	}
	w = get(t, a.handler, "/intelligence/api/knowledge-models/o2c/records/CUSTOMERS/query?fields=CUSTOMER_ID&sort=-CUSTOMER_ID&pageSize=1", a.devKey)
	if w.Code != 200 || w.Body.String() != `{"page":0,"pageSize":1,"total":1,"sort":["-CUSTOMER_ID"],"content":[{"CUSTOMER_ID":"C-000050"}]}` {
		t.Fatalf("status %d: %s", w.Code, w.Body)
	}
}

func TestDataDirectory(t *testing.T) {
	dir := t.TempDir()
	if err := os.CopyFS(dir, os.DirFS("../../km/testdata/shop")); err != nil {
		t.Fatal(err)
	}
	a := newTestApp(t, config{dataDir: dir})
	w := get(t, a.handler, "/intelligence/api/knowledge-models", a.devKey)
	want := `{"page":0,"pageSize":50,"total":2,"sort":"","content":[{"id":"shop","name":"Shop"},{"id":"shop-base","name":"Shop (base)","published":"2026-01-15T10:00:00Z"}]}`
	if w.Code != 200 || w.Body.String() != want {
		t.Fatalf("status %d: %s", w.Code, w.Body)
	}
	// A broken definition names the directory, the file and the line.
	if err := os.WriteFile(filepath.Join(dir, "models", "shop.yaml"), []byte("id: shop\nextends: gone\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := newApp(&config{dataDir: dir, maxPageSize: 10, maxBody: 10}, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if want := filepath.Clean(dir) + `: models/shop.yaml:2: extends unknown KM "gone"`; err == nil || err.Error() != want {
		t.Fatalf("error %v, want %s", err, want)
	}
	// An order id twice in orders.csv, the target of ITEMS.ORDER_ID and EVENTS.ORDER_ID:
	// refused with the directory, the KM, the source, the relationship and the value.
	good, err := os.ReadFile("../../km/testdata/shop/models/shop.yaml")
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(dir, "models", "shop.yaml"), string(good))
	orders := filepath.Join(dir, "data", "orders.csv")
	data, err := os.ReadFile(orders)
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, orders, string(data)+"O2,C2,2025-03-01,2025-03-01T09:00:00Z,OPEN,1,,false\n")
	_, err = newApp(&config{dataDir: dir, maxPageSize: 10, maxBody: 10}, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if want := filepath.Clean(dir) + `: memory: KM shop: the data of source orders: relationship ITEMS.ORDER_ID -> ORDERS.ID: ORDERS.ID holds "O2" in more than one row; the target of a relationship must be unique`; err == nil || err.Error() != want {
		t.Fatalf("error %v, want %s", err, want)
	}
}

func TestRoutesOfTheServer(t *testing.T) {
	a := newTestApp(t, config{})
	tests := []struct {
		target, key string
		status      int
		body        string // prefix
	}{
		{"/healthz", "", 200, "ok\n"},
		{"/intelligence/api/knowledge-models", "", 401, `{"error":"missing credentials`},
		{"/intelligence/api/knowledge-models", "wrong", 401, `{"error":"invalid application key"}`},
		{"/intelligence/api/knowledge-models", a.devKey, 200, `{"page":0,"pageSize":50,"total":2,"sort":"","content":[{"id":"o2c","name":"Order to Cash","published":"2026-02-01T08:30:00Z"}`},
		{"/intelligence/api/knowledge-models/o2c", a.devKey, 200, `{"id":"o2c","name":"Order to Cash","extendedKMId":"o2c-base"}`},
		{"/nowhere", a.devKey, 404, `{"title":"Not Found","status":404,"detail":"no endpoint at /nowhere","errorCode":"GENERAL_NOTFOUND_PATH"`},
		{"/user-provisioning/scim/v2/ServiceProviderConfig", a.devKey, 200, `{`},
		{"/intelligence/api/odata/o2c.svc", a.devKey, 200, `{"@odata.context":`},
		{"/intelligence/api/odata/o2c.svc/ORDERS_entries?$top=1&$select=ORDER_ID", a.devKey, 200, `{"@odata.context":`},
	}
	for _, tt := range tests {
		w := get(t, a.handler, tt.target, tt.key)
		if w.Code != tt.status || !strings.HasPrefix(w.Body.String(), tt.body) {
			t.Errorf("GET %s: %d %s; want %d %s...", tt.target, w.Code, w.Body, tt.status, tt.body)
		}
	}
}

// TestODataVersionOnRefusals checks that the OData service's answers carry OData-Version
// also when the auth middleware refuses the request.
func TestODataVersionOnRefusals(t *testing.T) {
	a := newTestApp(t, config{})
	for _, key := range []string{"", "wrong", a.devKey} {
		w := get(t, a.handler, "/intelligence/api/odata/o2c.svc", key)
		if got := w.Header().Get("OData-Version"); got != "4.0" {
			t.Errorf("key %q: status %d, OData-Version %q, want 4.0", key, w.Code, got)
		}
	}
}

// TestBinary builds the server, starts it without arguments (the address comes from
// KMKIT_ADDR so the test can pick a free port), and uses the printed key.
func TestBinary(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the server binary")
	}
	bin := filepath.Join(t.TempDir(), "server")
	build := exec.Command("go", "build", "-o", bin, "../../cmd/kmkit")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin)
	cmd.Dir = t.TempDir() // the default -db is sqlite:kmkit.db in the working directory
	cmd.Env = append(os.Environ(), "KMKIT_ADDR=127.0.0.1:0")
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		if cmd.ProcessState == nil {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
		}
	}()
	var base, key string
	sc := bufio.NewScanner(stdout)
	for sc.Scan() && (base == "" || key == "") {
		line := sc.Text()
		if rest, ok := strings.CutPrefix(line, "kmkit listening on "); ok {
			base = rest
		}
		if _, rest, ok := strings.Cut(line, "development key (valid until the server stops): "); ok {
			key = rest
		}
	}
	if base == "" || key == "" {
		t.Fatalf("no address or key printed; stderr:\n%s", stderr.String())
	}
	go func() { _, _ = io.Copy(io.Discard, stdout) }()

	fetch := func(path, key string) (int, string) {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+path, nil)
		if err != nil {
			t.Fatal(err)
		}
		if key != "" {
			req.Header.Set("Authorization", "AppKey "+key)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(body)
	}
	if code, body := fetch("/healthz", ""); code != 200 || body != "ok\n" {
		t.Errorf("/healthz: %d %q", code, body)
	}
	if code, body := fetch("/intelligence/api/knowledge-models", ""); code != 401 || !strings.HasPrefix(body, `{"error":`) {
		t.Errorf("without key: %d %s", code, body)
	}
	code, body := fetch("/intelligence/api/knowledge-models/o2c/data?fields=ORDERS.STATUS&kpis=ORDER_COUNT&sort=ORDERS.STATUS", key)
	if code != 200 {
		t.Fatalf("KM data: %d %s", code, body)
	}
	var page struct {
		Total   int
		Content struct {
			Data []map[string]any
		}
	}
	if err := json.Unmarshal([]byte(body), &page); err != nil {
		t.Fatal(err)
	}
	sum := 0.0
	for _, row := range page.Content.Data {
		sum += row["ORDER_COUNT"].(float64)
	}
	if page.Total != 5 || sum != 1000 {
		t.Errorf("orders by status: %d groups, %v orders; want 5 and 1000: %s", page.Total, sum, body)
	}
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("server exit: %v\nstderr:\n%s", err, stderr.String())
	}
	if !strings.Contains(stderr.String(), "msg=stopped") || !strings.Contains(stderr.String(), "msg=request method=GET api=health route=/healthz status=200") ||
		!strings.Contains(stderr.String(), "route=/intelligence/api/knowledge-models/{km_id}/data status=200") || !strings.Contains(stderr.String(), "principal=development") {
		t.Errorf("log lacks the request or the shutdown:\n%s", stderr.String())
	}
}

func TestKeysFile(t *testing.T) {
	keys := filepath.Join(t.TempDir(), "keys.yaml")
	data := "keys:\n  - key: \"analyst-key-0001\"\n    name: analyst\n    team: acme\n    permissions: [km]\n"
	if err := os.WriteFile(keys, []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
	a := newTestApp(t, config{keysFile: keys})
	if a.devKey != "" {
		t.Errorf("a development key was made although a keys file is given")
	}
	if w := get(t, a.handler, "/intelligence/api/knowledge-models/o2c-base/kpis?pageSize=1", "analyst-key-0001"); w.Code != 200 {
		t.Errorf("KM with the file's key: %d %s", w.Code, w.Body)
	}
	if w := get(t, a.handler, "/user-provisioning/scim/v2/Users", "analyst-key-0001"); w.Code != 403 {
		t.Errorf("SCIM without the scim permission: %d %s", w.Code, w.Body)
	}
	bad := filepath.Join(t.TempDir(), "bad.yaml")
	if err := os.WriteFile(bad, []byte("keys:\n  - key: x\n    permissions: [everything]\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := newApp(&config{keysFile: bad, maxPageSize: 10, maxBody: 10}, slog.New(slog.NewTextHandler(io.Discard, nil))); err == nil || !strings.Contains(err.Error(), "bad.yaml:3:") {
		t.Errorf("bad keys file: %v", err)
	}
}

// The seed's license rule, reached end to end: seats per team from the keys file's teams
// section, the -seats default for the others, on memory and SQLite.
func TestSeatLimitsFromKeysFile(t *testing.T) {
	for _, db := range []string{"memory:", "sqlite:" + filepath.Join(t.TempDir(), "k.db")} {
		t.Run(db, func(t *testing.T) {
			keys := filepath.Join(t.TempDir(), "keys.yaml")
			data := "keys:\n" +
				"  - {key: acme-scim-key-01, team: acme, permissions: [scim]}\n" +
				"  - {key: beta-scim-key-01, team: beta, permissions: [scim]}\n" +
				"  - {key: gamma-scim-key-1, team: gamma, permissions: [scim]}\n" +
				"teams:\n  acme: {seats: 2}\n  gamma: {seats: 0}\n"
			if err := os.WriteFile(keys, []byte(data), 0o600); err != nil {
				t.Fatal(err)
			}
			a := newTestApp(t, config{keysFile: keys, db: db, seats: 1})
			t.Cleanup(func() { a.close() })
			create := func(key, name string) *httptest.ResponseRecorder {
				body := `{"schemas":["urn:ietf:params:scim:schemas:core:2.0:User"],"userName":"` + name + `"}`
				r := httptest.NewRequest(http.MethodPost, "/user-provisioning/scim/v2/Users", strings.NewReader(body))
				r.Header.Set("Authorization", "AppKey "+key)
				r.Header.Set("Content-Type", "application/scim+json")
				w := httptest.NewRecorder()
				a.handler.ServeHTTP(w, r)
				return w
			}
			exceeded := func(active, limit int) string {
				return fmt.Sprintf(`{"schemas":["urn:ietf:params:scim:api:messages:2.0:Error"],"detail":"The license of the team is exceeded: %d of %d seats are in use.","status":"400"}`, active, limit)
			}
			steps := []struct {
				key, name string
				code      int
				body      string
			}{
				{"acme-scim-key-01", "a1@example.com", 201, ""},
				{"acme-scim-key-01", "a2@example.com", 201, ""},
				{"acme-scim-key-01", "a3@example.com", 400, exceeded(2, 2)}, // teams: acme: {seats: 2}
				{"beta-scim-key-01", "b1@example.com", 201, ""},
				{"beta-scim-key-01", "b2@example.com", 400, exceeded(1, 1)}, // -seats 1
				{"gamma-scim-key-1", "g1@example.com", 201, ""},
				{"gamma-scim-key-1", "g2@example.com", 201, ""}, // seats: 0 is unlimited
			}
			for _, st := range steps {
				w := create(st.key, st.name)
				if w.Code != st.code || (st.body != "" && strings.TrimSpace(w.Body.String()) != st.body) {
					t.Errorf("%s %s: %d %s", st.key, st.name, w.Code, w.Body)
				}
			}
		})
	}
}

// One body-size setting: -max-body limits SCIM Bulk too and is what the
// ServiceProviderConfig advertises as maxPayloadSize.
func TestMaxBodyIsTheBulkLimit(t *testing.T) {
	keys := filepath.Join(t.TempDir(), "keys.yaml")
	if err := os.WriteFile(keys, []byte("keys:\n  - {key: acme-scim-key-01, team: acme, permissions: [scim]}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	a := newTestApp(t, config{keysFile: keys, maxBody: 4096})
	t.Cleanup(func() { a.close() })
	send := func(method, path, body string) *httptest.ResponseRecorder {
		r := httptest.NewRequest(method, "/user-provisioning/scim/v2"+path, strings.NewReader(body))
		r.Header.Set("Authorization", "AppKey acme-scim-key-01")
		if body != "" {
			r.Header.Set("Content-Type", "application/scim+json")
		}
		w := httptest.NewRecorder()
		a.handler.ServeHTTP(w, r)
		return w
	}
	var spc struct {
		Bulk struct{ MaxPayloadSize int64 }
	}
	w := send("GET", "/ServiceProviderConfig", "")
	if err := json.Unmarshal(w.Body.Bytes(), &spc); err != nil || spc.Bulk.MaxPayloadSize != 4096 {
		t.Errorf("ServiceProviderConfig: %d %s", w.Code, w.Body)
	}
	bulk := func(n int) string {
		ops := make([]string, n)
		for i := range ops {
			ops[i] = fmt.Sprintf(`{"method":"POST","path":"/Users","bulkId":"u%d","data":{"schemas":["urn:ietf:params:scim:schemas:core:2.0:User"],"userName":"user%03d@example.com","displayName":"%s"}}`, i, i, strings.Repeat("x", 40))
		}
		return `{"schemas":["urn:ietf:params:scim:api:messages:2.0:BulkRequest"],"failOnErrors":100,"Operations":[` + strings.Join(ops, ",") + `]}`
	}
	small := bulk(18)
	if len(small) < 3000 || len(small) > 4096 {
		t.Fatalf("the small Bulk has %d bytes", len(small))
	}
	if w := send("POST", "/Bulk", small); w.Code != http.StatusOK || strings.Count(w.Body.String(), `"status":"201"`) != 18 {
		t.Errorf("a %d-byte Bulk under -max-body 4096: %d %s", len(small), w.Code, w.Body)
	}
	large := bulk(30)
	w = send("POST", "/Bulk", large)
	want := `{"schemas":["urn:ietf:params:scim:api:messages:2.0:Error"],"detail":"The bulk request exceeds maxPayloadSize (4096 bytes).","status":"413"}`
	if w.Code != http.StatusRequestEntityTooLarge || strings.TrimSpace(w.Body.String()) != want {
		t.Errorf("a %d-byte Bulk: %d %s", len(large), w.Code, w.Body)
	}
}

// TestDefaultQueryMemory checks -query-memory's default on Linux against MemTotal read
// here on its own: an eighth of it, or of the cgroup's limit when that is lower.
func TestDefaultQueryMemory(t *testing.T) {
	b, err := os.ReadFile("/proc/meminfo")
	if err != nil {
		t.Skip("no /proc/meminfo:", err)
	}
	var kb int64
	for _, line := range strings.Split(string(b), "\n") {
		if _, err := fmt.Sscanf(line, "MemTotal: %d kB", &kb); err == nil {
			break
		}
	}
	if kb == 0 {
		t.Fatalf("no MemTotal in /proc/meminfo:\n%s", b)
	}
	want := kb * 1024 / 8
	if b, err := os.ReadFile("/sys/fs/cgroup/memory.max"); err == nil {
		var limit int64
		if _, err := fmt.Sscanf(string(b), "%d", &limit); err == nil && limit > 0 && limit < kb*1024 {
			want = limit / 8
		}
	}
	if got := defaultQueryMemory(); got != max(want, 64<<20) {
		t.Errorf("defaultQueryMemory() = %d, want %d", got, max(want, 64<<20))
	}
}
