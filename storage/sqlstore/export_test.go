package sqlstore

import "context"

// RaceEnabled is raceEnabled for the package's external tests.
const RaceEnabled = raceEnabled

// SetFirstSeen sets the rows KMStore.firstSeenPage groups first (at least perRow per row
// of the page's end) and the growth of its further try, until t ends.
func SetFirstSeen(t interface{ Cleanup(func()) }, rows, perRow, growth int64) {
	r, p, g := firstSeenRows, firstSeenPerRow, firstSeenGrowth
	firstSeenRows, firstSeenPerRow, firstSeenGrowth = rows, perRow, growth
	t.Cleanup(func() { firstSeenRows, firstSeenPerRow, firstSeenGrowth = r, p, g })
}

// GenerationOf returns the current generation table of source in db.
func GenerationOf(t interface {
	Helper()
	Fatal(...any)
}, db *DB, source string) string {
	t.Helper()
	table, err := db.CurrentTable(context.Background(), source)
	if err != nil || table == "" {
		t.Fatal("no generation table of ", source, ": ", err)
	}
	return table
}

// SliceRows is Rows over rows held in memory, for the package's tests.
type SliceRows struct {
	Rows [][]any
	i    int
}

// Next implements Rows.
func (r *SliceRows) Next() bool { r.i++; return r.i <= len(r.Rows) }

// Values implements Rows.
func (r *SliceRows) Values() []any { return r.Rows[r.i-1] }
