-- The columns of an imported table whose values strictly ascend in row order (a JSON
-- array of their names, written in the transaction that loads the table; see
-- ColumnDef.RowOrdered): sorting by one of them is sorting by the row order.
ALTER TABLE km_imports ADD COLUMN row_ordered TEXT_C NOT NULL DEFAULT ''
