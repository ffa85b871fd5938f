package km

import (
	"context"
	"errors"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/kmkit/kmkit/principal"
	"github.com/kmkit/kmkit/problem"
	"github.com/kmkit/kmkit/query"
)

const baseYAML = `id: base
name: Base
published: 2026-01-15T10:00:00Z
records:
  - id: ORDERS
    name: Orders
    key: ID
    fields:
      - {id: ID, type: string}
      - {id: CUST, type: string}
      - {id: V, name: Value, type: number, unit: EUR}
      - {id: LATE, type: integer}
  - id: CUSTOMERS
    curated: false
    source: customers_csv
    fields:
      - {id: ID, type: string}
      - {id: COUNTRY, type: string}
relationships:
  - {from: ORDERS.CUST, to: CUSTOMERS.ID}
kpis:
  - id: LATE_SHARE
    expr: ratio(ORDERS.LATE gt ${t})
    parameters: [{id: t, name: Threshold, value: "0"}]
  - {id: TOTAL, expr: sum(ORDERS.V), direction: Up}
filters:
  - {id: DE, expr: CUSTOMERS.COUNTRY eq 'DE'}
`

const childYAML = `id: child
extends: base
records:
  - id: EVENTS
    fields:
      - {id: ORDER, type: string}
      - {id: AT, type: datetime}
relationships:
  - {from: EVENTS.ORDER, to: ORDERS.ID}
kpis:
  - {id: TOTAL, name: Total override, expr: sum(ORDERS.V) * 2}
  - {id: EVENTS_N, expr: count(EVENTS.ORDER)}
`

func TestLoadResolvesExtends(t *testing.T) {
	ms, err := Load(fstest.MapFS{
		"models/base.yaml":  {Data: []byte(baseYAML)},
		"models/child.yml":  {Data: []byte(childYAML)},
		"models/README.txt": {Data: []byte("not a model")},
	})
	if err != nil {
		t.Fatal(err)
	}
	type summary struct {
		ID, Extends string
		Published   time.Time
		Records     []string
		KPIs        []string
		Filters     []string
		Rels        []string
	}
	sum := func(m *KnowledgeModel) summary {
		s := summary{ID: m.ID, Extends: m.ExtendedKMID, Published: m.Published}
		for _, r := range m.Records {
			s.Records = append(s.Records, r.ID)
		}
		for _, k := range m.KPIs {
			s.KPIs = append(s.KPIs, k.ID+"="+k.Name)
		}
		for _, f := range m.Filters {
			s.Filters = append(s.Filters, f.ID)
		}
		for _, r := range m.Relationships {
			s.Rels = append(s.Rels, r.From.String()+">"+r.To.String())
		}
		return s
	}
	var got []summary
	for _, m := range ms {
		got = append(got, sum(m))
	}
	want := []summary{
		{ID: "base", Published: time.Date(2026, 1, 15, 10, 0, 0, 0, time.UTC), Records: []string{"ORDERS", "CUSTOMERS"},
			KPIs: []string{"LATE_SHARE=LATE_SHARE", "TOTAL=TOTAL"}, Filters: []string{"DE"}, Rels: []string{"ORDERS.CUST>CUSTOMERS.ID"}},
		{ID: "child", Extends: "base", Records: []string{"ORDERS", "CUSTOMERS", "EVENTS"},
			KPIs:    []string{"LATE_SHARE=LATE_SHARE", "TOTAL=Total override", "EVENTS_N=EVENTS_N"},
			Filters: []string{"DE"}, Rels: []string{"ORDERS.CUST>CUSTOMERS.ID", "EVENTS.ORDER>ORDERS.ID"}},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("models (-want +got):\n%s", diff)
	}
	base := ms[0]
	cust := base.Record("CUSTOMERS")
	if cust.Curated || cust.Source != "customers_csv" || base.Record("ORDERS").Source != "ORDERS" || !base.Record("ORDERS").Curated {
		t.Errorf("curated/source defaults wrong: %+v", cust)
	}
	v := base.Record("ORDERS").Field("V")
	if v.Type != query.TypeFloat || v.TypeName != "number" || v.Unit != "EUR" || v.Name != "Value" {
		t.Errorf("field V = %+v", v)
	}
	if got := query.Format(base.Filter("DE").Bound()); got != "CUSTOMERS.COUNTRY eq 'DE'" {
		t.Errorf("filter DE bound to %q", got)
	}
	if k := base.KPI("TOTAL"); k.Type != query.TypeFloat || k.Direction != "Up" {
		t.Errorf("TOTAL: %+v", k)
	}
	if k := ms[1].KPI("EVENTS_N"); k.Type != query.TypeInteger || k.Direction != "None" {
		t.Errorf("EVENTS_N: %+v", k)
	}
}

