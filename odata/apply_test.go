package odata

import (
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/kmkit/kmkit/internal/demodata/demostore"
	"github.com/kmkit/kmkit/problem"
	"github.com/kmkit/kmkit/query"
)

// applyCases is our own parser table of $apply, derived rule by rule from the aggregation
// ABNF (OData Aggregation ABNF Construction Rules 4.0, section 2), on the demo's names:
// valid forms the service serves parse (0), valid forms it does not serve are 501, and
// text no rule produces is 400. TestAggregationABNF runs the official cases as well.
var applyCases = []struct {
	rule, text string
	status     int
}{
	// applyExpr = applyTrafo *( "/" applyTrafo )
	{"applyExpr", "aggregate(NET with sum as Total)", 0},
	{"applyExpr", "filter(NET gt 1)/groupby((STATUS))", 0},
	{"applyExpr", "filter(NET gt 1)/filter(STATUS eq 'a/b')/groupby((STATUS),aggregate($count as N))", 0},
	{"applyExpr", "identity/aggregate($count as N)/identity", 0},
	{"applyExpr", "groupby((STATUS))/", 400},
	{"applyExpr", "/groupby((STATUS))", 400},
	{"applyExpr", "groupby((STATUS)) groupby((CUST))", 400},
	// aggregateTrafo = "aggregate" OPEN aggregateExpr *( COMMA aggregateExpr ) CLOSE
	{"aggregateTrafo", "aggregate(NET with sum as A,NET with min as B, NET with max as C ,NET with average as D)", 0},
	{"aggregateTrafo", "aggregate()", 400},
	{"aggregateTrafo", "aggregate(NET with sum as A,)", 400},
	{"aggregateTrafo", "aggregate(NET with sum as A", 400},
	{"aggregateTrafo", "Aggregate(NET with sum as A)", 400}, // %s"aggregate": case-sensitive
	// aggregatableExpW [ aggregateFrom ] asAlias; aggregateWith = RWS "with" RWS aggregateMethod
	{"aggregateExpr", "aggregate(CUST with countdistinct as Customers)", 0},
	{"aggregateExpr", "aggregate(CUSTOMERS/COUNTRY with countdistinct as Countries)", 0},
	{"aggregateExpr", "aggregate(NET with sum)", 400},                // asAlias is mandatory
	{"aggregateExpr", "aggregate(NET with total as A)", 400},         // no such method
	{"aggregateExpr", "aggregate(NET With sum as A)", 400},           // %s"with"
	{"aggregateExpr", "aggregate(NET with sum as 1A)", 400},          // expressionAlias = odataIdentifier
	{"aggregateExpr", "aggregate(NET with sum as A B)", 400},         // one alias
	{"aggregateExpr", "aggregate(NET with Custom.Method as A)", 501}, // namespace "." odataIdentifier
	{"aggregateExpr", "aggregate(NET with sum from DAY with average as A)", 501},
	{"aggregateExpr", "aggregate(NET mul LATE with sum as A)", 501}, // aggregatableExpr = commonExpr
	{"aggregateExpr", "aggregate(NET mul with sum as A)", 400},
	{"aggregateExpr", "aggregate(NET(1) as A)", 400}, // a custom aggregate is a name
	{"aggregateFrom", "aggregate(NET with sum from DAY,CUST with max as A)", 501},
	{"aggregateFrom", "aggregate(NET with sum from DAY as A)", 400}, // from ... needs with
	{"aggregateFrom", "aggregate(NET with sum from DAY with max)", 400},
	{"customFrom", "aggregate(TOTAL_NET from DAY)", 400}, // customFrom needs as
	{"customFrom", "aggregate(TOTAL_NET from DAY as A)", 501},
	{"groupingProperty", "groupby((CUSTOMERS/Self.Type))", 400}, // ends with a cast
	{"aggregateExpr", "aggregate(round(NET) with sum as A)", 501},
	// aggregateCount = "$count" / path "/$count"
	{"aggregateCount", "aggregate($count as N)", 0},
	{"aggregateCount", "aggregate($count)", 400},
	{"aggregateCount", "aggregate(ITEMS/$count as N)", 501},
	// aggregateCustom [ [ customFrom ] asAlias ]
	{"aggregateCustom", "aggregate(TOTAL_NET)", 0},
	{"aggregateCustom", "aggregate(TOTAL_NET as Total)", 0},
	{"aggregateCustom", "aggregate(TOTAL_NET,ORDER_COUNT as N)", 0},
	{"aggregateCustom", "aggregate(CUSTOMERS/TOTAL_NET)", 501},
	{"aggregateCustom", "aggregate(TOTAL_NET from STATUS as T)", 501},
	// groupbyTrafo = "groupby" OPEN groupbyList [ COMMA applyExpr ] CLOSE
	{"groupbyTrafo", "groupby((STATUS))", 0},
	{"groupbyTrafo", "groupby((STATUS,CUST), aggregate(NET with sum as NET))", 0},
	{"groupbyTrafo", "groupby( ( STATUS , CUSTOMERS/COUNTRY ) , aggregate(TOTAL_NET) )", 0},
	{"groupbyTrafo", "groupby((CUSTOMERS.COUNTRY),aggregate(TOTAL_NET))", 0}, // the KM's RECORD.FIELD
	{"groupbyTrafo", "groupby(STATUS)", 400},
	{"groupbyTrafo", "groupby(())", 400},
	{"groupbyTrafo", "groupby((STATUS,STATUS))", 400},
	{"groupbyTrafo", "groupby((STATUS/))", 400},
	{"groupbyTrafo", "groupby((STATUS),aggregate($count as N),x)", 400},
	{"groupbyTrafo", "groupby((STATUS),filter(NET gt 1)/aggregate($count as N))", 501},
	{"groupbyTrafo", "groupby((STATUS),topcount(1,NET))", 501},
	{"groupbyTrafo", "groupby((CUSTOMERS/ODataKnowledgeModel.CUSTOMERS/COUNTRY))", 501},  // a type cast
	{"groupbyTrafo", "groupby((STATUS),aggregate($count as STATUS))", 400},               // the alias clashes
	{"groupbyTrafo", "groupby((CUSTOMERS/COUNTRY),aggregate($count as CUSTOMERS))", 400}, // with the path's object
	{"groupbyTrafo", "groupby((CUSTOMERS/COUNTRY,CUSTOMERS/NAME),aggregate($count as COUNTRY))", 0},
	// rollupLevels, rollupRecursive
	{"groupbyElement", "groupby((rollup(CUSTOMERS/COUNTRY,CUSTOMERS/NAME)))", 501},
	{"groupbyElement", "groupby((rolluprecursive($root/ORDERS_entries,H,ID)))", 501},
	// filterTrafo = "filter" OPEN boolCommonExpr CLOSE
	{"filterTrafo", "filter(contains(STATUS,'(')) /aggregate($count as N)", 0},
	{"filterTrafo", "filter(NET gt)/aggregate($count as N)", 400},
	{"filterTrafo", "aggregate($count as N)/filter(N gt 1)", 501},
	// topcountTrafo, bottomcountTrafo = name OPEN collectionExpr COMMA commonExpr CLOSE
	{"topcountTrafo", "groupby((STATUS),aggregate(NET with sum as S))/topcount(2,S)", 0},
	{"bottomcountTrafo", "groupby((STATUS),aggregate(NET with sum as S))/bottomcount(1,STATUS)", 0},
	{"topcountTrafo", "groupby((STATUS),aggregate(NET with sum as S))/topcount(2)", 400},
	{"topcountTrafo", "groupby((STATUS),aggregate(NET with sum as S))/topcount(2,NET)", 501}, // not in the answer
	{"topcountTrafo", "groupby((STATUS),aggregate(NET with sum as S))/topcount(1 add 1,S)", 501},
	{"topcountTrafo", "groupby((STATUS),aggregate(NET with sum as S))/topcount(-1,S)", 400}, // a count of groups
	{"bottomcountTrafo", "groupby((STATUS),aggregate(NET with sum as S))/bottomcount(-12,S)", 400},
	{"topcountTrafo", "topcount(2,NET)", 501}, // before an aggregation
	{"topcountTrafo", "groupby((STATUS),aggregate(NET with sum as S))/topcount(2,S)/topcount(1,S)", 501},
	// aggregate($count as A) after groupby: the number of groups
	{"aggregateCount", "groupby((STATUS),aggregate(NET with sum as S))/aggregate($count as count)", 0},
	{"aggregateCount", "groupby((STATUS))/aggregate(NET with sum as S)", 501},
	{"aggregateCount", "aggregate($count as N)/aggregate($count as M)", 501},
	{"aggregateCount", "groupby((STATUS))/aggregate($count as N)/topcount(1,N)", 501},
	// transformations the service does not serve
	{"computeTrafo", "compute(NET mul 2 as D)/aggregate(D with sum as S)", 501},
	{"concatTrafo", "concat(aggregate($count as N),groupby((STATUS)))", 0},
	{"concatTrafo", "filter(NET gt 0)/concat(aggregate($count as N),groupby((STATUS))/topcount(1,STATUS))", 0},
	{"concatTrafo", "concat(aggregate($count as N))", 400},
	{"concatTrafo", "groupby((STATUS))/concat(aggregate($count as N),identity)", 501},
	{"nestTrafo", "groupby((STATUS),nest(aggregate($count as N) as X))", 501},
	{"joinTrafo", "join(ITEMS as I)/aggregate($count as N)", 501},
	{"orderbyTrafo", "orderby(NET desc)", 501},
	{"topTrafo", "top(5)", 501},
	{"skipTrafo", "skip(5)", 501},
	{"searchTrafo", "search(PAID)", 501},
	{"toppercentTrafo", "groupby((STATUS),aggregate(NET with sum as S))/toppercent(50,S)", 501},
	{"customFunction", "Custom.Fn(x=1)", 501},
	{"identityTrafo", "identity", 501}, // identity alone is $apply without aggregation
	{"applyTrafo", "unknown(x)", 400},
	{"applyTrafo", "", 400},
}

