//! The TPROC-C driver: one thread and one connection per virtual user, the five transactions as
//! prepared calls in autocommit, no keying or think time. A monitor (the calling thread) takes
//! statistics snapshots every `snapshot_every_s` (tagged rampup, then measured) and computes
//! NOPM and TPM exactly as HammerDB does: Δsum(d_next_o_id) and Δsum(xact_commit +
//! xact_rollback) of pg_stat_database (the whole cluster) per minute over the measured window.
//! Client-side counts, errors and latency percentiles per transaction type go to samples.csv
//! every second (BenchBase's samples.csv, independent of the snapshot interval), to workload.csv
//! per snapshot interval and to workload.json in total: each second's counts are drained from
//! the VUs once, so the three add up exactly.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use hdrhistogram::Histogram;

pub(crate) use crate::stats::{hist_buckets, new_histogram};

use super::files::{TxnFigures, WaitEvents, WorkloadJson};
use super::rng::{lastname, Rng};
use super::{Profile, Shape};
use crate::interrupt::interrupted;
use crate::io::CsvAppender;
use crate::server::Server;
use crate::snapshot::{Phase, Sampler};

pub(crate) const TXNS: [&str; 5] = [
    "new_order",
    "payment",
    "order_status",
    "delivery",
    "stock_level",
];
pub(crate) const WORKLOAD_HEADER: &[&str] = &[
    "t_s",
    "phase",
    "txn",
    "count",
    "errors",
    "rollbacks",
    "p50_ms",
    "p90_ms",
    "p95_ms",
    "p99_ms",
    "max_ms",
];
/// How often samples.csv gets a row per transaction type.
const SAMPLE_EVERY: Duration = Duration::from_secs(1);
/// C of C_LAST's NURand at run time: HammerDB uses the load value; the spec needs a different one.
const C_LAST_RUN_SPEC: i64 = 223;
const C_ID_RUN_SPEC: i64 = 259;

#[derive(Clone)]
struct TxnStats {
    hist: Histogram<u64>,
    count: u64,
    errors: u64,
    rollbacks: u64,
}

impl TxnStats {
    fn new() -> TxnStats {
        TxnStats {
            hist: new_histogram(),
            count: 0,
            errors: 0,
            rollbacks: 0,
        }
    }
    fn add(&mut self, o: &TxnStats) {
        let _ = self.hist.add(&o.hist);
        self.count += o.count;
        self.errors += o.errors;
        self.rollbacks += o.rollbacks;
    }
    fn ms(&self, q: f64) -> f64 {
        if self.hist.is_empty() {
            return 0.0;
        }
        self.hist.value_at_quantile(q) as f64 / 1000.0
    }
    fn row(&self, t: f64, phase: Phase, txn: &str) -> Vec<String> {
        vec![
            format!("{t:.1}"),
            phase.as_str().into(),
            txn.into(),
            self.count.to_string(),
            self.errors.to_string(),
            self.rollbacks.to_string(),
            format!("{:.3}", self.ms(0.5)),
            format!("{:.3}", self.ms(0.9)),
            format!("{:.3}", self.ms(0.95)),
            format!("{:.3}", self.ms(0.99)),
            format!(
                "{:.3}",
                if self.hist.is_empty() {
                    0.0
                } else {
                    self.hist.max() as f64 / 1000.0
                }
            ),
        ]
    }
    fn figures(&self) -> TxnFigures {
        TxnFigures {
            count: self.count,
            errors: self.errors,
            rollbacks: self.rollbacks,
            p50_ms: self.ms(0.5),
            p90_ms: self.ms(0.9),
            p95_ms: self.ms(0.95),
            p99_ms: self.ms(0.99),
            max_ms: if self.hist.is_empty() {
                0.0
            } else {
                self.hist.max() as f64 / 1000.0
            },
            hist_us: hist_buckets(&self.hist),
        }
    }
}

type Stats = [TxnStats; 5];

fn new_stats() -> Stats {
    std::array::from_fn(|_| TxnStats::new())
}

