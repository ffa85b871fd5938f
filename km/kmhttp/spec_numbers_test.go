package kmhttp_test

import (
	"context"
	"net/url"
	"testing"

	"github.com/kmkit/kmkit/km/kmhttp"
	"github.com/kmkit/kmkit/storage/memory"
	"github.com/kmkit/kmkit/storage/storetest"
)

// TestSpecHoldsNumbersAtTheLimits validates the answers of KPIs at the limits of int64
// and of a double (storetest's numbers KM: an exact integer sum beyond 2^53, sums beyond
// int64 written null, infinite arithmetic written null, a mean of huge integers) against
// the /spec document's own schemas: an integer KPI must be a JSON integer or null, a
// double KPI a number or null, whatever the value.
func TestSpecHoldsNumbersAtTheLimits(t *testing.T) {
	s := memory.New().KM()
	if err := s.Import(context.Background(), storetest.NumbersData()); err != nil {
		t.Fatal(err)
	}
	h := kmhttp.NewHandler(s)
	_, router := specRouter(t, h, "numbers", "")
	for _, q := range []url.Values{
		{"fields": {"R.G"}, "kpis": {"S,A,C,S2,P,Q,U"}},
		{"kpis": {"S,A,C,S2,P,Q,U"}},
		{"fields": {"R.G,R.N,R.X"}, "sort": {"-R.N"}},
	} {
		path := api + "/numbers/query"
		if code := validateExchange(t, h, router, newSpecRequest(path, q)); code != 200 {
			t.Errorf("%s?%s: status %d", path, q.Encode(), code)
		}
	}
	for _, q := range []url.Values{{"fields": {"G,N,X,Y"}, "sort": {"+N"}}, {}} {
		path := api + "/numbers/records/R/query"
		if code := validateExchange(t, h, router, newSpecRequest(path, q)); code != 200 {
			t.Errorf("%s?%s: status %d", path, q.Encode(), code)
		}
	}
}
