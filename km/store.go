package km

import (
	"context"
	"errors"
	"fmt"

	"github.com/kmkit/kmkit/query"
)

// ErrModelNotFound is returned (possibly wrapped) by a Store when a KM does not exist for the
// caller. The handler answers it with 404 KM_MODEL_NOTFOUND.
var ErrModelNotFound = errors.New("km: not found")

// Store is what a host implements to serve its data: the catalog of Knowledge Models and
// the execution of queries against them. Implementations must be safe for concurrent use.
// Stores hold every KM: team scoping (KnowledgeModel.Teams) is applied above them, by
// LookupModel and VisibleModels, so that every backend scopes alike.
type Store interface {
	// Models returns the KMs of the store, in any order.
	Models(ctx context.Context) ([]*KnowledgeModel, error)
	// Model returns the KM with the given id, or an error wrapping ErrModelNotFound. A KM is
	// not changed once returned: a store returns a changed KM as a new value (the handler
	// keeps the plans of repeated requests per KM value).
	Model(ctx context.Context, id string) (*KnowledgeModel, error)
	// Query executes the plan p against p.KM: Result.Columns are p.Columns (names and
	// types), each row holding one value per column. A plan is valid by construction
	// (NewPlan); errors the store returns are answered with 500, but a client error (a
	// *problem.Problem, such as a *DuplicateTargetError) with its own status. Plans of
	// the OData service over records without a key name the record's row key
	// (RowField), which the store serves from the row's position.
	Query(ctx context.Context, p *Plan) (*query.Result, error)
}

// LookupModel returns the KM id of s as the caller of ctx sees it: a KM the caller may not
// see (KnowledgeModel.VisibleTo) is an error wrapping ErrModelNotFound, exactly like a KM that
// does not exist. Every API serving KMs (KM API, OData, MCP) looks KMs up with it.
func LookupModel(ctx context.Context, s Store, id string) (*KnowledgeModel, error) {
	m, err := s.Model(ctx, id)
	if err != nil {
		return nil, err
	}
	if !m.VisibleTo(ctx) {
		return nil, fmt.Errorf("km: KM %q: %w", id, ErrModelNotFound)
	}
	return m, nil
}

// VisibleModels returns the KMs of s the caller of ctx sees (KnowledgeModel.VisibleTo), in
// the store's order.
func VisibleModels(ctx context.Context, s Store) ([]*KnowledgeModel, error) {
	ms, err := s.Models(ctx)
	if err != nil {
		return nil, err
	}
	out := ms[:0:0]
	for _, m := range ms {
		if m.VisibleTo(ctx) {
			out = append(out, m)
		}
	}
	return out, nil
}
