-- For the driver benchmark only, called by both arms: pgbench ends a client on any error that is
-- not a serialization failure or deadlock, so the 1 % invalid-item New-Order is caught here. Its
-- work is still undone (the exception block is a subtransaction); the call then commits. hotlab's
-- VUs call the same wrapper in the benchmark, so both arms pay for the subtransaction.
CREATE OR REPLACE FUNCTION neword_caught(w integer, max_w integer, d integer, c integer, n integer, spec boolean)
RETURNS numeric AS $$
BEGIN
    RETURN neword(w, max_w, d, c, n, spec);
EXCEPTION WHEN no_data_found THEN
    RETURN NULL;
END $$ LANGUAGE plpgsql;
