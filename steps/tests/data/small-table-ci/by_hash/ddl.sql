-- schema.sql
-- Study 001/004's table, exactly as the seed gives it (the heap's fillfactor is the arm's).
CREATE TABLE small_table (
    group_id       integer NOT NULL,
    user_id         integer NOT NULL,
    team_id         integer NOT NULL,
    activity_log_id integer NOT NULL,
    edited_at       timestamp without time zone NOT NULL,
    PRIMARY KEY (group_id, user_id)
)
-- And set fillfactor only at Heap
-- WITH (FILLFACTOR=50)
;

CREATE INDEX ON small_table (team_id);

-- What the upsert script reads: each user's current group and team (the seed does not give
-- them; README, "Study 001: the data model").
CREATE TABLE users (
    user_id  integer PRIMARY KEY,
    group_id integer NOT NULL,
    team_id  integer NOT NULL
);

CREATE SEQUENCE activity_log_id_seq;

-- the partitioning of arm by_hash (small_table)
-- hotlab: small_table hash-partitioned on user_id into 8 partitions (the arm's partition)
DO $hotlab$
DECLARE
    tbl regclass := '"small_table"'::regclass;
    cons text[];
    idxs text[];
    stmt text;
BEGIN
    IF EXISTS (SELECT 1 FROM pg_constraint c WHERE c.conrelid = tbl AND c.contype IN ('p', 'u')
               AND NOT EXISTS (SELECT 1 FROM pg_attribute a WHERE a.attrelid = tbl
                               AND a.attname = 'user_id' AND a.attnum = ANY (c.conkey))) THEN
        RAISE EXCEPTION 'partition key user_id is not in the primary key (or a unique constraint) of small_table; pick one of its columns';
    END IF;
    IF NOT EXISTS (SELECT 1 FROM pg_attribute WHERE attrelid = tbl AND attname = 'user_id' AND attnum > 0) THEN
        RAISE EXCEPTION 'partition key user_id is not a column of small_table';
    END IF;
    SELECT coalesce(array_agg(format('ALTER TABLE %s ADD CONSTRAINT %I %s', tbl, conname,
                                     pg_get_constraintdef(oid)) ORDER BY conname), '{}')
      INTO cons FROM pg_constraint WHERE conrelid = tbl AND contype IN ('p', 'u');
    SELECT coalesce(array_agg(pg_get_indexdef(i.indexrelid) ORDER BY i.indexrelid), '{}')
      INTO idxs FROM pg_index i
     WHERE i.indrelid = tbl
       AND NOT EXISTS (SELECT 1 FROM pg_constraint c WHERE c.conindid = i.indexrelid);
    EXECUTE format('CREATE TABLE hotlab_partitioned (LIKE %s INCLUDING ALL EXCLUDING INDEXES) PARTITION BY HASH (%I)', tbl, 'user_id');
    EXECUTE format('DROP TABLE %s', tbl);
    EXECUTE format('ALTER TABLE hotlab_partitioned RENAME TO %I', 'small_table');
    FOREACH stmt IN ARRAY cons LOOP EXECUTE stmt; END LOOP;
    FOREACH stmt IN ARRAY idxs LOOP EXECUTE stmt; END LOOP;
    FOR i IN 0..7 LOOP
        EXECUTE format('CREATE TABLE %I PARTITION OF %I FOR VALUES WITH (MODULUS 8, REMAINDER %s)',
                       'small_table_p' || i, 'small_table', i);
    END LOOP;
END
$hotlab$;

-- load.sql
-- The data model hotlab chose (the seed gives none; README, "Study 001: the data model"):
-- every one of 200 users belongs to 20 groups, one small_table row per (group, user),
-- loaded in primary-key order (groups numbered oldest first). A user's current group
-- (users.group_id, the row the upsert hits) is one of the 4 newest groups, spread
-- evenly over them: the hit rows fill the table's newest tenth, about 16 to a page. At
-- 200 = 100,000 and 20 = 100, small_table is 10,000,000 rows, 498 MiB at fillfactor
-- 100 (the article's "approximately 500 MB"), and a cold start touches about the article's
-- 10,527 buffers at the default (README: the check against its footprints).
INSERT INTO users (user_id, group_id, team_id)
SELECT u, 20 - 4 + 1 + (u * 19) % 4, 1 + u % 10
FROM generate_series(1, 200) u;

INSERT INTO small_table (group_id, user_id, team_id, activity_log_id, edited_at)
SELECT g, u, 1 + u % 10, (g - 1) * 200 + u,
       timestamp '2025-12-01' + ((g * 7 + u) % 86400) * interval '1 second'
FROM generate_series(1, 20) g, generate_series(1, 200) u
ORDER BY g, u;

SELECT setval('activity_log_id_seq', 20::bigint * 200);
