// Package demodata holds the order-to-cash demo of the reference server: two Knowledge
// Models (o2c-base and o2c, which extends it) in models/*.yaml, their data in data/*.csv,
// and the deterministic generator that wrote those files and that builds larger data sets
// for -demo-rows.
//
// The generator is seeded: the same row count always yields the same rows. The embedded
// CSV files are Generate(DefaultOrders); a test keeps them in step with the generator.
package demodata

import (
	"embed"
	"fmt"
	"math"
	"math/rand/v2"
	"time"

	"github.com/kmkit/kmkit/query"
)

// FS holds models/*.yaml, data/*.csv and reporting/*.json (the reporting demo).
//
//go:embed models/*.yaml data/*.csv reporting/*.json
var FS embed.FS

// DefaultOrders is the number of orders in the embedded data.
const DefaultOrders = 1000

// Source is one generated table: the CSV file data/<Name>.csv.
type Source struct {
	Name    string
	Columns []string
	Types   []query.Type
}

// Sources lists the generated tables in the order Generate emits them.
var Sources = []Source{
	{Name: "customers", Columns: []string{"CUSTOMER_ID", "CUSTOMER_NAME", "COUNTRY", "CITY", "SEGMENT", "CREDIT_LIMIT"},
		Types: []query.Type{query.TypeString, query.TypeString, query.TypeString, query.TypeString, query.TypeString, query.TypeFloat}},
	{Name: "materials", Columns: []string{"MATERIAL_ID", "MATERIAL_NAME", "MATERIAL_GROUP", "UNIT_PRICE"},
		Types: []query.Type{query.TypeString, query.TypeString, query.TypeString, query.TypeFloat}},
	{Name: "orders", Columns: []string{"ORDER_ID", "CUSTOMER_ID", "ORDER_DATE", "CREATED_AT", "STATUS", "NET_VALUE", "CURRENCY", "DAYS_LATE", "EXPRESS", "SALES_ORG"},
		Types: []query.Type{query.TypeString, query.TypeString, query.TypeDate, query.TypeDateTime, query.TypeString, query.TypeFloat, query.TypeString, query.TypeInteger, query.TypeBoolean, query.TypeString}},
	{Name: "order_items", Columns: []string{"ITEM_ID", "ORDER_ID", "MATERIAL_ID", "QUANTITY", "NET_PRICE", "ITEM_VALUE"},
		Types: []query.Type{query.TypeString, query.TypeString, query.TypeString, query.TypeInteger, query.TypeFloat, query.TypeFloat}},
	{Name: "activities", Columns: []string{"ACTIVITY_ID", "ORDER_ID", "ACTIVITY", "EVENT_TIME", "AUTOMATED"},
		Types: []query.Type{query.TypeInteger, query.TypeString, query.TypeString, query.TypeDateTime, query.TypeBoolean}},
}

// Sizes returns the number of customers and materials for n orders.
func Sizes(n int) (customers, materials int) {
	return max(50, n/100), max(40, n/1000)
}

var (
	companyStems = []string{"Müller", "Schmidt", "Dubois", "Rossi", "García", "Jansen", "Smith", "Novak",
		"Berg", "Weber", "Martin", "Bianchi", "López", "de Vries", "Johnson", "Kowalski", "Fischer", "Moreau"}
	companyKinds = []string{"Maschinenbau GmbH", "Logistik AG", "Industries SA", "Foods S.p.A.", "Retail S.L.",
		"Trading B.V.", "Manufacturing Inc.", "Energy s.r.o.", "Health AB", "Electronics GmbH"}
	countries = []struct{ code, city string }{{"DE", "Munich"}, {"DE", "Hamburg"}, {"FR", "Lyon"}, {"IT", "Milan"},
		{"ES", "Madrid"}, {"NL", "Rotterdam"}, {"US", "Chicago"}, {"CZ", "Brno"}, {"SE", "Malmö"}, {"PL", "Kraków"}}
	segments       = []string{"Enterprise", "SMB", "Public"}
	materialGroups = []string{"Hardware", "Software", "Services", "Raw Material", "Spare Parts"}
	materialNouns  = []string{"Steel Bolt", "Laptop", "PC Installation / Configuration", "Copper Wire", "Server Rack",
		"Office License", "Hydraulic Pump", "Material Handling Service", "Safety Gloves", "Conveyor Belt", "Sensor Kit", "Maintenance Contract"}
	statuses  = []string{"OPEN", "DELIVERED", "INVOICED", "PAID", "CANCELLED"}
	salesOrgs = []string{"DE01", "FR01", "US01", "IT01"}
	steps     = []string{"Create Sales Order", "Change Price", "Approve Credit", "Ship Goods", "Create Invoice", "Receive Payment"}
	// lastStep is the last activity (index into steps) of an order of each status.
	lastStep = [...]int{0, 3, 4, 5, 0}
	epoch    = time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
)