/// What one virtual user needs to pick its inputs.
struct Vu {
    rng: Rng,
    profile: Profile,
    max_w: i32,
    /// Warehouses this VU draws from: its home one, or its list in all-warehouses mode.
    warehouses: Vec<i32>,
    stock_level_d: i32,
    neword: &'static str,
}

impl Vu {
    fn w(&mut self) -> i32 {
        let i = self.rng.range(0, self.warehouses.len() as i64 - 1) as usize;
        self.warehouses[i]
    }
    fn c_id(&mut self) -> i32 {
        match self.profile {
            Profile::Hammerdb => self.rng.range(1, 3000) as i32,
            Profile::Spec => self.rng.nurand(1023, 1, 3000, C_ID_RUN_SPEC) as i32,
        }
    }
    fn c_last(&mut self) -> String {
        let c = match self.profile {
            Profile::Hammerdb => super::load::C_LAST_LOAD,
            Profile::Spec => C_LAST_RUN_SPEC,
        };
        lastname(self.rng.nurand(255, 0, 999, c))
    }
    fn pick(&mut self) -> usize {
        match self.profile {
            // HammerDB: RandomNumber(1, 23): 10 New-Order, 10 Payment, 1 each of the others.
            Profile::Hammerdb => match self.rng.range(1, 23) {
                1..=10 => 0,
                11..=20 => 1,
                21 => 3,
                22 => 4,
                _ => 2,
            },
            Profile::Spec => match self.rng.range(1, 100) {
                1..=45 => 0,
                46..=88 => 1,
                89..=92 => 2,
                93..=96 => 3,
                _ => 4,
            },
        }
    }
}

/// CPU seconds this thread has used.
fn thread_cpu_seconds() -> f64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime writes into the timespec we own.
    unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    ts.tv_sec as f64 + ts.tv_nsec as f64 / 1e9
}

/// Runs one virtual user until told to stop; returns the CPU seconds its thread used.
fn vu_loop(
    mut client: postgres::Client,
    mut vu: Vu,
    stats: Arc<Mutex<Stats>>,
    stop: Arc<AtomicBool>,
) -> Result<f64> {
    let cpu0 = thread_cpu_seconds();
    let spec = vu.profile == Profile::Spec;
    let no = client.prepare(&format!(
        "SELECT {}($1::int4, $2::int4, $3::int4, $4::int4, $5::int4, $6::bool)",
        vu.neword
    ))?;
    let pay = client.prepare(
        "SELECT payment($1::int4, $2::int4, $3::int4, $4::int4, $5::int4, $6::bool, ($7::int4 / 100.0)::numeric, $8::text, $9::bool)",
    )?;
    let os = client.prepare("SELECT ostat($1::int4, $2::int4, $3::int4, $4::bool, $5::text)")?;
    let del = client.prepare("SELECT delivery($1::int4, $2::int4, $3::bool)")?;
    let sl = client.prepare("SELECT slev($1::int4, $2::int4, $3::int4)")?;
    while !stop.load(Ordering::Relaxed) {
        let kind = vu.pick();
        let w = vu.w();
        let t0 = Instant::now();
        let r = match kind {
            0 => {
                let (d, c, n) = (
                    vu.rng.range(1, 10) as i32,
                    vu.c_id(),
                    vu.rng.range(5, 15) as i32,
                );
                client
                    .execute(&no, &[&w, &vu.max_w, &d, &c, &n, &spec])
                    .map(|_| ())
            }
            1 => {
                let d = vu.rng.range(1, 10) as i32;
                let (mut cw, mut cd) = (w, d);
                if vu.rng.range(1, 100) > 85 {
                    cd = vu.rng.range(1, 10) as i32;
                    if vu.max_w > 1 {
                        while cw == w {
                            cw = vu.rng.range(1, vu.max_w as i64) as i32;
                        }
                    }
                }
                let byname = vu.rng.range(1, 100) <= 60;
                let name = if byname { vu.c_last() } else { String::new() };
                let c = vu.c_id();
                let cents: i32 = match vu.profile {
                    Profile::Hammerdb => vu.rng.range(1, 5000) as i32 * 100,
                    Profile::Spec => vu.rng.range(100, 500_000) as i32,
                };
                client
                    .execute(&pay, &[&w, &d, &cw, &cd, &c, &byname, &cents, &name, &spec])
                    .map(|_| ())
            }
            2 => {
                let d = vu.rng.range(1, 10) as i32;
                let byname = vu.rng.range(1, 100) <= 60;
                let name = if byname { vu.c_last() } else { String::new() };
                let c = vu.c_id();
                client
                    .execute(&os, &[&w, &d, &c, &byname, &name])
                    .map(|_| ())
            }
            3 => {
                let carrier = vu.rng.range(1, 10) as i32;
                client.execute(&del, &[&w, &carrier, &spec]).map(|_| ())
            }
            _ => {
                let threshold = vu.rng.range(10, 20) as i32;
                client
                    .execute(&sl, &[&w, &vu.stock_level_d, &threshold])
                    .map(|_| ())
            }
        };
        let us = t0.elapsed().as_micros() as u64;
        let mut s = stats.lock().unwrap();
        let t = &mut s[kind];
        match r {
            Ok(()) => {
                t.count += 1;
                let _ = t.hist.record(us.max(1));
            }
            // The 1 % invalid-item New-Order rolls back by design (SQLSTATE 02000).
            Err(e) if e.code() == Some(&postgres::error::SqlState::NO_DATA_FOUND) && kind == 0 => {
                t.rollbacks += 1;
                let _ = t.hist.record(us.max(1));
            }
            Err(e) => {
                if e.is_closed() {
                    return Err(e).context("a virtual user lost its connection");
                }
                t.errors += 1;
            }
        }
    }
    Ok(thread_cpu_seconds() - cpu0)
}

