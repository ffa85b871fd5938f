-- year() of an instant on PostgreSQL: the form kmkit wrote before (the epoch plus the
-- microseconds times an interval, a double) against the form it writes now (the day in
-- integers, moved one Gregorian cycle of 146097 days on and 400 taken off the year), as a
-- filter year(x) eq 2025 over 1,000,000 instants of the years 1 to 9999, the two forms
-- alternating, three times each. Run with
--   psql "$KMKIT_POSTGRES_DSN" -f bench/pgyear/year.sql
-- (in a schema of its own, dropped at the end). The EXPLAIN ANALYZE lines give each
-- statement's execution time in the server.
DROP SCHEMA IF EXISTS kmkit_pgyear CASCADE;
CREATE SCHEMA kmkit_pgyear;
SET search_path = kmkit_pgyear;
SELECT setseed(0.28);
-- microseconds from 0001-01-01T00:00:00Z to 9999-12-31T23:59:59.999999Z
CREATE TABLE t (x bigint);
INSERT INTO t SELECT -62135596800000000 + floor(random() * 315537897600000000)::bigint FROM generate_series(1, 1000000);
ANALYZE t;
SET max_parallel_workers_per_gather = 0;
\set old 'CAST(extract(year FROM TIMESTAMP ''1970-01-01 00:00:00'' + (x) * INTERVAL ''1 microsecond'') AS BIGINT)'
\set new '(CAST(extract(year FROM DATE ''1970-01-01'' + CAST(((x - (((x) % 86400000000 + 86400000000) % 86400000000)) / 86400000000) + 146097 AS integer)) AS BIGINT) - 400)'
\echo year(x) eq 2025: old, new, old, new, old, new
EXPLAIN (ANALYZE, TIMING OFF, COSTS OFF) SELECT count(*) FROM t WHERE :old = 2025;
EXPLAIN (ANALYZE, TIMING OFF, COSTS OFF) SELECT count(*) FROM t WHERE :new = 2025;
EXPLAIN (ANALYZE, TIMING OFF, COSTS OFF) SELECT count(*) FROM t WHERE :old = 2025;
EXPLAIN (ANALYZE, TIMING OFF, COSTS OFF) SELECT count(*) FROM t WHERE :new = 2025;
EXPLAIN (ANALYZE, TIMING OFF, COSTS OFF) SELECT count(*) FROM t WHERE :old = 2025;
EXPLAIN (ANALYZE, TIMING OFF, COSTS OFF) SELECT count(*) FROM t WHERE :new = 2025;
\echo the instants whose year the two forms answer differently (the old one rounds)
SELECT count(*) FROM t WHERE :old <> :new;
DROP SCHEMA kmkit_pgyear CASCADE;
