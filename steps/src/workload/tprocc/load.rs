//! The TPROC-C loader: HammerDB's row counts and generation rules (or the TPC-C spec's, for the
//! `spec` profile), streamed with COPY over several connections at once. Item is loaded once;
//! every warehouse is three tasks (stock; customer + history; orders + new_order + order_line)
//! plus its warehouse and district rows, handed to a pool of loader threads.

use std::collections::HashSet;
use std::fmt::Write as _;
use std::io::Write as _;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use anyhow::{bail, Context, Result};

use super::rng::{lastname, Rng};
use super::Profile;
use crate::server::Server;

pub const ITEMS: i64 = 100_000;
pub const DISTRICTS: i64 = 10;
pub const CUSTOMERS: i64 = 3_000;
pub const ORDERS: i64 = 3_000;
/// Orders from this id on are undelivered at load (new_order rows, NULL carrier).
pub const FIRST_UNDELIVERED: i64 = 2_101;
/// C for C_LAST's NURand at load time (HammerDB uses 123 at load and at run time).
pub const C_LAST_LOAD: i64 = 123;

#[derive(Debug, Clone, Copy)]
enum Task {
    Item,
    WarehouseDistrict(i64),
    Stock(i64),
    Customer(i64),
    Orders(i64),
}

/// Loads `warehouses` warehouses into `db` with `threads` connections.
pub fn load(
    server: &Server,
    db: &str,
    warehouses: i64,
    profile: Profile,
    threads: usize,
) -> Result<()> {
    let mut tasks = vec![Task::Item];
    for w in 1..=warehouses {
        tasks.extend([
            Task::Stock(w),
            Task::Orders(w),
            Task::Customer(w),
            Task::WarehouseDistrict(w),
        ]);
    }
    let total = tasks.len();
    let queue = Arc::new(Mutex::new(tasks.into_iter().rev().collect::<Vec<_>>()));
    let failed = Arc::new(AtomicBool::new(false));
    let now = chrono::Utc::now()
        .format("%Y-%m-%d %H:%M:%S%.6f+00")
        .to_string();
    let started = Instant::now();
    let done = Arc::new(Mutex::new(0usize));
    let mut handles = vec![];
    for t in 0..threads.max(1) {
        let queue = queue.clone();
        let failed = failed.clone();
        let done = done.clone();
        let mut client = server.connect(db)?;
        let now = now.clone();
        handles.push(std::thread::spawn(move || -> Result<()> {
            client.batch_execute("SET synchronous_commit = off")?;
            let mut rng = Rng::from_time(t as u64 + 1);
            loop {
                if failed.load(Ordering::SeqCst) || crate::rundir::interrupted() {
                    return Ok(());
                }
                let Some(task) = queue.lock().unwrap().pop() else {
                    return Ok(());
                };
                let t0 = Instant::now();
                let r = run_task(&mut client, &mut rng, task, warehouses, profile, &now);
                if let Err(e) = r {
                    failed.store(true, Ordering::SeqCst);
                    return Err(e.context(format!("loading {task:?}")));
                }
                let mut d = done.lock().unwrap();
                *d += 1;
                eprintln!(
                    "  load {:>3}/{total}  {task:?} in {:.1} s",
                    *d,
                    t0.elapsed().as_secs_f64()
                );
            }
        }));
    }
    let mut first_err = None;
    for h in handles {
        match h.join() {
            Ok(Ok(())) => {}
            Ok(Err(e)) => first_err = first_err.or(Some(e)),
            Err(_) => first_err = first_err.or(Some(anyhow::anyhow!("a loader thread panicked"))),
        }
    }
    if let Some(e) = first_err {
        return Err(e);
    }
    if crate::rundir::interrupted() {
        bail!("the load was interrupted");
    }
    eprintln!(
        "  loaded {warehouses} warehouse(s) in {:.1} s",
        started.elapsed().as_secs_f64()
    );
    Ok(())
}

/// Streams rows produced by `fill` into `COPY table FROM STDIN`, in chunks.
fn copy(
    client: &mut postgres::Transaction<'_>,
    table: &str,
    rows: i64,
    mut fill: impl FnMut(i64, &mut String),
) -> Result<()> {
    let mut w = client
        .copy_in(&format!("COPY {table} FROM STDIN"))
        .with_context(|| format!("starting COPY into {table}"))?;
    let mut buf = String::with_capacity(1 << 20);
    for i in 0..rows {
        fill(i, &mut buf);
        if buf.len() > (1 << 20) - 4096 {
            w.write_all(buf.as_bytes())?;
            buf.clear();
        }
    }
    w.write_all(buf.as_bytes())?;
    w.finish()
        .with_context(|| format!("finishing COPY into {table}"))?;
    Ok(())
}

