package problemhttp

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/kmkit/kmkit/problem"
)

func TestWrite(t *testing.T) {
	rec := httptest.NewRecorder()
	Write(rec, http.StatusBadRequest, "SORT_IS_EMPTY", "sort: no field given")
	if rec.Code != http.StatusBadRequest {
		t.Fatalf("status = %d, want 400", rec.Code)
	}
	if ct := rec.Header().Get("Content-Type"); ct != problem.ContentType {
		t.Fatalf("Content-Type = %q, want %q", ct, problem.ContentType)
	}
	var got map[string]any
	if err := json.Unmarshal(rec.Body.Bytes(), &got); err != nil {
		t.Fatal(err)
	}
	want := map[string]any{
		"title":     "Bad Request",
		"status":    float64(400),
		"detail":    "sort: no field given",
		"errorCode": "SORT_IS_EMPTY",
		"type":      "urn:kmkit:problem:SORT_IS_EMPTY",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("body (-want +got):\n%s", diff)
	}
}
