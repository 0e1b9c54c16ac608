-- The data model hotlab chose (the seed gives none; README, "Study 001: the data model"):
-- every one of :users users belongs to :groups groups, one small_table row per (group, user),
-- loaded in primary-key order (groups numbered oldest first). A user's current group
-- (users.group_id, the row the upsert hits) is one of the :recent_groups newest groups, spread
-- evenly over them: the hit rows fill the table's newest tenth, about 16 to a page. At
-- :users = 100,000 and :groups = 100, small_table is 10,000,000 rows, 498 MiB at fillfactor
-- 100 (the article's "approximately 500 MB"), and a cold start touches about the article's
-- 10,527 buffers at the default (README: the check against its footprints).
INSERT INTO users (user_id, group_id, team_id)
SELECT u, :groups - :recent_groups + 1 + (u * 19) % :recent_groups, 1 + u % :teams
FROM generate_series(1, :users) u;

INSERT INTO small_table (group_id, user_id, team_id, activity_log_id, edited_at)
SELECT g, u, 1 + u % :teams, (g - 1) * :users + u,
       timestamp '2025-12-01' + ((g * 7 + u) % 86400) * interval '1 second'
FROM generate_series(1, :groups) g, generate_series(1, :users) u
ORDER BY g, u;

SELECT setval('activity_log_id_seq', :groups::bigint * :users);
