package kmhttp_test

import (
	"context"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"testing/fstest"

	"github.com/kmkit/kmkit/km"
	"github.com/kmkit/kmkit/km/kmhttp"
	"github.com/kmkit/kmkit/storage/memory"
)

// cachedTarget asks for the first two rows of km/testdata/shop/data/customers.csv by ID,
// which cachedWant holds.
const (
	cachedTarget = api + "/shop-base/records/CUSTOMERS/data?fields=ID,NAME&sort=ID&pageSize=2"
	cachedWant   = `{"page":0,"pageSize":2,"total":2,"sort":["+ID"],"content":{
		"headers":[
			{"id":"ID","name":"Customer","type":"string","format":"","unit":"","aggregation":false,"filterable":true,"sortable":true},
			{"id":"NAME","name":"Customer name","type":"string","format":"","unit":"","aggregation":false,"filterable":true,"sortable":true}],
		"data":[{"ID":"C1","NAME":"Müller GmbH"},{"ID":"C2","NAME":"D'Artagnan SA"}]}}`
)

// TestPlanCacheConcurrent: the same GET from several goroutines at once, planned by one
// and read from the cache by the others, answers the same (run with -race), also
// next to other requests filling the cache.
func TestPlanCacheConcurrent(t *testing.T) {
	s := memory.New().KM()
	if err := s.Import(context.Background(), os.DirFS("../testdata/shop")); err != nil {
		t.Fatal(err)
	}
	h := kmhttp.NewHandler(s)
	var wg sync.WaitGroup
	errs := make(chan string, 8)
	for g := range 8 {
		wg.Go(func() {
			for i := range 30 {
				if g%2 == 1 {
					// Other plans: pages of one row.
					w := call(h, http.MethodGet, api+"/shop-base/records/CUSTOMERS/data?fields=ID&sort=ID&pageSize=1&page="+strconv.Itoa(i%4), "")
					if w.Code != http.StatusOK {
						errs <- w.Body.String()
						return
					}
					continue
				}
				w := call(h, http.MethodGet, cachedTarget, "")
				if w.Code != http.StatusOK || jsonDiff(t, cachedWant, w.Body.String()) != "" {
					errs <- w.Body.String()
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Errorf("a concurrent request answered %s", e)
	}
}

// TestPlanCacheFollowsTheModel: a repeated data GET answers the same, also from the
// handler's cached plan, and a KM replaced in the store is planned anew: a field the new
// KM no longer has is refused although the same request was answered (and its plan kept)
// before.
func TestPlanCacheFollowsTheModel(t *testing.T) {
	s := memory.New().KM()
	if err := s.Import(context.Background(), os.DirFS("../testdata/shop")); err != nil {
		t.Fatal(err)
	}
	h := kmhttp.NewHandler(s)
	target, want := cachedTarget, cachedWant
	var first string
	for i := range 3 {
		w := call(h, http.MethodGet, target, "")
		if w.Code != http.StatusOK {
			t.Fatalf("request %d: status %d: %s", i, w.Code, w.Body)
		}
		if diff := jsonDiff(t, want, w.Body.String()); diff != "" {
			t.Fatalf("request %d (-want +got):\n%s", i, diff)
		}
		if i == 0 {
			first = w.Body.String()
		} else if w.Body.String() != first {
			t.Fatalf("request %d answered\n%s\nthe first\n%s", i, w.Body, first)
		}
	}

	// The same KM without CUSTOMERS.NAME.
	fsys := fstest.MapFS{}
	for _, name := range []string{"shop-base.yaml", "shop.yaml"} {
		b, err := os.ReadFile("../testdata/shop/models/" + name)
		if err != nil {
			t.Fatal(err)
		}
		text := strings.Replace(string(b), "      - {id: NAME, name: Customer name, type: string, description: Legal name}\n", "", 1)
		fsys["models/"+name] = &fstest.MapFile{Data: []byte(text)}
	}
	models, err := km.Load(fsys)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range models {
		if m.ID != "shop-base" {
			continue
		}
		if m.Record("CUSTOMERS").Field("NAME") != nil {
			t.Fatal("the edited KM still has CUSTOMERS.NAME")
		}
		if err := s.PutModel(context.Background(), m); err != nil {
			t.Fatal(err)
		}
	}
	w := call(h, http.MethodGet, target, "")
	if w.Code != http.StatusBadRequest || !strings.Contains(w.Body.String(), `"errorCode":"KM_FIELD_NOTFOUND"`) || !strings.Contains(w.Body.String(), "NAME") {
		t.Fatalf("after the KM lost NAME: status %d: %s; want 400 KM_FIELD_NOTFOUND naming NAME", w.Code, w.Body)
	}
}
