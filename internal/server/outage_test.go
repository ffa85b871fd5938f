package server

import (
	"encoding/json"
	"io"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// tcpProxy forwards connections to a database, so that a test can cut the server off from
// it (a connection to a closed port) without stopping the shared database server.
type tcpProxy struct {
	ln     net.Listener
	target string
	mu     sync.Mutex
	conns  []net.Conn
	wg     sync.WaitGroup
}

func startProxy(t *testing.T, addr, target string) *tcpProxy {
	t.Helper()
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	p := &tcpProxy{ln: ln, target: target}
	p.wg.Go(func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			d, err := net.Dial("tcp", target)
			if err != nil {
				c.Close()
				continue
			}
			p.mu.Lock()
			p.conns = append(p.conns, c, d)
			p.mu.Unlock()
			go func() { io.Copy(d, c); d.Close() }()
			go func() { io.Copy(c, d); c.Close() }()
		}
	})
	t.Cleanup(p.stop)
	return p
}

// stop closes the listener and every forwarded connection.
func (p *tcpProxy) stop() {
	p.ln.Close()
	p.wg.Wait()
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range p.conns {
		c.Close()
	}
	p.conns = nil
}

// proxiedDatabase returns a proxy in front of a fresh schema of the PostgreSQL server of
// KMKIT_POSTGRES_DSN (the test skips without it), the URL that reaches the schema through
// the proxy, and a keys file holding the key all-key-0001 with every API permission.
func proxiedDatabase(t *testing.T) (*tcpProxy, *url.URL, string) {
	t.Helper()
	dsn := postgresSchemaDSN(t)
	if dsn == "" {
		t.Skip("KMKIT_POSTGRES_DSN is not set")
	}
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatal(err)
	}
	proxy := startProxy(t, "127.0.0.1:0", u.Host)
	u.Host = proxy.ln.Addr().String()
	keys := filepath.Join(t.TempDir(), "keys.yaml")
	data := "keys:\n  - key: \"all-key-0001\"\n    name: all\n    team: acme\n    tenant: 7d6c8f5e-2a4b-4c1d-9e3f-0a1b2c3d4e5f\n    permissions: [km, odata, scim, reporting]\n"
	if err := os.WriteFile(keys, []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
	return proxy, u, keys
}

// TestDatabaseOutage cuts a server on PostgreSQL off from its database: every API answers
// 503 with Retry-After in its own error shape (never 500), through the auth middleware's
// limiter and, with the budget off, through each handler's store; /healthz says so; once
// the database is reachable again, the same server serves again.
func TestDatabaseOutage(t *testing.T) {
	proxy, u, keys := proxiedDatabase(t)
	addr := u.Host
	apps := map[string]*app{
		"limiter in the database": newTestApp(t, config{keysFile: keys, db: u.String()}),
		"no budget":               newTestApp(t, config{keysFile: keys, db: u.String(), ratePerHour: -1, burst: 1000, concurrency: 100}),
	}
	const (
		kmData   = "/intelligence/api/knowledge-models/o2c/records/ORDERS/data?fields=ORDER_ID&pageSize=2"
		odataSet = "/intelligence/api/odata/o2c.svc/ORDERS_entries?$top=2"
		users    = "/user-provisioning/scim/v2/Users"
		elements = "/api/v1/elements?Take=2"
		detail   = "the database is unavailable; retry later"
	)
	problem := map[string]any{"title": "Service Unavailable", "status": 503.0, "detail": detail,
		"errorCode": "GENERAL_SERVICE_UNAVAILABLE", "type": "urn:kmkit:problem:GENERAL_SERVICE_UNAVAILABLE"}
	odataError := map[string]any{"error": map[string]any{"code": "GENERAL_SERVICE_UNAVAILABLE", "message": detail, "details": []any{}}}
	for k, v := range problem {
		odataError[k] = v
	}
	scimError := map[string]any{"schemas": []any{"urn:ietf:params:scim:api:messages:2.0:Error"}, "status": "503", "detail": detail}
	requests := []struct {
		method, target, body, contentType string
		want                              map[string]any
	}{
		{"GET", kmData, "", "application/problem+json", problem},
		{"POST", "/intelligence/api/knowledge-models/o2c/data", `{"projection":{"fields":"ORDERS.STATUS"}}`, "application/problem+json", problem},
		{"GET", odataSet, "", "application/problem+json", odataError},
		{"GET", users, "", "application/scim+json", scimError},
		{"POST", users, `{"schemas":["urn:ietf:params:scim:schemas:core:2.0:User"],"userName":"a@example.com"}`, "application/scim+json", scimError},
		{"GET", users + "/2819c223-7f76-453a-919d-413861904646", "", "application/scim+json", scimError},
		{"GET", elements, "", "application/problem+json", problem},
	}
	serves := func(when string) {
		t.Helper()
		for name, a := range apps {
			for _, target := range []string{kmData, odataSet, users, elements} {
				if w := sendAll(a, "GET", target, ""); w.Code != 200 {
					t.Errorf("%s, %s: GET %s: %d %s", when, name, target, w.Code, w.Body)
				}
			}
			if w := get(t, a.handler, "/healthz", ""); w.Code != 200 || w.Body.String() != "ok\n" {
				t.Errorf("%s, %s: /healthz %d %q", when, name, w.Code, w.Body)
			}
		}
	}
	serves("before the outage")

	proxy.stop()
	for name, a := range apps {
		for _, tt := range requests {
			w := sendAll(a, tt.method, tt.target, tt.body)
			var got map[string]any
			json.Unmarshal(w.Body.Bytes(), &got)
			if w.Code != 503 || w.Header().Get("Retry-After") != "5" || w.Header().Get("Content-Type") != tt.contentType || !cmp.Equal(tt.want, got) {
				t.Errorf("%s: %s %s during the outage: %d Retry-After %q %s %s\nwant 503 Retry-After 5 %s %v",
					name, tt.method, tt.target, w.Code, w.Header().Get("Retry-After"), w.Header().Get("Content-Type"), w.Body, tt.contentType, tt.want)
			}
		}
		w := get(t, a.handler, "/healthz", "")
		if w.Code != 503 || w.Header().Get("Retry-After") != "5" || !strings.Contains(w.Body.String(), "database unavailable") {
			t.Errorf("%s: /healthz during the outage: %d %q", name, w.Code, w.Body)
		}
	}

	startProxy(t, addr, proxy.target)
	time.Sleep(50 * time.Millisecond)
	serves("after the outage")
}

