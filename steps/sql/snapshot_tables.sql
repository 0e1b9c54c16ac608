-- One row per user table (and partitioned parent) of the current database, named as SQL writes
-- it (`regclass`: `small_table`, `"MyTable"`, the schema only when off the search path), the
-- way a study names it: every column of
-- pg_stat_user_tables and pg_statio_user_tables, whatever this server version has, plus sizes
-- and reloptions. Keys a version lacks are simply absent.
SELECT c.oid::regclass::text AS object,
       coalesce(p.oid::regclass::text, '') AS parent,
       c.relkind::text AS kind,
       (coalesce(to_jsonb(s), '{}'::jsonb) - 'relid' - 'schemaname' - 'relname')
       || (coalesce(to_jsonb(io), '{}'::jsonb) - 'relid' - 'schemaname' - 'relname')
       || jsonb_build_object(
            'heap_bytes', pg_relation_size(c.oid),
            'fsm_bytes', pg_relation_size(c.oid, 'fsm'),
            'vm_bytes', pg_relation_size(c.oid, 'vm'),
            'index_bytes', pg_indexes_size(c.oid),
            'toast_bytes', CASE WHEN c.reltoastrelid = 0 THEN 0
                                ELSE pg_total_relation_size(c.reltoastrelid) END,
            'total_bytes', pg_total_relation_size(c.oid),
            'relpages', c.relpages,
            'reltuples', c.reltuples,
            'reloptions', coalesce(array_to_string(c.reloptions, ' '), ''),
            'fillfactor', coalesce((SELECT substr(o, 12)::int FROM unnest(c.reloptions) o
                                    WHERE o LIKE 'fillfactor=%'), 100)
          ) AS metrics
FROM pg_class c
JOIN pg_namespace n ON n.oid = c.relnamespace
LEFT JOIN pg_stat_user_tables s ON s.relid = c.oid
LEFT JOIN pg_statio_user_tables io ON io.relid = c.oid
LEFT JOIN pg_inherits i ON i.inhrelid = c.oid
LEFT JOIN pg_class p ON p.oid = i.inhparent
WHERE c.relkind IN ('r', 'p')
  AND n.nspname NOT IN ('pg_catalog', 'information_schema')
  AND n.nspname NOT LIKE 'pg_toast%'
UNION ALL
-- Indexes, tagged with their table as parent; a leaf partition's index instead with the
-- partitioned index it belongs to (kind 'pi'), which analyze adds them up into.
SELECT ci.oid::regclass::text, coalesce(pi.oid::regclass::text, ct.oid::regclass::text),
       CASE WHEN pi.relname IS NULL THEN 'i' ELSE 'pi' END,
       (coalesce(to_jsonb(s), '{}'::jsonb) - 'relid' - 'indexrelid' - 'schemaname' - 'relname' - 'indexrelname')
       || (coalesce(to_jsonb(io), '{}'::jsonb) - 'relid' - 'indexrelid' - 'schemaname' - 'relname' - 'indexrelname')
       || jsonb_build_object('index_bytes', pg_relation_size(ci.oid), 'relpages', ci.relpages,
                             'reloptions', coalesce(array_to_string(ci.reloptions, ' '), ''))
FROM pg_index x
JOIN pg_class ci ON ci.oid = x.indexrelid
JOIN pg_class ct ON ct.oid = x.indrelid
JOIN pg_namespace n ON n.oid = ct.relnamespace
LEFT JOIN pg_stat_user_indexes s ON s.indexrelid = ci.oid
LEFT JOIN pg_statio_user_indexes io ON io.indexrelid = ci.oid
LEFT JOIN pg_inherits ih ON ih.inhrelid = ci.oid
LEFT JOIN pg_class pi ON pi.oid = ih.inhparent
WHERE n.nspname NOT IN ('pg_catalog', 'information_schema')
  AND n.nspname NOT LIKE 'pg_toast%'
