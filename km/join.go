package km

import "fmt"

// JoinError says that two records a query references have no path of relationships
// between them.
type JoinError struct {
	A, B string
}

// Error names both records.
func (e *JoinError) Error() string {
	return fmt.Sprintf("records %s and %s are not joined by any relationship path of the knowledge model", e.A, e.B)
}
