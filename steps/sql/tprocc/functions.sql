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
