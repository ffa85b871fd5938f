package query

// ColumnHeader describes one column of a result: a selected field or a KPI.
type ColumnHeader struct {
	Name string
	Type Type
	// KPI is true for KPI columns (headers report aggregation: true).
	KPI bool
}

// Result is what a store returns for a plan (km.Plan): the page of rows, and Count when
// asked.
type Result struct {
	Columns []ColumnHeader
	Rows    [][]Value
	// Count is the number of rows (or groups, or distinct rows) before paging; set when
	// the plan asks for it (km.Plan.Count).
	Count int
}
