-- tprocc, profile hammerdb, 1 warehouse(s)
-- HammerDB's TPROC-C schema for PostgreSQL: nine tables, HammerDB's column order, types and
-- NULLs, no foreign keys, no fillfactor. HammerDB declares the primary keys inline; hotlab adds
-- them after the load with the same names and columns (indexes.sql), so they are bulk-built
-- instead of maintained row by row during COPY. The finished schema is the same.
DROP TABLE IF EXISTS warehouse, district, customer, history, item, stock, new_order, orders, order_line;
CREATE TABLE warehouse (
    w_id integer NOT NULL, w_name varchar(10) NOT NULL,
    w_street_1 varchar(20) NOT NULL, w_street_2 varchar(20) NOT NULL, w_city varchar(20) NOT NULL,
    w_state char(2) NOT NULL, w_zip char(9) NOT NULL,
    w_tax numeric(4,4) NOT NULL, w_ytd numeric(16,2) NOT NULL);
CREATE TABLE district (
    d_w_id integer NOT NULL, d_next_o_id integer NOT NULL, d_id smallint NOT NULL,
    d_ytd numeric(12,2) NOT NULL, d_tax numeric(4,4) NOT NULL, d_name varchar(10) NOT NULL,
    d_street_1 varchar(20) NOT NULL, d_street_2 varchar(20) NOT NULL, d_city varchar(20) NOT NULL,
    d_state char(2) NOT NULL, d_zip char(9) NOT NULL);
CREATE TABLE customer (
    c_since timestamptz NOT NULL, c_id integer NOT NULL, c_w_id integer NOT NULL, c_d_id smallint NOT NULL,
    c_payment_cnt smallint NOT NULL, c_delivery_cnt smallint NOT NULL,
    c_first varchar(16) NOT NULL, c_middle char(2) NOT NULL, c_last varchar(16) NOT NULL,
    c_street_1 varchar(20) NOT NULL, c_street_2 varchar(20) NOT NULL, c_city varchar(20) NOT NULL,
    c_state char(2) NOT NULL, c_zip char(9) NOT NULL, c_phone char(16) NOT NULL, c_credit char(2) NOT NULL,
    c_credit_lim numeric(12,2) NOT NULL, c_discount numeric(4,4) NOT NULL,
    c_balance numeric(12,2) NOT NULL, c_ytd_payment numeric(12,2) NOT NULL,
    c_data varchar(500) NOT NULL);
CREATE TABLE history (
    h_date timestamptz NOT NULL, h_c_id integer, h_c_w_id integer NOT NULL, h_w_id integer NOT NULL,
    h_c_d_id smallint NOT NULL, h_d_id smallint NOT NULL, h_amount numeric(6,2) NOT NULL,
    h_data varchar(24) NOT NULL);
CREATE TABLE item (
    i_id integer NOT NULL, i_im_id integer NOT NULL, i_name varchar(24) NOT NULL,
    i_price numeric(5,2) NOT NULL, i_data varchar(50) NOT NULL);
CREATE TABLE stock (
    s_i_id integer NOT NULL, s_w_id integer NOT NULL, s_ytd integer NOT NULL,
    s_quantity smallint NOT NULL, s_order_cnt smallint NOT NULL, s_remote_cnt smallint NOT NULL,
    s_dist_01 char(24) NOT NULL, s_dist_02 char(24) NOT NULL, s_dist_03 char(24) NOT NULL,
    s_dist_04 char(24) NOT NULL, s_dist_05 char(24) NOT NULL, s_dist_06 char(24) NOT NULL,
    s_dist_07 char(24) NOT NULL, s_dist_08 char(24) NOT NULL, s_dist_09 char(24) NOT NULL,
    s_dist_10 char(24) NOT NULL, s_data varchar(50) NOT NULL);
CREATE TABLE new_order (
    no_w_id integer NOT NULL, no_o_id integer NOT NULL, no_d_id smallint NOT NULL);
CREATE TABLE orders (
    o_entry_d timestamptz NOT NULL, o_id integer NOT NULL, o_w_id integer NOT NULL,
    o_c_id integer NOT NULL, o_d_id smallint NOT NULL, o_carrier_id smallint,
    o_ol_cnt smallint NOT NULL, o_all_local smallint NOT NULL);