/// Warehouses a VU uses: its random home, or HammerDB's all-warehouses list.
fn warehouse_list(rng: &mut Rng, vu: u32, vus: u32, max_w: i32, all: bool) -> Vec<i32> {
    if !all {
        return vec![rng.range(1, max_w as i64) as i32];
    }
    let n = (max_w as u32).div_ceil(vus);
    (0..n)
        .map(|k| ((vu + k * vus) % max_w as u32) as i32 + 1)
        .collect()
}

/// What a driver run measured: the figures its callers use, and workload.json's content.
pub(crate) struct Outcome {
    /// New orders per minute over the measured window (server-side, d_next_o_id).
    pub(crate) nopm: f64,
    pub(crate) tpm: f64,
    /// Transactions the virtual users completed per second (commits and rollbacks).
    pub(crate) client_transactions_per_s: f64,
    /// CPU seconds of the virtual-user threads.
    pub(crate) vu_cpu_s: f64,
    pub(crate) interrupted: bool,
    /// workload.json (docs/run-directory.md).
    pub(crate) file: WorkloadJson,
}

fn monitor_sample(c: &mut postgres::Client) -> Result<(i64, i64)> {
    let nopm: i64 = c
        .query_one(
            "SELECT coalesce(sum(d_next_o_id), 0)::bigint FROM district",
            &[],
        )?
        .get(0);
    c.batch_execute("SELECT pg_stat_clear_snapshot()")?;
    let trans: i64 = c
        .query_one(
            "SELECT coalesce(sum(xact_commit + xact_rollback), 0)::bigint FROM pg_stat_database",
            &[],
        )?
        .get(0);
    Ok((nopm, trans))
}

/// Seconds between progress lines.
const PROGRESS: Duration = Duration::from_secs(5);

/// The progress line's state: when and at which sum(d_next_o_id) the last line was printed.
struct Progress {
    at: Instant,
    nopm_sum: i64,
}

impl Progress {
    fn new(c: &mut postgres::Client) -> Result<Progress> {
        Ok(Progress {
            at: Instant::now(),
            nopm_sum: monitor_sample(c)?.0,
        })
    }

