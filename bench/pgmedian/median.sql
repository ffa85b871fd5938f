-- Medians on PostgreSQL: percentile_cont(0.5), which kmkit wrote before, against the
-- form it writes now (dialect.median: the two middle values from one percentile_disc over
-- two fractions, and their midpoint), on 1,000,000 doubles, total and in 100 groups, the two
-- forms alternating, three times each. Run with
--   psql "$KMKIT_POSTGRES_DSN" -f bench/pgmedian/median.sql
-- (in a schema of its own, dropped at the end). The EXPLAIN ANALYZE lines give each
-- statement's execution time in the server, without the transfer of the answer.
DROP SCHEMA IF EXISTS kmkit_pgmedian CASCADE;
CREATE SCHEMA kmkit_pgmedian;
SET search_path = kmkit_pgmedian;
SELECT setseed(0.31);
CREATE TABLE t (g int, x float8);
INSERT INTO t SELECT i % 100, random() * 1e6 FROM generate_series(1, 1000000) i;
ANALYZE t;
SET max_parallel_workers_per_gather = 0;
\set old 'percentile_cont(0.5) WITHIN GROUP (ORDER BY x)'
\set lo '(percentile_disc(ARRAY[0.5, 0.5000000000009094947017729282379150390625]) WITHIN GROUP (ORDER BY x))[1]'
\set hi '(percentile_disc(ARRAY[0.5, 0.5000000000009094947017729282379150390625]) WITHIN GROUP (ORDER BY x))[2]'
\set new 'CASE WHEN abs(' :lo ') < 1 AND abs(' :hi ') < 1 THEN (' :lo ' + ' :hi ') / 2 ELSE ' :lo ' / 2 + ' :hi ' / 2 END'
\echo total: old, new, old, new, old, new
EXPLAIN (ANALYZE, TIMING OFF, COSTS OFF) SELECT :old FROM t;
EXPLAIN (ANALYZE, TIMING OFF, COSTS OFF) SELECT :new FROM t;
EXPLAIN (ANALYZE, TIMING OFF, COSTS OFF) SELECT :old FROM t;
EXPLAIN (ANALYZE, TIMING OFF, COSTS OFF) SELECT :new FROM t;
EXPLAIN (ANALYZE, TIMING OFF, COSTS OFF) SELECT :old FROM t;
EXPLAIN (ANALYZE, TIMING OFF, COSTS OFF) SELECT :new FROM t;
\echo 100 groups: old, new, old, new, old, new
EXPLAIN (ANALYZE, TIMING OFF, COSTS OFF) SELECT g, :old FROM t GROUP BY g;
EXPLAIN (ANALYZE, TIMING OFF, COSTS OFF) SELECT g, :new FROM t GROUP BY g;
EXPLAIN (ANALYZE, TIMING OFF, COSTS OFF) SELECT g, :old FROM t GROUP BY g;
EXPLAIN (ANALYZE, TIMING OFF, COSTS OFF) SELECT g, :new FROM t GROUP BY g;
EXPLAIN (ANALYZE, TIMING OFF, COSTS OFF) SELECT g, :old FROM t GROUP BY g;
EXPLAIN (ANALYZE, TIMING OFF, COSTS OFF) SELECT g, :new FROM t GROUP BY g;
\echo the same answers: the largest difference between the two forms, in 100 groups
SELECT max(abs(a - b)) FROM (SELECT g, :old a, :new b FROM t GROUP BY g) s;
DROP SCHEMA kmkit_pgmedian CASCADE;