/// A 0.00..max price-like value with two decimals from RandomNumber(lo, hi)/100.
fn cents(rng: &mut Rng, lo: i64, hi: i64, out: &mut String) {
    let v = rng.range(lo, hi);
    let _ = write!(out, "{}.{:02}", v / 100, v % 100);
}

/// Data strings with "original" in about 10 % of rows: HammerDB marks rows drawn with
/// replacement and writes it lower-case; the spec marks exactly 10 % upper-case.
fn data_with_original(rng: &mut Rng, marked: bool, profile: Profile, out: &mut String) {
    let mut s = rng.alnum_string(26, 50);
    if marked {
        let word = if profile == Profile::Spec {
            "ORIGINAL"
        } else {
            "original"
        };
        let pos = rng.range(0, s.len() as i64 - 8) as usize;
        let end = (pos + 9).min(s.len());
        s.replace_range(pos..end, word);
    }
    out.push_str(&s);
}

fn marked_set(rng: &mut Rng, n: i64, profile: Profile) -> HashSet<i64> {
    let mut set = HashSet::new();
    if profile == Profile::Spec {
        while (set.len() as i64) < n / 10 {
            set.insert(rng.range(1, n));
        }
    } else {
        for _ in 0..n / 10 {
            set.insert(rng.range(0, n));
        }
    }
    set
}

fn address(rng: &mut Rng, out: &mut String) {
    for _ in 0..3 {
        rng.alnum(10, 20, out);
        out.push('\t');
    }
    rng.alnum(2, 2, out);
    out.push('\t');
    rng.zip(out);
}

/// A tax or discount: HammerDB 0.00..max in steps of 0.01; the spec four decimals.
fn rate(rng: &mut Rng, lo_pct: i64, hi_pct: i64, profile: Profile, out: &mut String) {
    if profile == Profile::Spec {
        let v = rng.range(lo_pct * 100, hi_pct * 100);
        let _ = write!(out, "0.{v:04}");
    } else {
        let v = rng.range(lo_pct, hi_pct);
        let _ = write!(out, "0.{v:02}");
    }
}

