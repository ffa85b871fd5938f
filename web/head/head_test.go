package head

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"
)

// page is a handler of GET only, as the kmkit handlers route.
var page = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet {
		w.Header().Set("Allow", "GET, POST")
		w.WriteHeader(http.StatusMethodNotAllowed)
		io.WriteString(w, "no")
		return
	}
	body := "hello " + r.URL.Query().Get("who")
	w.Header().Set("Content-Type", "text/plain")
	w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	io.WriteString(w, body)
})

func TestHEADAnswersAsGET(t *testing.T) {
	srv := httptest.NewServer(Handler(page))
	defer srv.Close()
	for _, m := range []string{http.MethodGet, http.MethodHead} {
		req, _ := http.NewRequest(m, srv.URL+"/?who=you", nil)
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(res.Body)
		res.Body.Close()
		want := "hello you"
		if m == http.MethodHead {
			want = ""
		}
		if res.StatusCode != 200 || string(body) != want || res.Header.Get("Content-Length") != "9" || res.Header.Get("Content-Type") != "text/plain" {
			t.Errorf("%s: %d %q %v", m, res.StatusCode, body, res.Header)
		}
	}
}

func TestAllowGainsHEAD(t *testing.T) {
	for _, m := range []string{http.MethodPut, http.MethodDelete} {
		w := httptest.NewRecorder()
		Handler(page).ServeHTTP(w, httptest.NewRequest(m, "/", nil))
		if w.Code != 405 || w.Header().Get("Allow") != "GET, POST, HEAD" || w.Body.String() != "no" {
			t.Errorf("%s: %d %q %q", m, w.Code, w.Header().Get("Allow"), w.Body)
		}
	}
	postOnly := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Allow", "POST")
		w.WriteHeader(http.StatusMethodNotAllowed)
	})
	w := httptest.NewRecorder()
	Handler(postOnly).ServeHTTP(w, httptest.NewRequest(http.MethodHead, "/", nil))
	if w.Code != 405 || w.Header().Get("Allow") != "POST" {
		t.Errorf("HEAD on a POST route: %d %q", w.Code, w.Header().Get("Allow"))
	}
	already := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Allow", "GET, HEAD")
		w.WriteHeader(http.StatusMethodNotAllowed)
	})
	w = httptest.NewRecorder()
	Handler(already).ServeHTTP(w, httptest.NewRequest(http.MethodPost, "/", nil))
	if w.Header().Get("Allow") != "GET, HEAD" {
		t.Errorf("Allow %q", w.Header().Get("Allow"))
	}
}
