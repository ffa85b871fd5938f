// Command embed shows a host that already runs an http.ServeMux mounting only the
// Knowledge Model API, backed by its own km.Store: an inventory held in a Go slice and
// queried with kmkit's columnar executor.
//
//	go run ./examples/embed -addr :8081
//	curl 'localhost:8081/intelligence/api/knowledge-models/inventory/records/STOCK/query?fields=SKU,QTY&sort=-QTY'
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"net/http"
	"testing/fstest"
	"time"

	"github.com/kmkit/kmkit/km"
	"github.com/kmkit/kmkit/km/exec"
	"github.com/kmkit/kmkit/km/kmhttp"
	"github.com/kmkit/kmkit/query"
	"github.com/kmkit/kmkit/query/column"
)

// The KM definition, in the format of the reference server's models/*.yaml.
const inventoryYAML = `id: inventory
name: Inventory
records:
  - id: STOCK
    name: Stock
    key: SKU
    fields:
      - {id: SKU, name: Article, type: string}
      - {id: WAREHOUSE, name: Warehouse, type: string}
      - {id: QTY, name: Quantity, type: integer}
kpis:
  - {id: UNITS, name: Units in stock, expr: sum(STOCK.QTY), direction: Up}
  - id: LOW_SHARE
    name: Share of low stock
    expr: ratio(STOCK.QTY lt ${minimum})
    parameters: [{id: minimum, name: Minimum quantity, value: "10"}]
filters:
  - {id: BERLIN, name: Berlin, expr: STOCK.WAREHOUSE eq 'Berlin'}
`

// item is a row of the host's own data.
type item struct {
	SKU, Warehouse string
	Qty            int64
}

// store is the host's km.Store: one KM whose single record is the items slice.
type store struct {
	model *km.KnowledgeModel
	src   *exec.Source // runs the plans the handler compiles, over the items' table
}

func newStore(items []item) (*store, error) {
	models, err := km.Load(fstest.MapFS{"models/inventory.yaml": {Data: []byte(inventoryYAML)}})
	if err != nil {
		return nil, err
	}
	sku, wh, qty := column.NewBuilder(query.TypeString), column.NewBuilder(query.TypeString), column.NewBuilder(query.TypeInteger)
	for _, it := range items {
		sku.AppendString(it.SKU)
		wh.AppendString(it.Warehouse)
		qty.AppendInt(it.Qty)
	}
	table, err := column.NewTable([]string{"SKU", "WAREHOUSE", "QTY"}, []column.Column{sku.Build(), wh.Build(), qty.Build()})
	if err != nil {
		return nil, err
	}
	m := models[0]
	return &store{model: m, src: exec.NewSource(m, map[string]*column.Table{"STOCK": table})}, nil
}

func (s *store) Models(context.Context) ([]*km.KnowledgeModel, error) {
	return []*km.KnowledgeModel{s.model}, nil
}

func (s *store) Model(_ context.Context, id string) (*km.KnowledgeModel, error) {
	if id != s.model.ID {
		return nil, fmt.Errorf("KM %q: %w", id, km.ErrModelNotFound)
	}
	return s.model, nil
}

func (s *store) Query(ctx context.Context, p *km.Plan) (*query.Result, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return s.src.Run(p)
}

// newMux is the host's existing mux with the KM API added under its base path.
func newMux(s km.Store) *http.ServeMux {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /status", func(w http.ResponseWriter, _ *http.Request) { io.WriteString(w, "ok\n") })
	mux.Handle(kmhttp.BasePath+"/", kmhttp.NewHandler(s, kmhttp.WithMaxPageSize(1000)))
	return mux
}

func main() {
	addr := flag.String("addr", "localhost:8081", "listen address")
	flag.Parse()
	s, err := newStore([]item{
		{"A-100", "Berlin", 40}, {"A-200", "Berlin", 3}, {"B-100", "Lyon", 12}, {"B-300", "Lyon", 0},
	})
	if err != nil {
		log.Fatal(err)
	}
	srv := &http.Server{Addr: *addr, Handler: newMux(s), ReadHeaderTimeout: 5 * time.Second}
	log.Printf("serving the inventory KM on http://%s%s/knowledge-models", *addr, kmhttp.BasePath)
	if err := srv.ListenAndServe(); !errors.Is(err, http.ErrServerClosed) {
		log.Fatal(err)
	}
}
