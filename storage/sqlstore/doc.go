// Package sqlstore is kmkit's database/sql backend: the km.Store, scim.Store,
// reporting.Store and ratelimit.Limiter of one database, SQLite (modernc.org/sqlite, pure
// Go, no cgo) or PostgreSQL (github.com/jackc/pgx/v5 through its database/sql driver), on
// one code path with a small dialect layer. Open applies the embedded, versioned schema
// migrations (migrations/*.sql, recorded in kmkit_migrations).
//
// # Opening
//
// Open returns a DB, which hands out the stores of the database; package storage/memory is
// opened the same way (memory.New), so that a host switches backends by changing only how
// it opens the DB:
//
//	db, err := sqlstore.Open(ctx, dsn)        // db := memory.New()
//	kmStore := db.KM()                        // a KMStore with no KMs yet
//	err = kmStore.Import(ctx, os.DirFS(dir))  // models/*.yaml and data/<source>.csv
//	scimStore, reportingStore := db.SCIM(), db.Reporting()
//
// KMStore.Import and KMStore.PutModel mean what the memory KM store's do: Import loads a
// data directory into the database and registers its KMs, PutModel registers one KM over
// tables or views the database holds (imported, or the host's own). Each KM() is a new
// store with no KMs over the same tables; the SCIM and reporting data are the database's
// whatever store reads them.
//
// Many replicas may share one PostgreSQL (or a PostgreSQL-compatible database): the stores
// keep no state of their own besides configuration (KM definitions, seat limits), every
// rule is enforced in the database, and the Limiter's counters live in it.
//
// # Citus
//
// On a PostgreSQL with the citus extension (DB.HasCitus), an import places the table of a
// record that declares a distribution (km.Record.Distribution, km.Record.Reference) as a
// distributed table co-located with the schema's others of its key type, or as a
// reference table (see LoadDistributedTable); the other tables stay on the coordinator,
// and so do the views of the sources' names (Citus propagates no view command after the
// parallel COPY into the shards in a load's transaction; the coordinator plans every read).
// KM statements are then written in the shapes Citus plans: no sub-query correlated from
// a reference table into a distributed one, none in a join condition. Single-node
// PostgreSQL and SQLite keep their shapes.
//
// # Generations and read replicas
//
// Each load of a table (Import, ImportGenerated, LoadTable) is a generation: a table of
// its own, named after the source and its digest ("orders@" and twelve hex digits, see
// migration 004), created, filled, indexed and recorded (km_imports.table_name,
// km_generations) in one transaction, and never changed after it. The source's own name
// becomes a view of its current generation, for a host's SQL and for KMs registered over
// it with PutModel; a load replaces that view in place while its columns stay the same,
// so that views of the host over it read the new generation (PostgreSQL refuses a load
// that changes the columns of a view other views depend on: tableLoad.replaceView). A
// source named like a generation table of another is refused, and on PostgreSQL one whose
// name is longer than its 63 bytes (the view would take the cut name, which another table
// may hold). A KMStore reads the generation tables its Import or ImportGenerated loaded
// or found, so all the statements of one read (a page and its count, the tables of a
// KPI's joins) see one import of each source, whatever other server processes import
// meanwhile, and a reload on one server never breaks another: a server keeps answering
// from the generation it loaded until it reloads (DESIGN.md). A load that replaces a
// source's generation keeps the replaced table for DB.SetKeepReplaced
// (DefaultKeepReplaced, an hour); the next load after that drops it (on PostgreSQL, not
// while a view of the host reads it, nor while readers hold it for seconds: a later load
// does), and a store still reading it then answers ErrGenerationReplaced, an
// outage.Error, so that the APIs answer 503 with Retry-After until the process reloads. A
// load of a generation still kept (the data of an hour ago again) makes it current
// without loading it. Other errors are returned as they are: an undefined column is never
// an outage. A database imported before generations (tables under the sources' names) is
// loaded again, into generation tables, by its next Import, which drops each old table
// as it loads the source (an old table's index names may be the new one's), so that
// import alone is not all or nothing.
//
// An import (Import, ImportGenerated) is all or nothing. Each changed source is loaded
// into its generation table and recorded as not current (staged: replaced when it was
// loaded, so kept and collected as replaced generations are); after the last load one
// transaction makes the generation of every source of the import current and replaces
// the views (DB.switchGenerations). An import that fails (a file refused, a relationship
// target holding a value twice, its context ended, the process gone) changes nothing
// another process or a host's SQL sees, and its staged tables are found by its next run,
// which does not load them again. The import's KMs are checked against its tables in
// that transaction (PutModel's checks; one that fails rolls it back) and served once it
// commits: after the commit nothing fails the import (the collection of replaced
// generations that follows leaves what it cannot drop to a later load, and logs its
// errors). Of two imports at once, the one that commits last is current for all its
// sources, the unchanged ones included: never the sources of one with those of the
// other. A reader's statement over several views sees all of them
// before or all after an import. That transaction waits for the views' locks at most
// 100 ms at a time and tries again, the views in another order, so that a reader holding
// one view while it waits for another never deadlocks with it. LoadTable and its
// variants load one table each, current at once.
//
// DB.AddReplicas adds PostgreSQL streaming standbys of the database: a KMStore's reads
// (Query, Summarize) go to one that holds the generation tables the store reads (a
// replica replays each load's transaction whole), else to the primary; SCIM, reporting,
// the limiters, imports and migrations stay on the primary. A replica's km_generations is
// read every ReplicaOptions.CheckEvery (a second by default). A replica that is behind,
// cannot be reached, or fails a read (a statement canceled by a conflict with the replay,
// say) never fails it: the read runs on the primary (but for a data exception of the
// request's own, SQLSTATE class 22, which the primary would raise too), reported to
// ReplicaOptions.Observe and, on each change of the replica's state, logged. KMs
// registered with PutModel alone are read from the primary (kmkit records no generation
// of a host's own tables).
//
// # KM data
//
// A record's Source names a table or view; its fields are columns of the same names, and
// RowColumn ("kmkit_row", a unique integer) gives the rows their natural order, and plus
// one it is the row key plans may select, filter and sort (km.RowField). A query
// arrives as a km.Plan (compiled and checked by package km: the store does not validate
// again) and is translated into one SELECT with bound parameters (values enter the SQL
// text only past the parameter bound, see "Database limits"; identifiers come only from
// the KM definition and are quoted), shaped so that the database can use its indexes and
// its own aggregates. A count, when asked, is a
// second statement for rows (which an index may answer) and rides along with the page for
// groups, distinct rows and searches (count(*) OVER (), so the grouping runs once). The
// results are those of the plan's semantics (package km, "What a query means"), which
// storage/storetest checks against its reference evaluator:
//
//   - filters: each conjunct of the plan's filter is evaluated on its home record, the
//     parents it reads joined with LEFT JOINs (nulls where a parent is missing), and
//     carried to every record the query reads along the conjunct's path: a row whose walk
//     to the home starts up (to its parent) passes when "fk IN (SELECT key ...)", one
//     whose walk starts down (to its children) when a correlated EXISTS finds a passing
//     child through the relationship's index (stopping at the first, and a page at its
//     last row); the rest of the path is joined inside the sub-query. On SQLite the
//     columns the condition reads inside the EXISTS are written +c, which rules out
//     their own indexes: without statistics SQLite took the index of a two-valued column
//     for every outer row (issue 29: 38 s for 50,000 rows, 51 ms now);
//   - rows without KPIs: the grain's rows that pass the filter, with a LEFT JOIN up to
//     each record of the plan's RowJoin; where the plan asks a parent to be tested
//     against conjuncts of the filter (RowChecks), their conditions join the LEFT JOIN's
//     ON clause, so a failing parent reads as none (plans of one path per record, the
//     usual shapes, have no RowChecks and no such condition);
//   - KPIs: per grain record, the distinct (group, grain row) pairs of the join rooted at
//     the grain (LEFT JOINs of the rows that pass the filter along the aggregate's Expand
//     steps; DISTINCT only when a step goes down), grouped with the database's count,
//     count(DISTINCT), sum, avg, min and max; with several grains, the groups are united
//     with UNION ALL and a GROUP BY on the keys (nulls equal), counts 0 where a grain has
//     no row; a KPI's arithmetic is computed over the grouped values, null on a null
//     operand or a division by zero;
//   - three-valued logic is SQL's own; a date literal against a datetime compares the day
//     (a half-open range of microseconds, which keeps an index usable); integer fields
//     against decimal literals and date fields against instants compare exactly;
//   - strings compare and sort byte by byte (COLLATE "C" on PostgreSQL, BINARY on SQLite)
//     and contains/startswith/endswith are case-sensitive (instr/strpos, substr; never
//     LIKE, which SQLite folds for ASCII and which would need escaping);
//   - sorts put nulls last in both directions, with ties by RowColumn, so pages are
//     deterministic: an index (c, RowColumn) serves the ascending sort in order and the
//     descending one read backwards, the database re-sorting each run of equal values by
//     RowColumn (PostgreSQL's Incremental Sort, SQLite's temporary B-tree for the right
//     part of the ORDER BY), and an index (c DESC, RowColumn) the descending one in order.
//     A column of the listed record declared NOT NULL (as Import declares every column
//     without nulls; the catalog is read once per 30 s and after every load; a view's
//     columns, the view of a source's name included, are nullable) is sorted
//     ORDER BY c ASC|DESC, so that either index serves either direction; otherwise
//     PostgreSQL gets c ASC|DESC NULLS LAST (the descending one served by an index
//     c DESC NULLS LAST only) and SQLite, whose indexes hold nulls first, c DESC (its
//     descending order has nulls last) or c ASC NULLS LAST, which no index serves. A
//     column whose values the import found strictly ascending in row order (a key
//     exported in order; ColumnDef.RowOrdered, recorded with its load, known of its
//     generation table only, never of the view another process's load may change) is
//     sorted as RowColumn in a page of rows, and ends the ORDER BY: `-ITEM_VALUE, ITEM_ID` reads
//     an index (ITEM_VALUE DESC, RowColumn) in order instead of sorting each run of equal
//     values by ITEM_ID. Pages are LIMIT and OFFSET written as integer literals, so that the
//     planner costs the page and PostgreSQL keeps the statement's plan (a generic plan:
//     with a bound LIMIT it assumes a tenth of the rows and plans every execution
//     afresh; pgx prepares each statement text once per connection and keeps the 512
//     it used last, so each page offset in use is a prepared statement of its own);
//     distinct keeps the first row of each combination in the result order: SELECT
//     DISTINCT when the sort keys cover every selected column, else a GROUP BY ordered
//     by the least row key of each combination; on SQLite, which groups only by sorting
//     every row, a distinct without sort keys is counted with SELECT DISTINCT (a
//     temporary B-tree of the combinations) and its page is the grouping of the first
//     rows in row order, of more of them when those hold fewer combinations than the
//     page needs, and of all of them as the last resort (KMStore.firstSeenPage); groups of KPIs come in the plan's natural
//     order (the first grain, in aggregate order, that has the group, then its least
//     grain row, then the keys ascending with nulls last), after the sort keys and, with
//     a search and no sort, the best score;
//   - aggregates are the database's own: sums and averages of doubles agree with the
//     other backends within 1e-9 relative, not always to the last bit (each database
//     adds in its own order), but sums of decimal amounts come out as the double nearest
//     to their true sum, as the memory backend's compensated sums do: SQLite's sum
//     compensates rounding, and on PostgreSQL, whose sum(float8) adds plainly in an order
//     that changes with its parallel workers, a sum is that of the integral parts plus
//     that of the fractional remainders (dialect.sum; BENCHMARKS.md, "PostgreSQL: sums of
//     doubles"); sums of an integer field are exact integers, null beyond int64 (package
//     km, "Numbers"): PostgreSQL's sum of BIGINT is an exact numeric, cast back where it
//     fits; SQLite's sum fails on a partial sum past int64, so its high and low 32 bits are
//     summed apart (dialect.intSum); averages of integers are the exact sum over the count
//     on PostgreSQL, SQLite's avg (its exact sum while it fits in int64, compensated
//     doubles beyond: within 1e-9 relative of the exact mean);
//     PostgreSQL refuses a double beyond its range (22003) where the other backends give
//     ±Inf: after a refusal the statement runs again with the sums of doubles and the
//     KPIs' arithmetic in numeric (wideSum, wideArith), ±Inf beyond the range and 0 below
//     it, so that only the arithmetic of a filter or a sort is refused (a 400); median
//     is the middle value, or the mean of the middle two as stats.Midpoint computes it
//     (finite where their sum overflows): the two middle values from one percentile_disc
//     on PostgreSQL (dialect.median), a Go aggregate on SQLite; ratio is the average of
//     1/0;
//   - search: the filter and the distinct values of the searched columns are computed by
//     the database; each distinct value is scored once by query/fuzzy, the memory
//     backend's scorer, and the values are sent back as one array parameter per score, so
//     the database filters and orders rows by score. Only the distinct values of the
//     searched columns travel to the server, never rows.
//
// # Database limits
//
// Every request within the documented limits (filter expressions of 8 KiB, nesting 64, in
// lists of 1000, 100 filter expressions) becomes statements the databases accept:
//
//   - an in list is one array parameter, whatever its length: "c = ANY($1)" with a typed
//     array (text[], bigint[], float8[], boolean[]) on PostgreSQL, "c IN (SELECT value
//     FROM json_each(?))" on SQLite with the values as JSON in their stored encoding
//     (integers for dates, instants and booleans, floats as strings that CAST reads
//     exactly); SQLite lists of up to 64 values stay "c IN (?, ...)", which its planner
//     estimates. The literals are converted to the column's type first (integral floats
//     for an integer field, midnights for a date field); an instant field against dates
//     compares days, one range per date;
//   - or chains of equalities and in lists on one field fold into one such list; every
//     other chain of and/or, and the conjunction of the filters, is a balanced tree, so
//     that no expression nears SQLite's depth of 1000;
//   - conjuncts that reach a record from one ancestor along steps down are one sub-query;
//     parents read by conjuncts are joined once per FROM, at most 32 of them (SQLite joins
//     64 tables), the others in sub-queries; with more than 8 conjuncts PostgreSQL keeps
//     EXISTS sub-queries as such (OFFSET 0) rather than planning a semi-join each;
//   - a statement with more arguments than the database binds (SQLite 32,766, PostgreSQL
//     65,535; a filter is repeated for each grain and each record a KPI joins) is run with
//     its arguments written as literals: numbers as strconv formats them (floats in their
//     shortest exact form), strings quoted with their quotes doubled (PostgreSQL: escape
//     strings with backslashes doubled too; SQLite: hexadecimal for a NUL), booleans,
//     and arrays as JSON text (SQLite) or ARRAY[...] (PostgreSQL). Only the literals'
//     own encoding builds the text; nothing from a request is copied into it raw.
//
// Every statement of a query, summary or search runs under the request's context: a
// canceled request (client gone, server shutdown, kmhttp.WithQueryTimeout) stops its
// statement (sqlite3_interrupt; PostgreSQL's cancel request) and frees its connection.
// PostgreSQL connections also set client_connection_check_interval to one second, so
// that the server stops a statement whose connection has closed even if the cancel
// request, which travels on a connection of its own, is lost.
//
// RowCount (km.RowCounter, for the cost budget) counts nothing: it reads the row count
// recorded with the table's load (km_generations), or, for a host's own table on
// PostgreSQL, pg_class.reltuples; other sources are unknown (km.AssumedRows).
//
// Summaries (km.Summarizer) describe the rows a plan without KPIs, search or distinct
// lists (the filter propagated as above), all in the database: no statement returns more
// than six rows to the server, whatever the number of rows described. The row count and
// the count, mean, minimum and maximum of numeric fields come from one statement of
// aggregates; the count, distinct count and most frequent value of each non-numeric field
// from one grouping of its values. PostgreSQL adds stddev_samp and
// percentile_cont (pandas' linear method); SQLite, which has neither, sums squared
// deviations from the mean in a second pass and reads the values the quartiles
// interpolate between with ORDER BY x LIMIT 2 OFFSET rank (an index walk where x leads an
// index) or row_number() over one sort, interpolated as numpy does. Means and standard
// deviations agree with pandas within 1e-9 relative (each database sums in its own
// order). The one SQLite aggregate that holds values in the server is the KPI median
// (kmkit_median): each group's values, one group at a time.
//
// Types are stored so that both databases compare them alike and pushdown stays a plain
// indexed comparison: strings as text, integers as 64-bit integers, floats as double
// precision, booleans as BOOLEAN (PostgreSQL) or 0/1 (SQLite), and dates, date-times,
// timestamps and times as 64-bit integers in query.Value's encoding (days since 1970-01-01,
// microseconds since the epoch, microseconds since midnight).
//
// Joins: each relationship step is a LEFT JOIN of the "one" side on its key; the key must
// be unique in its source (as KM relationships declare, and Import and PutModel check:
// see below), otherwise rows would multiply.
//
// Import (and LoadTable) create the tables of a data directory's CSV files: one
// transaction per source, skipped when the file's SHA-256 digest names the source's
// current generation, so that restarting a server is cheap and idempotent. Every import claims
// its row of km_imports first (a locking upsert), KM tables and reporting elements alike
// (ReportingStore.PutTenant, source "reporting/<tenant>"), so replicas starting at once on
// one database import each source once and all start; migrations are claimed the same way
// by their row of kmkit_migrations.
//
// An imported table declares NOT NULL every column that holds no null (the rows are known
// before the table is created), so that SQLite sorts such a column ascending through an
// index and PostgreSQL descending through an ascending index read backwards (see the sorts
// above); the columns among them of strings or integers whose values strictly ascend in
// row order are recorded with the import's digest, in the same transaction, and sorted as
// the row order. It is indexed on each index the records declare (km.Record.Indexes), each ending
// with RowColumn (on SQLite implicitly: RowColumn is the rowid, which every index entry
// ends with anyway, so it is not stored and sorted twice), and on the key of each record
// using it and every field of a relationship, unless a declared index begins with that
// field; these lookup indexes hold no RowColumn on PostgreSQL (see Index). A declared index
// serves its sort in both directions; when none of its records declares indexes, every
// field gets an ascending single-column index. The index set is part of the digest, so
// changing it reloads the table. Each table is one transaction, and the indexes are built
// after the rows (on PostgreSQL the primary key on RowColumn too: one sorted build, not an
// entry and a WAL record per row); the sources with the most work (data size times one plus
// their indexes) load first. PostgreSQL loads with COPY in its binary format, encoded
// straight from the columns, with FREEZE (the rows are written frozen and the pages
// all-visible, so index-only scans need no VACUUM first), up to ParallelLoads tables at
// once on separate connections, each building its indexes one process each in 32 MB sort
// runs (filled pages; no deduplication where RowColumn makes the entries unique: the
// table is read-only until the next import replaces it) and ANALYZE at the end. The tables are logged from the
// start: UNLOGGED and then SET LOGGED would write the whole table to the WAL again unless
// wal_level is minimal, and an import that returned must survive a crash. SQLite loads with
// prepared inserts of up to 512 rows each while the next source's CSV file is parsed on
// another core, in WAL mode with the database's synchronous setting (the same durability;
// journal_mode=OFF would only be safe into a new file renamed into place, and the database
// holds more than the KM tables); its index builds sort in runs on worker threads
// (temp_store=FILE and threads for the import's connection only), and it ends with
// ANALYZE of the table (sqlite_stat1), sampling each index (analysis_limit 1000), so that
// the planner knows which indexes select few rows; a table that an Import finds current
// but without statistics (loaded by a kmkit that gathered none) gets them then. Hosts'
// own tables get no statistics from kmkit: run ANALYZE on them (SQLite never gathers
// statistics by itself). Import, ImportTables and ImportGenerated refuse a table whose
// relationship target (the to field of a relationship of one of the KMs) holds a
// non-null value in more than one row, km.ErrDuplicateTarget naming the relationship and
// the value, checked on the parsed columns before the database sees them (a pass with a
// bit per string value, or a hash set of the integers unless they ascend): nothing of
// that source is written, the loads under way are canceled, the sources loaded before it
// in the same import stay staged, not current (a rerun finds them), and the store and
// every other process keep reading the generations they read before. The targets are part of
// the digest, so a field that becomes one is checked (its table loaded again).
// PutModel checks, with one GROUP BY ... HAVING count(*) > 1 LIMIT 1 each, the targets
// that no import of the store checked (a host's tables and views). ImportGenerated skips
// even the generation of data (the -demo-rows demo) that the database holds under the same
// version.
//
// # SCIM, reporting, rate limits
//
// SCIMStore serializes the writes of a team with a row lock on scim_teams (an upsert that
// also hands out versions) and checks uniqueness, members, 50 groups per user and the seat
// limit inside that transaction; unique indexes back the names up. SQLite write
// transactions begin IMMEDIATE (one writer at a time, others wait up to the busy
// timeout); WAL lets readers proceed. Reporting elements are JSON documents keyed by
// tenant and their position in reporting.CompareElements order; a page and its total come
// from one statement. The Limiter is one upsert per request, exact across replicas (for
// PostgreSQL); LocalLimiter counts in memory and writes every second (for SQLite, where a
// write per request would queue every request behind the one write lock). Ended windows are
// deleted by Limiter.SweepEvery, or by the LocalLimiter itself.
package sqlstore
