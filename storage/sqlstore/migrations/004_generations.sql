-- Each load of a KM table is a generation: a table of its own, named after the source and
-- its digest, that nothing changes once its transaction commits (see generationTable).
-- km_imports.table_name names a source's current generation ('' for a table loaded
-- before generations, under the source's own name), and km_generations lists every
-- generation table kmkit holds: the current ones (replaced_at NULL) and those a later
-- load replaced, kept until replaced_at (Unix seconds) is older than the DB's
-- KeepReplaced, so that a server still serving one keeps answering from it until it
-- reloads.
ALTER TABLE km_imports ADD COLUMN table_name TEXT_C NOT NULL DEFAULT ''
--;
CREATE TABLE km_generations (
	table_name TEXT_C PRIMARY KEY,
	source TEXT_C NOT NULL,
	digest TEXT_C NOT NULL,
	rows_loaded BIGINT NOT NULL,
	row_ordered TEXT_C NOT NULL DEFAULT '',
	replaced_at BIGINT
)