CREATE TABLE order_line (
    ol_delivery_d timestamptz, ol_o_id integer NOT NULL, ol_w_id integer NOT NULL,
    ol_i_id integer NOT NULL, ol_supply_w_id integer NOT NULL, ol_d_id smallint NOT NULL,
    ol_number smallint NOT NULL, ol_quantity smallint NOT NULL, ol_amount numeric(6,2),
    ol_dist_info char(24));

-- (data loaded here)
-- HammerDB's primary keys (declared inline in its CREATE TABLE) and its two secondary indexes,
-- all built after the data. One statement per line: `build` runs them over several connections,
-- biggest first.
ALTER TABLE stock ADD CONSTRAINT stock_i1 PRIMARY KEY (s_i_id, s_w_id);
ALTER TABLE order_line ADD CONSTRAINT order_line_i1 PRIMARY KEY (ol_w_id, ol_d_id, ol_o_id, ol_number);
ALTER TABLE customer ADD CONSTRAINT customer_i1 PRIMARY KEY (c_w_id, c_d_id, c_id);
ALTER TABLE orders ADD CONSTRAINT orders_i1 PRIMARY KEY (o_w_id, o_d_id, o_id);
ALTER TABLE new_order ADD CONSTRAINT new_order_i1 PRIMARY KEY (no_w_id, no_d_id, no_o_id);
ALTER TABLE item ADD CONSTRAINT item_i1 PRIMARY KEY (i_id);
ALTER TABLE district ADD CONSTRAINT district_i1 PRIMARY KEY (d_w_id, d_id);
ALTER TABLE warehouse ADD CONSTRAINT warehouse_i1 PRIMARY KEY (w_id);
CREATE UNIQUE INDEX customer_i2 ON customer (c_w_id, c_d_id, c_last, c_first, c_id);
CREATE UNIQUE INDEX orders_i2 ON orders (o_w_id, o_d_id, o_c_id, o_id);

-- The five TPROC-C transactions as PL/pgSQL functions, one autocommit call each, as HammerDB
-- runs them with pg_storedprocs=false. `p_spec` selects the profile:
--   false (hammerdb): HammerDB's update column set, exactly ol_delivery_d, o_carrier_id,
--          s_quantity, c_balance, c_data, d_ytd, d_next_o_id, w_ytd; amounts with tax and
--          discount per line; uniform item ids. Its two defects are fixed: a by-name lookup
--          really finds the customer (HammerDB's prepared statement quotes the parameter and
--          matches nobody), and the 1 % invalid-item New-Order really rolls back (HammerDB's
--          commits with a NULL line).
--   true (spec): the full TPC-C updates (also s_ytd, s_order_cnt, s_remote_cnt,
--          c_ytd_payment, c_payment_cnt, c_delivery_cnt), NURand item ids, OL_AMOUNT =
--          qty x price.
-- Stock rows are updated in item order, so concurrent New-Orders cannot deadlock on stock.

CREATE OR REPLACE FUNCTION nurand(a integer, x integer, y integer, c integer) RETURNS integer AS $$
    SELECT (((floor(random() * (a + 1))::int | (x + floor(random() * (y - x + 1))::int)) + c)
            % (y - x + 1)) + x
$$ LANGUAGE sql VOLATILE;

CREATE OR REPLACE FUNCTION neword(no_w_id integer, no_max_w_id integer, no_d_id integer,
                                  no_c_id integer, no_o_ol_cnt integer, p_spec boolean)
RETURNS numeric AS $$
DECLARE
    v_discount numeric; v_credit char(2); v_w_tax numeric; v_d_tax numeric; v_o_id integer;
    v_all_local smallint := 1; v_items integer[]; v_supply integer[]; v_qty integer[];
    v_price numeric; v_dist char(24); v_amount numeric; v_total numeric := 0; i integer;
