package odata

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/kmkit/kmkit/storage/memory"
)

// The fixture: the KM of testdata/shop in the memory store, served with a fixed clock.

var (
	shopOnce  sync.Once
	shopStore *memory.KMStore
	shopErr   error
)

func testStore(t testing.TB) *memory.KMStore {
	t.Helper()
	shopOnce.Do(func() {
		shopStore = memory.New().KM()
		shopErr = shopStore.Import(context.Background(), os.DirFS("testdata/shop"))
	})
	if shopErr != nil {
		t.Fatal(shopErr)
	}
	return shopStore
}

var testNow = time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC)

func testHandler(t testing.TB, opts ...Option) *Handler {
	h := NewHandler(testStore(t), opts...)
	h.now = func() time.Time { return testNow }
	return h
}

// get serves GET target (a path with query string) with the given header pairs.
func get(h http.Handler, target string, header ...string) *httptest.ResponseRecorder {
	r := httptest.NewRequest(http.MethodGet, "http://example.com"+target, nil)
	for i := 0; i+1 < len(header); i += 2 {
		r.Header.Add(header[i], header[i+1])
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	return w
}
