-- The rows the upsert hits: each user's current group (users.group_id). hotlab counts the pages
-- of small_table that hold at least one of them (from their ctid), before and after the run.
SELECT s.tableoid, s.ctid
FROM small_table s
JOIN users u ON u.user_id = s.user_id AND u.group_id = s.group_id
