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
	"slices"
	"strconv"
	"time"

	"github.com/kmkit/kmkit/query"
	"github.com/kmkit/kmkit/query/column"
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
// order of Sources. Values have the types of the source's columns, or are null. It reads
// them from the tables of Tables.
func Generate(n int, emit func(source string, row []query.Value) error) error {
	tables, err := Tables(n)
	if err != nil {
		return err
	}
	for _, s := range Sources {
		t := tables[s.Name]
		cols := t.Columns()
		row := make([]query.Value, len(cols))
		for r := range t.Rows() {
			for i, c := range cols {
				row[i] = c.Value(r)
			}
			if err := emit(s.Name, row); err != nil {
				return err
			}
		}
	}
	return nil
}

// Tables generates the data for n orders (n >= 1) straight into columns, one table per
// source: numbers and dates into their slices, strings as dictionary codes assigned by
// index (ids and labels are numbered, so no map is consulted per cell). The three ORDER_ID
// columns share one dictionary. Its rows are those of the row-by-row generator this
// package had before, value for value and in dictionary order (a test holds it to that).
func Tables(n int) (map[string]*column.Table, error) {
	if n < 1 {
		return nil, fmt.Errorf("demodata: %d orders: want at least 1", n)
	}
	rng := rand.New(rand.NewPCG(20260115, uint64(n)))
	nc, nm := Sizes(n)
	money := func(v float64) float64 { return math.Round(v*100) / 100 }
	custIDs := numbered("C-", 6, nc, "")
	tables := map[string]*column.Table{}

	// Customers and materials are small: builders.
	cb := builders(Sources[0].Types)
	for i := range nc {
		c := countries[rng.IntN(len(countries))]
		cb[0].AppendString(custIDs[i])
		name := companyStems[rng.IntN(len(companyStems))] + " " + companyKinds[rng.IntN(len(companyKinds))]
		if i >= len(companyStems)*len(companyKinds)/3 {
			name += " " + strconv.Itoa(i+1)
		}
		cb[1].AppendString(name)
		if i%23 == 22 {
			cb[2].AppendNull()
		} else {
			cb[2].AppendString(c.code)
		}
		cb[3].AppendString(c.city)
		cb[4].AppendString(segments[rng.IntN(len(segments))])
		cb[5].AppendFloat(money(float64(10+rng.IntN(490)) * 1000))
	}
	matIDs := numbered("M-", 5, nm, "")
	prices := make([]float64, nm)
	mb := builders(Sources[1].Types)
	for i := range nm {
		noun := materialNouns[i%len(materialNouns)]
		prices[i] = math.Round((5+rng.Float64()*1995)*100) / 100
		mb[0].AppendString(matIDs[i])
		mb[1].AppendString(noun + " " + strconv.Itoa(i/len(materialNouns)+1))
		mb[2].AppendString(materialGroups[rng.IntN(len(materialGroups))])
		mb[3].AppendFloat(prices[i])
	}

	// Orders draw their items first, so that NET_VALUE is the sum of the item values; items
	// and activities follow all orders.
	type item struct{ material, qty int }
	orderItems := make([]item, 0, n*5/2+4)
	itemStart := make([]int32, n+1)
	orderTimes := make([]time.Time, n)
	orderStatus := make([]uint8, n)
	orderIDs := numbered("SO-", 7, n, "")
	var (
		oCust     = newEnum(custIDs, n)
		oDate     = make([]int64, n)
		oCreated  = make([]int64, n)
		oStatus   = newEnum(statuses, n)
		oNet      = make([]float64, n)
		oCurrency = newEnum([]string{"EUR", "USD"}, n)
		oLate     = make([]int64, n)
		oLateNull = column.NewBitmap(n)
		oExpress  = make([]bool, n)
		oOrg      = newEnum(salesOrgs, n)
	)
	for i := range n {
		created := epoch.Add(time.Duration(rng.Int64N(int64(500*24*time.Hour))) / time.Second * time.Second)
		k := 1 + rng.IntN(4)
		itemStart[i] = int32(len(orderItems))
		total := 0.0
		for range k {
			it := item{material: rng.IntN(nm), qty: 1 + rng.IntN(20)}
			orderItems = append(orderItems, it)
			total += math.Round(prices[it.material]*float64(it.qty)*100) / 100
		}
		orderTimes[i] = created
		st := rng.IntN(len(statuses))
		orderStatus[i] = uint8(st)
		if st != 0 && st != 4 { // delivered at some point
			oLate[i] = int64(rng.IntN(15)) - 4
		} else {
			oLateNull.Set(i)
		}
		currency := 0
		if rng.IntN(5) == 0 {
			currency = 1
		}
		oCust.add(rng.IntN(nc))
		oDate[i] = query.DaysFromTime(created)
		oCreated[i] = created.UnixMicro()
		oStatus.add(st)
		oNet[i] = money(total)
		oCurrency.add(currency)
		oExpress[i] = rng.IntN(7) == 0
		oOrg.add(rng.IntN(len(salesOrgs)))
	}
	itemStart[n] = int32(len(orderItems))
	orderIDCol := &column.Strings{Codes: column.NarrowCodes(identity(n), n), Dict: orderIDs}
	if !hasBit(oLateNull) {
		oLateNull = nil
	}
	tables["orders"] = mustTable(Sources[2].Columns, orderIDCol, oCust.column(), date(oDate), dateTime(oCreated),
		oStatus.column(), &column.Float64s{Vals: oNet}, oCurrency.column(), &column.Int64s{T: query.TypeInteger, Vals: oLate, Nulls: oLateNull},
		&column.Bools{Vals: oExpress}, oOrg.column())

	ni := len(orderItems)
	itemIDs := make([]string, ni)
	{
		var buf []byte
		for i := range n {
			for j := range int(itemStart[i+1] - itemStart[i]) {
				buf = append(buf, orderIDs[i]...)
				buf = append(buf, '-')
				buf = appendPadded(buf, (j+1)*10, 2)
			}
		}
		all, off := string(buf), 0
		for i := range n {
			for j := range int(itemStart[i+1] - itemStart[i]) {
				l := len(orderIDs[i]) + 1 + max(2, digits((j+1)*10))
				itemIDs[int(itemStart[i])+j] = all[off : off+l]
				off += l
			}
		}
	}
	var (
		iOrder = newEnum(orderIDs, ni)
		iMat   = newEnum(matIDs, ni)
		iQty   = make([]int64, ni)
		iPrice = make([]float64, ni)
		iValue = make([]float64, ni)
	)
	for i := range n {
		for x := itemStart[i]; x < itemStart[i+1]; x++ {
			it := orderItems[x]
			price := prices[it.material]
			iOrder.add(i)
			iMat.add(it.material)
			iQty[x] = int64(it.qty)
			iPrice[x] = price
			iValue[x] = money(price * float64(it.qty))
		}
	}
	tables["order_items"] = mustTable(Sources[3].Columns, &column.Strings{Codes: column.NarrowCodes(identity(ni), ni), Dict: itemIDs}, iOrder.column(), iMat.column(),
		&column.Int64s{T: query.TypeInteger, Vals: iQty}, &column.Float64s{Vals: iPrice}, &column.Float64s{Vals: iValue})

	na := n * 3
	var (
		aID    = make([]int64, 0, na)
		aOrder = newEnum(orderIDs, na)
		aStep  = newEnum(steps, na)
		aTime  = make([]int64, 0, na)
		aAuto  = make([]bool, 0, na)
	)
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
			aID = append(aID, int64(len(aID)+1))
			aOrder.add(i)
			aStep.add(s)
			aTime = append(aTime, t.UnixMicro())
			aAuto = append(aAuto, s == 0 || s == 4)
			t = t.Add(time.Duration(1+rng.IntN(72)) * time.Hour)
		}
	}
	tables["activities"] = mustTable(Sources[4].Columns, &column.Int64s{T: query.TypeInteger, Vals: slices.Clip(aID)}, aOrder.column(),
		aStep.column(), dateTime(slices.Clip(aTime)), &column.Bools{Vals: slices.Clip(aAuto)})

	for i, bs := range [][]*column.Builder{cb, mb} {
		cols := make([]column.Column, len(bs))
		for j, b := range bs {
			cols[j] = b.Build()
		}
		tables[Sources[i].Name] = mustTable(Sources[i].Columns, cols...)
	}
	return tables, nil
}

