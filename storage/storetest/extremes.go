package storetest

import (
	"io/fs"
	"testing"
	"testing/fstest"

	"github.com/kmkit/kmkit/km"
)

// ExtremesData returns the data directory of the extremes suite's KM (extremes): min and
// max KPIs over dates, date-times, timestamps, times, strings and booleans. Customers CU
// have orders OR (OR.CU_ID -> CU.CU_ID); the orders hold the years 0001 and 9999, equal
// values in several rows (ties), nulls, a whole group of nulls, an order whose customer
// does not exist, strings that differ in case and in non-ASCII letters ('Zoë' < 'zoe' <
// 'Ábel' byte by byte, not in a dictionary's order), and a customer without orders.
func ExtremesData() fstest.MapFS {
	return fstest.MapFS{
		"models/extremes.yaml": {Data: []byte(`id: extremes
name: Extremes
records:
  - id: CU
    name: Customers
    source: ext_cu
    key: CU_ID
    fields:
      - {id: CU_ID, name: Customer, type: string}
      - {id: NAME, name: Name, type: string}
      - {id: REGION, name: Region, type: string}
      - {id: JOINED, name: Joined, type: date}
  - id: OR
    name: Orders
    source: ext_or
    key: OR_ID
    fields:
      - {id: OR_ID, name: Order, type: string}
      - {id: CU_ID, name: Customer, type: string}
      - {id: STATUS, name: Status, type: string}
      - {id: D, name: Day, type: date}
      - {id: T, name: Created, type: datetime}
      - {id: S, name: Seen, type: timestamp}
      - {id: H, name: Slot, type: time}
      - {id: W, name: Word, type: string}
      - {id: B, name: Express, type: boolean}
relationships:
  - {from: OR.CU_ID, to: CU.CU_ID}
kpis:
  - {id: FIRST_DAY, name: First day, expr: min(OR.D)}
  - {id: LAST_DAY, name: Last day, expr: max(OR.D)}
  - {id: FIRST_CREATED, name: First created, expr: min(OR.T)}
  - {id: LAST_CREATED, name: Last created, expr: max(OR.T)}
  - {id: FIRST_SEEN, name: First seen, expr: min(OR.S)}
  - {id: LAST_SEEN, name: Last seen, expr: max(OR.S)}
  - {id: EARLY_SLOT, name: Earliest slot, expr: min(OR.H)}
  - {id: LATE_SLOT, name: Latest slot, expr: max(OR.H)}
  - {id: LEAST_WORD, name: Least word, expr: min(OR.W)}
  - {id: GREATEST_WORD, name: Greatest word, expr: max(OR.W)}
  - {id: ALL_EXPRESS, name: All express, expr: min(OR.B)}
  - {id: ANY_EXPRESS, name: Any express, expr: max(OR.B)}
  - {id: LAST_OPEN_DAY, name: Last open day, expr: "max(OR.D, OR.STATUS eq 'open')"}
  - {id: NORTH_WORD, name: Greatest word in the north, expr: "max(OR.W, CU.REGION eq 'Nord')"}
  - {id: FIRST_JOINED, name: First joined, expr: min(CU.JOINED)}
  - {id: LAST_NAME, name: Greatest name, expr: max(CU.NAME)}
  - {id: ORDERS, name: Orders, expr: count(), record: OR}
`)},
		"data/ext_cu.csv": {Data: []byte(`CU_ID,NAME,REGION,JOINED
C1,Zoë,Nord,2001-05-05
C2,zoe,Süd,0001-01-01
C3,Ábel,Nord,9999-12-31
C4,,Süd,
C5,Émile,Ost,1999-12-31
`)},
		"data/ext_or.csv": {Data: []byte(`OR_ID,CU_ID,STATUS,D,T,S,H,W,B
O1,C1,open,2025-03-01,2025-03-01T10:00:00Z,2025-03-01T10:00:00.5Z,08:30:00,apple,true
O2,C1,done,0001-01-01,0001-01-01T00:00:00Z,0001-01-01T00:00:00Z,00:00:00,Apple,false
O3,C1,open,2025-03-01,2025-03-01T12:00:00+02:00,2025-03-01T10:00:00.5Z,23:59:59.999999,Äpfel,true
O4,C2,done,9999-12-31,9999-12-31T23:59:59.999999Z,9999-12-31T23:59:59.999999Z,12:00:00,zebra,
O5,C2,open,,,,,,
O6,C3,done,1970-01-01,1969-12-31T23:59:59Z,1970-01-01T00:00:00Z,12:00:00.5,Zebra,false
O7,C3,,2024-02-29,2024-02-29T23:30:00-00:30,2024-02-29T23:30:00-00:30,06:00:00,日本,false
O8,C9,open,2000-01-01,2000-01-01T00:00:00+14:00,2000-01-01T00:00:00Z,09:15:00,éclair,true
O9,,done,2000-01-01,1999-12-31T10:00:00Z,1999-12-31T10:00:00Z,09:15:00,Zebra,true
O10,C4,open,,,,,,
`)},
	}
}