BEGIN
    SELECT c_discount, c_credit, w_tax INTO v_discount, v_credit, v_w_tax
      FROM customer, warehouse
     WHERE w_id = no_w_id AND c_w_id = no_w_id AND c_d_id = no_d_id AND c_id = no_c_id;
    SELECT array_agg(it ORDER BY it) INTO v_items FROM (
        SELECT CASE WHEN p_spec THEN nurand(8191, 1, 100000, 259)
                    ELSE 1 + floor(random() * 100000)::int END AS it
          FROM generate_series(1, no_o_ol_cnt)) g;
    FOR i IN 1..no_o_ol_cnt LOOP
        v_qty[i] := 1 + floor(random() * 10)::int;
        v_supply[i] := no_w_id;
        IF no_max_w_id > 1 AND random() < 0.01 THEN
            v_all_local := 0;
            IF p_spec THEN
                -- A warehouse other than home.
                v_supply[i] := 1 + ((no_w_id + floor(random() * (no_max_w_id - 1))::int) % no_max_w_id);
            ELSE
                -- HammerDB's formula (it may pick home, but marks the order remote).
                v_supply[i] := 1 + ((no_w_id + floor(random() * no_max_w_id)::int) % no_max_w_id);
            END IF;
        END IF;
    END LOOP;
    -- 1 % of New-Orders name an item that does not exist, on their last line: rolled back below.
    IF floor(random() * 100) = 0 THEN
        v_items[no_o_ol_cnt] := 100001;
    END IF;
    UPDATE district SET d_next_o_id = d_next_o_id + 1
     WHERE d_w_id = no_w_id AND d_id = no_d_id
    RETURNING d_next_o_id - 1, d_tax INTO v_o_id, v_d_tax;
    INSERT INTO orders (o_id, o_d_id, o_w_id, o_c_id, o_entry_d, o_ol_cnt, o_all_local)
    VALUES (v_o_id, no_d_id, no_w_id, no_c_id, current_timestamp, no_o_ol_cnt, v_all_local);
    INSERT INTO new_order (no_o_id, no_d_id, no_w_id) VALUES (v_o_id, no_d_id, no_w_id);
    FOR i IN 1..no_o_ol_cnt LOOP
        SELECT i_price INTO v_price FROM item WHERE i_id = v_items[i];
        IF NOT FOUND THEN
            RAISE EXCEPTION 'item % not found: new order rolled back', v_items[i]
                USING ERRCODE = 'no_data_found';
        END IF;
        IF p_spec THEN
            UPDATE stock SET s_quantity = CASE WHEN s_quantity >= v_qty[i] + 10
                                               THEN s_quantity - v_qty[i]
                                               ELSE s_quantity - v_qty[i] + 91 END,
                             s_ytd = s_ytd + v_qty[i],
                             s_order_cnt = s_order_cnt + 1,
                             s_remote_cnt = s_remote_cnt + (v_supply[i] <> no_w_id)::int
             WHERE s_i_id = v_items[i] AND s_w_id = v_supply[i]
            RETURNING CASE no_d_id WHEN 1 THEN s_dist_01 WHEN 2 THEN s_dist_02 WHEN 3 THEN s_dist_03
                      WHEN 4 THEN s_dist_04 WHEN 5 THEN s_dist_05 WHEN 6 THEN s_dist_06
                      WHEN 7 THEN s_dist_07 WHEN 8 THEN s_dist_08 WHEN 9 THEN s_dist_09
                      ELSE s_dist_10 END INTO v_dist;
            v_amount := v_qty[i] * v_price;
        ELSE
            UPDATE stock SET s_quantity = CASE WHEN s_quantity >= v_qty[i] + 10
                                               THEN s_quantity - v_qty[i]
                                               ELSE s_quantity - v_qty[i] + 91 END
             WHERE s_i_id = v_items[i] AND s_w_id = v_supply[i]
            RETURNING CASE no_d_id WHEN 1 THEN s_dist_01 WHEN 2 THEN s_dist_02 WHEN 3 THEN s_dist_03
                      WHEN 4 THEN s_dist_04 WHEN 5 THEN s_dist_05 WHEN 6 THEN s_dist_06
                      WHEN 7 THEN s_dist_07 WHEN 8 THEN s_dist_08 WHEN 9 THEN s_dist_09
                      ELSE s_dist_10 END INTO v_dist;
            v_amount := v_qty[i] * v_price * (1 + v_w_tax + v_d_tax) * (1 - v_discount);
        END IF;
        INSERT INTO order_line (ol_o_id, ol_d_id, ol_w_id, ol_number, ol_i_id, ol_supply_w_id,
                                ol_quantity, ol_amount, ol_dist_info)
        VALUES (v_o_id, no_d_id, no_w_id, i, v_items[i], v_supply[i], v_qty[i], v_amount, v_dist);
        v_total := v_total + v_amount;
    END LOOP;
    IF p_spec THEN
        RETURN v_total * (1 - v_discount) * (1 + v_w_tax + v_d_tax);
    END IF;
    RETURN v_total;