    fn tick(
        &mut self,
        c: &mut postgres::Client,
        start: Instant,
        phase: &str,
        errors: u64,
    ) -> Result<()> {
        if self.at.elapsed() < PROGRESS {
            return Ok(());
        }
        let (n, _) = monitor_sample(c)?;
        let mins = self.at.elapsed().as_secs_f64() / 60.0;
        eprintln!(
            "  {:>6.0} s  {phase:<8}  NOPM (last {:.0} s) {:>8.0}  errors {errors}",
            start.elapsed().as_secs_f64(),
            mins * 60.0,
            (n - self.nopm_sum) as f64 / mins
        );
        self.at = Instant::now();
        self.nopm_sum = n;
        Ok(())
    }
}

/// How often the measured window samples what the workload's backends are doing.
const WAIT_EVERY: Duration = Duration::from_millis(100);

/// What the VUs' backends were doing, sampled every `WAIT_EVERY` over the measured window from
/// pg_stat_activity: `CPU` (active, no wait event), `<type>:<event>` (active and waiting:
/// IO:DataFileRead, LWLock:WALWrite, IO:WalSync, Lock:tuple …), or `client (idle)` (waiting for
/// the driver's next call: the client side and the round trip). What a bottleneck looks like.
struct Waits {
    next: Instant,
    samples: u64,
    counts: std::collections::BTreeMap<String, u64>,
}

const WAITS_SQL: &str = "SELECT CASE WHEN state = 'active' \
        THEN coalesce(wait_event_type || ':' || wait_event, 'CPU') \
        ELSE 'client (' || coalesce(state, '?') || ')' END, count(*)::bigint \
     FROM pg_stat_activity \
     WHERE datname = current_database() AND backend_type = 'client backend' \
       AND application_name = 'hotlab vu' \
     GROUP BY 1";

impl Waits {
    fn new() -> Waits {
        Waits {
            next: Instant::now(),
            samples: 0,
            counts: Default::default(),
        }
    }

    fn tick(&mut self, c: &mut postgres::Client) -> Result<()> {
        if Instant::now() < self.next {
            return Ok(());
        }
        self.next = Instant::now() + WAIT_EVERY;
        for r in c.query(WAITS_SQL, &[])? {
            *self.counts.entry(r.get(0)).or_default() += r.get::<_, i64>(1) as u64;
        }
        self.samples += 1;
        Ok(())
    }

    fn figures(&self) -> WaitEvents {
        WaitEvents {
            every_ms: WAIT_EVERY.as_millis() as u64,
            samples: self.samples,
            counts: self.counts.clone(),
        }
    }
}

/// A running virtual user: what it finished since it was last drained, and its thread (which
/// returns its CPU seconds).
type VuHandle = (Arc<Mutex<Stats>>, std::thread::JoinHandle<Result<f64>>);

/// One connection and one thread per virtual user, each with its own random stream and its
/// home warehouses; they run until `stop`.
fn spawn_vus(
    server: &Server,
    db: &str,
    shape: &Shape,
    max_w: i32,
    stop: &Arc<AtomicBool>,
) -> Result<Vec<VuHandle>> {
    let mut seed = Rng::from_time(0);
    let mut vus = vec![];
    for v in 0..shape.vus {
        let mut client = server.connect(db)?;
        // The name the wait-event sampler looks for.
        client.batch_execute("SET application_name = 'hotlab vu'")?;
        let mut rng = Rng::new(seed.next_u64());
        let warehouses = warehouse_list(&mut rng, v, shape.vus, max_w, shape.all_warehouses);
        let vu = Vu {
            stock_level_d: rng.range(1, 10) as i32,
            rng,
            profile: shape.profile,
            max_w,
            warehouses,
            neword: shape.neword,
        };
        let stats = Arc::new(Mutex::new(new_stats()));
        let (s2, stop2) = (stats.clone(), stop.clone());
        vus.push((
            stats,
            std::thread::spawn(move || vu_loop(client, vu, s2, stop2)),
        ));
    }
    Ok(vus)
}

/// What the VUs finished, drained from them every second into samples.csv and summed into the
/// snapshot interval (workload.csv) and the phase's totals (workload.json).
struct Collector {
    vus: Vec<Arc<Mutex<Stats>>>,
    interval: Stats,
    /// (ramp-up, measured window)
    totals: (Stats, Stats),
    samples: CsvAppender,
    workload: CsvAppender,
    start: Instant,
    next_second: Instant,
    errors: u64,
}

