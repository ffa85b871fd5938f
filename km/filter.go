package km

import (
	"github.com/kmkit/kmkit/internal/namelist"
	"github.com/kmkit/kmkit/problem"
	"github.com/kmkit/kmkit/query"
)

// kmSchema resolves KM-level field names "RECORD.FIELD".
type kmSchema struct{ m *KnowledgeModel }

// FieldType implements query.Schema.
func (s kmSchema) FieldType(name string) (query.Type, bool) {
	if _, f := s.m.Field(name); f != nil {
		return f.Type, true
	}
	return query.TypeInvalid, false
}

// recordSchema resolves the bare field ids of one record.
type recordSchema struct{ r *Record }

// FieldType implements query.Schema.
func (s recordSchema) FieldType(name string) (query.Type, bool) {
	if f := s.r.Field(name); f != nil {
		return f.Type, true
	}
	return query.TypeInvalid, false
}

// schema returns the filter schema of the KM (rec nil) or of one record.
func (m *KnowledgeModel) schema(rec *Record) query.Schema {
	if rec != nil {
		return recordSchema{rec}
	}
	return kmSchema{m}
}

// compileCondition parses a filter definition's expression and binds it against the KM's
// fields. Errors carry no parameter name: definitions have none.
func (m *KnowledgeModel) compileCondition(text string) (query.Expr, error) {
	return query.ParseAndBind(text, m.schema(nil), query.WithParam(""))
}

// FilterApplies reports whether the predefined filter f can filter the rows of record rec:
// each of its conjuncts has a home and a path of relationships to rec.
func (m *KnowledgeModel) FilterApplies(f *Filter, rec string) bool {
	for _, part := range conjuncts(f.bound) {
		if _, err := m.conjunct(part, []string{rec}); err != nil {
			return false
		}
	}
	return true
}

// CompileFilters turns the predefined filters (by id, duplicates dropped) and filterExpr
// texts of a request into bound filters over m.FilterSchema (rec's bare field ids and
// RECORD.FIELD of any record), one per filter or text. An unknown filter is
// KM_FILTER_NOTFOUND, more than MaxFilterExpressions in all GENERAL_CONSTRAINT_VIOLATION;
// texts are parsed within limits.
func CompileFilters(m *KnowledgeModel, rec *Record, ids, texts []string, limits query.Limits) ([]query.Expr, error) {
	var conj []query.Expr
	var unknown []string
	for _, id := range namelist.Dedup(ids) {
		f := m.Filter(id)
		if f == nil {
			unknown = append(unknown, id)
			continue
		}
		conj = append(conj, f.bound)
	}
	if len(unknown) > 0 {
		return nil, badRequest(CodeFilterNotFound, "unknown filter%s: %s%s", namelist.Plural(len(unknown)), namelist.Join(unknown), DidYouMean(unknown, m.SuggestFilter))
	}
	if n := len(texts) + len(conj); n > MaxFilterExpressions {
		return nil, badRequest(problem.CodeConstraint, "%d filter expressions: at most %d are allowed (combine conditions with and/or)", n, MaxFilterExpressions)
	}
	schema := m.FilterSchema("")
	if rec != nil {
		schema = m.FilterSchema(rec.ID)
	}
	for _, text := range texts {
		e, err := query.ParseAndBind(text, schema, query.WithLimits(limits))
		if err != nil {
			return nil, err
		}
		conj = append(conj, e)
	}
	return conj, nil
}

// ExprFields calls add with the name of every field e reads.
func ExprFields(e query.Expr, add func(string)) {
	switch e := e.(type) {
	case *query.Logical:
		ExprFields(e.L, add)
		ExprFields(e.R, add)
	case *query.Not:
		ExprFields(e.X, add)
	case *query.Compare:
		add(e.Field.Name)
	case *query.In:
		add(e.Field.Name)
	case *query.Call:
		add(e.Field.Name)
	case *query.IsNull:
		add(e.Field.Name)
	case *query.ScalarCompare:
		scalarFields(e.L, add)
		scalarFields(e.R, add)
	case *query.ScalarMatch:
		scalarFields(e.X, add)
		scalarFields(e.Arg, add)
	}
}

func scalarFields(s query.Scalar, add func(string)) {
	query.ScalarFields(s, func(f query.FieldRef) { add(f.Name) })
}

// MetricFields calls add with the name of every field mt reads (its aggregates and their
// conditions).
func MetricFields(mt query.Metric, add func(string)) {
	switch mt := mt.(type) {
	case *query.Arith:
		MetricFields(mt.L, add)
		MetricFields(mt.R, add)
	case *query.Aggregate:
		if mt.Field != "" {
			add(mt.Field)
		}
		ExprFields(mt.Filter, add)
	}
}
