//go:build race

package sqlstore

// raceEnabled reports a build with the race detector, under which the tests of bulk work
// on one goroutine leave their largest inputs to the run without it (Makefile's bulk step).
const raceEnabled = true