func builders(types []query.Type) []*column.Builder {
	bs := make([]*column.Builder, len(types))
	for i, t := range types {
		bs[i] = column.NewBuilder(t)
	}
	return bs
}

func mustTable(names []string, cols ...column.Column) *column.Table {
	t, err := column.NewTable(names, cols)
	if err != nil {
		panic(err) // the generator's columns have equal lengths by construction
	}
	return t
}

func date(v []int64) *column.Int64s     { return &column.Int64s{T: query.TypeDate, Vals: v} }
func dateTime(v []int64) *column.Int64s { return &column.Int64s{T: query.TypeDateTime, Vals: v} }

func hasBit(b column.Bitmap) bool {
	for _, w := range b {
		if w != 0 {
			return true
		}
	}
	return false
}

// identity returns the codes 0 to n-1.
func identity(n int) []uint32 {
	codes := make([]uint32, n)
	for i := range codes {
		codes[i] = uint32(i)
	}
	return codes
}

// numbered returns prefix+i+suffix for i from 1 to n, i zero-padded to width digits, as
// substrings of one string.
func numbered(prefix string, width, n int, suffix string) []string {
	var buf []byte
	for i := range n {
		buf = append(buf, prefix...)
		buf = appendPadded(buf, i+1, width)
		buf = append(buf, suffix...)
	}
	all, off := string(buf), 0
	out := make([]string, n)
	for i := range n {
		l := len(prefix) + max(width, digits(i+1)) + len(suffix)
		out[i] = all[off : off+l]
		off += l
	}
	return out
}

