package storetest

import (
	"fmt"
	"io/fs"
	"slices"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/kmkit/kmkit/km"
)

// DatesData returns the data directory of the dates suite's KM (dates): one record E of
// dates, date-times, timestamps and times at the edges of their ranges (years 0001 and
// 9999 with the last microsecond of the day, the day before 1970, 1900, 2038, a leap
// day), written with offsets (-00:30, -02:30, +14:00, +03:00, +00:00) and seven fraction
// digits (in date-times and times, .NET's form, kept to the microsecond by dropping the
// seventh), equal instants in two rows, the year 0000, and a row of nulls.
func DatesData() fstest.MapFS {
	return fstest.MapFS{
		"models/dates.yaml": {Data: []byte(`id: dates
name: Dates
records:
  - id: E
    name: Edges
    source: dates_e
    key: ID
    fields:
      - {id: ID, name: Row, type: string}
      - {id: G, name: Group, type: string}
      - {id: D, name: Day, type: date}
      - {id: T, name: Instant, type: datetime}
      - {id: S, name: Stamp, type: timestamp}
      - {id: H, name: Time, type: time}
kpis:
  - {id: N, name: Rows, expr: count(), record: E}
`)},
		"data/dates_e.csv": {Data: []byte(`ID,G,D,T,S,H
R1,a,0001-01-01,0001-01-01T00:00:00Z,0001-01-01T00:00:00Z,00:00:00
R2,a,9999-12-31,9999-12-31T23:59:59.9999999Z,9999-12-31T23:59:59.999999Z,23:59:59.999999
R3,b,2024-02-29,2024-02-29T23:30:00-00:30,2024-02-29T23:30:00-00:30,12:00:00.5
R4,b,1969-12-31,1969-12-31T23:59:59.999Z,1969-12-31T23:59:59.999Z,23:59:59
R5,c,2038-01-19,2038-01-19T03:14:08Z,2038-01-19T03:14:08Z,03:14:08
R6,c,2025-06-01,2025-06-01T00:00:00+14:00,2025-06-01T00:00:00+14:00,00:00:00
R7,c,2025-06-01,2025-06-01T15:48:44.123Z,2025-06-01T15:48:44.123Z,15:48:44
R8,,,,,
R9,a,2025-06-01,2025-06-01T15:48:44.123Z,2025-06-01T15:48:44.123Z,15:48:44
R10,b,1900-01-01,1900-01-01T12:00:00+03:00,1900-01-01T12:00:00+03:00,12:00:00
R11,c,2025-05-31,2025-05-31T23:59:59.999999Z,2025-05-31T23:59:59.999999Z,23:59:59.999999
R12,a,1600-02-29,1600-02-29T23:59:59.999999Z,1600-02-29T23:59:59.999999Z,06:00:00
R13,b,0000-02-29,0000-02-29T12:00:00Z,0000-12-31T23:59:59.999999Z,01:00:00
R14,a,2025-06-01,2025-06-01T15:48:44.1234567Z,2025-06-01T15:48:44.1234560Z,10:00:00.1234567
R15,b,2025-06-01,2025-06-01T13:18:44.1234569-02:30,2025-06-01T15:48:44.1234560+00:00,23:59:59.9999999
`)},
	}
}

