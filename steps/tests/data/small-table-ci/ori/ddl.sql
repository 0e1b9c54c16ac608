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