func digits(v int) int { return len(strconv.Itoa(v)) }

// appendPadded appends v in decimal, zero-padded to width digits, as %0*d does.
func appendPadded(b []byte, v, width int) []byte {
	for range width - digits(v) {
		b = append(b, '0')
	}
	return strconv.AppendInt(b, int64(v), 10)
}

// enum builds a string column whose values are taken from vals by index: codes are given
// in order of first appearance, through a slice indexed like vals instead of a map.
type enum struct {
	vals  []string
	code  []int32 // code+1 of vals[i], 0 before it appears
	order []int32 // the indexes of vals in order of first appearance
	codes []uint32
}

func newEnum(vals []string, rows int) *enum {
	return &enum{vals: vals, code: make([]int32, len(vals)), codes: make([]uint32, 0, rows)}
}

func (e *enum) add(i int) {
	c := e.code[i]
	if c == 0 {
		e.order = append(e.order, int32(i))
		c = int32(len(e.order))
		e.code[i] = c
	}
	e.codes = append(e.codes, uint32(c-1))
}

// column returns the column; its dictionary is vals itself (shared) when every value
// appeared, in order.
func (e *enum) column() *column.Strings {
	dict := e.vals
	shared := len(e.order) == len(e.vals)
	for i, v := range e.order {
		if !shared || int(v) != i {
			shared = false
			break
		}
	}
	if !shared {
		dict = make([]string, len(e.order))
		for i, v := range e.order {
			dict[i] = e.vals[v]
		}
	}
	return &column.Strings{Codes: column.NarrowCodes(e.codes, len(dict)), Dict: dict}
}
