//! The TPROC-C loader: HammerDB's row counts and generation rules (or the TPC-C spec's, for the
//! `spec` profile), streamed with COPY over several connections at once. Item is loaded once;
//! every warehouse is three tasks (stock; customer + history; orders + new_order + order_line)
//! plus its warehouse and district rows, handed to a pool of loader threads.

use std::collections::{HashMap, HashSet};
use std::fmt::Write as _;
use std::io::Write as _;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::Instant;

use indicatif::{MultiProgress, ProgressBar, ProgressDrawTarget, ProgressStyle};

use anyhow::{bail, Context, Result};

use super::rng::{lastname, Rng};
use super::Profile;
use crate::server::Server;

pub(crate) const ITEMS: i64 = 100_000;
pub(crate) const DISTRICTS: i64 = 10;
pub(crate) const CUSTOMERS: i64 = 3_000;
pub(crate) const ORDERS: i64 = 3_000;
/// Orders from this id on are undelivered at load (new_order rows, NULL carrier).
pub(crate) const FIRST_UNDELIVERED: i64 = 2_101;
/// C for C_LAST's NURand at load time (HammerDB uses 123 at load and at run time).
pub(crate) const C_LAST_LOAD: i64 = 123;

#[derive(Debug, Clone, Copy)]
enum Task {
    Item,
    WarehouseDistrict(i64),
    Stock(i64),
    Customer(i64),
    Orders(i64),
}

impl Task {
    /// The tables a task writes.
    fn tables(self) -> &'static [&'static str] {
        match self {
            Task::Item => &["item"],
            Task::WarehouseDistrict(_) => &["warehouse", "district"],
            Task::Stock(_) => &["stock"],
            Task::Customer(_) => &["customer", "history"],
            Task::Orders(_) => &["orders", "new_order", "order_line"],
        }
    }
}

/// Rows each table gets per warehouse (item: in total); order_line's is the expected value.
fn rows_per_warehouse(table: &str) -> i64 {
    match table {
        "item" => ITEMS,
        "warehouse" => 1,
        "district" => DISTRICTS,
        "stock" => ITEMS,
        "customer" | "history" | "orders" => DISTRICTS * CUSTOMERS,
        "new_order" => DISTRICTS * (ORDERS - FIRST_UNDELIVERED + 1),
        _ => DISTRICTS * ORDERS * 10,
    }
}

/// One progress bar per table (rows written so far), and how many of its tasks are left. Where
/// stderr is not a terminal the bars are hidden and a line is printed as each table completes.
struct Progress {
    bars: HashMap<&'static str, (ProgressBar, AtomicUsize, Instant)>,
}

impl Progress {
    fn new(tasks: &[Task], warehouses: i64) -> Progress {
        let multi = MultiProgress::with_draw_target(ProgressDrawTarget::stderr_with_hz(4));
        let style = ProgressStyle::with_template(
            "  {prefix:>10} [{bar:30}] {human_pos:>10}/{human_len:10} rows  {per_sec:>14}  {elapsed}",
        )
        .expect("a valid template")
        .progress_chars("=> ");
        let mut bars = HashMap::new();
        for task in tasks {
            for table in task.tables() {
                let e = bars.entry(*table).or_insert_with(|| {
                    let n = if *table == "item" { 1 } else { warehouses };
                    let bar = multi.add(ProgressBar::new((rows_per_warehouse(table) * n) as u64));
                    bar.set_style(style.clone());
                    bar.set_prefix(*table);
                    (bar, AtomicUsize::new(0), Instant::now())
                });
                e.1.fetch_add(1, Ordering::SeqCst);
            }
        }
        Progress { bars }
    }

    fn bar(&self, table: &str) -> &ProgressBar {
        &self.bars[table].0
    }

    fn task_done(&self, task: Task) {
        for table in task.tables() {
            let (bar, left, t0) = &self.bars[table];
            if left.fetch_sub(1, Ordering::SeqCst) == 1 {
                bar.set_length(bar.position());
                bar.finish();
                if bar.is_hidden() {
                    eprintln!(
                        "  loaded {table:<10} {:>10} rows in {:.1} s",
                        bar.position(),
                        t0.elapsed().as_secs_f64()
                    );
                }
            }
        }
    }
}

