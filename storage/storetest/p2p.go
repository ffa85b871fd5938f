package storetest

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing/fstest"
)

// p2pModel is a procure-to-pay KM whose goods receipts reach purchase orders through
// two relationships (GOODS_RECEIPTS -> PO_LINES -> PURCHASE_ORDERS) and carry a boolean
// with an index of its own: the shape of issue 29's item 3 (a filter carried from
// grandchildren to their parents, which SQLite without statistics planned per row).
const p2pModel = `id: p2p
name: Procure to pay
records:
  - id: PURCHASE_ORDERS
    name: Purchase orders
    source: purchase_orders
    key: PO_ID
    fields:
      - {id: PO_ID, name: Purchase order, type: string}
      - {id: STATUS, name: Status, type: string}
    indexes: [[STATUS]]
  - id: PO_LINES
    name: Purchase order lines
    source: po_lines
    key: LINE_ID
    fields:
      - {id: LINE_ID, name: Line, type: string}
      - {id: PO_ID, name: Purchase order, type: string}
      - {id: AMOUNT, name: Amount, type: float}
  - id: GOODS_RECEIPTS
    name: Goods receipts
    source: goods_receipts
    key: GR_ID
    fields:
      - {id: GR_ID, name: Goods receipt, type: string}
      - {id: LINE_ID, name: Line, type: string}
      - {id: QUALITY_OK, name: Quality ok, type: boolean}
    indexes: [[QUALITY_OK]]
relationships:
  - {from: PO_LINES.PO_ID, to: PURCHASE_ORDERS.PO_ID}
  - {from: GOODS_RECEIPTS.LINE_ID, to: PO_LINES.LINE_ID}
`

// P2PData returns the data directory of the KM p2p (models/p2p.yaml and its CSV
// files) with orders purchase orders, two lines each and one goods
// receipt per line (5 rows per order: 10,000 orders are 50,000 rows), a fifth of the
// receipts failing the quality check, from a fixed seed.
func P2PData(orders int) fstest.MapFS {
	rng := rand.New(rand.NewPCG(29, 3))
	var po, lines, grs strings.Builder
	po.WriteString("PO_ID,STATUS\n")
	lines.WriteString("LINE_ID,PO_ID,AMOUNT\n")
	grs.WriteString("GR_ID,LINE_ID,QUALITY_OK\n")
	statuses := []string{"OPEN", "CLOSED", "BLOCKED"}
	gr := 0
	for i := range orders {
		fmt.Fprintf(&po, "PO%06d,%s\n", i, statuses[rng.IntN(len(statuses))])
		for j := range 2 {
			line := fmt.Sprintf("PO%06d-%d", i, j)
			fmt.Fprintf(&lines, "%s,PO%06d,%d.%02d\n", line, i, rng.IntN(10000), rng.IntN(100))
			fmt.Fprintf(&grs, "GR%07d,%s,%t\n", gr, line, rng.IntN(5) != 0)
			gr++
		}
	}
	return fstest.MapFS{
		"models/p2p.yaml":          {Data: []byte(p2pModel)},
		"data/purchase_orders.csv": {Data: []byte(po.String())},
		"data/po_lines.csv":        {Data: []byte(lines.String())},
		"data/goods_receipts.csv":  {Data: []byte(grs.String())},
	}
}