func TestParseApply(t *testing.T) {
	for _, tt := range applyCases {
		t.Run(tt.rule+" "+tt.text, func(t *testing.T) {
			_, err := ParseApply(tt.text)
			got := 0
			var p *problem.Problem
			var qe *query.Error
			switch {
			case err == nil:
			case errors.As(err, &p):
				got = p.Status
			case errors.As(err, &qe):
				got = qe.Status()
			default:
				t.Fatalf("error %v (%T)", err, err)
			}
			if got != tt.status {
				t.Errorf("ParseApply(%q): status %d (%v), want %d", tt.text, got, err, tt.status)
			}
		})
	}
}

// FuzzParseApply: any $apply text is parsed or refused with a client error (400 or 501),
// and served on an entity set without a 5xx. The seed corpus is the parser table.
func FuzzParseApply(f *testing.F) {
	for _, c := range applyCases {
		f.Add(c.text)
	}
	h := testHandler(f, WithMaxPageSize(3))
	f.Fuzz(func(t *testing.T, text string) {
		if _, err := ParseApply(text); err != nil {
			checkClientError(t, err)
		}
		r := httptest.NewRequest(http.MethodGet, "http://example.com"+svc+"/ORDERS_entries", nil)
		r.URL.RawQuery = "$apply=" + url.QueryEscape(text)
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		if w.Code >= 500 && w.Code != http.StatusNotImplemented {
			t.Fatalf("status %d for %q: %s", w.Code, text, w.Body)
		}
	})
}

