// Package storetest holds the conformance suites every kmkit storage backend runs, in the
// manner of the Go CDK's drivertest: the memory backend, SQLite and PostgreSQL run the same
// tests, so that a difference between backends is a failing test.
//
//	func TestConformance(t *testing.T) {
//		storetest.Run(t, storetest.Backend{
//			KM:        storetest.ImportKM(func(t *testing.T) *mydb.KMStore { return open(t).KM() }),
//			SCIM:      storetest.SeatedSCIM(func(t *testing.T) *mydb.SCIMStore { return open(t).SCIM() }),
//			Reporting: func(t *testing.T) reportingtest.Store { return open(t).Reporting() },
//			Limiter:   func(t *testing.T) ratelimit.Limiter { ... },
//		})
//	}
//
// The memory backend and sqlstore run it this way: each suite opens a new database as a
// host opens it (memory.New, sqlstore.Open) and loads the KM data with the KM store's
// Import, the one code path both backends share.
//
// The suites ask as every surface asks: through the request layer of the domain,
// km.Service (requests are km.Request values, answers typed rows, refusals the
// *problem.Problem the surfaces answer with). The package links no surface and no backend
// (the root package's deps test checks it): the adapters' own tests check their
// encodings against the same cases (SemanticsCases, ODataFunctionCases) and the same
// reference.
//
// The KM suite loads a fixed data directory (Data) into the backend and runs a table of
// queries (filters of every kind with nulls and three-valued logic, date and date-time
// semantics, string functions, sorts with nulls last and ties in row order, paging,
// distinct, search, joins, KPIs) and compares every result with the reference evaluator
// (Reference) on the same data; no backend is the oracle of the suite. The reference
// scores fuzzy search by the documented tiers with plain loops of its own (refScore);
// some cases also spell their pages out, and hostile inputs (values, field ids, sort keys
// and search terms written to break out of SQL) must be rejected or matched literally.
// Results must be equal, floats within 1e-9 relative.
//
// The semantics part of the KM suite (issue 12: KPIs at their grain, filters across
// records, join paths, quoted literals) takes its expected answers from Reference, a
// row-at-a-time evaluator written from the rules alone: nested-loop joins, one row at a
// time, no code shared with the backends, the query executor or the km planner; it is
// itself checked against pandas (TestReferenceAgainstPandas, skipped without
// /usr/bin/python3 and pandas). The suite loads a small generated order-to-cash demo
// (DemoData) and asks the Service: every record x predefined filter pair as rows and as a
// summary, every KPI alone and with all others grouped by fields of its own, parent,
// child and farther records (MATERIALS.MATERIAL_GROUP through ORDER_ITEMS), filters on
// every record, rows of several records without KPIs, OData's $filter functions and
// $orderby expressions, and the 400s of sibling conditions, unlistable records and
// ambiguous paths (a diamond KM). Answers are compared as rows: same columns, same rows
// in the same order, floats within 1e-9 relative. FuzzSemantics does the same with random
// requests over random 3-record KMs against the memory store and SQLite, fuzzy searches
// and a constant KPI among them.
//
// Choices where the rules leave room, as the reference makes them: an aggregate's
// condition is one conjunct (not split at its top-level "and") with its own home; the rows
// of a KM-level request without KPIs carry their parents' fields where the parent rows
// pass the filter and nulls where they do not, as the KPI form counts them (SPEC-NOTES,
// "KPIs: every aggregate at its own grain"); a bare count() takes the only record its
// KPI's expression names.
//
// The Answers part (issue 29) asks a small KM of its own (AnswersData) and the
// procure-to-pay KM of P2PData: a time field read as its HH:MM:SS text by the string
// functions, OData's functions (against the reference) and fuzzy search (spelled out);
// unknown ids refused with the closest ones ("did you mean"), status, code and detail;
// sums and averages of decimal amounts equal to the double nearest to their exact value
// (math/big on the amounts as written); a search field named 1001 times and a search over
// 120 fields; a filter two relationships away (against the reference). The Dates part
// asks a KM of dates, date-times and times at the edges of their ranges (DatesData)
// against the reference. The Teams part checks that a caller sees only the KMs of its
// team (TeamsData).
//
// The SCIM, reporting and limiter suites are those of scim/scimtest,
// reporting/reportingtest and auth/ratelimit/limitertest.
package storetest

