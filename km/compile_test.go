package km

import (
	"testing"

	"github.com/kmkit/kmkit/query"
)

func TestCompile(t *testing.T) {
	m := &KnowledgeModel{
		ID: "code",
		Records: []*Record{
			{ID: "T", Fields: []*Field{{ID: "ID", Type: query.TypeString}, {ID: "H", Type: query.TypeFloat}}},
			{ID: "U", Fields: []*Field{{ID: "ID", Type: query.TypeString}, {ID: "T_ID", Type: query.TypeString}}},
		},
		Relationships: []Relationship{{From: FieldPath{"U", "T_ID"}, To: FieldPath{"T", "ID"}}},
		KPIs:          []*KPI{{ID: "H_SUM", Expr: "sum(T.H, T.H gt ${min})", Parameters: []Parameter{{ID: "min", Value: "1"}}}},
		Filters:       []*Filter{{ID: "BIG", Expr: "T.H gt 10"}},
	}
	if err := m.Compile(); err != nil {
		t.Fatal(err)
	}
	if got := query.Format(m.Filter("BIG").Bound()); got != "T.H gt 10" {
		t.Errorf("filter bound to %q", got)
	}
	if m.KPI("H_SUM").Metric() == nil || m.KPI("H_SUM").Direction != "None" || m.Records[0].Source != "T" || m.Records[0].Fields[1].TypeName != "float" {
		t.Errorf("defaults not filled: %+v %+v", m.KPI("H_SUM"), m.Records[0])
	}
	// The compiled relationship joins the records: rows of T and U are listed at U's grain.
	if p, err := NewPlan(m, &PlanRequest{Fields: []string{"T.H", "U.ID"}, PageSize: 1}); err != nil || p.Grain != "U" {
		t.Errorf("NewPlan of T.H, U.ID = %+v, %v; want grain U", p, err)
	}

	tests := []struct {
		m    *KnowledgeModel
		want string
	}{
		{&KnowledgeModel{ID: "x"}, "KM x: a KM needs at least one record"},
		{&KnowledgeModel{ID: "x", Records: []*Record{{ID: "R", Fields: []*Field{{ID: "F"}}}}}, "KM x: field R.F has no type"},
		{&KnowledgeModel{ID: "x", Records: []*Record{{ID: "R", Fields: []*Field{{ID: "F", Type: query.TypeInteger}}}},
			KPIs: []*KPI{{ID: "K", Expr: "avg(R.G)"}}}, "KM x: KPI K: unknown field R.G"},
		{&KnowledgeModel{ID: "x", Records: []*Record{{ID: "R", Fields: []*Field{{ID: "F", Type: query.TypeInteger}}}},
			Relationships: []Relationship{{From: FieldPath{"R", "F"}, To: FieldPath{"S", "F"}}}}, "KM x: relationship to unknown field S.F"},
	}
	for _, tt := range tests {
		if err := tt.m.Compile(); err == nil || err.Error() != tt.want {
			t.Errorf("Compile() error = %v, want %s", err, tt.want)
		}
	}
}