// $apply on the shop's orders (testdata/shop/data/orders.csv; customers.csv for the
// countries), the sums worked out by hand from the CSV:
//
//	OPEN       O1 100.5 (C1, DE)  O4 1200 (C3, no country)
//	PAID       O2 250   (C1, DE)  O3 80   (C2, IE)
//	SHIPPED    O5 0.1   (C4, DE)
//	CANCELLED  O'6 -325 (C2, IE)
//	(null)     O7 no values
func TestApply(t *testing.T) {
	const jsonCT = "application/json;odata.metadata=minimal"
	ok := func(sel, value string) response {
		return response{200, jsonCT, `{"@odata.context":"` + ctxURL + `ORDERS_entries(` + sel + `)",` + value + `}`}
	}
	tests := []struct {
		name, apply, extra string
		want               response
	}{
		{"ag-grid row grouping", "groupby((STATUS),aggregate($count as childCount,NET with sum as NET))", "",
			ok("STATUS,childCount,NET", `"value":[{"STATUS":"OPEN","childCount":2,"NET":1300.5},{"STATUS":"PAID","childCount":2,"NET":330},`+
				`{"STATUS":"SHIPPED","childCount":1,"NET":0.1},{"STATUS":"CANCELLED","childCount":1,"NET":-325},{"STATUS":null,"childCount":1,"NET":null}]`)},
		{"aggregate alone", "aggregate(NET with sum as Total,NET with average as Avg,LATE with max as Max,LATE with min as Min,$count as N)", "",
			ok("Total,Avg,Max,Min,N", `"value":[{"Total":1305.6,"Avg":217.6,"Max":5,"Min":-1,"N":7}]`)},
		{"countdistinct", "aggregate(CUST with countdistinct as Customers,STATUS with countdistinct as Statuses)", "",
			ok("Customers,Statuses", `"value":[{"Customers":4,"Statuses":4}]`)},
		{"filter then groupby", "filter(NET gt 50)/groupby((STATUS))", "&$count=true",
			ok("STATUS", `"@odata.count":2,"value":[{"STATUS":"OPEN"},{"STATUS":"PAID"}]`)},
		{"filter on a parent record", "filter(CUSTOMERS.COUNTRY eq 'DE')/aggregate(NET with sum as Total)", "",
			ok("Total", `"value":[{"Total":350.6}]`)},
		// filter steps take what $filter takes: paths through to-one navigation properties
		// (C1 and C4 are German: O1, O2, O5) and lambdas (O1, O2 and O5 have a Ship event;
		// every event of O3 and O4 is a Create, and O'6 and O7 have none)
		{"filter through a navigation path", "filter(CUSTOMERS/COUNTRY eq 'DE')/aggregate(NET with sum as Total)", "",
			ok("Total", `"value":[{"Total":350.6}]`)},
		{"filter with a function of a path", "filter(tolower(CUSTOMERS/COUNTRY) eq 'de')/aggregate($count as N)", "",
			ok("N", `"value":[{"N":3}]`)},
		{"filter with any", "filter(EVENTS/any(e: e/ACTIVITY eq 'Ship'))/aggregate(NET with sum as Total)", "",
			ok("Total", `"value":[{"Total":350.6}]`)},
		{"filter with all", "filter(EVENTS/all(e: e/ACTIVITY eq 'Create'))/aggregate($count as N)", "",
			ok("N", `"value":[{"N":4}]`)},
		{"KM field", "groupby((CUSTOMERS.COUNTRY),aggregate(NET with sum as Total))", "&$orderby=Total",
			ok("CUSTOMERS.COUNTRY,Total", `"value":[{"CUSTOMERS.COUNTRY":"IE","Total":-245},{"CUSTOMERS.COUNTRY":"DE","Total":350.6},{"CUSTOMERS.COUNTRY":null,"Total":1200}]`)},
		{"navigation path", "groupby((CUSTOMERS/COUNTRY),aggregate(NET with sum as Total))", "&$orderby=Total%20desc",
			ok("CUSTOMERS(COUNTRY),Total", `"value":[{"CUSTOMERS":{"COUNTRY":null},"Total":1200},{"CUSTOMERS":{"COUNTRY":"DE"},"Total":350.6},{"CUSTOMERS":{"COUNTRY":"IE"},"Total":-245}]`)},
		// Along a to-many property, as /data groups by a field of a to-many record: each
		// order once per activity it has, and O'6 and O7, which have no event, under null.
		{"to-many navigation path", "groupby((EVENTS/ACTIVITY),aggregate($count as N))", "",
			ok("EVENTS(ACTIVITY),N", `"value":[{"EVENTS":{"ACTIVITY":"Create"},"N":5},{"EVENTS":{"ACTIVITY":"Ship"},"N":3},{"EVENTS":{"ACTIVITY":"Pay"},"N":1},{"EVENTS":{"ACTIVITY":null},"N":2}]`)},
		{"topcount", "groupby((STATUS),aggregate(NET with sum as S))/topcount(2,S)", "",
			ok("STATUS,S", `"value":[{"STATUS":"OPEN","S":1300.5},{"STATUS":"PAID","S":330}]`)},
		{"bottomcount with count", "groupby((STATUS),aggregate(NET with sum as S))/bottomcount(2,S)", "&$count=true",
			ok("STATUS,S", `"@odata.count":2,"value":[{"STATUS":"CANCELLED","S":-325},{"STATUS":"SHIPPED","S":0.1}]`)},
		{"paged", "groupby((STATUS),aggregate(NET with sum as S))", "&$orderby=STATUS&$skip=1&$top=2&$count=true",
			ok("STATUS,S", `"@odata.count":5,"value":[{"STATUS":"OPEN","S":1300.5},{"STATUS":"PAID","S":330}]`)},
		{"filterid", "groupby((STATUS),aggregate($count as N))", "&filterid=GERMANY",
			ok("STATUS,N", `"value":[{"STATUS":"OPEN","N":1},{"STATUS":"PAID","N":1},{"STATUS":"SHIPPED","N":1}]`)},
		// ag-grid-odata's count of groups: NET ne 80 drops O3 and O7 (a null NET is
		// unknown), leaving OPEN, PAID, SHIPPED and CANCELLED.
		{"number of groups", "filter(NET ne 80)/groupby((STATUS),aggregate($count as childCount))/aggregate($count as count)", "&$top=100",
			ok("count", `"value":[{"count":4}]`)},
		{"IEEE754Compatible", "aggregate($count as N)", "&$format=application/json;IEEE754Compatible=true",
			response{200, "application/json;odata.metadata=minimal;IEEE754Compatible=true", `{"@odata.context":"` + ctxURL + `ORDERS_entries(N)","value":[{"N":"7"}]}`}},
		// Errors.
		{"a property as custom aggregate", "aggregate(NET)", "", response{400, problem.ContentType, problemBodyAt(400, "KM_FIELD_NOTFOUND",
			"$apply: knowledge model shop has no KPI (custom aggregate) NET; NET is a property: aggregate it with NET with sum as ALIAS (or min, max, average, countdistinct)", "$apply")}},
		{"sum of a string", "aggregate(STATUS with sum as S)", "", response{400, problem.ContentType, problemBodyAt(400, "GENERAL_PARAMETER_ILLEGAL",
			"$apply: STATUS with sum: sum(ORDERS.STATUS): sum of ORDERS.STATUS: the field is string, not numeric", "$apply")}},
		// min and max apply to every ordered type (OData Data Aggregation 4.0, 3.1.3):
		// strings byte by byte, false before true, values of the property's type.
		{"min of a date", "aggregate(DAY with min as First)", "", ok("First", `"value":[{"First":"2025-01-05"}]`)},
		{"min and max of booleans, times and timestamps", "aggregate(EXPRESS with min as All,EXPRESS with max as Any,SLOT with max as Slot,SEEN with max as Seen)", "",
			ok("All,Any,Slot,Seen", `"value":[{"All":false,"Any":true,"Slot":"14:15:30.5","Seen":"2025-04-01T00:00:00Z"}]`)},
		// O7 has no status and no customer: the null group is there, without a name.
		{"max of a string through a path", "groupby((STATUS),aggregate(CUSTOMERS/NAME with max as Last))", "",
			ok("STATUS,Last", `"value":[{"STATUS":"OPEN","Last":"Smith; Jones"},{"STATUS":"PAID","Last":"O'Brien \"Ltd\""},`+
				`{"STATUS":"CANCELLED","Last":"O'Brien \"Ltd\""},{"STATUS":"SHIPPED","Last":"Berg+Co"},{"STATUS":null,"Last":null}]`)},
		// Without O4 (customer C3, no country), the null group holds O7 alone, which has no
		// customer: the aggregate reads no customer in it, and the group is still there.
		{"the null group of a path that only the aggregate reads", "filter(ID ne 'O4')/groupby((CUSTOMERS/COUNTRY),aggregate(CUSTOMERS/NAME with countdistinct as N))", "",
			ok("CUSTOMERS(COUNTRY),N", `"value":[{"CUSTOMERS":{"COUNTRY":"DE"},"N":2},{"CUSTOMERS":{"COUNTRY":"IE"},"N":1},{"CUSTOMERS":{"COUNTRY":null},"N":0}]`)},
		{"average of a string", "aggregate(STATUS with average as A)", "", response{400, problem.ContentType, problemBodyAt(400, "GENERAL_PARAMETER_ILLEGAL",
			"$apply: STATUS with average: avg(ORDERS.STATUS): avg of ORDERS.STATUS: the field is string, not numeric", "$apply")}},
		{"unknown property", "groupby((STATE))", "", response{400, problem.ContentType, problemBodyAt(400, "KM_FIELD_NOTFOUND",
			"$apply: groupby: entity type ORDERS has no property STATE; did you mean STATUS or LATE?", "$apply")}},
		{"no such navigation", "groupby((CLIENTS/COUNTRY))", "", response{400, problem.ContentType, problemBodyAt(400, "KM_FIELD_NOTFOUND",
			"$apply: groupby CLIENTS/COUNTRY: ORDERS has no navigation property CLIENTS; it has CUSTOMERS, EVENTS", "$apply")}},
		// A path follows the navigation properties of the set's type: ORDERS is a record
		// of the KM but no navigation property of ORDERS, and CUSTOMERS/ORDERS leads to
		// the orders of the order's customer, not to the order's own STATUS.
		{"a record that is no navigation property", "groupby((ORDERS/STATUS))", "", response{400, problem.ContentType, problemBodyAt(400, "KM_FIELD_NOTFOUND",
			"$apply: groupby ORDERS/STATUS: ORDERS has no navigation property ORDERS; it has CUSTOMERS, EVENTS", "$apply")}},
		{"no such navigation after a step", "groupby((CUSTOMERS/CUSTOMERS/COUNTRY))", "", response{400, problem.ContentType, problemBodyAt(400, "KM_FIELD_NOTFOUND",
			"$apply: groupby CUSTOMERS/CUSTOMERS/COUNTRY: ORDERS/CUSTOMERS has no navigation property CUSTOMERS; it has ORDERS", "$apply")}},
		{"a path back to the set's record", "groupby((CUSTOMERS/ORDERS/STATUS))", "", response{501, problem.ContentType, problemBodyAt(501, "ODATA_OPTION_NOT_SUPPORTED",
			"$apply: CUSTOMERS/ORDERS/STATUS leads from ORDERS back to ORDERS; the knowledge model cannot join a record with itself", "$apply")}},
		{"an aggregated path back to the set's record", "aggregate(EVENTS/ORDERS/NET with sum as S)", "", response{501, problem.ContentType, problemBodyAt(501, "ODATA_OPTION_NOT_SUPPORTED",
			"$apply: EVENTS/ORDERS/NET leads from ORDERS back to ORDERS; the knowledge model cannot join a record with itself", "$apply")}},
		{"no such property at the path's end", "groupby((CUSTOMERS/COUNTRI))", "", response{400, problem.ContentType, problemBodyAt(400, "KM_FIELD_NOTFOUND",
			"$apply: groupby CUSTOMERS/COUNTRI: entity type CUSTOMERS has no property COUNTRI; did you mean COUNTRY?", "$apply")}},
		{"orderby outside the answer", "groupby((STATUS))", "&$orderby=NET", response{400, problem.ContentType, problemBodyAt(400, "SORT_UNKNOWN_FIELD",
			"$orderby: with $apply, $orderby names the grouping properties and aliases of the answer (STATUS), not NET", "$orderby")}},
		{"$filter on a grouping property", "groupby((STATUS),aggregate(NET with sum as S))", "&$filter=STATUS%20ne%20'OPEN'%20and%20STATUS%20ne%20null",
			ok("STATUS,S", `"value":[{"STATUS":"PAID","S":330},{"STATUS":"SHIPPED","S":0.1},{"STATUS":"CANCELLED","S":-325}]`)},
		// O4's customer C3 has no country and O7 has no customer: both are in the group
		// of a null country, which $filter keeps or drops as a whole.
		{"$filter on a navigation path", "groupby((CUSTOMERS/COUNTRY),aggregate($count as N))", "&$filter=CUSTOMERS/COUNTRY%20ne%20'IE'",
			ok("CUSTOMERS(COUNTRY),N", `"value":[{"CUSTOMERS":{"COUNTRY":"DE"},"N":3}]`)},
		{"$filter for the null group of a navigation path", "groupby((STATUS,CUSTOMERS/COUNTRY),aggregate($count as N))", "&$filter=STATUS%20eq%20'OPEN'%20and%20not%20(CUSTOMERS/COUNTRY%20ne%20null)",
			response{501, problem.ContentType, problemBodyAt(501, "ODATA_OPTION_NOT_SUPPORTED",
				"$apply: $filter testing CUSTOMERS/COUNTRY for null with $apply is not supported: its null group also holds the entities without a related entity, which a filter before the grouping leaves out; filter inside $apply, $apply=filter(...)/groupby(...)", "$apply")}},
		{"$filter for the null group of a KM field", "groupby((CUSTOMERS.COUNTRY),aggregate($count as N))", "&$filter=CUSTOMERS.COUNTRY%20eq%20null",
			response{501, problem.ContentType, problemBodyAt(501, "ODATA_OPTION_NOT_SUPPORTED",
				"$apply: $filter testing CUSTOMERS.COUNTRY for null with $apply is not supported: its null group also holds the entities without a related entity, which a filter before the grouping leaves out; filter inside $apply, $apply=filter(...)/groupby(...)", "$apply")}},
		{"$filter for the null group of a function of a path", "groupby((CUSTOMERS/NAME),aggregate($count as N))", "&$filter=tolower(CUSTOMERS/NAME)%20eq%20null",
			response{501, problem.ContentType, problemBodyAt(501, "ODATA_OPTION_NOT_SUPPORTED",
				"$apply: $filter testing CUSTOMERS/NAME for null with $apply is not supported: its null group also holds the entities without a related entity, which a filter before the grouping leaves out; filter inside $apply, $apply=filter(...)/groupby(...)", "$apply")}},
		{"$filter for the null group of the set's own property", "groupby((ORDERS.STATUS,CUSTOMERS/COUNTRY),aggregate($count as N))", "&$filter=ORDERS.STATUS%20eq%20null%20and%20CUSTOMERS/COUNTRY%20eq%20null",
			response{501, problem.ContentType, problemBodyAt(501, "ODATA_OPTION_NOT_SUPPORTED",
				"$apply: $filter testing CUSTOMERS/COUNTRY for null with $apply is not supported: its null group also holds the entities without a related entity, which a filter before the grouping leaves out; filter inside $apply, $apply=filter(...)/groupby(...)", "$apply")}},
		{"$filter for null on the set's own property", "groupby((ORDERS.STATUS,CUSTOMERS/COUNTRY),aggregate($count as N))", "&$filter=ORDERS.STATUS%20eq%20null",
			ok("ORDERS.STATUS,CUSTOMERS(COUNTRY),N", `"value":[{"ORDERS.STATUS":null,"CUSTOMERS":{"COUNTRY":null},"N":1}]`)},
		{"$filter on an alias", "groupby((STATUS),aggregate(NET with sum as S))", "&$filter=S%20gt%20100", response{501, problem.ContentType, problemBodyAt(501, "ODATA_OPTION_NOT_SUPPORTED",
			"$apply: $filter on S with $apply is not supported: $filter may name grouping properties only; filter rows first inside $apply, $apply=filter(...)/groupby(...)", "$apply")}},
		{"$filter after topcount", "groupby((STATUS),aggregate(NET with sum as S))/topcount(2,S)", "&$filter=STATUS%20eq%20'PAID'", response{501, problem.ContentType, problemBodyAt(501, "ODATA_OPTION_NOT_SUPPORTED",
			"$apply: $filter with this $apply is not supported: filter first inside $apply, $apply=filter(...)/groupby(...)", "$apply")}},
		{"Atom", "groupby((STATUS))", "&$format=atom", response{501, problem.ContentType, problemBodyAt(501, "ODATA_OPTION_NOT_SUPPORTED",
			"$apply: aggregated answers are served as JSON only", "$apply")}},
		{"a navigation property as a value", "filter(CUSTOMERS eq null)/aggregate($count as N)", "", response{501, problem.ContentType, problemBodyAt(501, "ODATA_OPTION_NOT_SUPPORTED",
			"$apply: CUSTOMERS is a navigation property; using it as a value is not supported: compare its properties, as CUSTOMERS/PROPERTY", "$apply")}},
		// The answer nests CUSTOMERS/COUNTRY as "CUSTOMERS":{"COUNTRY":...}: an alias
		// CUSTOMERS would write the member CUSTOMERS twice in one object.
		{"alias of a navigation path's object", "groupby((CUSTOMERS/COUNTRY),aggregate(NET with sum as CUSTOMERS))", "", response{400, problem.ContentType, problemBodyAt(400, "GENERAL_PARAMETER_ILLEGAL",
			"$apply: the name CUSTOMERS is given twice in the answer: choose another alias", "$apply")}},
		{"generated key", "groupby((ROW_NUMBER))", "", response{501, problem.ContentType, problemBodyAt(501, "ODATA_OPTION_NOT_SUPPORTED",
			"$apply: groupby ROW_NUMBER: the generated key cannot be grouped or aggregated", "$apply")}},
	}
	h := testHandler(t)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			set := "/ORDERS_entries"
			if strings.Contains(tt.apply, "ROW_NUMBER") {
				set = "/EVENTS_entries"
			}
			checkGET(t, h, svc+set+"?$apply="+esc(tt.apply)+tt.extra, nil, tt.want)
		})
	}
}

