package km

import (
	"fmt"

	"github.com/kmkit/kmkit/problem"
)

// Error codes the KM API adds to those of the problem and query packages.
const (
	CodeModelNotFound   = "KM_MODEL_NOTFOUND"
	CodeRecordNotFound  = "KM_RECORD_NOTFOUND"
	CodeFieldNotFound   = "KM_FIELD_NOTFOUND"
	CodeFilterNotFound  = "KM_FILTER_NOTFOUND"
	CodeKPINotFound     = "KM_KPI_NOTFOUND"
	CodeJoinNotPossible = "KM_JOIN_NOT_POSSIBLE"
	CodePayloadTooLarge = "GENERAL_PAYLOAD_TOO_LARGE"
)

// Limits of one request that the planner enforces.
const (
	// MaxFields is the most fields one data request may select.
	MaxFields = 200
	// MaxFilterExpressions is the most filter expressions (filterExpr entries and
	// predefined filters together) one data request may combine.
	MaxFilterExpressions = 100
)

// badRequest returns a 400 problem as an error.
func badRequest(code, format string, args ...any) error {
	return problem.New(400, code, fmt.Sprintf(format, args...))
}

// FieldHint is what an error detail adds after an unknown field name: how the fields of
// rec are named, or at KM level (rec nil) that they are named RECORD.FIELD.
func FieldHint(rec *Record) string {
	if rec == nil {
		return " (knowledge model endpoints name fields RECORD.FIELD)"
	}
	return " (record " + rec.ID + ")"
}