import (
	"context"
	"embed"
	"io/fs"
	"testing"

	"github.com/kmkit/kmkit/auth/ratelimit"
	"github.com/kmkit/kmkit/auth/ratelimit/limitertest"
	"github.com/kmkit/kmkit/km"
	"github.com/kmkit/kmkit/reporting/reportingtest"
	"github.com/kmkit/kmkit/scim"
	"github.com/kmkit/kmkit/scim/scimtest"
)

//go:embed testdata/km
var data embed.FS

// Data returns the data directory the KM suite loads: models/suite.yaml and the CSV files
// of its sources.
func Data() fs.FS {
	sub, err := fs.Sub(data, "testdata/km")
	if err != nil {
		panic(err) // the embedded directory exists
	}
	return sub
}

// Backend gives the suites a factory per store; a nil factory skips its suite.
type Backend struct {
	// KM returns a store holding the KMs and data of the directory data.
	KM func(t *testing.T, data fs.FS) km.Store
	// SCIM returns an empty store with the given seat limits.
	SCIM scimtest.Factory
	// Reporting returns an empty store.
	Reporting func(t *testing.T) reportingtest.Store
	// Limiter returns a limiter with no counters.
	Limiter func(t *testing.T) ratelimit.Limiter
	// Importer returns a new, empty KM store, for the suite of what Import refuses
	// (RunImport).
	Importer func(t *testing.T) Importer
}

// Importer is the KM store of a backend that loads data directories: memory.KMStore and
// sqlstore.KMStore.
type Importer interface {
	km.Store
	// Import loads the KMs and data of a data directory (models/*.yaml, data/*.csv).
	Import(ctx context.Context, fsys fs.FS) error
}

// ImportKM returns the Backend.KM factory of a backend whose new, empty KM store newStore
// returns: it imports the data directory into the store, as a host does.
func ImportKM[S Importer](newStore func(t *testing.T) S) func(t *testing.T, data fs.FS) km.Store {
	return func(t *testing.T, data fs.FS) km.Store {
		t.Helper()
		s := newStore(t)
		if err := s.Import(context.Background(), data); err != nil {
			t.Fatal(err)
		}
		return s
	}
}

// SeatedStore is a scim.Store with per-team seat limits (scim.SeatLimits embedded).
type SeatedStore interface {
	scim.Store
	SetSeatLimit(team string, n int)
}

// SeatedSCIM returns the Backend.SCIM factory of a backend whose new, empty SCIM store
// newStore returns: it sets the suite's seat limits on the store.
func SeatedSCIM[S SeatedStore](newStore func(t *testing.T) S) scimtest.Factory {
	return func(t *testing.T, seats map[string]int) scim.Store {
		s := newStore(t)
		for team, n := range seats {
			s.SetSeatLimit(team, n)
		}
		return s
	}
}

// Run runs every suite the backend has a factory for.
func Run(t *testing.T, b Backend) {
	if b.KM != nil {
		t.Run("KM", func(t *testing.T) { RunKM(t, b.KM) })
	}
	if b.SCIM != nil {
		t.Run("SCIM", func(t *testing.T) { scimtest.Run(t, b.SCIM) })
	}
	if b.Reporting != nil {
		t.Run("Reporting", func(t *testing.T) { reportingtest.Run(t, b.Reporting) })
	}
	if b.Limiter != nil {
		t.Run("Limiter", func(t *testing.T) { limitertest.Run(t, b.Limiter) })
	}
	if b.Importer != nil {
		t.Run("Import", func(t *testing.T) { RunImport(t, b.Importer) })
	}
}

func suiteModel(t *testing.T, s km.Store) *km.KnowledgeModel {
	t.Helper()
	m, err := s.Model(context.Background(), "suite")
	if err != nil {
		t.Fatal(err)
	}
	return m
}