// Server-driven paging of groups: the next link keeps $apply and advances $skip.
func TestApplyNextLink(t *testing.T) {
	h := testHandler(t, WithMaxPageSize(2))
	target := svc + "/ORDERS_entries?$apply=" + esc("groupby((STATUS),aggregate($count as N))") + "&$orderby=STATUS"
	var got []string
	for i := 0; target != "" && i < 5; i++ {
		w := get(h, target)
		if w.Code != 200 {
			t.Fatalf("GET %s: %d %s", target, w.Code, w.Body)
		}
		var page struct {
			Value []struct{ STATUS *string }
			Next  string `json:"@odata.nextLink"`
		}
		if err := jsonUnmarshal(w.Body.Bytes(), &page); err != nil {
			t.Fatal(err)
		}
		for _, v := range page.Value {
			s := "null"
			if v.STATUS != nil {
				s = *v.STATUS
			}
			got = append(got, s)
		}
		target = strings.TrimPrefix(page.Next, "http://example.com")
	}
	// The statuses of orders.csv, sorted, nulls last.
	if diff := cmp.Diff([]string{"CANCELLED", "OPEN", "PAID", "SHIPPED", "null"}, got); diff != "" {
		t.Errorf("groups over the pages (-want +got):\n%s", diff)
	}
}

