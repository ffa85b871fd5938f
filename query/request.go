package query

// Request is the portable form of one data query: what the KM handler builds from a GET
// query string or a POST projection, and what every km.Store executes. Field names are as
// the endpoint names them: "FIELD" at record level, "RECORD.FIELD" at KM level. The filter
// is bound; sort keys name selected fields or KPIs.
type Request struct {
	// Fields are the selected fields, in output order. With KPIs, they are the grouping keys.
	Fields []string
	// KPIs are computed per distinct combination of Fields (one row when Fields is empty).
	KPIs []NamedMetric
	// Filter is the bound conjunction of predefined filters and filterExpr entries; nil
	// matches every row.
	Filter Expr
	// Search is the fuzzy search, or nil.
	Search *Search
	// Sort keys in priority order. Nulls sort last in both directions; ties keep row order.
	Sort []SortTerm
	// Page is 0-based; PageSize is at least 1.
	Page, PageSize int
	// Distinct removes duplicate rows of the selected columns before paging.
	Distinct bool
	// Count asks the store for Result.Count, the number of rows before paging.
	Count bool
}

// SortTerm is one sort field and its direction.
type SortTerm struct {
	Field string
	Desc  bool
	// Expr, when set, is a bound value expression to sort by (OData's $orderby
	// tolower(NAME)); Field is then its text, for messages.
	Expr Scalar
}

// Search is a fuzzy search: rows match when the best score of Term over Fields reaches
// Precision (0..100).
type Search struct {
	Term      string
	Fields    []string
	Precision int
}

// NamedMetric is a named metric computed per group.
type NamedMetric struct {
	ID     string
	Metric Metric
}

// Metric is a KPI expression: *Aggregate, *Arith or *Number.
type Metric interface{ metricNode() }

// AggFunc is an aggregate function of the KPI language.
type AggFunc uint8

// The aggregate functions. Aggregates skip nulls.
const (
	AggCount         AggFunc = iota + 1 // count() rows, or count(F) non-null values of F
	AggCountDistinct                    // distinct non-null values of F
	AggSum
	AggAvg
	AggMin
	AggMax
	AggMedian
	AggRatio // rows where Filter is true over all rows of the group
)

// Aggregate applies Func to Field over the rows of a group that pass Filter. Field is empty
// for count() and ratio; for ratio, Filter is the condition and is required.
type Aggregate struct {
	Func   AggFunc
	Field  string
	Filter Expr
}

// Arith is "L Op R" with Op one of + - * /. Division by zero and arithmetic with null give null.
type Arith struct {
	Op   byte
	L, R Metric
}

// Number is a numeric constant in a KPI expression.
type Number struct{ V float64 }

func (*Aggregate) metricNode() {}
func (*Arith) metricNode()     {}
func (*Number) metricNode()    {}

// ColumnHeader describes one column of a result: a selected field or a KPI.
type ColumnHeader struct {
	Name string
	Type Type
	// KPI is true for KPI columns (headers report aggregation: true).
	KPI bool
}

// Result is what a store returns for a Request: the page of rows, and Count when asked.
type Result struct {
	Columns []ColumnHeader
	Rows    [][]Value
	// Count is the number of rows (or groups, or distinct rows) before paging; set when
	// Request.Count is true.
	Count int
}
