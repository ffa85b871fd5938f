package scim

import (
	"errors"
	"fmt"
)

// The scimType keywords of RFC 7644 section 3.12 that this package uses.
const (
	TypeInvalidFilter = "invalidFilter"
	TypeUniqueness    = "uniqueness"
	TypeMutability    = "mutability"
	TypeInvalidSyntax = "invalidSyntax"
	TypeInvalidPath   = "invalidPath"
	TypeNoTarget      = "noTarget"
	TypeInvalidValue  = "invalidValue"
)

// The HTTP status numbers of RFC 7644 section 3.12 the rules of this package answer with.
// RFC 7644 makes them part of SCIM's error model, so they are plain numbers here, which an
// HTTP adapter such as scim/scimhttp writes.
const (
	StatusBadRequest         = 400
	StatusNotFound           = 404
	StatusConflict           = 409
	StatusPreconditionFailed = 412
)

// Error is a SCIM error as RFC 7644 section 3.12 defines it: the HTTP status number, the
// scimType keyword where one applies ("" otherwise) and a detail meant for the client.
type Error struct {
	Status   int
	ScimType string
	Detail   string
}

// Error returns the detail.
func (e Error) Error() string { return e.Detail }

// NewError returns the Error of status and scimType with a formatted detail.
func NewError(status int, scimType, format string, args ...any) Error {
	return Error{Status: status, ScimType: scimType, Detail: fmt.Sprintf(format, args...)}
}

func apiError(status int, scimType, format string, args ...any) Error {
	return NewError(status, scimType, format, args...)
}

func badValue(format string, args ...any) Error {
	return apiError(StatusBadRequest, TypeInvalidValue, format, args...)
}

// ErrorOf returns the SCIM error err stands for: the rule a Store reports (ErrNotFound is
// 404, ErrUniqueness 409 uniqueness, ErrMutability 400 mutability, ErrNoSuchMember and
// ErrTooManyGroups 400 invalidValue, ErrLicenseExceeded 400 without scimType,
// ErrVersionMismatch 412), with the detail of its RuleError, or an Error err wraps. It
// reports false for any other error, which is a failure and not the client's to see.
func ErrorOf(err error) (Error, bool) {
	detail := err.Error()
	var re *RuleError
	if errors.As(err, &re) {
		detail = re.Detail
	}
	switch {
	case errors.Is(err, ErrNotFound):
		return apiError(StatusNotFound, "", "%s", detail), true
	case errors.Is(err, ErrUniqueness):
		return apiError(StatusConflict, TypeUniqueness, "%s", detail), true
	case errors.Is(err, ErrMutability):
		return apiError(StatusBadRequest, TypeMutability, "%s", detail), true
	case errors.Is(err, ErrNoSuchMember), errors.Is(err, ErrTooManyGroups):
		return apiError(StatusBadRequest, TypeInvalidValue, "%s", detail), true
	case errors.Is(err, ErrLicenseExceeded):
		return apiError(StatusBadRequest, "", "%s", detail), true
	case errors.Is(err, ErrVersionMismatch):
		return apiError(StatusPreconditionFailed, "", "%s", detail), true
	}
	var se Error
	if errors.As(err, &se) {
		return se, true
	}
	return Error{}, false
}
