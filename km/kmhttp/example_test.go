package kmhttp_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"testing/fstest"

	"github.com/kmkit/kmkit/km"
	"github.com/kmkit/kmkit/km/exec"
	"github.com/kmkit/kmkit/km/kmhttp"
	"github.com/kmkit/kmkit/query"
	"github.com/kmkit/kmkit/query/column"
)

// ticket is a row of the host's own data.
type ticket struct {
	ID       string
	Priority string
	Hours    float64
}

// ticketStore is a host's Store: one KM with one record over a Go slice, queried with the
// columnar executor.
type ticketStore struct {
	model *km.KnowledgeModel
	src   *exec.Source // runs the handler's plans over the tickets' table
}

func newTicketStore(model *km.KnowledgeModel, tickets []ticket) (*ticketStore, error) {
	ids, prio, hours := column.NewBuilder(query.TypeString), column.NewBuilder(query.TypeString), column.NewBuilder(query.TypeFloat)
	for _, t := range tickets {
		ids.AppendString(t.ID)
		prio.AppendString(t.Priority)
		hours.AppendFloat(t.Hours)
	}
	table, err := column.NewTable([]string{"ID", "PRIORITY", "HOURS"}, []column.Column{ids.Build(), prio.Build(), hours.Build()})
	if err != nil {
		return nil, err
	}
	return &ticketStore{model: model, src: exec.NewSource(model, map[string]*column.Table{"TICKETS": table})}, nil
}

func (s *ticketStore) Models(context.Context) ([]*km.KnowledgeModel, error) {
	return []*km.KnowledgeModel{s.model}, nil
}

func (s *ticketStore) Model(_ context.Context, id string) (*km.KnowledgeModel, error) {
	if id != s.model.ID {
		return nil, km.ErrModelNotFound
	}
	return s.model, nil
}

func (s *ticketStore) Query(_ context.Context, p *km.Plan) (*query.Result, error) {
	return s.src.Run(p)
}

const helpdeskYAML = `id: helpdesk
name: Helpdesk
records:
  - id: TICKETS
    name: Tickets
    fields:
      - {id: ID, name: Ticket, type: string}
      - {id: PRIORITY, name: Priority, type: string}
      - {id: HOURS, name: Hours spent, type: float}
kpis:
  - {id: HOURS_TOTAL, name: Hours, expr: sum(TICKETS.HOURS)}
`

// A host mounts the KM handler, backed by its own Store, in its existing mux.
func ExampleNewHandler() {
	models, err := km.Load(fstest.MapFS{"models/helpdesk.yaml": {Data: []byte(helpdeskYAML)}})
	if err != nil {
		panic(err)
	}
	store, err := newTicketStore(models[0], []ticket{{"T1", "high", 2.5}, {"T2", "low", 1}, {"T3", "high", 4}})
	if err != nil {
		panic(err)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /status", func(w http.ResponseWriter, _ *http.Request) { io.WriteString(w, "up") })
	mux.Handle(kmhttp.BasePath+"/", kmhttp.NewHandler(store))

	for _, target := range []string{
		"/intelligence/api/knowledge-models/helpdesk/records/TICKETS/query?fields=ID&filterExpr=PRIORITY%20eq%20'high'",
		"/intelligence/api/knowledge-models/helpdesk/query?fields=TICKETS.PRIORITY&kpis=HOURS_TOTAL&sort=-HOURS_TOTAL",
	} {
		w := httptest.NewRecorder()
		mux.ServeHTTP(w, httptest.NewRequest(http.MethodGet, target, nil))
		fmt.Println(w.Code, w.Body.String())
	}
	// Output:
	// 200 {"page":0,"pageSize":50,"total":2,"sort":[],"content":[{"ID":"T1"},{"ID":"T3"}]}
	// 200 {"page":0,"pageSize":50,"total":2,"sort":["-HOURS_TOTAL"],"content":[{"TICKETS.PRIORITY":"high","HOURS_TOTAL":6.5},{"TICKETS.PRIORITY":"low","HOURS_TOTAL":1}]}
}