func TestLoadDistribution(t *testing.T) {
	def := `id: a
records:
  - id: C
    key: ID
    reference: true
    fields: [{id: ID, type: integer}]
  - id: O
    key: ID
    distribution: ID
    fields: [{id: ID, type: integer}, {id: CUST, type: integer}]
  - id: I
    distribution: ORDER_ID
    fields: [{id: ORDER_ID, type: integer}]
  - id: L
    fields: [{id: F, type: string}]
relationships:
  - {from: O.CUST, to: C.ID}
  - {from: I.ORDER_ID, to: O.ID}
`
	ms, err := Load(fstest.MapFS{"models/a.yaml": {Data: []byte(def)}})
	if err != nil {
		t.Fatal(err)
	}
	type dist struct {
		Distribution string
		Reference    bool
	}
	got := map[string]dist{}
	for _, r := range ms[0].Records {
		got[r.ID] = dist{r.Distribution, r.Reference}
	}
	want := map[string]dist{"C": {Reference: true}, "O": {Distribution: "ID"}, "I": {Distribution: "ORDER_ID"}, "L": {}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("distribution (-want +got):\n%s", diff)
	}
}

func TestLoadIndexes(t *testing.T) {
	ms, err := Load(fstest.MapFS{"models/a.yaml": {Data: []byte("id: a\nrecords:\n  - id: A\n    fields: [{id: F, type: string}, {id: G, type: integer}]\n    indexes: [[G, -F], [F]]\n  - id: B\n    fields: [{id: F, type: string}]\n")}})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]Index{{{Field: "G"}, {Field: "F", Descending: true}}, {{Field: "F"}}}, ms[0].Record("A").Indexes); diff != "" {
		t.Errorf("A's indexes (-want +got):\n%s", diff)
	}
	if ms[0].Record("B").Indexes != nil {
		t.Errorf("B declares no indexes, got %v", ms[0].Record("B").Indexes)
	}
}

func TestLoadTeams(t *testing.T) {
	fsys := fstest.MapFS{
		"models/a.yaml": {Data: []byte("id: a\nteams: [acme, beta]\nrecords: [{id: R, fields: [{id: F, type: string}]}]\n")},
		"models/b.yaml": {Data: []byte("id: b\nextends: a\n")},
		"models/c.yaml": {Data: []byte("id: c\nextends: a\nteams: [acme]\n")},
		"models/d.yaml": {Data: []byte("id: d\nrecords: [{id: R, fields: [{id: F, type: string}]}]\n")},
	}
	ms, err := Load(fsys)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string][]string{}
	for _, m := range ms {
		got[m.ID] = m.Teams
	}
	want := map[string][]string{"a": {"acme", "beta"}, "b": {"acme", "beta"}, "c": {"acme"}, "d": nil}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("teams (-want +got):\n%s", diff)
	}
}

