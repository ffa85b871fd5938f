package odata_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"

	"github.com/kmkit/kmkit/odata"
	"github.com/kmkit/kmkit/storage/memory"
)

// Serve the KMs of a data directory as OData services and query an entity set.
func ExampleNewHandler() {
	store := memory.New().KM()
	err := store.Import(context.Background(), os.DirFS("testdata/shop"))
	if err != nil {
		fmt.Println(err)
		return
	}
	mux := http.NewServeMux()
	// In a server, put the auth middleware in between: guard.Wrap(odataPolicy, ...).
	mux.Handle(odata.BasePath+"/", odata.NewHandler(store, odata.WithBaseURL("https://kmkit.example.com")))
	srv := httptest.NewServer(mux)
	defer srv.Close()

	resp, err := http.Get(srv.URL + odata.BasePath + "/shop.svc/ORDERS_entries?$select=NET&$filter=STATUS%20eq%20'PAID'&$orderby=NET%20desc&$count=true")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	fmt.Println(resp.Status, resp.Header.Get("OData-Version"))
	fmt.Println(string(body))
	// Output:
	// 200 OK 4.0
	// {"@odata.context":"https://kmkit.example.com/intelligence/api/odata/shop.svc/$metadata#ORDERS_entries(NET)","@odata.count":2,"value":[{"ID":"O2","NET":250},{"ID":"O3","NET":80}]}
}

// Read the query options of an entity set request; a "+" in a date-time offset and a
// ";" in a text survive.
func ExampleParseQueryOptions() {
	o, err := odata.ParseQueryOptions("$select=ID,NET&$filter=CREATED%20ge%202025-01-01T00:00:00+01:00%20and%20NAME%20ne%20'a;b'&$orderby=NET%20desc&$top=10&$count=true")
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(o.Select, o.FilterText, o.OrderBy, o.Top, o.Skip, o.Count)

	_, err = odata.ParseQueryOptions("$expand=*")
	fmt.Println(err)
	// Output:
	// [ID NET] CREATED ge 2025-01-01T00:00:00+01:00 and NAME ne 'a;b' [-NET] 10 0 true
	// ODATA_OPTION_NOT_SUPPORTED: $expand item "*" is not supported: name a navigation property of the entity type (nest $expand inside it for the next level)
}
