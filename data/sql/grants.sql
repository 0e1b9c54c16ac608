-- hotlab on a PostgreSQL server it does not own: what a superuser runs once, so that a role
-- that is NOT a superuser can run hotlab's sweeps there (README, "Your staging server").
--
--   psql -v role=hotlab_runner -f data/sql/grants.sql "<a superuser's connection>"
--
-- The role must exist (CREATE ROLE hotlab_runner LOGIN PASSWORD '…'). Nothing here makes it a
-- superuser, and nothing here changes a server setting. Undo: data/sql/revoke.sql.
\set ON_ERROR_STOP on

-- Arm databases are created and dropped by the role itself (only those hotlab marks as its own).
ALTER ROLE :"role" CREATEDB;
-- Read-only monitoring: pg_read_all_stats (every statistics view, pg_stat_statements' texts),
-- pg_read_all_settings (the settings hotlab records) and pg_stat_scan_tables (pgstattuple);
-- pg_buffercache is readable by pg_monitor.
GRANT pg_monitor TO :"role";
-- CHECKPOINT before a cold start and after a rewrite.
GRANT pg_checkpoint TO :"role";

-- hotlab's two databases, owned by the role and marked as hotlab's:
--   hotlab_base   the empty database hotlab's own databases are copied from, with the three
--                 extensions the role may not create (none of them is "trusted");
--   hotlab_probe  cluster-wide probes, the workload lease, and the one eviction function.
SELECT format('CREATE DATABASE hotlab_base OWNER %I TEMPLATE template0', :'role')
 WHERE NOT EXISTS (SELECT FROM pg_database WHERE datname = 'hotlab_base') \gexec
COMMENT ON DATABASE hotlab_base IS 'hotlab';
SELECT format('CREATE DATABASE hotlab_probe OWNER %I TEMPLATE template0', :'role')
 WHERE NOT EXISTS (SELECT FROM pg_database WHERE datname = 'hotlab_probe') \gexec
COMMENT ON DATABASE hotlab_probe IS 'hotlab';

\connect hotlab_base
CREATE EXTENSION IF NOT EXISTS pg_stat_statements;
CREATE EXTENSION IF NOT EXISTS pg_buffercache;
CREATE EXTENSION IF NOT EXISTS pgstattuple;

\connect hotlab_probe
CREATE EXTENSION IF NOT EXISTS pg_buffercache;
-- A cold start without a restart: PostgreSQL 17/18 evict buffers only for a superuser. This
-- function (run with its owner's rights) evicts the shared buffers of ONE database, and only of
-- a database whose comment hotlab wrote on an arm database ('hotlab run=…'); it returns what it
-- evicted and what is left.
CREATE OR REPLACE FUNCTION public.hotlab_evict_run_database(target name,
    OUT evicted bigint, OUT skipped bigint, OUT remaining bigint)
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, public AS $fn$
DECLARE
  d oid;
BEGIN
  SELECT oid INTO d FROM pg_database
   WHERE datname = target
     AND coalesce(shobj_description(oid, 'pg_database'), '') LIKE 'hotlab run=%';
  IF d IS NULL THEN
    RAISE EXCEPTION 'database "%" is not one of hotlab''s arm databases; nothing evicted', target;
  END IF;
  IF current_setting('server_version_num')::int >= 180000 THEN
    SELECT count(*) FILTER (WHERE e.buffer_evicted), count(*) FILTER (WHERE NOT e.buffer_evicted)
      INTO evicted, skipped
      FROM pg_buffercache b, LATERAL pg_buffercache_evict(b.bufferid) e
     WHERE b.reldatabase = d;
  ELSE
    SELECT count(*) FILTER (WHERE x.ok), count(*) FILTER (WHERE NOT x.ok)
      INTO evicted, skipped
      FROM (SELECT pg_buffercache_evict(b.bufferid) AS ok
              FROM pg_buffercache b WHERE b.reldatabase = d) x;
  END IF;
  SELECT count(*) INTO remaining FROM pg_buffercache b WHERE b.reldatabase = d;
END
$fn$;
REVOKE ALL ON FUNCTION public.hotlab_evict_run_database(name) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION public.hotlab_evict_run_database(name) TO :"role";