func TestVisibleTo(t *testing.T) {
	scoped := &KnowledgeModel{ID: "s", Teams: []string{"acme", "beta"}}
	open := &KnowledgeModel{ID: "o"}
	as := func(team string) context.Context {
		return principal.NewContext(context.Background(), &principal.Principal{Name: "k", Team: team})
	}
	for _, tt := range []struct {
		name       string
		ctx        context.Context
		seesScoped bool
	}{
		{"member", as("acme"), true},
		{"other member", as("beta"), true},
		{"other team", as("gamma"), false},
		{"no team", as(""), false},
		{"no principal", context.Background(), false},
	} {
		if got := scoped.VisibleTo(tt.ctx); got != tt.seesScoped {
			t.Errorf("%s: scoped KM visible %v, want %v", tt.name, got, tt.seesScoped)
		}
		if !open.VisibleTo(tt.ctx) {
			t.Errorf("%s: a KM without teams is hidden", tt.name)
		}
	}
}

func TestLoadErrors(t *testing.T) {
	tests := []struct {
		name  string
		files map[string]string
		want  []string
	}{
		{"no models", map[string]string{"data/x.csv": "a"}, []string{"models: no *.yaml model definitions"}},
		{"yaml syntax", map[string]string{"models/a.yaml": "id: a\nrecords: [\n"},
			[]string{"models/a.yaml:2: did not find expected node content"}},
		{"unknown key", map[string]string{"models/a.yaml": "id: a\nrecrods: []\n"},
			[]string{`models/a.yaml:2: unknown key "recrods" in the KM (allowed: id, name, extends, published, teams, records, relationships, kpis, filters)`}},
		{"bad type", map[string]string{"models/a.yaml": "id: a\nrecords:\n  - id: R\n    fields:\n      - {id: F, type: money}\n"},
			[]string{`models/a.yaml:5: field R.F: unknown type "money" (want string, integer, float, number, boolean, date, datetime, timestamp or time)`}},
		{"bad kpi field", map[string]string{"models/a.yaml": "id: a\nrecords:\n  - id: R\n    fields: [{id: F, type: string}]\nkpis:\n  - id: K\n    expr: sum(R.G)\n"},
			[]string{"models/a.yaml:7: KPI K: unknown field R.G"}},
		{"kpi of a string", map[string]string{"models/a.yaml": "id: a\nrecords:\n  - id: R\n    fields: [{id: F, type: string}]\nkpis:\n  - {id: K, expr: avg(R.F)}\n"},
			[]string{"models/a.yaml:6: KPI K: avg of R.F: the field is string, not numeric"}},
		{"kpi arithmetic on dates", map[string]string{"models/a.yaml": "id: a\nrecords:\n  - id: R\n    fields: [{id: D, type: date}]\nkpis:\n  - {id: K, expr: max(R.D) - min(R.D)}\n"},
			[]string{"models/a.yaml:6: KPI K: max of R.D is a date and cannot take part in arithmetic"}},
		{"kpi arithmetic on a string", map[string]string{"models/a.yaml": "id: a\nrecords:\n  - id: R\n    fields: [{id: S, type: string}]\nkpis:\n  - {id: K, expr: \"max(R.S, R.S ne 'x') + 1\"}\n"},
			[]string{"models/a.yaml:6: KPI K: max of R.S is a string and cannot take part in arithmetic"}},
		{"kpi condition", map[string]string{"models/a.yaml": "id: a\nrecords:\n  - id: R\n    fields: [{id: F, type: integer}]\nkpis:\n  - {id: K, expr: \"ratio(R.F eq 'x')\"}\n"},
			[]string{"models/a.yaml:6: KPI K: position 14: " + bindMsg("R.F eq 'x'", query.MapSchema{"R.F": query.TypeInteger})}},
		{"filter unknown field", map[string]string{"models/a.yaml": "id: a\nrecords:\n  - id: R\n    fields: [{id: F, type: integer}]\nfilters:\n  - {id: X, expr: R.G gt 1}\n"},
			[]string{"models/a.yaml:6: filter X: position 1: " + bindMsg("R.G gt 1", query.MapSchema{"R.F": query.TypeInteger})}},
		{"missing param", map[string]string{"models/a.yaml": "id: a\nrecords:\n  - id: R\n    fields: [{id: F, type: integer}]\nkpis:\n  - {id: K, expr: 'ratio(R.F gt ${x})'}\n"},
			[]string{"models/a.yaml:6: KPI K: position 14: placeholder ${x} names no parameter of the KPI"}},
		{"extends unknown", map[string]string{"models/a.yaml": "id: a\nextends: zz\n"},
			[]string{`models/a.yaml:2: extends unknown KM "zz"`}},
		{"extends cycle", map[string]string{"models/a.yaml": "id: a\nextends: b\n", "models/b.yaml": "id: b\nextends: a\n"},
			[]string{`models/a.yaml:2: extends forms a cycle through KM "a"`}},
		{"duplicate km", map[string]string{"models/a.yaml": "id: a\nrecords: [{id: R, fields: [{id: F, type: string}]}]\n", "models/b.yaml": "id: a\nrecords: [{id: R, fields: [{id: F, type: string}]}]\n"},
			[]string{`models/b.yaml:1: KM id "a" is also defined in models/a.yaml`}},
		{"relationship types", map[string]string{"models/a.yaml": "id: a\nrecords:\n  - {id: A, fields: [{id: F, type: string}]}\n  - {id: B, fields: [{id: F, type: integer}]}\nrelationships:\n  - {from: A.F, to: B.F}\n"},
			[]string{"models/a.yaml:6: relationship joins A.F (string) with B.F (integer): types differ"}},
		{"relationship unknown", map[string]string{"models/a.yaml": "id: a\nrecords:\n  - {id: A, fields: [{id: F, type: string}]}\nrelationships:\n  - {from: A.F, to: C.F}\n"},
			[]string{"models/a.yaml:5: relationship to unknown field C.F"}},
		{"source with a slash", map[string]string{"models/a.yaml": "id: a\nrecords:\n  - id: A\n    source: reporting/x\n    fields: [{id: F, type: string}]\n"},
			[]string{`models/a.yaml:4: source "reporting/x" of record A: a source names one file data/<source>.csv and one table, so it holds no '/', '\' or control character`}},
		{"bad key", map[string]string{"models/a.yaml": "id: a\nrecords:\n  - id: A\n    key: X\n    fields: [{id: F, type: string}]\n"},
			[]string{`models/a.yaml:4: key "X" is not a field of record A`}},
		{"duplicate field", map[string]string{"models/a.yaml": "id: a\nrecords:\n  - id: A\n    fields:\n      - {id: F, type: string}\n      - {id: F, type: string}\n"},
			[]string{`models/a.yaml:6: duplicate field id "F" in record A`}},
		{"bad direction and two errors", map[string]string{"models/a.yaml": "id: a\nrecords:\n  - {id: A, fields: [{id: F, type: integer}]}\nkpis:\n  - {id: K, expr: sum(A.F), direction: Sideways}\n  - {id: L}\n"},
			[]string{`models/a.yaml:5: KPI K: direction "Sideways" (want Up, Down or None)`, "models/a.yaml:6: KPI L has no expr"}},
		{"index unknown field", map[string]string{"models/a.yaml": "id: a\nrecords:\n  - id: A\n    fields: [{id: F, type: string}, {id: G, type: integer}]\n    indexes:\n      - [F, G]\n      - [G,\n         H]\n"},
			[]string{`models/a.yaml:8: index field "H" is not a field of record A`}},
		{"distribution unknown field", map[string]string{"models/a.yaml": "id: a\nrecords:\n  - id: A\n    fields: [{id: F, type: string}]\n    distribution: G\n"},
			[]string{`models/a.yaml:5: distribution "G" is not a field of record A`}},
		{"distribution and reference", map[string]string{"models/a.yaml": "id: a\nrecords:\n  - id: A\n    fields: [{id: F, type: string}]\n    distribution: F\n    reference: true\n"},
			[]string{"models/a.yaml:6: record A declares distribution and reference: a record is distributed by a field or copied to every node, not both"}},
		{"distribution two key domains", map[string]string{"models/a.yaml": "id: a\nrecords:\n  - id: A\n    fields: [{id: F, type: string}]\n    distribution: F\n  - id: B\n    fields: [{id: G, type: integer}]\n    distribution: G\n"},
			[]string{"models/a.yaml:6: record B is distributed by G (integer) and record A by F (string): the distributed records of a KM are co-located, so their distribution fields hold one key domain of one type"}},
		{"distribution not joined on", map[string]string{"models/a.yaml": "id: a\nrecords:\n  - id: A\n    key: ID\n    fields: [{id: ID, type: integer}]\n    distribution: ID\n  - id: B\n    fields: [{id: K, type: integer}, {id: A_ID, type: integer}]\n    distribution: K\nrelationships:\n  - {from: B.A_ID, to: A.ID}\n"},
			[]string{"models/a.yaml:11: relationship B.A_ID to A.ID joins two distributed records on fields other than their distribution fields (B.K, A.ID): distribute them by the fields that join them, or declare one reference: true"}},
		{"index twice", map[string]string{"models/a.yaml": "id: a\nrecords:\n  - id: A\n    fields: [{id: F, type: string}]\n    indexes: [[F, F]]\n"},
			[]string{`models/a.yaml:5: index field "F" of record A appears twice in one index`}},
		{"index twice both ways", map[string]string{"models/a.yaml": "id: a\nrecords:\n  - id: A\n    fields: [{id: F, type: string}]\n    indexes: [[-F, F]]\n"},
			[]string{`models/a.yaml:5: index field "F" of record A appears twice in one index`}},
		{"index descending unknown field", map[string]string{"models/a.yaml": "id: a\nrecords:\n  - id: A\n    fields: [{id: F, type: string}]\n    indexes: [[--F]]\n"},
			[]string{`models/a.yaml:5: index field "-F" is not a field of record A`}},
		{"index empty", map[string]string{"models/a.yaml": "id: a\nrecords:\n  - id: A\n    fields: [{id: F, type: string}]\n    indexes:\n      - []\n"},
			[]string{"models/a.yaml:6: an index of record A: want a non-empty list of field ids like [STATUS, -NET_VALUE]"}},
		{"index not a list", map[string]string{"models/a.yaml": "id: a\nrecords:\n  - id: A\n    fields: [{id: F, type: string}]\n    indexes: F\n"},
			[]string{"models/a.yaml:5: indexes of record A: want a list of indexes, each a list of field ids like [[STATUS, -NET_VALUE], [CUSTOMER_ID]]"}},
		{"index flat list", map[string]string{"models/a.yaml": "id: a\nrecords:\n  - id: A\n    fields: [{id: F, type: string}]\n    indexes: [F]\n"},
			[]string{"models/a.yaml:5: an index of record A: want a non-empty list of field ids like [STATUS, -NET_VALUE]"}},
		{"index nested", map[string]string{"models/a.yaml": "id: a\nrecords:\n  - id: A\n    fields: [{id: F, type: string}]\n    indexes: [[F, [F]]]\n"},
			[]string{"models/a.yaml:5: an index of record A: want field ids, not a nested list or mapping"}},
		{"empty team", map[string]string{"models/a.yaml": "id: a\nteams: [acme, '']\nrecords: [{id: R, fields: [{id: F, type: string}]}]\n"},
			[]string{`models/a.yaml:2: teams: "" is not a team name (want a non-empty name without surrounding spaces)`}},
		{"team twice", map[string]string{"models/a.yaml": "id: a\nteams: [acme, beta, acme]\nrecords: [{id: R, fields: [{id: F, type: string}]}]\n"},
			[]string{`models/a.yaml:2: teams: "acme" is listed twice`}},
		{"wrong shape", map[string]string{"models/a.yaml": "id: a\nrecords:\n  - id: A\n    fields: {id: F}\n"},
			[]string{"models/a.yaml:4: a record: cannot unmarshal !!map into []yaml.Node"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fsys := fstest.MapFS{}
			for name, data := range tt.files {
				fsys[name] = &fstest.MapFile{Data: []byte(data)}
			}
			_, err := Load(fsys)
			if err == nil {
				t.Fatal("Load succeeded, want an error")
			}
			var de *DefinitionError
			if !errors.As(err, &de) {
				t.Fatalf("error %v is not a *DefinitionError", err)
			}
			got := strings.Split(err.Error(), "\n")
			if diff := cmp.Diff(tt.want, got, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("errors (-want +got):\n%s", diff)
			}
		})
	}
}

