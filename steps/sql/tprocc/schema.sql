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
