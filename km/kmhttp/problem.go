package kmhttp

import (
	"encoding/json"
	"net/http"
	"strconv"

	"github.com/kmkit/kmkit/problem"
	"github.com/kmkit/kmkit/problem/problemhttp"
)

// writeProblem is WriteProblem as the handler's routing.ErrorWriter.
func writeProblem(w http.ResponseWriter, _ *http.Request, p *problem.Problem) { WriteProblem(w, p) }

// WriteProblem writes p in the KM API's error shape: a 401 as {"error": detail}
// (application/json), as the KM API's clients expect, anything else as a problem body. It
// is the error writer to give the auth middleware (auth.Policy.WriteError) in front of the
// KM API, and of endpoints that share its credentials, such as mcp's and a server's metrics.
func WriteProblem(w http.ResponseWriter, p *problem.Problem) {
	if p.Status != http.StatusUnauthorized {
		problemhttp.Send(w, p)
		return
	}
	body, _ := json.Marshal(struct {
		Error string `json:"error"`
	}{p.Detail}) // a string: cannot fail
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(p.Status)
	_, _ = w.Write(body)
}