// bindMsg is the filter binder's message for src, so the test follows its wording.
func bindMsg(src string, s query.Schema) string {
	_, err := query.ParseAndBind(src, s)
	var qe *query.Error
	if errors.As(err, &qe) {
		return qe.Msg
	}
	return "no error"
}

func TestPlan(t *testing.T) {
	ms, err := Load(fstest.MapFS{
		"models/base.yaml": {Data: []byte(baseYAML)},
		"models/child.yaml": {Data: []byte(childYAML + "  - {id: X, expr: count(LONE.A)}\n" +
			"" /* LONE is added below */)},
	})
	if err == nil {
		t.Fatalf("count over an unknown record loaded: %v", ms)
	}
	ms, err = Load(fstest.MapFS{
		"models/base.yaml":  {Data: []byte(baseYAML)},
		"models/child.yaml": {Data: []byte(childYAML)},
	})
	if err != nil {
		t.Fatal(err)
	}
	child := ms[1]
	// Rows of the records of the fields are listed at the grain that reaches the others
	// going up the relationships, the base KM's and the child's alike.
	rows := func(m *KnowledgeModel, fields ...string) (string, error) {
		p, err := NewPlan(m, &PlanRequest{Fields: fields, PageSize: 1})
		if err != nil {
			return "", err
		}
		got := p.Grain
		for _, s := range p.RowJoin {
			got += " " + s.String()
		}
		return got, nil
	}
	tests := []struct {
		fields []string
		want   string
	}{
		{[]string{"ORDERS.ID"}, "ORDERS"},
		{[]string{"CUSTOMERS.COUNTRY", "ORDERS.ID"}, "ORDERS ORDERS.CUST>CUSTOMERS.ID"},
		{[]string{"CUSTOMERS.COUNTRY", "EVENTS.AT"}, "EVENTS EVENTS.ORDER>ORDERS.ID ORDERS.CUST>CUSTOMERS.ID"},
		{[]string{"EVENTS.ORDER", "ORDERS.V", "EVENTS.AT"}, "EVENTS EVENTS.ORDER>ORDERS.ID"},
	}
	for _, tt := range tests {
		got, err := rows(child, tt.fields...)
		if err != nil {
			t.Errorf("NewPlan(%v): %v", tt.fields, err)
		} else if got != tt.want {
			t.Errorf("NewPlan(%v): grain and joins %s, want %s", tt.fields, got, tt.want)
		}
	}
	// Two records that both point to ORDERS cannot be listed together.
	m := *child
	m.Records = append(m.Records, &Record{ID: "ITEMS", Fields: []*Field{{ID: "ORDER", Type: query.TypeString}}})
	m.Relationships = append(m.Relationships, Relationship{From: FieldPath{"ITEMS", "ORDER"}, To: FieldPath{"ORDERS", "ID"}})
	_, err = rows(&m, "ITEMS.ORDER", "EVENTS.AT")
	var p *problem.Problem
	if !errors.As(err, &p) || p.Status != 400 || p.ErrorCode != CodeJoinNotPossible || !strings.Contains(p.Detail, "records ITEMS, EVENTS cannot") {
		t.Errorf("NewPlan(ITEMS.ORDER, EVENTS.AT) error = %v, want a 400 %s naming EVENTS and ITEMS", err, CodeJoinNotPossible)
	}
}