fn run_task(
    c: &mut postgres::Client,
    rng: &mut Rng,
    task: Task,
    _warehouses: i64,
    profile: Profile,
    now: &str,
) -> Result<()> {
    let mut tx = c.transaction()?;
    match task {
        Task::Item => {
            let marked = marked_set(rng, ITEMS, profile);
            copy(
                &mut tx,
                "item (i_id, i_im_id, i_name, i_price, i_data)",
                ITEMS,
                |i, b| {
                    let id = i + 1;
                    let _ = write!(b, "{id}\t{}\t", rng.range(1, 10_000));
                    rng.alnum(14, 24, b);
                    b.push('\t');
                    cents(rng, 100, 10_000, b);
                    b.push('\t');
                    data_with_original(rng, marked.contains(&id), profile, b);
                    b.push('\n');
                },
            )?;
        }
        Task::WarehouseDistrict(w) => {
            copy(&mut tx, "warehouse (w_id, w_name, w_street_1, w_street_2, w_city, w_state, w_zip, w_tax, w_ytd)", 1, |_, b| {
                let _ = write!(b, "{w}\t");
                rng.alnum(6, 10, b);
                b.push('\t');
                address(rng, b);
                b.push('\t');
                rate(rng, 10, 20, profile, b);
                b.push_str("\t300000.00\n");
            })?;
            copy(&mut tx, "district (d_id, d_w_id, d_name, d_street_1, d_street_2, d_city, d_state, d_zip, d_tax, d_ytd, d_next_o_id)", DISTRICTS, |i, b| {
                let _ = write!(b, "{}\t{w}\t", i + 1);
                rng.alnum(6, 10, b);
                b.push('\t');
                address(rng, b);
                b.push('\t');
                rate(rng, 10, 20, profile, b);
                let _ = writeln!(b, "\t30000.00\t{}", ORDERS + 1);
            })?;
        }
        Task::Stock(w) => {
            let marked = marked_set(rng, ITEMS, profile);
            copy(&mut tx, "stock (s_i_id, s_w_id, s_quantity, s_dist_01, s_dist_02, s_dist_03, s_dist_04, s_dist_05, s_dist_06, s_dist_07, s_dist_08, s_dist_09, s_dist_10, s_data, s_ytd, s_order_cnt, s_remote_cnt)", ITEMS, |i, b| {
                let id = i + 1;
                let _ = write!(b, "{id}\t{w}\t{}\t", rng.range(10, 100));
                for _ in 0..10 {
                    rng.alnum(24, 24, b);
                    b.push('\t');
                }
                data_with_original(rng, marked.contains(&id), profile, b);
                b.push_str("\t0\t0\t0\n");
            })?;
        }
        Task::Customer(w) => {
            let bc_pct = if profile == Profile::Spec { 10 } else { 50 };
            for d in 1..=DISTRICTS {
                copy(&mut tx, "customer (c_id, c_d_id, c_w_id, c_first, c_middle, c_last, c_street_1, c_street_2, c_city, c_state, c_zip, c_phone, c_since, c_credit, c_credit_lim, c_discount, c_balance, c_ytd_payment, c_payment_cnt, c_delivery_cnt, c_data)", CUSTOMERS, |i, b| {
                    let id = i + 1;
                    let last = if id <= 1000 { lastname(id - 1) } else { lastname(rng.nurand(255, 0, 999, C_LAST_LOAD)) };
                    let _ = write!(b, "{id}\t{d}\t{w}\t");
                    rng.alnum(8, 16, b);
                    let _ = write!(b, "\tOE\t{last}\t");
                    address(rng, b);
                    b.push('\t');
                    rng.phone(b);
                    let credit = if rng.percent(bc_pct) { "BC" } else { "GC" };
                    let _ = write!(b, "\t{now}\t{credit}\t50000.00\t");
                    rate(rng, 0, 50, profile, b);
                    b.push_str("\t-10.00\t10.00\t1\t0\t");
                    rng.alnum(300, 500, b);
                    b.push('\n');
                })?;
                copy(&mut tx, "history (h_c_id, h_c_d_id, h_c_w_id, h_d_id, h_w_id, h_date, h_amount, h_data)", CUSTOMERS, |i, b| {
                    let _ = write!(b, "{}\t{d}\t{w}\t{d}\t{w}\t{now}\t10.00\t", i + 1);
                    rng.alnum(12, 24, b);
                    b.push('\n');
                })?;
            }
        }
        Task::Orders(w) => {
            for d in 1..=DISTRICTS {
                // Customer of each order: the spec's permutation, or HammerDB's quirk (its
                // shuffle assigns to the wrong variable, so o_c_id is uniform in o_id..3000).
                let mut cust: Vec<i64> = (1..=ORDERS).collect();
                if profile == Profile::Spec {
                    for i in (1..cust.len()).rev() {
                        let j = rng.range(0, i as i64) as usize;
                        cust.swap(i, j);
                    }
                } else {
                    for (i, c) in cust.iter_mut().enumerate() {
                        *c = rng.range(i as i64 + 1, ORDERS);
                    }
                }
                let counts: Vec<i64> = (0..ORDERS).map(|_| rng.range(5, 15)).collect();
                copy(&mut tx, "orders (o_id, o_c_id, o_d_id, o_w_id, o_entry_d, o_carrier_id, o_ol_cnt, o_all_local)", ORDERS, |i, b| {
                    let id = i + 1;
                    let carrier = if id < FIRST_UNDELIVERED { rng.range(1, 10).to_string() } else { "\\N".into() };
                    let _ = writeln!(b, "{id}\t{}\t{d}\t{w}\t{now}\t{carrier}\t{}\t1", cust[i as usize], counts[i as usize]);
                })?;
                copy(
                    &mut tx,
                    "new_order (no_o_id, no_d_id, no_w_id)",
                    ORDERS - FIRST_UNDELIVERED + 1,
                    |i, b| {
                        let _ = writeln!(b, "{}\t{d}\t{w}", FIRST_UNDELIVERED + i);
                    },
                )?;
                let mut lines: Vec<(i64, i64)> = vec![];
                for (i, n) in counts.iter().enumerate() {
                    for k in 1..=*n {
                        lines.push((i as i64 + 1, k));
                    }
                }
                copy(&mut tx, "order_line (ol_o_id, ol_d_id, ol_w_id, ol_number, ol_i_id, ol_supply_w_id, ol_quantity, ol_amount, ol_dist_info, ol_delivery_d)", lines.len() as i64, |i, b| {
                    let (o, n) = lines[i as usize];
                    let _ = write!(b, "{o}\t{d}\t{w}\t{n}\t{}\t{w}\t5\t", rng.range(1, ITEMS));
                    let delivered = o < FIRST_UNDELIVERED;
                    match (profile, delivered) {
                        // HammerDB: delivered lines carry an amount, undelivered ones 0.
                        (Profile::Hammerdb, true) => cents(rng, 10, 10_000, b),
                        (Profile::Hammerdb, false) => b.push_str("0.00"),
                        // The spec: the reverse.
                        (Profile::Spec, true) => b.push_str("0.00"),
                        (Profile::Spec, false) => cents(rng, 1, 999_999, b),
                    }
                    b.push('\t');
                    rng.alnum(24, 24, b);
                    if delivered {
                        let _ = writeln!(b, "\t{now}");
                    } else {
                        b.push_str("\t\\N\n");
                    }
                })?;
            }
        }
    }
    tx.commit()?;
    Ok(())
}