impl Collector {
    /// The second's counts from every VU, as rows of samples.csv, added to the interval.
    fn second(&mut self, phase: Phase) -> Result<()> {
        let mut sec = new_stats();
        for s in &self.vus {
            let mut g = s.lock().unwrap();
            for i in 0..5 {
                sec[i].add(&g[i]);
            }
            *g = new_stats();
        }
        let t = self.start.elapsed().as_secs_f64();
        for i in 0..5 {
            self.samples.row(&sec[i].row(t, phase, TXNS[i]))?;
            self.interval[i].add(&sec[i]);
            self.errors += sec[i].errors;
        }
        self.next_second = Instant::now() + SAMPLE_EVERY;
        Ok(())
    }

    /// A row of samples.csv when a second has passed.
    fn tick(&mut self, phase: Phase) -> Result<()> {
        if Instant::now() >= self.next_second {
            self.second(phase)?;
        }
        Ok(())
    }

    /// Closes a snapshot interval: the counts up to now as rows of workload.csv, added to the
    /// phase's totals.
    fn interval(&mut self, phase: Phase) -> Result<()> {
        self.second(phase)?;
        let t = self.start.elapsed().as_secs_f64();
        let into = if phase == Phase::Rampup {
            &mut self.totals.0
        } else {
            &mut self.totals.1
        };
        for i in 0..5 {
            self.workload
                .row(&self.interval[i].row(t, phase, TXNS[i]))?;
            into[i].add(&self.interval[i]);
        }
        self.interval = new_stats();
        Ok(())
    }

    /// Errors counted so far plus those still in the VUs' current second.
    fn errors_so_far(&self) -> u64 {
        let pending: u64 = self
            .vus
            .iter()
            .map(|s| s.lock().unwrap().iter().map(|t| t.errors).sum::<u64>())
            .sum();
        self.errors + pending
    }
}

/// Runs the workload, writing samples.csv and workload.csv into `dir`; returns workload.json's
/// content.
pub(crate) fn run(
    server: &Server,
    db: &str,
    shape: &Shape,
    sampler: &mut Sampler,
    dir: &std::path::Path,
) -> Result<Outcome> {
    let mut monitor = server.connect(db)?;
    monitor.batch_execute("SET application_name = 'hotlab monitor'")?;
    let max_w: i32 = monitor
        .query_one("SELECT max(w_id) FROM warehouse", &[])?
        .get(0);
    let stop = Arc::new(AtomicBool::new(false));
    let vus = spawn_vus(server, db, shape, max_w, &stop)?;
    let every = Duration::from_secs_f64(shape.snapshot_every_s);
    let rampup = Duration::from_secs_f64(shape.rampup_s);
    let window = Duration::from_secs_f64(shape.duration_s);
    let start = Instant::now();
    let mut c = Collector {
        vus: vus.iter().map(|(s, _)| s.clone()).collect(),
        interval: new_stats(),
        totals: (new_stats(), new_stats()),
        samples: CsvAppender::open(&dir.join("samples.csv"), WORKLOAD_HEADER)?,
        workload: CsvAppender::open(&dir.join("workload.csv"), WORKLOAD_HEADER)?,
        start,
        next_second: start + SAMPLE_EVERY,
        errors: 0,
    };
    // A progress line every PROGRESS, whatever the snapshot interval: elapsed, phase, NOPM over
    // the last progress interval, client errors so far.
    let mut progress = Progress::new(&mut monitor)?;
    // Ramp-up: counted apart, sampled as rampup.
    let mut next = start + every.min(rampup.max(Duration::from_millis(1)));
    while start.elapsed() < rampup && !interrupted() {
        if Instant::now() >= next {
            sampler.take(crate::snapshot::Phase::Rampup)?;
            c.interval(Phase::Rampup)?;
            next += every;
        }
        c.tick(Phase::Rampup)?;
        progress.tick(&mut monitor, start, "rampup", c.errors_so_far())?;
        std::thread::sleep(Duration::from_millis(20));
    }
    if rampup > Duration::ZERO {
        c.interval(Phase::Rampup)?;
    }
    // The measured window: HammerDB's start sample, then samples every interval, then its end.
    sampler.take(crate::snapshot::Phase::Measured)?;
    let (nopm0, trans0) = monitor_sample(&mut monitor)?;
    let m0 = Instant::now();
    let mut next = m0 + every;
    let mut waits = Waits::new();
    while m0.elapsed() < window && !interrupted() {
        waits.tick(&mut monitor)?;
        let now = Instant::now();
        if now >= next && now < m0 + window {
            sampler.take(crate::snapshot::Phase::Measured)?;
            c.interval(Phase::Measured)?;
            next += every;
        }
        c.tick(Phase::Measured)?;
        progress.tick(&mut monitor, start, "measured", c.errors_so_far())?;
        std::thread::sleep(Duration::from_millis(20));
    }
    let (nopm1, trans1) = monitor_sample(&mut monitor)?;
    let measured_s = m0.elapsed().as_secs_f64();
    sampler.take(crate::snapshot::Phase::Measured)?;
    stop.store(true, Ordering::SeqCst);
    c.interval(Phase::Measured)?;
    let vu_cpu = join_vus(vus)?;
    let counters = Counters {
        new_orders: nopm1 - nopm0,
        transactions: trans1 - trans0,
        measured_s,
    };
    Ok(outcome(shape, &c.totals, counters, vu_cpu, waits.figures()))
}

