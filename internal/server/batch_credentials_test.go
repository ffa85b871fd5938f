package server

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// TestBatchRequestWithOtherCredentials: behind the auth guard, a request inside an OData
// $batch that names a credential other than the batch's (a key it may not even hold) is
// refused 400 in its place, and one that repeats the batch's runs; before, both ran as
// the batch's caller, the first silently.
func TestBatchRequestWithOtherCredentials(t *testing.T) {
	a := newTestApp(t, config{db: "memory:"})
	body := `{"requests":[
		{"id":"same","method":"GET","url":"ORDERS_entries/$count","headers":{"Authorization":"AppKey ` + a.devKey + `"}},
		{"id":"other","method":"GET","url":"ORDERS_entries/$count","headers":{"Authorization":"AppKey not-the-batch-key"}},
		{"id":"none","method":"GET","url":"ORDERS_entries/$count"}]}`
	r := httptest.NewRequest(http.MethodPost, "/intelligence/api/odata/o2c.svc/$batch", strings.NewReader(body))
	r.Header.Set("Content-Type", "application/json")
	r.Header.Set("Authorization", "AppKey "+a.devKey)
	w := httptest.NewRecorder()
	a.handler.ServeHTTP(w, r)
	var got struct {
		Responses []struct {
			ID     string
			Status int
			Body   json.RawMessage
		}
	}
	if err := json.Unmarshal(w.Body.Bytes(), &got); w.Code != 200 || err != nil || len(got.Responses) != 3 {
		t.Fatalf("%d %v: %s", w.Code, err, w.Body)
	}
	for i, want := range []int{200, 400, 200} {
		if rs := got.Responses[i]; rs.Status != want {
			t.Errorf("request %s: %d %s, want %d", rs.ID, rs.Status, rs.Body, want)
		}
	}
	if !strings.Contains(string(got.Responses[1].Body), "a request in a batch runs as the batch's caller") {
		t.Errorf("request other: %s", got.Responses[1].Body)
	}
}
