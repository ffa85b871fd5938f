package kmkit_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"testing/fstest"

	"github.com/kmkit/kmkit/km/kmhttp"
	"github.com/kmkit/kmkit/odata"
	"github.com/kmkit/kmkit/scim/scimhttp"
	"github.com/kmkit/kmkit/storage/memory"
)

// Mounting the Knowledge Model API, its OData service and SCIM over the memory backend. A
// host with its own authentication puts a principal.Principal in each request's context;
// this example serves anonymous callers, who see every KM.
func Example() {
	data := fstest.MapFS{
		"models/shop.yaml": {Data: []byte(`id: shop
name: Shop
records:
  - id: ORDERS
    name: Orders
    source: orders
    key: ID
    fields:
      - {id: ID, name: Order, type: string}
      - {id: VALUE, name: Value, type: number}
kpis:
  - {id: TOTAL, name: Total value, expr: sum(ORDERS.VALUE)}
`)},
		"data/orders.csv": {Data: []byte("ID,VALUE\nA,10.5\nB,32\n")},
	}
	db := memory.New()
	kms := db.KM() // a KM store holds the models imported into it: keep it
	if err := kms.Import(context.Background(), data); err != nil {
		fmt.Println(err)
		return
	}

	mux := http.NewServeMux()
	mux.Handle(kmhttp.BasePath+"/", kmhttp.NewHandler(kms))
	mux.Handle(odata.BasePath+"/", odata.NewHandler(kms))
	mux.Handle(scimhttp.BasePath+"/", scimhttp.NewHandler(db.SCIM()))
	srv := httptest.NewServer(mux)
	defer srv.Close()

	res, err := http.Get(srv.URL + kmhttp.BasePath + "/knowledge-models/shop/data?kpis=TOTAL")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer res.Body.Close()
	body, _ := io.ReadAll(res.Body)
	fmt.Println(res.StatusCode, string(body))
	// Output:
	// 200 {"page":0,"pageSize":50,"total":1,"sort":[],"content":{"headers":[{"id":"TOTAL","name":"Total value","type":"float","format":"","unit":"","aggregation":true,"filterable":false,"sortable":true}],"data":[{"TOTAL":42.5}]}}
}
