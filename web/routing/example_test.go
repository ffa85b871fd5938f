package routing_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"

	"github.com/kmkit/kmkit/problem"
	"github.com/kmkit/kmkit/problem/problemhttp"
	"github.com/kmkit/kmkit/web/routing"
)

// A host's own handler beside the kmkit APIs answers an unknown path, a method it does not
// serve and HEAD as they do, in the KM API's problem body.
func ExampleAPI() {
	api := &routing.API{Name: "hello", Write: func(w http.ResponseWriter, _ *http.Request, p *problem.Problem) {
		problemhttp.Send(w, p)
	}}
	h := api.Handler(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/hello" {
			api.NotFound(w, r, "the service answers /hello")
			return
		}
		if api.Allow(w, r, http.MethodGet) {
			fmt.Fprint(w, "hello")
		}
	})
	for _, req := range [][2]string{{"GET", "/hello"}, {"HEAD", "/hello"}, {"DELETE", "/hello"}, {"GET", "/bye"}} {
		w := httptest.NewRecorder()
		h.ServeHTTP(w, httptest.NewRequest(req[0], req[1], nil))
		fmt.Printf("%s %s: %d, Allow %q, %d bytes\n", req[0], req[1], w.Code, w.Header().Get("Allow"), w.Body.Len())
		if w.Body.Len() > 0 {
			fmt.Println(w.Body)
		}
	}
	// Output:
	// GET /hello: 200, Allow "", 5 bytes
	// hello
	// HEAD /hello: 200, Allow "", 0 bytes
	// DELETE /hello: 405, Allow "GET, HEAD", 208 bytes
	// {"title":"Method Not Allowed","status":405,"detail":"method DELETE is not allowed on /hello; allowed: GET, HEAD","errorCode":"GENERAL_METHOD_NOT_ALLOWED","type":"urn:kmkit:problem:GENERAL_METHOD_NOT_ALLOWED"}
	// GET /bye: 404, Allow "", 178 bytes
	// {"title":"Not Found","status":404,"detail":"no endpoint at /bye: the service answers /hello","errorCode":"GENERAL_NOTFOUND_PATH","type":"urn:kmkit:problem:GENERAL_NOTFOUND_PATH"}
}