END $$ LANGUAGE plpgsql;

-- The customer chosen by last name: the one at position ceil(n/2) in c_first order (TPC-C).
CREATE OR REPLACE FUNCTION customer_by_name(p_w_id integer, p_d_id integer, p_last text)
RETURNS integer AS $$
DECLARE
    v_ids integer[];
BEGIN
    SELECT array_agg(c_id ORDER BY c_first) INTO v_ids FROM customer
     WHERE c_w_id = p_w_id AND c_d_id = p_d_id AND c_last = p_last;
    IF v_ids IS NULL THEN
        RAISE EXCEPTION 'no customer named % in district %/%', p_last, p_w_id, p_d_id
            USING ERRCODE = 'no_data_found';
    END IF;
    RETURN v_ids[(cardinality(v_ids) + 1) / 2];
END $$ LANGUAGE plpgsql STABLE;

CREATE OR REPLACE FUNCTION payment(p_w_id integer, p_d_id integer, p_c_w_id integer,
                                   p_c_d_id integer, p_c_id integer, p_byname boolean,
                                   p_h_amount numeric, p_c_last text, p_spec boolean)
RETURNS integer AS $$
DECLARE
    v_w_name varchar; v_d_name varchar; v_c_id integer := p_c_id; v_credit char(2);
BEGIN
    UPDATE warehouse SET w_ytd = w_ytd + p_h_amount WHERE w_id = p_w_id RETURNING w_name INTO v_w_name;
    UPDATE district SET d_ytd = d_ytd + p_h_amount
     WHERE d_w_id = p_w_id AND d_id = p_d_id RETURNING d_name INTO v_d_name;
    IF p_byname THEN
        v_c_id := customer_by_name(p_c_w_id, p_c_d_id, p_c_last);
    END IF;
    SELECT c_credit INTO v_credit FROM customer
     WHERE c_w_id = p_c_w_id AND c_d_id = p_c_d_id AND c_id = v_c_id;
    IF p_spec THEN
        UPDATE customer SET c_balance = c_balance - p_h_amount,
                            c_ytd_payment = c_ytd_payment + p_h_amount,
                            c_payment_cnt = c_payment_cnt + 1,
                            c_data = CASE WHEN v_credit = 'BC' THEN left(
                                format('%s %s %s %s %s %s | ', v_c_id, p_c_d_id, p_c_w_id, p_d_id,
                                       p_w_id, to_char(p_h_amount, '9999.99')) || c_data, 500)
                                     ELSE c_data END
         WHERE c_w_id = p_c_w_id AND c_d_id = p_c_d_id AND c_id = v_c_id;
        INSERT INTO history (h_c_d_id, h_c_w_id, h_c_id, h_d_id, h_w_id, h_date, h_amount, h_data)
        VALUES (p_c_d_id, p_c_w_id, v_c_id, p_d_id, p_w_id, current_timestamp, p_h_amount,
                v_w_name || '    ' || v_d_name);
    ELSE
        IF v_credit = 'BC' THEN
            UPDATE customer SET c_balance = c_balance - p_h_amount,
                                c_data = left(format('%s %s %s %s %s %s | ', v_c_id, p_c_d_id,
                                    p_c_w_id, p_d_id, p_w_id, to_char(p_h_amount, '9999.99')) || c_data, 500)
             WHERE c_w_id = p_c_w_id AND c_d_id = p_c_d_id AND c_id = v_c_id;
        ELSE
            UPDATE customer SET c_balance = c_balance - p_h_amount
             WHERE c_w_id = p_c_w_id AND c_d_id = p_c_d_id AND c_id = v_c_id;
        END IF;
        INSERT INTO history (h_c_d_id, h_c_w_id, h_c_id, h_d_id, h_w_id, h_date, h_amount, h_data)
        VALUES (p_c_d_id, p_c_w_id, v_c_id, p_d_id, p_w_id, current_timestamp, p_h_amount,
                v_w_name || ' ' || v_d_name);
    END IF;
    RETURN v_c_id;
END $$ LANGUAGE plpgsql;

CREATE OR REPLACE FUNCTION ostat(os_w_id integer, os_d_id integer, os_c_id integer,
                                 byname boolean, os_c_last text)
