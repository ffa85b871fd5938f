package odata

import (
	"encoding/csv"
	"encoding/json"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strings"
	"testing"
)

// eventsCSV returns the rows of testdata/shop/data/events.csv (EVENTS, the fixture's
// record without a key) in file order: row i has the generated key i+1.
func eventsCSV(t *testing.T) [][]string {
	t.Helper()
	f, err := os.Open("testdata/shop/data/events.csv")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	return rows[1:] // ORDER_ID, ACTIVITY, AT
}

// eventsPage is a JSON page of EVENTS entities.
type eventsPage struct {
	Count    int    `json:"@odata.count"`
	NextLink string `json:"@odata.nextLink"`
	Value    []struct {
		Key      int64  `json:"ROW_NUMBER"`
		OrderID  string `json:"ORDER_ID"`
		Activity string `json:"ACTIVITY"`
		At       string `json:"AT"`
		ID       string `json:"@odata.id"`
		EditLink string `json:"@odata.editLink"`
	} `json:"value"`
}

// readAtomEntry reads an Atom entry document as readAtom reads the entries of a feed.
func readAtomEntry(t *testing.T, body []byte) atomEntry {
	t.Helper()
	doc, ok := strings.CutPrefix(string(body), xmlHeader)
	if !ok {
		t.Fatalf("no XML declaration: %s", body)
	}
	_, entries := readAtom(t, []byte(`<feed xmlns="http://www.w3.org/2005/Atom">`+doc+`</feed>`))
	if len(entries) != 1 {
		t.Fatalf("%d entries in %s", len(entries), body)
	}
	return entries[0]
}

func getEvents(t *testing.T, h http.Handler, target string, header ...string) eventsPage {
	t.Helper()
	w := get(h, target, header...)
	if w.Code != http.StatusOK {
		t.Fatalf("GET %s: %d %s", target, w.Code, w.Body)
	}
	var p eventsPage
	if err := json.Unmarshal(w.Body.Bytes(), &p); err != nil {
		t.Fatalf("GET %s: %v", target, err)
	}
	return p
}

func eventsTarget(query string) string {
	v := url.Values{}
	for pair := range strings.SplitSeq(query, "&") {
		if k, val, ok := strings.Cut(pair, "="); ok {
			v.Add(k, val)
		}
	}
	return svc + "/EVENTS_entries?" + v.Encode()
}

// The generated key of a row is its position in events.csv whatever the query: every
// entity's properties are those of the CSV row its key names.
func TestGeneratedKeyStable(t *testing.T) {
	h := testHandler(t)
	rows := eventsCSV(t)
	for _, q := range []string{
		"",
		"$filter=ACTIVITY eq 'Ship'",
		"$orderby=AT desc",
		"$orderby=ORDER_ID desc,ACTIVITY",
		"$skip=3&$top=2",
		"$filter=ACTIVITY ne 'Create'&$orderby=AT desc&$skip=1&$top=2&$count=true",
		"filterid=PAID",
		"$filter=ORDERS.STATUS eq 'PAID' or ORDER_ID eq 'O5'&$orderby=ACTIVITY desc",
	} {
		p := getEvents(t, h, eventsTarget(q))
		if len(p.Value) == 0 {
			t.Errorf("%s: no entities", q)
		}
		for _, e := range p.Value {
			if e.Key < 1 || int(e.Key) > len(rows) {
				t.Errorf("%s: key %d out of the rows", q, e.Key)
				continue
			}
			if r := rows[e.Key-1]; r[0] != e.OrderID || r[1] != e.Activity || !sameInstant(r[2], e.At) {
				t.Errorf("%s: key %d is %s %s %s, row %d of events.csv is %v", q, e.Key, e.OrderID, e.Activity, e.At, e.Key, r)
			}
		}
	}
	// Server-driven paging: each page's keys are the rows' positions, every row once.
	var keys []int64
	for target := eventsTarget("$orderby=AT desc"); target != ""; {
		p := getEvents(t, h, target, "Prefer", "odata.maxpagesize=2")
		for _, e := range p.Value {
			if r := rows[e.Key-1]; r[0] != e.OrderID || r[1] != e.Activity {
				t.Errorf("page %s: key %d is %s %s, not %v", target, e.Key, e.OrderID, e.Activity, r)
			}
			keys = append(keys, e.Key)
		}
		target = strings.TrimPrefix(p.NextLink, "http://example.com")
	}
	slices.Sort(keys)
	if want := []int64{1, 2, 3, 4, 5, 6, 7, 8, 9}; !slices.Equal(keys, want) {
		t.Errorf("paged keys %v, want %v", keys, want)
	}
}

// sameInstant compares the CSV's RFC 3339 text with the payload's.
func sameInstant(csvText, payload string) bool {
	return strings.TrimSuffix(csvText, "Z") == strings.TrimSuffix(payload, "Z")
}

