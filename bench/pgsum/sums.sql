-- Sums of doubles on PostgreSQL: plain sum(float8) against the split sum kmkit writes
-- (integral parts and fractional remainders apart) and a numeric sum, on 1,000,000
-- amounts of two decimals, total and in 10 groups, each three times. Run with
--   psql "$KMKIT_POSTGRES_DSN" -f bench/pgsum/sums.sql
-- (in a schema of its own, dropped at the end); the exact total is the numeric one.
DROP SCHEMA IF EXISTS kmkit_pgsum CASCADE;
CREATE SCHEMA kmkit_pgsum;
SET search_path = kmkit_pgsum;
SELECT setseed(0.29);
CREATE TABLE t (g int, x float8);
INSERT INTO t SELECT i % 10, round((random() * 10000)::numeric, 2)::float8 FROM generate_series(1, 1000000) i;
ANALYZE t;
SET extra_float_digits = 1;
\timing on
\echo plain sum(x)
SELECT sum(x) FROM t;
SELECT sum(x) FROM t;
SELECT sum(x) FROM t;
\echo split sum(round(x)) + sum(x - round(x))
SELECT sum(round(x)) + sum(x - round(x)) FROM t;
SELECT sum(round(x)) + sum(x - round(x)) FROM t;
SELECT sum(round(x)) + sum(x - round(x)) FROM t;
\echo numeric sum(x::numeric)::float8
SELECT sum(x::numeric)::float8 FROM t;
SELECT sum(x::numeric)::float8 FROM t;
SELECT sum(x::numeric)::float8 FROM t;
\echo grouped: plain, split, numeric
SELECT g, sum(x) FROM t GROUP BY g ORDER BY g LIMIT 1;
SELECT g, sum(x) FROM t GROUP BY g ORDER BY g LIMIT 1;
SELECT g, sum(round(x)) + sum(x - round(x)) FROM t GROUP BY g ORDER BY g LIMIT 1;
SELECT g, sum(round(x)) + sum(x - round(x)) FROM t GROUP BY g ORDER BY g LIMIT 1;
SELECT g, sum(x::numeric)::float8 FROM t GROUP BY g ORDER BY g LIMIT 1;
SELECT g, sum(x::numeric)::float8 FROM t GROUP BY g ORDER BY g LIMIT 1;
\timing off
DROP SCHEMA kmkit_pgsum CASCADE;
