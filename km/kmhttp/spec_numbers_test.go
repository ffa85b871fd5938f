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

// TestSpecHoldsExtremes validates the answers of min and max KPIs of dates, date-times,
// timestamps, times, strings and booleans (storetest's extremes KM, years 0001 and 9999
// and nulls among them) against the /spec document's schemas, which type each KPI as its
// field: a date KPI must be a "date" string or null, a time KPI match the time pattern.
func TestSpecHoldsExtremes(t *testing.T) {
	s := memory.New().KM()
	if err := s.Import(context.Background(), storetest.ExtremesData()); err != nil {
		t.Fatal(err)
	}
	h := kmhttp.NewHandler(s)
	_, router := specRouter(t, h, "extremes", "")
	kpis := "FIRST_DAY,LAST_DAY,FIRST_CREATED,LAST_CREATED,FIRST_SEEN,LAST_SEEN,EARLY_SLOT,LATE_SLOT,LEAST_WORD,GREATEST_WORD,ALL_EXPRESS,ANY_EXPRESS,FIRST_JOINED,LAST_NAME"
	for _, q := range []url.Values{
		{"fields": {"CU.CU_ID"}, "kpis": {kpis}},
		{"fields": {"OR.STATUS"}, "kpis": {kpis}, "sort": {"-LAST_DAY"}},
		{"kpis": {kpis}},
	} {
		path := api + "/extremes/query"
		if code := validateExchange(t, h, router, newSpecRequest(path, q)); code != 200 {
			t.Errorf("%s?%s: status %d", path, q.Encode(), code)
		}
	}
}
