// Package head answers HEAD requests with the handlers that serve GET, as RFC 9110
// (section 9.3.2) asks of every resource that answers GET.
//
// The kmkit handlers route by method themselves; Handler puts one rule in front of all of
// them instead of a copy in each: a HEAD request reaches the handler as a GET, and its
// answer goes out with the same status and headers and no body. A route that does not
// serve GET answers HEAD with its 405, and every 405 whose Allow header lists GET also
// lists HEAD.
//
// Mount it outside the authentication middleware and inside logging and metrics, so
// those record the method the client sent:
//
//	mux.Handle(kmhttp.BasePath+"/", head.Handler(guard.Wrap(kmPolicy, kmhttp.NewHandler(store))))
package head

import (
	"net/http"
	"strings"
)

// Handler returns next with HEAD served as GET without a body, and HEAD added to the Allow
// header of 405 answers that allow GET. GET requests reach next untouched.
func Handler(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.Method {
		case http.MethodGet:
			next.ServeHTTP(w, r)
		case http.MethodHead:
			get := r.WithContext(r.Context()) // a shallow copy
			get.Method = http.MethodGet
			next.ServeHTTP(&writer{ResponseWriter: w, bodyless: true}, get)
		default:
			next.ServeHTTP(&writer{ResponseWriter: w}, r)
		}
	})
}

// writer completes Allow on 405 answers and, for HEAD, drops the body. The headers,
// Content-Length included, are those of the GET answer.
type writer struct {
	http.ResponseWriter
	bodyless bool
	wrote    bool
}

func (w *writer) WriteHeader(status int) {
	if !w.wrote {
		w.wrote = true
		if status == http.StatusMethodNotAllowed {
			addHead(w.Header())
		}
	}
	w.ResponseWriter.WriteHeader(status)
}

func (w *writer) Write(b []byte) (int, error) {
	if !w.wrote {
		w.WriteHeader(http.StatusOK)
	}
	if w.bodyless {
		return len(b), nil
	}
	return w.ResponseWriter.Write(b)
}

// Unwrap lets http.ResponseController reach the underlying writer.
func (w *writer) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// addHead adds HEAD to an Allow header that lists GET and not HEAD.
func addHead(h http.Header) {
	allow := h.Get("Allow")
	var get bool
	for m := range strings.SplitSeq(allow, ",") {
		switch strings.TrimSpace(m) {
		case http.MethodHead:
			return
		case http.MethodGet:
			get = true
		}
	}
	if get {
		h.Set("Allow", allow+", "+http.MethodHead)
	}
}
