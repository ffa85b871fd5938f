package odata

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/kmkit/kmkit/problem"
	"github.com/kmkit/kmkit/query"
)

var fuzzSeeds = []string{
	"",
	"$top=5&$skip=10&$count=true",
	"$select=ID,NET&$orderby=NET%20desc,ID",
	"$filter=NET%20gt%20100%20and%20STATUS%20eq%20'PAID'",
	"$filter=CREATED%20ge%202023-12-05T15:48:44+03:00",
	"$filter=contains(NAME,'a;b')%20or%20not%20(LATE%20is%20null)",
	"$filter=NET%20in%20(1,2.5,-3e2)&filterid=PAID,LATE",
	"$format=application/json;IEEE754Compatible=true",
	"$format=atom&$select=*",
	"$expand=X",
	"$select=ID&$expand=CUSTOMERS($select=NAME;$filter=COUNTRY%20eq%20'a;b)'),EVENTS($orderby=AT%20desc;$top=1;$count=true)",
	"$expand=ORDERS($select=ID;$skip=1;$top=2)",
	"$expand=ORDERS($select=ID;$expand=EVENTS($orderby=AT;$top=1),CUSTOMERS($levels=max;$expand=ORDERS($count=true)))",
	"$expand=CUSTOMERS($levels=2)&$format=atom",
	"$apply=filter(NET%20gt%200)/concat(aggregate($count%20as%20N),groupby((STATUS),aggregate(NET%20with%20sum%20as%20S))/topcount(1,S))&$skip=1",
	"@p=1&$filter=NET%20eq%20@p",
	"$orderby=length(ID)",
	"$top=1&$top=2",
	"$filter=%zz",
	"TOP=3&Skip=1&FILTER=LATE%20eq%200",
	"$select=ROW_NUMBER,ACTIVITY&$orderby=AT",
	"$filter=ROW_NUMBER%20gt%203%20and%20ROW_NUMBER%20in%20(4,9)&$orderby=ROW_NUMBER%20desc",
	"$filter=ROW_NUMBER%20eq%209223372036854775807&$orderby=ACTIVITY,ROW_NUMBER",
	"$skip=2147483647&$top=2147483647",
	"$filter=contains(STATUS,'AI')%20eq%20true",
	"$filter=Contains(STATUS,'AI')%20NE%20False%20and%20tolower(STATUS)%20in%20('paid')",
	"$filter=year(DAY)%20add%201%20eq%202026%20or%20length(concat(ID,CUST))%20gt%203",
	"$filter=substring(ID,1,1)%20eq%20'5'%20and%20LATE%20div%200%20eq%20null",
	"$filter=hour(SLOT)%20ge%2010%20and%20date(CREATED)%20eq%20DAY%20and%20CREATED%20lt%20now()",
	"$filter=round(NET)%20eq%20floor(NET)%20or%20(NET%20divby%202)%20mod%203%20gt%201",
	"$filter=matchesPattern(STATUS,'x')",
	"$filter=contains(tolower(ACTIVITY),'s')&$orderby=hour(AT)%20desc",
	"$orderby=tolower(STATUS)%20desc,year(DAY),LATE%20mod%202",
	"$filter=EVENTS/all(e:e/ACTIVITY%20eq%20'Ship')%20or%20not%20EVENTS/any()",
	"$filter=not%20(EVENTS/any(e:e/AT%20gt%2010:00:00%20and%20LATE%20gt%200)%20and%20STATUS%20eq%20'PAID')",
	"$filter=not%20EVENTS/all(e:not%20(e/ORDERS/CUSTOMERS/COUNTRY%20ne%20null)%20or%20e/ID%20eq%20ID)",
	"$filter=CUSTOMERS/ORDERS/any(o:o/NET%20gt%201)%20or%20EVENTS/all(e:EVENTS/any())",
	"$orderby=CUSTOMERS/COUNTRY%20desc,ID&$filter=EVENTS/any()",
	"$orderby=ORDERS/CUSTOMERS/NAME,EVENTS/AT",
}

// checkClientError fails unless err is a 4xx problem or a *query.Error.
func checkClientError(t *testing.T, err error) {
	t.Helper()
	var p *problem.Problem
	var qe *query.Error
	switch {
	case errors.As(err, &p):
		if p.Status != http.StatusBadRequest && p.Status != http.StatusUnsupportedMediaType && p.Status != http.StatusNotImplemented {
			t.Fatalf("status %d: %v", p.Status, err)
		}
		if p.Detail == "" {
			t.Fatalf("a problem without detail: %+v", p)
		}
	case errors.As(err, &qe):
		if qe.Msg == "" || qe.Code == "" {
			t.Fatalf("a query error without message or code: %+v", qe)
		}
	default:
		t.Fatalf("error %v (%T): neither a problem nor a query error", err, err)
	}
}

// FuzzParseQueryOptions checks that any query string is either parsed or refused with a
// client error, and that parsed options are either planned against an entity type or
// refused with a client error.
func FuzzParseQueryOptions(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add(s)
	}
	m, err := testStore(f).Model(f.Context(), "shop")
	if err != nil {
		f.Fatal(err)
	}
	h := testHandler(f)
	types := entityTypes(m)
	f.Fuzz(func(t *testing.T, raw string) {
		o, err := ParseQueryOptions(raw)
		if err != nil {
			checkClientError(t, err)
			return
		}
		if o.Top < -1 || o.Skip < 0 {
			t.Fatalf("top %d skip %d", o.Top, o.Skip)
		}
		for _, et := range types {
			if _, err := h.planEntities(m, et, o); err != nil {
				checkClientError(t, err)
			}
		}
	})
}

// FuzzEntitySet serves any query string on an entity set: the answer is 200 with a JSON
// or Atom body, or a 4xx or 501 (valid OData the service does not implement) problem;
// never another 5xx.
func FuzzEntitySet(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add(s, "ORDERS_entries")
		f.Add(s, "EVENTS_entries")
	}
	h := testHandler(f, WithMaxPageSize(3))
	f.Fuzz(func(t *testing.T, raw, set string) {
		if set != "ORDERS_entries" && set != "EVENTS_entries" && set != "CUSTOMERS_entries" {
			set = "ORDERS_entries"
		}
		r := httptest.NewRequest(http.MethodGet, "http://example.com"+svc+"/"+set, nil)
		r.URL.RawQuery = raw
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		switch {
		case w.Code == http.StatusOK:
			if strings.HasPrefix(w.Header().Get("Content-Type"), "application/json") && !json.Valid(w.Body.Bytes()) {
				t.Fatalf("invalid JSON for %q: %s", raw, w.Body)
			}
			if strings.HasPrefix(w.Header().Get("Content-Type"), "application/atom+xml") {
				for d := xml.NewDecoder(bytes.NewReader(w.Body.Bytes())); ; {
					_, err := d.Token()
					if err == io.EOF {
						break
					}
					if err != nil {
						t.Fatalf("invalid XML for %q: %v in %s", raw, err, w.Body)
					}
				}
			}
		case w.Code >= 400 && w.Code < 500, w.Code == http.StatusNotImplemented:
			var p problem.Problem
			if err := json.Unmarshal(w.Body.Bytes(), &p); err != nil || p.Status != w.Code || p.Detail == "" {
				t.Fatalf("status %d for %q with body %s", w.Code, raw, w.Body)
			}
		default:
			t.Fatalf("status %d for %q: %s", w.Code, raw, w.Body)
		}
		if w.Header().Get("OData-Version") != Version {
			t.Fatalf("no OData-Version for %q", raw)
		}
	})
}