// Filtering and sorting by the generated key; expected keys from events.csv:
// 1 O1 Create, 2 O1 Ship, 3 O2 Create, 4 O2 Ship, 5 O2 Pay, 6 O3 Create, 7 O4 Create,
// 8 O5 Create, 9 O5 Ship.
func TestGeneratedKeyFilterSort(t *testing.T) {
	h := testHandler(t)
	for _, c := range []struct {
		query string
		want  []int64
	}{
		{"$filter=ROW_NUMBER gt 6", []int64{7, 8, 9}},
		{"$filter=ROW_NUMBER in (2,4,9,12)", []int64{2, 4, 9}},
		{"$filter=ROW_NUMBER ge 3 and ACTIVITY eq 'Ship'", []int64{4, 9}},
		{"$filter=ROW_NUMBER eq 5 or ROW_NUMBER lt 2", []int64{1, 5}},
		{"$filter=not (ROW_NUMBER le 7)", []int64{8, 9}},
		{"$filter=ROW_NUMBER ne null and ROW_NUMBER le 2", []int64{1, 2}},
		{"$orderby=ROW_NUMBER desc&$top=3", []int64{9, 8, 7}},
		{"$orderby=ROW_NUMBER desc&$skip=7", []int64{2, 1}},
		{"$orderby=ORDER_ID desc,ROW_NUMBER desc", []int64{9, 8, 7, 6, 5, 4, 3, 2, 1}},
		{"$orderby=ACTIVITY,ROW_NUMBER desc", []int64{8, 7, 6, 3, 1, 5, 9, 4, 2}},
		{"$filter=ACTIVITY eq 'Create'&$orderby=ROW_NUMBER desc&$select=ROW_NUMBER", []int64{8, 7, 6, 3, 1}},
	} {
		p := getEvents(t, h, eventsTarget(c.query))
		var got []int64
		for _, e := range p.Value {
			got = append(got, e.Key)
		}
		if !slices.Equal(got, c.want) {
			t.Errorf("%s: keys %v, want %v", c.query, got, c.want)
		}
	}
	checkGET(t, h, svc+"/EVENTS_entries/$count?"+url.Values{"$filter": {"ROW_NUMBER le 4"}}.Encode(), nil,
		response{200, "text/plain;charset=utf-8", "4"})
}

// An entity of a keyless record by key is the row at that position, and the ids and edit
// links of every payload resolve to the entity they belong to.
func TestGeneratedKeyEntity(t *testing.T) {
	h := testHandler(t)
	const jsonCT = "application/json;odata.metadata=minimal"
	ctx := `"@odata.context":"http://example.com` + svc + `/$metadata#EVENTS_entries/$entity"`
	pay := ctx + `,"ROW_NUMBER":5,"ORDER_ID":"O2","ACTIVITY":"Pay","AT":"2025-02-20T08:30:00Z"}`
	for _, c := range []struct {
		name, target string
		want         response
	}{
		{"bare", svc + "/EVENTS_entries(5)", response{200, jsonCT, "{" + pay}},
		{"named", svc + "/EVENTS_entries(ROW_NUMBER=5)", response{200, jsonCT, "{" + pay}},
		{"Int64 suffix", svc + "/EVENTS_entries(5L)", response{200, jsonCT, "{" + pay}},
		{"last", svc + "/EVENTS_entries(9)?$select=ACTIVITY", response{200, jsonCT,
			`{"@odata.context":"http://example.com` + svc + `/$metadata#EVENTS_entries(ACTIVITY)/$entity","ROW_NUMBER":9,"ACTIVITY":"Ship"}`}},
		{"absent", svc + "/EVENTS_entries(10)", response{404, "application/problem+json",
			problemBody(404, "ODATA_ENTITY_NOTFOUND", "entity set EVENTS_entries has no entity with the key (10)")}},
		{"zero", svc + "/EVENTS_entries(0)", response{400, "application/problem+json",
			problemBody(400, "GENERAL_PARAMETER_MISSMATCH", "key predicate (0): ROW_NUMBER is a row number, a positive integer")}},
		{"a string", svc + "/EVENTS_entries('5')", response{400, "application/problem+json",
			problemBody(400, "GENERAL_PARAMETER_MISSMATCH", "key predicate ('5'): ROW_NUMBER is a row number, a positive integer")}},
	} {
		t.Run(c.name, func(t *testing.T) { checkGET(t, h, c.target, nil, c.want) })
	}

	// JSON with full metadata: @odata.id and @odata.editLink of each entity of a filtered,
	// sorted page resolve to that entity.
	p := getEvents(t, h, eventsTarget("$filter=ACTIVITY ne 'Create'&$orderby=AT desc&$format=application/json;odata.metadata=full"))
	if len(p.Value) != 4 {
		t.Fatalf("%d entities", len(p.Value))
	}
	for _, e := range p.Value {
		for _, link := range []string{strings.TrimPrefix(e.ID, "http://example.com"), svc + "/" + e.EditLink} {
			w := get(h, link)
			var one struct {
				Key      int64  `json:"ROW_NUMBER"`
				Activity string `json:"ACTIVITY"`
				At       string `json:"AT"`
			}
			if err := json.Unmarshal(w.Body.Bytes(), &one); w.Code != 200 || err != nil {
				t.Fatalf("GET %s: %d %s", link, w.Code, w.Body)
			}
			if one.Key != e.Key || one.Activity != e.Activity || one.At != e.At {
				t.Errorf("GET %s: %+v, the entity was %+v", link, one, e)
			}
		}
	}

	// Atom: entry ids and edit links of a filtered, sorted feed resolve to the same entry.
	w := get(h, eventsTarget("$filter=ROW_NUMBER gt 2&$orderby=AT desc&$format=xml"))
	_, entries := readAtom(t, w.Body.Bytes())
	if len(entries) != 7 {
		t.Fatalf("%d entries", len(entries))
	}
	for _, e := range entries {
		path := strings.TrimPrefix(e.ID, "http://example.com")
		w := get(h, path+"?$format=xml")
		if w.Code != 200 {
			t.Fatalf("GET %s: %d %s", path, w.Code, w.Body)
		}
		one := readAtomEntry(t, w.Body.Bytes())
		if one.ID != e.ID || !slices.Equal(one.Props, e.Props) {
			t.Errorf("GET %s: %+v, the feed's entry was %+v", path, one, e)
		}
	}
}
