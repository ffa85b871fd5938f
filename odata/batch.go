package odata

import "net/http"

func (h *Handler) serveBatch(w http.ResponseWriter, r *http.Request) {
	writeProblem(w, http.StatusNotImplemented, "X", "x")
}
