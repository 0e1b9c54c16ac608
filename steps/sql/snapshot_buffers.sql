-- Shared buffers per relation of the current database (tables and indexes), plus the
-- whole-cache summary as object '_all'. A leaf partition carries its partitioned parent
-- (kind 'r'), a leaf partition's index the partitioned index it belongs to (kind 'pi'), so that
-- analyze adds them up into the parent.
SELECT c.relname::text AS object,
       coalesce(p.relname::text, '') AS parent,
       CASE WHEN c.relkind = 'i' AND p.relname IS NOT NULL THEN 'pi' ELSE c.relkind::text END AS kind,
       jsonb_build_object('buffers', count(*),
                          'dirty', count(*) FILTER (WHERE b.isdirty),
                          'avg_usage', round(avg(b.usagecount), 3)) AS metrics
FROM pg_buffercache b
JOIN pg_class c ON c.relfilenode = b.relfilenode AND c.relfilenode <> 0
JOIN pg_namespace n ON n.oid = c.relnamespace
LEFT JOIN pg_inherits i ON i.inhrelid = c.oid
LEFT JOIN pg_class p ON p.oid = i.inhparent
WHERE b.reldatabase = (SELECT oid FROM pg_database WHERE datname = current_database())
  AND n.nspname NOT IN ('pg_catalog', 'information_schema')
  AND n.nspname NOT LIKE 'pg_toast%'
GROUP BY c.relname, c.relkind, p.relname
UNION ALL
SELECT '_all', '', '', to_jsonb(s) FROM pg_buffercache_summary() s