/// Waits for the virtual users to stop; their CPU seconds, or what failed.
fn join_vus(vus: Vec<VuHandle>) -> Result<f64> {
    let mut vu_errors = vec![];
    let mut vu_cpu = 0.0;
    for (_, h) in vus {
        match h.join() {
            Ok(Ok(cpu)) => vu_cpu += cpu,
            Ok(Err(e)) => vu_errors.push(format!("{e:#}")),
            Err(_) => vu_errors.push("a virtual user panicked".into()),
        }
    }
    if !vu_errors.is_empty() {
        anyhow::bail!("virtual users failed: {}", vu_errors.join("; "));
    }
    Ok(vu_cpu)
}

/// HammerDB's counters over the measured window: Δsum(d_next_o_id), Δ(commits + rollbacks).
struct Counters {
    new_orders: i64,
    transactions: i64,
    measured_s: f64,
}

/// NOPM and TPM as HammerDB computes them, and workload.json.
fn outcome(
    shape: &Shape,
    totals: &(Stats, Stats),
    k: Counters,
    vu_cpu: f64,
    waits: WaitEvents,
) -> Outcome {
    let mins = k.measured_s / 60.0;
    let nopm = k.new_orders as f64 / mins;
    let tpm = k.transactions as f64 / mins;
    let client_tx: u64 = totals.1.iter().map(|t| t.count + t.rollbacks).sum();
    let file = WorkloadJson {
        workload: "tprocc".into(),
        profile: shape.profile.name().into(),
        warehouses: shape.warehouses,
        vus: shape.vus,
        all_warehouses: shape.all_warehouses,
        rampup_s: shape.rampup_s,
        duration_s: k.measured_s,
        nopm,
        tpm,
        tpm_per_nopm: if nopm > 0.0 { tpm / nopm } else { 0.0 },
        new_orders: k.new_orders,
        server_transactions: k.transactions,
        client_transactions_per_s: client_tx as f64 / k.measured_s,
        vu_cpu_s: vu_cpu,
        transactions: (0..5)
            .map(|i| (TXNS[i].to_string(), totals.1[i].figures()))
            .collect(),
        rampup_transactions: (0..5)
            .map(|i| (TXNS[i].to_string(), totals.0[i].count))
            .collect(),
        wait_events: Some(waits),
        interrupted: interrupted(),
    };
    Outcome {
        nopm,
        tpm,
        client_transactions_per_s: file.client_transactions_per_s,
        vu_cpu_s: vu_cpu,
        interrupted: file.interrupted,
        file,
    }
}
