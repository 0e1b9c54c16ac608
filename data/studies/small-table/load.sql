-- The data model hotlab chose (the seed gives none; README, "Study 001: the data model"):
-- every one of :users users belongs to :groups groups, one small_table row per (group, user),
-- loaded in primary-key order (groups numbered oldest first), so group g fills one contiguous
-- stretch of the table. A user's current group (users.group_id, the row the upsert hits) is
-- set by :layout, where the hit rows sit in the table:
--   recent  one of the :recent_groups newest groups, spread evenly over them: the hit rows fill
--           the table's newest stretch (a tenth at the study's sizes);
--   spread  group 1 + user mod :groups: every group's stretch holds an even share of hit rows,
--           so they sit evenly over every page;
--   random  a hash of the user id picks the group: the same pages as spread on average, with
--           the unevenness of a random mapping.
-- At :users = 100,000 and :groups = 100, small_table is 10,000,000 rows, 498 MiB at fillfactor
-- 100 (the article's "approximately 500 MB").
DO $layout$
BEGIN
    IF ':layout' NOT IN ('recent', 'spread', 'random') THEN
        RAISE EXCEPTION 'layout ":layout" is not one of recent, spread, random; fix vars.layout in the study file';
    END IF;
END
$layout$;

INSERT INTO users (user_id, group_id, team_id)
SELECT u,
       CASE ':layout'
           WHEN 'recent' THEN :groups - :recent_groups + 1 + (u * 19) % :recent_groups
           WHEN 'spread' THEN 1 + u % :groups
           ELSE 1 + abs(hashint4(u)) % :groups
       END,
       1 + u % :teams
FROM generate_series(1, :users) u;

INSERT INTO small_table (group_id, user_id, team_id, activity_log_id, edited_at)
SELECT g, u, 1 + u % :teams, (g - 1) * :users + u,
       timestamp '2025-12-01' + ((g * 7 + u) % 86400) * interval '1 second'
FROM generate_series(1, :groups) g, generate_series(1, :users) u
ORDER BY g, u;

SELECT setval('activity_log_id_seq', :groups::bigint * :users);