func jsonUnmarshal(b []byte, v any) error { return json.Unmarshal(b, v) }

// $metadata of the demo KMs names every KPI as a custom aggregate of every set, with the
// type its expression gives (a lone count is an integer, anything else a double), in CSDL
// XML and JSON.
func TestApplyMetadataCustomAggregates(t *testing.T) {
	store, err := demostore.Store(0)
	if err != nil {
		t.Fatal(err)
	}
	h := NewHandler(store)
	models, err := store.Models(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	lone := regexp.MustCompile(`^count(distinct)?\([^()]*\)$`)
	loneSum := regexp.MustCompile(`^sum\(([^(),]*)\)$`)
	for _, m := range models {
		x := get(h, BasePath+"/"+m.ID+".svc/$metadata").Body.String()
		j := get(h, BasePath+"/"+m.ID+".svc/$metadata?$format=json").Body.String()
		if len(m.KPIs) == 0 {
			t.Fatalf("%s has no KPIs: the test proves nothing", m.ID)
		}
		for _, k := range m.KPIs {
			typ := "Edm.Double"
			if lone.MatchString(k.Expr) {
				typ = "Edm.Int64"
			}
			if s := loneSum.FindStringSubmatch(k.Expr); s != nil {
				if _, f := m.Field(s[1]); f != nil && f.Type == query.TypeInteger {
					typ = "Edm.Int64" // the exact sum of an integer field
				}
			}
			wantX := `<Annotation Term="Aggregation.CustomAggregate" Qualifier="` + k.ID + `" String="` + typ + `"/>`
			wantJ := `"@Aggregation.CustomAggregate#` + k.ID + `":"` + typ + `"`
			if n := strings.Count(x, wantX); n != len(m.Records) {
				t.Errorf("%s: CSDL XML has %s %d times, want once per set (%d)", m.ID, wantX, n, len(m.Records))
			}
			if n := strings.Count(j, wantJ); n != len(m.Records) {
				t.Errorf("%s: CSDL JSON has %s %d times, want %d", m.ID, wantJ, n, len(m.Records))
			}
		}
	}
}

// $apply and $search in $batch parts are answered as on their own (the groups and rows of
// TestApply and TestSearch).
func TestApplyAndSearchInBatch(t *testing.T) {
	h := testHandler(t)
	body := `{"requests":[
		{"id":"1","method":"GET","url":` + strconv.Quote("ORDERS_entries?$apply="+esc("groupby((STATUS),aggregate(NET with sum as S))/topcount(1,S)")) + `},
		{"id":"2","method":"GET","url":"ORDERS_entries?$search=PAID&$select=STATUS"},
		{"id":"3","method":"GET","url":"ORDERS_entries?$apply=nest(identity%20as%20x)"}]}`
	got := jsonBatch(t, h, body)
	want := []struct {
		status int
		body   string
	}{
		{200, `{"@odata.context":"` + ctxURL + `ORDERS_entries(STATUS,S)","value":[{"STATUS":"OPEN","S":1300.5}]}`},
		{200, `{"@odata.context":"` + ctxURL + `ORDERS_entries(STATUS)","value":[{"ID":"O2","STATUS":"PAID"},{"ID":"O3","STATUS":"PAID"}]}`},
		{501, problemBodyAt(501, "ODATA_OPTION_NOT_SUPPORTED", "$apply: nest(...) is not supported: nested results are not offered", "$apply")},
	}
	if len(got) != len(want) {
		t.Fatalf("%d responses: %+v", len(got), got)
	}
	for i, rs := range got {
		if rs.Status != want[i].status || string(rs.Body) != want[i].body {
			t.Errorf("part %s: %d %s, want %d %s", rs.ID, rs.Status, rs.Body, want[i].status, want[i].body)
		}
	}
}