// Generate emits the rows of every source for n orders (n >= 1), source by source in the
// order of Sources. Values have the types of the source's columns, or are null.
func Generate(n int, emit func(source string, row []query.Value) error) error {
	if n < 1 {
		return fmt.Errorf("demodata: %d orders: want at least 1", n)
	}
	rng := rand.New(rand.NewPCG(20260115, uint64(n)))
	nc, nm := Sizes(n)
	str, flt := query.String, query.Float
	money := func(v float64) query.Value { return flt(math.Round(v*100) / 100) }

	custID := func(i int) string { return fmt.Sprintf("C-%06d", i+1) }
	for i := range nc {
		c := countries[rng.IntN(len(countries))]
		country := str(c.code)
		if i%23 == 22 {
			country = query.Null(query.TypeString)
		}
		name := fmt.Sprintf("%s %s", companyStems[rng.IntN(len(companyStems))], companyKinds[rng.IntN(len(companyKinds))])
		if i >= len(companyStems)*len(companyKinds)/3 {
			name = fmt.Sprintf("%s %d", name, i+1)
		}
		row := []query.Value{str(custID(i)), str(name), country, str(c.city),
			str(segments[rng.IntN(len(segments))]), money(float64(10+rng.IntN(490)) * 1000)}
		if err := emit("customers", row); err != nil {
			return err
		}
	}
	matID := func(i int) string { return fmt.Sprintf("M-%05d", i+1) }
	prices := make([]float64, nm)
	for i := range nm {
		noun := materialNouns[i%len(materialNouns)]
		prices[i] = math.Round((5+rng.Float64()*1995)*100) / 100
		row := []query.Value{str(matID(i)), str(fmt.Sprintf("%s %d", noun, i/len(materialNouns)+1)),
			str(materialGroups[rng.IntN(len(materialGroups))]), flt(prices[i])}
		if err := emit("materials", row); err != nil {
			return err
		}
	}

	// Orders first draw their items, so that NET_VALUE is the sum of the item values;
	// items and activities are emitted after all orders.
	type item struct {
		material, qty int
	}
	orderItems := make([][]item, n)
	orderTimes := make([]time.Time, n)
	orderStatus := make([]int, n)
	orderID := func(i int) string { return fmt.Sprintf("SO-%07d", i+1) }
	for i := range n {
		created := epoch.Add(time.Duration(rng.Int64N(int64(500*24*time.Hour))) / time.Second * time.Second)
		k := 1 + rng.IntN(4)
		items := make([]item, k)
		total := 0.0
		for j := range items {
			items[j] = item{material: rng.IntN(nm), qty: 1 + rng.IntN(20)}
			total += math.Round(prices[items[j].material]*float64(items[j].qty)*100) / 100
		}
		orderItems[i], orderTimes[i] = items, created
		st := rng.IntN(len(statuses))
		orderStatus[i] = st
		daysLate := query.Null(query.TypeInteger)
		if st != 0 && st != 4 { // delivered at some point
			daysLate = query.Int(int64(rng.IntN(15)) - 4)
		}
		currency := "EUR"
		if rng.IntN(5) == 0 {
			currency = "USD"
		}
		row := []query.Value{str(orderID(i)), str(custID(rng.IntN(nc))), query.Date(created), query.DateTime(created),
			str(statuses[st]), money(total), str(currency), daysLate, query.Bool(rng.IntN(7) == 0),
			str(salesOrgs[rng.IntN(len(salesOrgs))])}
		if err := emit("orders", row); err != nil {
			return err
		}
	}
	for i, items := range orderItems {
		for j, it := range items {
			price := prices[it.material]
			row := []query.Value{str(fmt.Sprintf("%s-%02d", orderID(i), (j+1)*10)), str(orderID(i)), str(matID(it.material)),
				query.Int(int64(it.qty)), flt(price), money(price * float64(it.qty))}
			if err := emit("order_items", row); err != nil {
				return err
			}
		}
	}
	actID := int64(0)
	for i := range n {
		// The happy path up to the order's status, with an occasional price change.
		last := lastStep[orderStatus[i]]
		t := orderTimes[i]
		for s := 0; s <= last; s++ {
			if s == 1 && rng.IntN(6) != 0 {
				continue // most orders keep their price
			}
			if s == 2 && rng.IntN(2) == 0 {
				continue // credit approval only for some
			}
			actID++
			row := []query.Value{query.Int(actID), str(orderID(i)), str(steps[s]), query.DateTime(t), query.Bool(s == 0 || s == 4)}
			if err := emit("activities", row); err != nil {
				return err
			}
			t = t.Add(time.Duration(1+rng.IntN(72)) * time.Hour)
		}
	}
	return nil
}
