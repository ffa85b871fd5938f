package sqlstore

// RaceEnabled is raceEnabled for the package's external tests.
const RaceEnabled = raceEnabled

// SetFirstSeen sets the rows KMStore.firstSeenPage groups first (at least perRow per row
// of the page's end) and the growth of its further try, until t ends.
func SetFirstSeen(t interface{ Cleanup(func()) }, rows, perRow, growth int64) {
	r, p, g := firstSeenRows, firstSeenPerRow, firstSeenGrowth
	firstSeenRows, firstSeenPerRow, firstSeenGrowth = rows, perRow, growth
	t.Cleanup(func() { firstSeenRows, firstSeenPerRow, firstSeenGrowth = r, p, g })
}

// SetConsistentReadHook sets consistentReadHook until t ends.
func SetConsistentReadHook(t interface{ Cleanup(func()) }, hook func(after bool)) {
	consistentReadHook = hook
	t.Cleanup(func() { consistentReadHook = nil })
}
