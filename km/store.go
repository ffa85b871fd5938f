package km

import (
	"context"
	"errors"

	"github.com/kmkit/kmkit/query"
)

// ErrNotFound is returned (possibly wrapped) by a Store when a KM does not exist for the
// caller. The handler answers it with 404 KM_MODEL_NOTFOUND.
var ErrNotFound = errors.New("km: not found")

// Store is what a host implements to serve its data: the catalog of Knowledge Models and
// the execution of queries against them. Implementations must be safe for concurrent use.
// The request context carries the caller (auth.PrincipalFrom), so a store can scope the
// catalog per team.
type Store interface {
	// Models returns the KMs visible to the caller, in any order.
	Models(ctx context.Context) ([]*KnowledgeModel, error)
	// Model returns the KM with the given id, or an error wrapping ErrNotFound.
	Model(ctx context.Context, id string) (*KnowledgeModel, error)
	// Query executes the plan p against p.KM: Result.Columns are p.Columns (names and
	// types), each row holding one value per column. A plan is valid by construction
	// (NewPlan); errors the store returns are answered with 500.
	Query(ctx context.Context, p *Plan) (*query.Result, error)
}

// Query is one query against a KM in the form stores took before plans, kept for tests
// that write requests this way (storetest.PlanOf compiles it with NewPlan):
// a query.Request and the scope it runs in.
//
// At record level (Record set, Join nil) the request names fields by their bare ids
// ("NET_VALUE"), has no KPIs, and every row of the result is a row of the record.
//
// At KM level (Record empty) the request names fields "RECORD.FIELD" and KPIs by id;
// Join says how the records it references are joined (many-to-one, so the rows are those
// of Join.Root). KPIs are computed per distinct combination of the selected fields.
//
// Whole results: a summary of all filtered rows is a Query with PageSize large enough
// (math.MaxInt32) and no sort; a full count is Request.Count.
type Query struct {
	Record string
	Join   *JoinPlan
	query.Request
}
