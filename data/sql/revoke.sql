-- Undoes data/sql/grants.sql (run as a superuser, after `cargo xtask server gc --templates`):
--   psql -v role=hotlab_runner -f data/sql/revoke.sql "<a superuser's connection>"
\set ON_ERROR_STOP on
DROP DATABASE IF EXISTS hotlab_probe;
DROP DATABASE IF EXISTS hotlab_base;
REVOKE pg_checkpoint FROM :"role";
REVOKE pg_monitor FROM :"role";
ALTER ROLE :"role" NOCREATEDB;
