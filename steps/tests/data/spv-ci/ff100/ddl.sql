-- Study 003: one small table, autovacuum off, updated many rows at a time.
-- 2000 and 100 are replaced by the size's values.
DROP TABLE IF EXISTS spv;
CREATE TABLE spv (
    id  integer PRIMARY KEY,
    val integer NOT NULL,
    pad text    NOT NULL
) WITH (autovacuum_enabled = false);
INSERT INTO spv (id, val, pad)
SELECT g, 0, repeat('x', 100) FROM generate_series(1, 2000) AS g;
ANALYZE spv;