/// Runs `work` over `tasks` (in order) on `threads` connections to `db`; the first error stops
/// the others. Each thread has its own seeded generator.
fn pool<T: Send + std::fmt::Debug + Copy>(
    server: &Server,
    db: &str,
    threads: usize,
    tasks: Vec<T>,
    work: impl Fn(&mut postgres::Client, &mut Rng, T) -> Result<()> + Sync,
) -> Result<()> {
    let queue = Mutex::new(tasks.into_iter().rev().collect::<Vec<_>>());
    let failed = AtomicBool::new(false);
    let clients = (0..threads.max(1))
        .map(|_| server.connect(db))
        .collect::<Result<Vec<_>>>()?;
    let results: Vec<Result<()>> = std::thread::scope(|s| {
        let handles: Vec<_> = clients
            .into_iter()
            .enumerate()
            .map(|(t, mut client)| {
                let (queue, failed, work) = (&queue, &failed, &work);
                s.spawn(move || -> Result<()> {
                    client.batch_execute(
                        "SET synchronous_commit = off; SET maintenance_work_mem = '256MB'",
                    )?;
                    let mut rng = Rng::from_time(t as u64 + 1);
                    loop {
                        if failed.load(Ordering::SeqCst) || crate::interrupt::interrupted() {
                            return Ok(());
                        }
                        let Some(task) = queue.lock().unwrap().pop() else {
                            return Ok(());
                        };
                        if let Err(e) = work(&mut client, &mut rng, task) {
                            failed.store(true, Ordering::SeqCst);
                            return Err(e.context(format!("loading {task:?}")));
                        }
                    }
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| {
                h.join()
                    .unwrap_or_else(|_| Err(anyhow::anyhow!("a loader thread panicked")))
            })
            .collect()
    });
    results.into_iter().collect::<Result<Vec<()>>>()?;
    if crate::interrupt::interrupted() {
        bail!("the load was interrupted");
    }
    Ok(())
}

/// Loads `warehouses` warehouses into `db` with `threads` connections, then builds the primary
/// keys and secondary indexes (`indexes`, one statement per line, biggest first) and runs ANALYZE,
/// table by table over the same number of connections.
pub(crate) fn load(
    server: &Server,
    db: &str,
    warehouses: i64,
    profile: Profile,
    threads: usize,
    indexes: &str,
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
    let now = chrono::Utc::now()
        .format("%Y-%m-%d %H:%M:%S%.6f+00")
        .to_string();
    let started = Instant::now();
    let progress = Progress::new(&tasks, warehouses);
    pool(server, db, threads, tasks, |c, rng, task| {
        run_task(c, rng, task, profile, &now, &progress)?;
        progress.task_done(task);
        Ok(())
    })?;
    let loaded = started.elapsed().as_secs_f64();
    let t = Instant::now();
    let statements: Vec<String> = indexes
        .lines()
        .filter(|l| !l.trim().is_empty() && !l.starts_with("--"))
        .map(str::to_string)
        .collect();
    let n = statements.len();
    pool(server, db, threads, (0..n).collect(), |c, _, i| {
        c.batch_execute(&statements[i])
            .with_context(|| format!("running {}", statements[i]))
    })?;
    let indexed = t.elapsed().as_secs_f64();
    let t = Instant::now();
    let tables = [
        "order_line",
        "stock",
        "customer",
        "history",
        "orders",
        "new_order",
        "item",
        "district",
        "warehouse",
    ];
    pool(
        server,
        db,
        threads,
        (0..tables.len()).collect(),
        |c, _, i| Ok(c.batch_execute(&format!("ANALYZE {}", tables[i]))?),
    )?;
    eprintln!(
        "  loaded {warehouses} warehouse(s) in {loaded:.1} s; {n} keys and indexes in {indexed:.1} s; ANALYZE in {:.1} s",
        t.elapsed().as_secs_f64()
    );
    Ok(())
}

/// Streams rows produced by `fill` into `COPY table FROM STDIN`, in chunks, advancing `bar`.
fn copy(
    client: &mut postgres::Transaction<'_>,
    table: &str,
    rows: i64,
    bar: &ProgressBar,
    mut fill: impl FnMut(i64, &mut String),
) -> Result<()> {
    let mut w = client
        .copy_in(&format!("COPY {table} FROM STDIN"))
        .with_context(|| format!("starting COPY into {table}"))?;
    let mut buf = String::with_capacity(1 << 20);
    let mut pending = 0;
    for i in 0..rows {
        fill(i, &mut buf);
        pending += 1;
        if buf.len() > (1 << 20) - 4096 {
            w.write_all(buf.as_bytes())?;
            buf.clear();
            bar.inc(pending);
            pending = 0;
        }
    }
    w.write_all(buf.as_bytes())?;
    w.finish()
        .with_context(|| format!("finishing COPY into {table}"))?;
    bar.inc(pending);
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

/// One task of the load, in one transaction.
fn run_task(
    c: &mut postgres::Client,
    rng: &mut Rng,
    task: Task,
    profile: Profile,
    now: &str,
    progress: &Progress,
) -> Result<()> {
    let mut tx = c.transaction()?;
    let mut g = Gen {
        rng,
        profile,
        now,
        progress,
    };
    match task {
        Task::Item => g.item(&mut tx)?,
        Task::WarehouseDistrict(w) => g.warehouse_district(&mut tx, w)?,
        Task::Stock(w) => g.stock(&mut tx, w)?,
        Task::Customer(w) => g.customers(&mut tx, w)?,
        Task::Orders(w) => g.orders(&mut tx, w)?,
    }
    tx.commit()?;
    Ok(())
}

/// What every table's generator uses: the task's random stream, the profile, the load's time
/// stamp and the progress bars.
struct Gen<'a> {
    rng: &'a mut Rng,
    profile: Profile,
    now: &'a str,
    progress: &'a Progress,
}

impl Gen<'_> {
    /// The item table (shared by every warehouse).
    fn item(&mut self, tx: &mut postgres::Transaction<'_>) -> Result<()> {
        let marked = marked_set(self.rng, ITEMS, self.profile);
        copy(
            tx,
            "item (i_id, i_im_id, i_name, i_price, i_data)",
            ITEMS,
            self.progress.bar("item"),
            |i, b| {
                let id = i + 1;
                let _ = write!(b, "{id}\t{}\t", self.rng.range(1, 10_000));
                self.rng.alnum(14, 24, b);
                b.push('\t');
                cents(self.rng, 100, 10_000, b);
                b.push('\t');
                data_with_original(self.rng, marked.contains(&id), self.profile, b);
                b.push('\n');
            },
        )?;
        Ok(())
    }

    /// Warehouse `w` and its districts.
    fn warehouse_district(&mut self, tx: &mut postgres::Transaction<'_>, w: i64) -> Result<()> {
        copy(
            tx,
            "warehouse (w_id, w_name, w_street_1, w_street_2, w_city, w_state, w_zip, w_tax, w_ytd)",
            1,
            self.progress.bar("warehouse"),
            |_, b| {
                let _ = write!(b, "{w}\t");
                self.rng.alnum(6, 10, b);
                b.push('\t');
                address(self.rng, b);
                b.push('\t');
                rate(self.rng, 10, 20, self.profile, b);
                b.push_str("\t300000.00\n");
            },
        )?;
        copy(tx, "district (d_id, d_w_id, d_name, d_street_1, d_street_2, d_city, d_state, d_zip, d_tax, d_ytd, d_next_o_id)", DISTRICTS, self.progress.bar("district"), |i, b| {
            let _ = write!(b, "{}\t{w}\t", i + 1);
            self.rng.alnum(6, 10, b);
            b.push('\t');
            address(self.rng, b);
            b.push('\t');
            rate(self.rng, 10, 20, self.profile, b);
            let _ = writeln!(b, "\t30000.00\t{}", ORDERS + 1);
        })?;
        Ok(())
    }

    /// Warehouse `w`'s stock.
    fn stock(&mut self, tx: &mut postgres::Transaction<'_>, w: i64) -> Result<()> {
        let marked = marked_set(self.rng, ITEMS, self.profile);
        copy(tx, "stock (s_i_id, s_w_id, s_quantity, s_dist_01, s_dist_02, s_dist_03, s_dist_04, s_dist_05, s_dist_06, s_dist_07, s_dist_08, s_dist_09, s_dist_10, s_data, s_ytd, s_order_cnt, s_remote_cnt)", ITEMS, self.progress.bar("stock"), |i, b| {
            let id = i + 1;
            let _ = write!(b, "{id}\t{w}\t{}\t", self.rng.range(10, 100));
            for _ in 0..10 {
                self.rng.alnum(24, 24, b);
                b.push('\t');
            }
            data_with_original(self.rng, marked.contains(&id), self.profile, b);
            b.push_str("\t0\t0\t0\n");
        })?;
        Ok(())
    }

    /// Warehouse `w`'s customers and their history rows, district by district.
    fn customers(&mut self, tx: &mut postgres::Transaction<'_>, w: i64) -> Result<()> {
        let now = self.now;
        let bc_pct = if self.profile == Profile::Spec {
            10
        } else {
            50
        };
        for d in 1..=DISTRICTS {
            copy(tx, "customer (c_id, c_d_id, c_w_id, c_first, c_middle, c_last, c_street_1, c_street_2, c_city, c_state, c_zip, c_phone, c_since, c_credit, c_credit_lim, c_discount, c_balance, c_ytd_payment, c_payment_cnt, c_delivery_cnt, c_data)", CUSTOMERS, self.progress.bar("customer"), |i, b| {
                let id = i + 1;
                let last = if id <= 1000 { lastname(id - 1) } else { lastname(self.rng.nurand(255, 0, 999, C_LAST_LOAD)) };
                let _ = write!(b, "{id}\t{d}\t{w}\t");
                self.rng.alnum(8, 16, b);
                let _ = write!(b, "\tOE\t{last}\t");
                address(self.rng, b);
                b.push('\t');
                self.rng.phone(b);
                let credit = if self.rng.percent(bc_pct) { "BC" } else { "GC" };
                let _ = write!(b, "\t{now}\t{credit}\t50000.00\t");
                rate(self.rng, 0, 50, self.profile, b);
                b.push_str("\t-10.00\t10.00\t1\t0\t");
                self.rng.alnum(300, 500, b);
                b.push('\n');
            })?;
            copy(
                tx,
                "history (h_c_id, h_c_d_id, h_c_w_id, h_d_id, h_w_id, h_date, h_amount, h_data)",
                CUSTOMERS,
                self.progress.bar("history"),
                |i, b| {
                    let _ = write!(b, "{}\t{d}\t{w}\t{d}\t{w}\t{now}\t10.00\t", i + 1);
                    self.rng.alnum(12, 24, b);
                    b.push('\n');
                },
            )?;
        }
        Ok(())
    }

    /// Warehouse `w`'s orders, new orders and order lines, district by district.
    fn orders(&mut self, tx: &mut postgres::Transaction<'_>, w: i64) -> Result<()> {
        let now = self.now;
        for d in 1..=DISTRICTS {
            // Customer of each order: the spec's permutation, or HammerDB's quirk (its
            // shuffle assigns to the wrong variable, so o_c_id is uniform in o_id..3000).
            let mut cust: Vec<i64> = (1..=ORDERS).collect();
            if self.profile == Profile::Spec {
                for i in (1..cust.len()).rev() {
                    let j = self.rng.range(0, i as i64) as usize;
                    cust.swap(i, j);
                }
            } else {
                for (i, c) in cust.iter_mut().enumerate() {
                    *c = self.rng.range(i as i64 + 1, ORDERS);
                }
            }
            let counts: Vec<i64> = (0..ORDERS).map(|_| self.rng.range(5, 15)).collect();
            copy(
                tx,
                "orders (o_id, o_c_id, o_d_id, o_w_id, o_entry_d, o_carrier_id, o_ol_cnt, o_all_local)",
                ORDERS,
                self.progress.bar("orders"),
                |i, b| {
                    let id = i + 1;
                    let carrier = if id < FIRST_UNDELIVERED {
                        self.rng.range(1, 10).to_string()
                    } else {
                        "\\N".into()
                    };
                    let _ = writeln!(
                        b,
                        "{id}\t{}\t{d}\t{w}\t{now}\t{carrier}\t{}\t1",
                        cust[i as usize], counts[i as usize]
                    );
                },
            )?;
            copy(
                tx,
                "new_order (no_o_id, no_d_id, no_w_id)",
                ORDERS - FIRST_UNDELIVERED + 1,
                self.progress.bar("new_order"),
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
            copy(tx, "order_line (ol_o_id, ol_d_id, ol_w_id, ol_number, ol_i_id, ol_supply_w_id, ol_quantity, ol_amount, ol_dist_info, ol_delivery_d)", lines.len() as i64, self.progress.bar("order_line"), |i, b| {
                let (o, n) = lines[i as usize];
                let _ = write!(b, "{o}\t{d}\t{w}\t{n}\t{}\t{w}\t5\t", self.rng.range(1, ITEMS));
                let delivered = o < FIRST_UNDELIVERED;
                match (self.profile, delivered) {
                    // HammerDB: delivered lines carry an amount, undelivered ones 0.
                    (Profile::Hammerdb, true) => cents(self.rng, 10, 10_000, b),
                    (Profile::Hammerdb, false) => b.push_str("0.00"),
                    // The spec: the reverse.
                    (Profile::Spec, true) => b.push_str("0.00"),
                    (Profile::Spec, false) => cents(self.rng, 1, 999_999, b),
                }
                b.push('\t');
                self.rng.alnum(24, 24, b);
                if delivered {
                    let _ = writeln!(b, "\t{now}");
                } else {
                    b.push_str("\t\\N\n");
                }
            })?;
        }
        Ok(())
    }
}
