-- Server- and database-wide cumulative counters, one JSON object per source. Numeric columns of
-- pg_stat_io are summed over all rows (backend types, objects, contexts).
SELECT 'wal' AS object, to_jsonb(w) - 'stats_reset' AS metrics FROM pg_stat_wal w
UNION ALL
SELECT 'lsn', jsonb_build_object(
         'insert_lsn_bytes', pg_wal_lsn_diff(pg_current_wal_insert_lsn(), '0/0'),
         'insert_lsn', pg_current_wal_insert_lsn()::text)
UNION ALL
SELECT 'size', jsonb_build_object('database_bytes', pg_database_size(current_database()))
UNION ALL
SELECT 'database', to_jsonb(d) - 'datid' - 'datname' - 'stats_reset'
FROM pg_stat_database d WHERE d.datname = current_database()
UNION ALL
SELECT 'io', coalesce(jsonb_object_agg(key, total), '{}'::jsonb)
FROM (SELECT kv.key, sum(kv.value::text::numeric) AS total
      FROM pg_stat_io io, jsonb_each(to_jsonb(io)) kv
      WHERE jsonb_typeof(kv.value) = 'number'
      GROUP BY kv.key) t
