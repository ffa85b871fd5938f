package km

import (
	"errors"
	"fmt"
	"strconv"

	"github.com/kmkit/kmkit/problem"
	"github.com/kmkit/kmkit/query"
	"github.com/kmkit/kmkit/query/column"
)

// ErrDuplicateTarget is the error (wrapped in a *DuplicateTargetError) of data whose
// relationship target holds a value in more than one row: a relationship is many-to-one,
// so its To field must hold each non-null value at most once (nulls join nothing). Every
// store refuses such data when it is loaded, and leaves the data it served before.
var ErrDuplicateTarget = errors.New("the target of a relationship must be unique")

// DuplicateTargetError names the relationship whose target holds Value in more than one
// row. It matches ErrDuplicateTarget (errors.Is) and, for an API answering it, is the 409
// problem GENERAL_CONSTRAINT_VIOLATION with its message (errors.As with a
// **problem.Problem): a store meets it at query time only with tables put after its
// models (memory.KMStore.PutTable) or an executor built over tables no load checked.
type DuplicateTargetError struct {
	Relationship Relationship // the relationship whose To field holds Value twice
	Value        query.Value  // one value held in more than one row
}

// Error returns, for example, `relationship ACTIVITIES.ORDER_ID -> ORDERS.ORDER_ID:
// ORDERS.ORDER_ID holds "A-17" in more than one row; the target of a relationship must be
// unique`.
func (e *DuplicateTargetError) Error() string {
	f := e.Value.Format() // strings, dates and times quoted, numbers not
	v := fmt.Sprint(f)
	if s, ok := f.(string); ok {
		v = strconv.Quote(s)
	}
	return fmt.Sprintf("relationship %s -> %s: %s holds %s in more than one row; %v",
		e.Relationship.From, e.Relationship.To, e.Relationship.To, v, ErrDuplicateTarget)
}

// Unwrap returns ErrDuplicateTarget.
func (e *DuplicateTargetError) Unwrap() error { return ErrDuplicateTarget }

// As sets a **problem.Problem target to the 409 an API answers the error with: the
// request is valid, the data it reads break their KM's relationships until they are
// loaded again without the duplicates.
func (e *DuplicateTargetError) As(target any) bool {
	p, ok := target.(**problem.Problem)
	if ok {
		*p = problem.New(409, problem.CodeConstraint, "the data of the KM cannot be joined: "+e.Error()+"; load the data again without the duplicates")
	}
	return ok
}

// CheckTarget returns a *DuplicateTargetError when c, the data of rel's To field, holds a
// non-null value in more than one row, else nil.
func CheckTarget(rel Relationship, c column.Column) error {
	if v, ok := column.Repeated(c); ok {
		return &DuplicateTargetError{Relationship: rel, Value: v}
	}
	return nil
}