// ExtremesCases are the requests of the extremes suite: every min and max KPI without
// dimensions, by a field of the orders and of the customers (the customers' KPIs at
// their own grain, the orders' with the null group of orders without a customer and the
// empty group of a customer without orders), with a filter, sorted by each type and paged.
func ExtremesCases() []RefRequest {
	orders := []string{"FIRST_DAY", "LAST_DAY", "FIRST_CREATED", "LAST_CREATED", "FIRST_SEEN", "LAST_SEEN",
		"EARLY_SLOT", "LATE_SLOT", "LEAST_WORD", "GREATEST_WORD", "ALL_EXPRESS", "ANY_EXPRESS", "LAST_OPEN_DAY", "NORTH_WORD"}
	all := append(append([]string{}, orders...), "FIRST_JOINED", "LAST_NAME", "ORDERS")
	return []RefRequest{
		{KPIs: all},
		{Fields: []string{"CU.CU_ID"}, KPIs: all},
		{Fields: []string{"CU.REGION"}, KPIs: all},
		{Fields: []string{"OR.STATUS"}, KPIs: all},
		{Fields: []string{"OR.B"}, KPIs: []string{"FIRST_JOINED", "LAST_NAME", "LEAST_WORD"}},
		{Fields: []string{"OR.D"}, KPIs: []string{"LAST_NAME", "GREATEST_WORD", "LAST_SEEN"}},
		{Fields: []string{"CU.REGION"}, KPIs: orders, FilterExprs: []string{"OR.D ge 2000-01-01 and OR.W ne 'Zebra'"}},
		{Fields: []string{"CU.CU_ID"}, KPIs: []string{"FIRST_DAY", "LAST_NAME"}, FilterExprs: []string{"CU.NAME lt 'z'"}},
		{Fields: []string{"CU.CU_ID"}, KPIs: []string{"LAST_DAY", "ORDERS"}, Sort: "-LAST_DAY"},
		{Fields: []string{"CU.CU_ID"}, KPIs: []string{"FIRST_CREATED"}, Sort: "+FIRST_CREATED"},
		{Fields: []string{"CU.CU_ID"}, KPIs: []string{"LAST_SEEN", "EARLY_SLOT"}, Sort: "-EARLY_SLOT,+LAST_SEEN"},
		{Fields: []string{"CU.CU_ID"}, KPIs: []string{"GREATEST_WORD"}, Sort: "+GREATEST_WORD"},
		{Fields: []string{"CU.CU_ID"}, KPIs: []string{"LEAST_WORD"}, Sort: "-LEAST_WORD", Page: 1, PageSize: 2},
		{Fields: []string{"CU.CU_ID"}, KPIs: []string{"ALL_EXPRESS", "ANY_EXPRESS"}, Sort: "-ALL_EXPRESS,+ANY_EXPRESS"},
		{Fields: []string{"OR.STATUS"}, KPIs: []string{"LAST_NAME", "FIRST_JOINED"}, Sort: "+LAST_NAME"},
	}
}

// runExtremes asks ExtremesCases of stores holding ExtremesData and compares the answers
// with the reference evaluator's.
func runExtremes(t *testing.T, newStore func(t *testing.T, data fs.FS) km.Store) {
	fsys := ExtremesData()
	ref, err := LoadReference(fsys, "extremes")
	if err != nil {
		t.Fatal(err)
	}
	svc := newService(newStore(t, fsys))
	for _, req := range ExtremesCases() {
		checkService(t, svc, ref, "extremes", req)
	}
}
