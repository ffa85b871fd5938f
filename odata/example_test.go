package odata_test

import (
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
	store, err := memory.LoadKMStore(os.DirFS("testdata/shop"))
	if err != nil {
		fmt.Println(err)
		return
	}
	mux := http.NewServeMux()
	// In a server, put the auth middleware in between: odata.VersionHeader(guard.OData(...)).
	mux.Handle(odata.BasePath+"/", odata.NewHandler(store, odata.Options{BaseURL: "https://kmkit.example.com"}))
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
