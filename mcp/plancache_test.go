package mcp

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/kmkit/kmkit/km"
	"github.com/kmkit/kmkit/principal"
)

// answer serves one query call through serveDirect and returns its result's text.
func answer(t *testing.T, s *Handler, ctx context.Context, args string) string {
	t.Helper()
	r := post(toolCall("1", args), "2025-06-18").WithContext(ctx)
	w := httptest.NewRecorder()
	if !s.serveDirect(w, r) {
		t.Fatalf("%s: not served directly", args)
	}
	var msg struct {
		Result struct {
			Content []struct{ Text string } `json:"content"`
		} `json:"result"`
	}
	if err := json.Unmarshal(w.Body.Bytes(), &msg); err != nil || len(msg.Result.Content) != 1 {
		t.Fatalf("%s: %v in %s", args, err, w.Body)
	}
	return msg.Result.Content[0].Text
}

// TestPlanCacheFollowsTheModel: a repeated query call answers the same, also from the
// handler's plan cache; a KM replaced in the store is planned anew (a field it no longer
// has is refused although the same call was answered before); a caller who does not
// see the KM is refused although another caller's call was kept.
func TestPlanCacheFollowsTheModel(t *testing.T) {
	st := directStore(t)
	s := NewHandler(st)
	ctx := context.Background()
	const args = `{"km":"shop-base","record":"CUSTOMERS","fields":["ID","NAME"],"sort":["ID"],"pageSize":2}`
	first := answer(t, s, ctx, args)
	if !strings.Contains(first, `"rows":[{"ID":"C1","NAME":"Smith & Sons <Ltd>"},{"ID":"C2"`) {
		t.Fatalf("first answer: %s", first)
	}
	if s.plans.Len() != 1 {
		t.Fatalf("%d plans kept after one call", s.plans.Len())
	}
	for i := range 2 {
		if got := answer(t, s, ctx, args); got != first {
			t.Fatalf("call %d answered\n%s\nthe first\n%s", i+2, got, first)
		}
	}

	// Only the blue team sees the KM now: red is refused, blue is answered.
	m, err := st.Model(ctx, "shop-base")
	if err != nil {
		t.Fatal(err)
	}
	blueOnly := *m
	blueOnly.Teams = []string{"blue"}
	if err := st.PutModel(ctx, &blueOnly); err != nil {
		t.Fatal(err)
	}
	blue := principal.NewContext(ctx, &principal.Principal{Name: "b", Team: "blue"})
	red := principal.NewContext(ctx, &principal.Principal{Name: "r", Team: "red"})
	if got := answer(t, s, blue, args); got != first {
		t.Fatalf("blue answered\n%s\nnot the first\n%s", got, first)
	}
	if got := answer(t, s, red, args); !strings.Contains(got, `"errorCode":"KM_MODEL_NOTFOUND"`) {
		t.Fatalf("red answered %s; want KM_MODEL_NOTFOUND", got)
	}

	// The same KM without CUSTOMERS.NAME.
	b, err := os.ReadFile("../km/testdata/shop/models/shop-base.yaml")
	if err != nil {
		t.Fatal(err)
	}
	text := strings.Replace(string(b), "      - {id: NAME, name: Customer name, type: string, description: Legal name}\n", "", 1)
	models, err := km.Load(fstest.MapFS{"models/shop-base.yaml": {Data: []byte(text)}})
	if err != nil || len(models) != 1 || models[0].Record("CUSTOMERS").Field("NAME") != nil {
		t.Fatalf("the edited KM: %v", err)
	}
	if err := st.PutModel(ctx, models[0]); err != nil {
		t.Fatal(err)
	}
	if got := answer(t, s, ctx, args); !strings.Contains(got, `"errorCode":"KM_FIELD_NOTFOUND"`) || !strings.Contains(got, "NAME") {
		t.Fatalf("after the KM lost NAME: %s; want KM_FIELD_NOTFOUND naming NAME", got)
	}
}

// TestPlanCacheKeepsTimelessCalls: calls whose plan depends on the moment (now()) or
// that carry KPI parameters are planned per call; refused calls are not kept.
func TestPlanCacheKeepsTimelessCalls(t *testing.T) {
	s := NewHandler(directStore(t))
	ctx := context.Background()
	for _, args := range []string{
		`{"km":"shop","record":"ORDERS","filterExpr":["CREATED lt now()"]}`,
		`{"km":"shop","record":"ORDERS","sort":["-NoW()"]}`,
		`{"km":"shop","fields":["ORDERS.STATUS"],"kpis":["LATE_SHARE"],"kpiParameters":{"LATE_SHARE":{"t":"3"}}}`,
		`{"km":"shop","record":"ORDERS","fields":["NOPE"]}`,
		`{"km":"shop","record":"ORDERS","pageSize":0}`,
		`{"km":"nope","record":"ORDERS"}`,
	} {
		answer(t, s, ctx, args)
		if n := s.plans.Len(); n != 0 {
			t.Fatalf("%s: %d plans kept", args, n)
		}
	}
	answer(t, s, ctx, `{"km":"shop","record":"ORDERS","filterExpr":["STATUS eq 'OPEN'"]}`)
	if n := s.plans.Len(); n != 1 {
		t.Fatalf("a timeless call: %d plans kept", n)
	}
}
