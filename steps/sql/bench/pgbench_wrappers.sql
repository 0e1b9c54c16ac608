-- For the driver benchmark only: pgbench ends a client on any error that is not a
-- serialization failure or deadlock, so the 1 % invalid-item New-Order is caught here. Its work
-- is still undone (the exception block is a subtransaction); the call then commits.
CREATE OR REPLACE FUNCTION neword_pgbench(w integer, max_w integer, d integer, c integer, n integer)
RETURNS numeric AS $$
BEGIN
    RETURN neword(w, max_w, d, c, n, false);
EXCEPTION WHEN no_data_found THEN
    RETURN NULL;
END $$ LANGUAGE plpgsql;
