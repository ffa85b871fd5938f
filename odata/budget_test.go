package odata

import (
	"context"
	"encoding/json"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/kmkit/kmkit/km"
	"github.com/kmkit/kmkit/query"
)

// slowStore blocks every query until its context ends.
type slowStore struct{ km.Store }

func (s slowStore) Query(ctx context.Context, _ *km.Plan) (*query.Result, error) {
	<-ctx.Done()
	return nil, ctx.Err()
}

// TestBatchHasOneTimeBudget: the parts of a $batch share one time budget (issue 27: 20
// heavy parts ran 25-45 s under a 10 s limit, each part with a limit of its own). Six
// parts that would each run forever end within about one limit, each answered 503 with
// the time limit's message.
func TestBatchHasOneTimeBudget(t *testing.T) {
	const limit = 300 * time.Millisecond
	service := km.NewService(slowStore{testStore(t)}, km.WithQueryTimeout(limit))
	h := NewHandler(nil, WithService(service))
	var parts []string
	for i := range 6 {
		parts = append(parts, `{"id":"`+strconv.Itoa(i)+`","method":"GET","url":"ORDERS_entries?$select=ID"}`)
	}
	start := time.Now()
	w := post(h, svc+"/$batch", "application/json", `{"requests":[`+strings.Join(parts, ",")+`]}`)
	took := time.Since(start)
	if w.Code != 200 {
		t.Fatalf("status %d: %s", w.Code, w.Body)
	}
	if took > 3*limit {
		t.Errorf("the batch took %v: more than one budget of %v", took, limit)
	}
	var got struct {
		Responses []struct {
			Status int
			Body   json.RawMessage
		}
	}
	if err := json.Unmarshal(w.Body.Bytes(), &got); err != nil {
		t.Fatal(err)
	}
	if len(got.Responses) != 6 {
		t.Fatalf("%d responses: %s", len(got.Responses), w.Body)
	}
	for i, rs := range got.Responses {
		if rs.Status != 503 || !strings.Contains(string(rs.Body), "the query ran longer than the time limit of 300ms") {
			t.Errorf("part %d: %d %s", i, rs.Status, rs.Body)
		}
	}
}

// delayStore answers every query after a delay, or when its context ends.
type delayStore struct {
	km.Store
	d time.Duration
}

func (s delayStore) Query(ctx context.Context, p *km.Plan) (*query.Result, error) {
	select {
	case <-time.After(s.d):
		return s.Store.Query(ctx, p)
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// TestExpandHasOneTimeBudget: the queries of nested $expand and of concat's branches run
// in the request's one time budget. Three queries of 200 ms each, under a limit of 300
// ms, are stopped at the limit with 503, not answered after 600 ms.
func TestExpandHasOneTimeBudget(t *testing.T) {
	const limit = 300 * time.Millisecond
	service := km.NewService(delayStore{testStore(t), 200 * time.Millisecond}, km.WithQueryTimeout(limit))
	h := NewHandler(nil, WithService(service))
	for _, target := range []string{
		"/CUSTOMERS_entries?$expand=ORDERS($expand=EVENTS)",
		"/ORDERS_entries?$apply=concat(aggregate($count%20as%20N),groupby((STATUS)),groupby((CUST)))",
	} {
		start := time.Now()
		w := get(h, svc+target)
		took := time.Since(start)
		if w.Code != 503 || !strings.Contains(w.Body.String(), "the query ran longer than the time limit of 300ms") {
			t.Errorf("%s: %d %s", target, w.Code, w.Body)
		}
		if took > 2*limit {
			t.Errorf("%s took %v: more than one budget of %v", target, took, limit)
		}
	}
}

// TestFilterBoundsOfTheService: $filter is parsed within the filter bounds of the Service
// the handler answers through (WithService), as the KM API's filterExpr is; the handler
// parsed it within the package defaults, so a Service's smaller bounds held on the KM API
// and MCP only (found by the root package's TestSurfacesShareConfiguredLimits).
func TestFilterBoundsOfTheService(t *testing.T) {
	service := km.NewService(testStore(t), km.WithFilterLimits(query.Limits{MaxLength: 40, MaxDepth: 3, MaxIn: 3}))
	h := NewHandler(nil, WithService(service))
	for _, c := range []struct{ filter, message string }{
		{"STATUS eq '" + strings.Repeat("P", 40) + "'", "$filter: the expression is 52 bytes long; at most 40 are allowed"},
		{"((((NET gt 100))))", `$filter: position 4: the expression nests deeper than 3 levels of parentheses and "not"`},
		{"STATUS in ('PAID','X','Y','Z')", "$filter: position 27: the in list has more than 3 values"},
	} {
		w := get(h, svc+"/ORDERS_entries?$filter="+url.QueryEscape(c.filter))
		var e struct {
			ErrorCode string
			Error     struct{ Code, Message string }
		}
		if err := json.Unmarshal(w.Body.Bytes(), &e); err != nil || w.Code != 400 || e.ErrorCode != "GENERAL_CONSTRAINT_VIOLATION" ||
			e.Error.Code != "GENERAL_CONSTRAINT_VIOLATION" || e.Error.Message != c.message {
			t.Errorf("%s: %d %s, want 400 GENERAL_CONSTRAINT_VIOLATION %q", c.filter, w.Code, w.Body, c.message)
		}
	}
}