RETURNS integer AS $$
DECLARE
    v_c_id integer := os_c_id; v_balance numeric; v_o_id integer; v_lines integer;
BEGIN
    IF byname THEN
        v_c_id := customer_by_name(os_w_id, os_d_id, os_c_last);
    END IF;
    SELECT c_balance INTO v_balance FROM customer
     WHERE c_w_id = os_w_id AND c_d_id = os_d_id AND c_id = v_c_id;
    SELECT o_id INTO v_o_id FROM orders
     WHERE o_w_id = os_w_id AND o_d_id = os_d_id AND o_c_id = v_c_id ORDER BY o_id DESC LIMIT 1;
    SELECT count(*) INTO v_lines FROM (
        SELECT ol_i_id, ol_supply_w_id, ol_quantity, ol_amount, ol_delivery_d FROM order_line
         WHERE ol_w_id = os_w_id AND ol_d_id = os_d_id AND ol_o_id = v_o_id) l;
    RETURN v_lines;
END $$ LANGUAGE plpgsql STABLE;

CREATE OR REPLACE FUNCTION delivery(d_w_id integer, d_o_carrier_id integer, p_spec boolean)
RETURNS integer AS $$
DECLARE
    v_d integer; v_o_id integer; v_c_id integer; v_sum numeric; v_done integer := 0;
BEGIN
    FOR v_d IN 1..10 LOOP
        DELETE FROM new_order
         WHERE no_w_id = d_w_id AND no_d_id = v_d
           AND no_o_id = (SELECT min(no_o_id) FROM new_order WHERE no_w_id = d_w_id AND no_d_id = v_d)
        RETURNING no_o_id INTO v_o_id;
        CONTINUE WHEN NOT FOUND;
        UPDATE orders SET o_carrier_id = d_o_carrier_id
         WHERE o_w_id = d_w_id AND o_d_id = v_d AND o_id = v_o_id RETURNING o_c_id INTO v_c_id;
        UPDATE order_line SET ol_delivery_d = current_timestamp
         WHERE ol_w_id = d_w_id AND ol_d_id = v_d AND ol_o_id = v_o_id;
        SELECT sum(ol_amount) INTO v_sum FROM order_line
         WHERE ol_w_id = d_w_id AND ol_d_id = v_d AND ol_o_id = v_o_id;
        IF p_spec THEN
            UPDATE customer SET c_balance = c_balance + coalesce(v_sum, 0),
                                c_delivery_cnt = c_delivery_cnt + 1
             WHERE c_w_id = d_w_id AND c_d_id = v_d AND c_id = v_c_id;
        ELSE
            UPDATE customer SET c_balance = c_balance + coalesce(v_sum, 0)
             WHERE c_w_id = d_w_id AND c_d_id = v_d AND c_id = v_c_id;
        END IF;
        v_done := v_done + 1;
    END LOOP;
    RETURN v_done;
END $$ LANGUAGE plpgsql;

CREATE OR REPLACE FUNCTION slev(st_w_id integer, st_d_id integer, threshold integer)
RETURNS integer AS $$
    SELECT count(DISTINCT s_i_id)::int
      FROM order_line, stock, district
     WHERE ol_w_id = st_w_id AND ol_d_id = st_d_id
       AND d_w_id = st_w_id AND d_id = st_d_id
       AND ol_o_id < d_next_o_id AND ol_o_id >= d_next_o_id - 20
       AND s_w_id = st_w_id AND s_i_id = ol_i_id AND s_quantity < threshold
$$ LANGUAGE sql STABLE;

-- Lastname(n) of TPC-C, for scripts that cannot build names client-side (pgbench benchmarks).
CREATE OR REPLACE FUNCTION tpcc_lastname(n integer) RETURNS text AS $$
    SELECT (ARRAY['BAR','OUGHT','ABLE','PRI','PRES','ESE','ANTI','CALLY','ATION','EING'])[n / 100 + 1]
        || (ARRAY['BAR','OUGHT','ABLE','PRI','PRES','ESE','ANTI','CALLY','ATION','EING'])[(n / 10) % 10 + 1]
        || (ARRAY['BAR','OUGHT','ABLE','PRI','PRES','ESE','ANTI','CALLY','ATION','EING'])[n % 10 + 1]
$$ LANGUAGE sql IMMUTABLE;