// TestWritesInFlightWhenTheDatabaseGoesAway cuts a server on PostgreSQL off from its
// database while SCIM writes run on it: every write answers 201 or 503 with Retry-After,
// none 500 (a statement whose connection is lost, and the rollback of its transaction,
// are outages too), and every write that answered 201 is in the database once it is
// reachable again.
func TestWritesInFlightWhenTheDatabaseGoesAway(t *testing.T) {
	proxy, u, keys := proxiedDatabase(t)
	addr := u.Host
	a := newTestApp(t, config{keysFile: keys, db: u.String(), ratePerHour: -1, burst: -1, concurrency: -1})
	const users = "/user-provisioning/scim/v2/Users"
	var (
		mu      sync.Mutex
		created []string
		refused int
		wrong   []string
		done    = make(chan struct{})
		wg      sync.WaitGroup
	)
	for g := range 8 {
		wg.Go(func() {
			for i := 0; ; i++ {
				select {
				case <-done:
					return
				default:
				}
				body := `{"schemas":["urn:ietf:params:scim:schemas:core:2.0:User"],"userName":"w` + strconv.Itoa(g) + "-" + strconv.Itoa(i) + `@example.com"}`
				w := sendAll(a, "POST", users, body)
				mu.Lock()
				switch {
				case w.Code == 201:
					var u struct{ ID string }
					json.Unmarshal(w.Body.Bytes(), &u)
					created = append(created, u.ID)
				case w.Code == 503 && w.Header().Get("Retry-After") == "5":
					refused++
				default:
					wrong = append(wrong, strconv.Itoa(w.Code)+" "+w.Body.String())
				}
				mu.Unlock()
			}
		})
	}
	time.Sleep(400 * time.Millisecond)
	proxy.stop()
	time.Sleep(300 * time.Millisecond)
	close(done)
	wg.Wait()
	t.Logf("%d writes answered 201, %d 503", len(created), refused)
	for _, w := range wrong {
		t.Errorf("a write answered neither 201 nor 503 with Retry-After: %s", w)
	}
	if len(created) == 0 || refused == 0 {
		t.Fatalf("%d writes answered 201 and %d 503: the cut did not land among the writes", len(created), refused)
	}
	startProxy(t, addr, proxy.target)
	time.Sleep(50 * time.Millisecond)
	for _, id := range created {
		if w := sendAll(a, "GET", users+"/"+id, ""); w.Code != 200 {
			t.Errorf("user %s answered 201 but reads %d %s after the outage", id, w.Code, w.Body)
		}
	}
}
