package kmhttp_test

import (
	"encoding/json"
	"net/http"
	"testing"

	"github.com/kmkit/kmkit/km"
)

// The KM API does not expose the row key: "#row" is an unknown field of a record.
func TestRowKeyNotInKMAPI(t *testing.T) {
	h := shop(t)
	w := call(h, http.MethodGet, api+"/shop/records/EVENTS/data?fields=%23row", "")
	if w.Code != http.StatusBadRequest {
		t.Fatalf("%d %s", w.Code, w.Body)
	}
	var body struct{ ErrorCode string }
	if err := json.Unmarshal(w.Body.Bytes(), &body); err != nil || body.ErrorCode != km.CodeFieldNotFound {
		t.Errorf("%v %s", err, w.Body)
	}
}