// runDates asks the dates KM questions whose answers turn on the edges of the date and
// time types, against the reference evaluator.
func runDates(t *testing.T, newStore func(t *testing.T, data fs.FS) km.Store) {
	fsys := DatesData()
	ref, err := LoadReference(fsys, "dates")
	if err != nil {
		t.Fatal(err)
	}
	svc := newService(newStore(t, fsys))
	all := []string{"ID", "D", "T", "S", "H"}
	for _, req := range []RefRequest{
		// The parts of an instant far from 1970 with a fraction of a second: PostgreSQL
		// read 9999-12-31T23:59:59.999999Z as 10000-01-01 and 1600-02-29T23:59:59.999999Z
		// as 1600-03-01 (an instant's microseconds times an interval are a double).
		{Record: "E", Fields: all, ODataFilter: "day(T) eq 31 or day(S) eq 29"},
		{Record: "E", Fields: all, ODataFilter: "year(T) eq year(D) and month(S) eq month(D)"},
		{Record: "E", Fields: all, ODataFilter: "year(T) ge 9999 or month(T) eq 3"},
		{Record: "E", Fields: []string{"ID", "T"}, ODataOrderBy: "year(T) desc,month(T),day(T),ID"},
		// The year 0000 (1 BC) is the year 0, as in RFC 3339 and ISO 8601: PostgreSQL's
		// extract(year) answered -1.
		{Record: "E", Fields: all, ODataFilter: "year(D) ge 0 and year(T) ge 0 and year(S) lt 1 and month(S) eq 12 and day(S) eq 31"},
		{Record: "E", Fields: []string{"ID"}, ODataFilter: "year(D) le 1 and year(T) ne -1"},
		// Literals with digits past the microsecond (OData's fractional seconds take up
		// to 12): a value equal to the microsecond they were read as is before them.
		{Record: "E", Fields: []string{"ID"}, FilterExprs: []string{"T ge 2025-06-01T15:48:44.1230001Z or S lt 1969-12-31T23:59:59.9990000001Z"}},
		{Record: "E", Fields: []string{"ID"}, FilterExprs: []string{"T eq 2025-06-01T15:48:44.1230001Z or T le 0001-01-01T00:00:00.0000009Z"}},
		{Record: "E", Fields: []string{"ID"}, FilterExprs: []string{"T ne '2025-06-01T15:48:44.1230001Z' and T gt 2025-05-31T23:59:59.9999991Z"}},
		{Record: "E", Fields: []string{"ID"}, FilterExprs: []string{"D ge 2025-06-01T00:00:00.0000001Z or D eq 0001-01-01T00:00:00.0000000Z"}},
		{Record: "E", Fields: []string{"ID"}, FilterExprs: []string{"H le 23:59:59.9999990 and H ge 12:00:00.5000001"}},
		{Record: "E", Fields: []string{"ID"}, FilterExprs: []string{"H in (12:00:00.50000001, 00:00:00.000000, 23:59:59.9999999)"}},
		{Record: "E", Fields: []string{"ID"}, FilterExprs: []string{"T in (2025-06-01T15:48:44.1230001Z, 2025-06-01T15:48:44.1230009Z)"}},
		{Record: "E", Fields: []string{"ID"}, ODataFilter: "T gt 2025-06-01T15:48:44.123000000001Z or time(T) ge 23:59:59.9999991"},
		// A date-time against a date compares the date's midnight UTC (SPEC-NOTES), with
		// the operators the KM suite leaves out (it asks gt, eq, le and in).
		{Record: "E", Fields: []string{"ID"}, FilterExprs: []string{"D ne 2025-06-01T10:00:00Z"}},
		{Record: "E", Fields: []string{"ID"}, FilterExprs: []string{"D lt 2025-06-01T02:00:00+03:00"}},
		{Record: "E", Fields: []string{"ID"}, FilterExprs: []string{"D ge 2024-02-29T23:30:00-00:30"}},
		// now() is a date-time: against a date field it compares the date's midnight
		// UTC, as a date-time literal does (it was a 400 "cannot be compared").
		{Record: "E", Fields: []string{"ID", "D"}, ODataFilter: "D lt now() and D ge 2025-06-01 or now() lt D and D lt 2100-01-01 or D eq now()"},
	} {
		checkService(t, svc, ref, "dates", req)
	}

	// Fractions of a second past the microsecond in the data: R14 and R15 hold
	// 15:48:44.1234567Z and .1234569 (at -02:30), loaded as 15:48:44.123456Z by every
	// backend, which "eq" of the 6-digit text finds, and "le" of the 7-digit text, but
	// not its "eq" (a literal between two microseconds equals no value); S holds
	// .1234560, which is its microsecond, so "eq" of that text finds it. The rows the
	// reference finds are checked too, so that the stores' agreement with it is no
	// agreement on nothing.
	for _, c := range []struct {
		filter string
		want   []any
	}{
		{"T eq 2025-06-01T15:48:44.123456Z", []any{"R14", "R15"}},
		{"T eq 2025-06-01T15:48:44.1234567Z or T eq 2025-06-01T13:18:44.1234569-02:30", nil},
		{"T le 2025-06-01T15:48:44.1234567Z and T gt 2025-06-01T15:48:44.123Z", []any{"R14", "R15"}},
		{"T ge 2025-06-01T15:48:44.1234567Z and T lt 2025-06-02", nil},
		{"S eq 2025-06-01T15:48:44.1234560Z and S eq '2025-06-01T15:48:44.123456+00:00'", []any{"R14", "R15"}},
		{"H eq 10:00:00.123456 or H eq 23:59:59.999999", []any{"R11", "R14", "R15", "R2"}},
		{"H eq 10:00:00.1234567 or H gt 23:59:59.9999991", nil},
		{"H lt 10:00:00.1234567 and H ge 10:00:00.123456", []any{"R14"}},
	} {
		req := RefRequest{Record: "E", Fields: all, FilterExprs: []string{c.filter}, Sort: "ID"}
		want, err := ref.Eval(req)
		if err != nil {
			t.Fatal(err)
		}
		var ids []any
		for _, row := range want.Rows {
			ids = append(ids, row[0])
		}
		slices.SortFunc(ids, func(a, b any) int { return strings.Compare(fmt.Sprint(a), fmt.Sprint(b)) })
		if !slices.Equal(ids, c.want) {
			t.Errorf("the reference finds %v for %s, want %v", ids, c.filter, c.want)
		}
		checkService(t, svc, ref, "dates", req)
	}
}
