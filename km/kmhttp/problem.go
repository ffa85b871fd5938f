package kmhttp

import (
	"net/http"

	"github.com/kmkit/kmkit/problem"
	"github.com/kmkit/kmkit/problem/problemhttp"
)

// writeProblem is WriteProblem as the handler's routing.ErrorWriter.
func writeProblem(w http.ResponseWriter, _ *http.Request, p *problem.Problem) { WriteProblem(w, p) }

// WriteProblem writes p in the KM API's error shape: a 401 as {"error": detail}
// (application/json), as the KM API's clients expect, anything else as a problem body. It
// is the error writer to give the auth middleware (auth.Policy.WriteError) in front of the
// KM API, and of endpoints that share its credentials, such as mcp's and a server's metrics.
func WriteProblem(w http.ResponseWriter, p *problem.Problem) { problemhttp.SendKM(w, p) }
