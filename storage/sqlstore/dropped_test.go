package sqlstore_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kmkit/kmkit/principal"
	"github.com/kmkit/kmkit/scim"
	"github.com/kmkit/kmkit/scim/scimhttp"
)

// TestSCIMConnectionDropped creates users through a DB whose connections to PostgreSQL
// are cut while the writes run (a proxy in front of the server, closed with its
// connections, as a failing network or a server restart would): every answer is 201 or
// 503 with Retry-After, never a 500, and every user answered 201 is in the database
// afterwards, whole (name, version, and the seat count that the team's lock guards).
func TestSCIMConnectionDropped(t *testing.T) {
	dsn := postgresDSN(t)
	px, through := proxied(t, dsn)
	st := open(t, through).SCIM()
	h := scimhttp.NewHandler(st)
	p := &principal.Principal{Name: "idp", Team: "acme", Permissions: []principal.Permission{principal.PermSCIM}}

	const n = 64
	var (
		mu      sync.Mutex
		codes   = map[int]int{}
		created []string
		wg      sync.WaitGroup
		cut     = make(chan struct{})
		cutOnce sync.Once
	)
	for i := range n {
		wg.Go(func() {
			time.Sleep(time.Duration(i) * 2 * time.Millisecond)
			name := fmt.Sprintf("d%d@example.com", i)
			r := httptest.NewRequest("POST", "http://idm.example"+scimhttp.BasePath+"/Users", strings.NewReader(userBody(name)))
			r.Header.Set("Content-Type", "application/scim+json")
			w := httptest.NewRecorder()
			h.ServeHTTP(w, r.WithContext(principal.NewContext(r.Context(), p)))
			mu.Lock()
			defer mu.Unlock()
			codes[w.Code]++
			switch {
			case w.Code == http.StatusCreated:
				created = append(created, name)
				if len(created) == n/4 {
					cutOnce.Do(func() { close(cut) })
				}
			case w.Code == http.StatusServiceUnavailable && w.Header().Get("Retry-After") != "":
			default:
				t.Errorf("POST %s: %d (Retry-After %q) %s", name, w.Code, w.Header().Get("Retry-After"), w.Body)
			}
		})
	}
	go func() { wg.Wait(); cutOnce.Do(func() { close(cut) }) }() // should fewer succeed
	<-cut                                                        // a quarter written: the connections go, writes under way with them
	px.stop()
	wg.Wait()
	t.Logf("answers: %v", codes)
	if codes[http.StatusServiceUnavailable] == 0 {
		t.Errorf("no write was cut: %v", codes)
	}

	direct := open(t, dsn).SCIM()
	users, total, err := direct.ListUsers(t.Context(), "acme", scim.ListQuery{Count: n})
	if err != nil {
		t.Fatal(err)
	}
	stored := map[string]scim.User{}
	for _, u := range users {
		stored[u.UserName] = u
	}
	for _, name := range created {
		if u, ok := stored[name]; !ok || u.Version == 0 || !u.Active {
			t.Errorf("user %s answered 201 but is stored as %+v (found %v)", name, u, ok)
		}
	}
	// A write cut at its commit may have committed (the client saw 503 and retries, then
	// finds it: 409), never half of one.
	if total < len(created) || total > n {
		t.Errorf("%d users stored, %d answered 201", total, len(created))
	}
}
