//! The pgbench-script workload's `run` (study 001, a user's own table): pgbench runs the scripts
//! while the sampler takes `rampup`, then `measured` samples; workload.csv and workload.json come
//! from pgbench's per-transaction logs, check.json from the row counters.

use std::time::Duration;

use anyhow::{bail, Context, Result};

use super::files::{PgbenchReported, ScriptWeight, WorkloadJson};
use super::size::PgbenchSize;
use super::{files_of, txlog, Shape};
use crate::ctx::Ctx;
use crate::interrupt::interrupted;
use crate::io::{write_json_atomic, CsvAppender};
use crate::rundir::RunDir;
use crate::server::Server;
use crate::snapshot::{Sampled, Sampler};
use crate::study::ArmPlan;
use crate::workload::pgbench;

/// A millisecond figure with three decimals, empty when there is none.
fn opt(v: Option<f64>) -> String {
    v.map(|x| format!("{x:.3}")).unwrap_or_default()
}

/// workload.csv's columns: one row per second since pgbench started.
pub(crate) const SCRIPT_WORKLOAD_HEADER: &[&str] = &[
    "t_s",
    "phase",
    "transactions",
    "tps",
    "failures",
    "latency_avg_ms",
    "latency_p50_ms",
    "latency_p95_ms",
    "latency_p99_ms",
    "latency_max_ms",
];

/// Rows inserted plus updated in `table` and its partitions, as the statistics say now.
fn rows_written(c: &mut postgres::Client, table: &str) -> Result<i64> {
    Ok(c.query_one(
        "SELECT coalesce(sum(s.n_tup_ins + s.n_tup_upd), 0)::bigint FROM pg_stat_user_tables s \
         WHERE s.relid = to_regclass($1) \
            OR s.relid IN (SELECT relid FROM pg_partition_tree(to_regclass($1)) WHERE isleaf)",
        &[&table],
    )
    .with_context(|| format!("reading the statistics of {table}"))?
    .get(0))
}

/// What workload.json records besides the window's figures.
struct Record<'a> {
    version: Option<String>,
    shape: &'a Shape,
    files: &'a crate::study::pgbench::PgbenchFiles,
    args: Vec<String>,
    summary: &'a pgbench::Summary,
    every: Duration,
    start_epoch_us: i64,
    boundary: i64,
    all: &'a txlog::Figures,
    /// (samples taken during the run, the longest in ms)
    samples: (u32, u128),
}

impl Record<'_> {
    /// workload.json (docs/run-directory.md).
    fn json(&self, w: &Window) -> WorkloadJson {
        WorkloadJson {
            workload: "pgbench".into(),
            tool: self.version.clone(),
            command: std::iter::once("pgbench".to_string())
                .chain(self.args.iter().cloned())
                .collect(),
            scripts: self
                .files
                .scripts
                .iter()
                .map(|s| ScriptWeight {
                    file: s.name.clone(),
                    weight: s.weight,
                })
                .collect(),
            protocol: self.files.protocol.name().into(),
            clients: self.shape.clients,
            jobs: self.shape.jobs,
            random_seed: self.shape.random_seed,
            rampup_s: self.shape.rampup_s,
            measured_s: w.measured_s,
            start_epoch_us: self.start_epoch_us,
            measured_from_epoch_us: self.boundary,
            transactions: w.measured.transactions,
            failed: w.measured.failures,
            tps: w.measured.transactions as f64 / w.measured_s.max(1e-9),
            tps_final_sample: w.final_n as f64 / self.every.as_secs_f64(),
            final_sample_s: self.every.as_secs_f64(),
            latency_avg_ms: w.measured.latency_avg_ms,
            latency_p50_ms: w.measured.latency_p50_ms,
            latency_p95_ms: w.measured.latency_p95_ms,
            latency_p99_ms: w.measured.latency_p99_ms,
            latency_max_ms: w.measured.latency_max_ms,
            hist_us: crate::stats::hist_buckets(&w.hist),
            transactions_all: self.all.transactions,
            failed_all: self.all.failures,
            pgbench_reported: PgbenchReported {
                transactions: self.summary.transactions,
                failed: self.summary.failed,
                tps: self.summary.tps,
                latency_avg_ms: self.summary.latency_avg_ms,
            },
            wall_s: self.summary.wall_s,
            samples_during_run: self.samples.0,
            sample_ms_max: self.samples.1,
            interrupted: interrupted(),
        }
    }
}

/// pgbench's command for the arm, announced on stderr.
fn invocation(
    server: &Server,
    rd: &RunDir,
    shape: &Shape,
    db: &str,
    args: &[String],
) -> pgbench::Invocation {
    eprintln!(
        "hotlab: pgbench: {} client(s), {} job(s), ramp-up {} s, {} on {db} (progress every 5 s)",
        shape.clients,
        shape.jobs,
        shape.rampup_s,
        match (shape.duration_s, shape.transactions) {
            (Some(d), _) => format!("measured {d} s"),
            (_, Some(t)) => format!("{t} transactions"),
            _ => String::new(),
        }
    );
    pgbench::Invocation {
        bin: server.bin("pgbench"),
        env: server.conn.child_env(db),
        args: args.to_vec(),
        log_prefix: rd.file("pgbench_log"),
        aggregate: false,
    }
}

/// The measured window's figures from pgbench's per-transaction log.
struct Window {
    measured: txlog::Figures,
    /// The window's latencies: analyze pools an arm's repeats by merging these.
    hist: hdrhistogram::Histogram<u64>,
    measured_s: f64,
    /// Transactions over the last snapshot interval (the final TPS sample).
    final_n: usize,
}

/// The window runs from `boundary` (the end of the ramp-up) to `end_epoch_us`.
fn window(txns: &[txlog::Txn], boundary: i64, end_epoch_us: i64, every: Duration) -> Window {
    let window: Vec<txlog::Txn> = txns
        .iter()
        .copied()
        .filter(|t| t.end_us >= boundary)
        .collect();
    let mut hist = crate::stats::new_histogram();
    for t in &window {
        if let Some(l) = t.latency_us {
            let _ = hist.record(l.max(1));
        }
    }
    let last_end = txns.last().map(|t| t.end_us).unwrap_or(end_epoch_us);
    let final_from = last_end - every.as_micros() as i64;
    Window {
        measured: txlog::figures(&window),
        hist,
        measured_s: (end_epoch_us - boundary) as f64 / 1e6,
        final_n: window
            .iter()
            .filter(|t| t.end_us > final_from && t.latency_us.is_some())
            .count(),
    }
}

/// workload.csv: one row per second since pgbench started, from its per-transaction log; a
/// second that began inside the ramp-up is the ramp-up's.
fn write_per_second(
    rd: &RunDir,
    txns: &[txlog::Txn],
    start_epoch_us: i64,
    boundary: i64,
) -> Result<()> {
    let mut csv = CsvAppender::open(&rd.file("workload.csv"), SCRIPT_WORKLOAD_HEADER)?;
    let mut i = 0;
    let mut second = 0i64;
    while i < txns.len() {
        let until = start_epoch_us + (second + 1) * 1_000_000;
        let j = i + txns[i..].iter().take_while(|t| t.end_us < until).count();
        let f = txlog::figures(&txns[i..j]);
        // A second that began inside the ramp-up is the ramp-up's.
        let phase = if until - 1_000_000 < boundary {
            "rampup"
        } else {
            "measured"
        };
        csv.row(&[
            second.to_string(),
            phase.into(),
            f.transactions.to_string(),
            f.transactions.to_string(),
            f.failures.to_string(),
            opt(f.latency_avg_ms),
            opt(f.latency_p50_ms),
            opt(f.latency_p95_ms),
            opt(f.latency_p99_ms),
            opt(f.latency_max_ms),
        ])?;
        i = j;
        second += 1;
    }
    Ok(())
}

/// check.json: the rows the scripts wrote to the check's table (partitions added up) against
/// the committed transactions × rows per transaction.
fn check_rows(
    rd: &RunDir,
    c: &mut postgres::Client,
    chk: &crate::study::pgbench::RowCheck,
    before: i64,
    transactions: u64,
) -> Result<()> {
    let after = rows_written(c, &chk.table)?;
    let expected = transactions as i64 * chk.rows_per_transaction as i64;
    let ok = after - before == expected || interrupted();
    rd.write_check(
        &format!(
            "Δ(n_tup_ins + n_tup_upd) of {} (partitions added up) = {} × transactions committed",
            chk.table, chk.rows_per_transaction
        ),
        expected,
        after - before,
        ok,
    )?;
    if !ok {
        bail!(
            "check failed: {} rows written to {} for {} committed transactions (expected {expected})",
            after - before,
            chk.table,
            transactions
        );
    }
    Ok(())
}

/// A pgbench-script study: pgbench runs the scripts while the sampler takes `rampup` samples,
/// one `measured` sample when the ramp-up ends (the window's start), `measured` samples every
/// `snapshot_every_s`, and a last one after every backend has flushed its statistics.
/// workload.csv and workload.json come from pgbench's per-transaction logs (latency
/// percentiles per second and over the window); check.json from the row counters.
impl crate::workload::Room for PgbenchSize {
    /// The study's files and the arm's partitioning (part of the schema, so part of the
    /// template's key).
    fn loader(&self, plan: &ArmPlan) -> Result<crate::workload::Loader> {
        super::Shape::of(self)?.loader(plan)
    }

    fn run(
        &self,
        ctx: &Ctx,
        rd: &RunDir,
        plan: &ArmPlan,
        db: &str,
        o: crate::workload::Overrides,
    ) -> Result<()> {
        let mut size = self.clone();
        size.rampup_s = o.rampup_s.or(size.rampup_s);
        if let Some(d) = o.duration_s {
            size.duration_s = Some(d);
            size.transactions = None;
        }
        run(ctx, rd, plan, db, &size)
    }
}

pub(crate) fn run(
    ctx: &Ctx,
    rd: &RunDir,
    plan: &ArmPlan,
    db: &str,
    size: &PgbenchSize,
) -> Result<()> {
    let shape = Shape::of(size)?;
    let files = files_of(plan)?;
    let server = Server::ensure(ctx)?;
    let mut scripts = vec![];
    for s in &files.scripts {
        let path = rd.file(&s.name);
        std::fs::write(&path, &s.text)?;
        scripts.push((path.display().to_string(), s.weight));
    }
    let mut sampler = Sampler::new(&server, db, rd)?;
    // Counters only (no table data is read: the cache stays cold).
    let written_before = match &files.check {
        Some(chk) => Some(rows_written(sampler.client(), &chk.table)?),
        None => None,
    };
    let rampup = Duration::from_secs_f64(shape.rampup_s);
    let every = Duration::from_secs_f64(shape.snapshot_every_s);
    sampler.take(if rampup.is_zero() {
        crate::snapshot::Phase::Measured
    } else {
        crate::snapshot::Phase::Rampup
    })?;
    let args = shape.pgbench_args(files, &scripts, db);
    let inv = invocation(&server, rd, &shape, db, &args);
    let pgbench::SampledRun {
        result,
        sampled:
            Sampled {
                mut sampler,
                n: n_samples,
                max_ms,
                measured_from_us: boundary,
            },
        start_epoch_us,
        end_epoch_us,
    } = pgbench::run_sampled(&inv, sampler, every, rampup, db)?;
    if boundary == 0 {
        bail!(
            "pgbench ended within the ramp-up ({} s): nothing was measured; lower rampup_s or give the size more transactions",
            shape.rampup_s
        );
    }
    sampler.take(crate::snapshot::Phase::Measured)?;
    let (summary, _) = result?;

    let txns = txlog::read(&rd.file("pgbench_log"))?;
    write_per_second(rd, &txns, start_epoch_us, boundary)?;
    let w = window(&txns, boundary, end_epoch_us, every);
    let all = txlog::figures(&txns);
    let out = Record {
        version: crate::proc::version(&server.bin("pgbench")),
        shape: &shape,
        files,
        args,
        summary: &summary,
        every,
        start_epoch_us,
        boundary,
        all: &all,
        samples: (n_samples, max_ms),
    }
    .json(&w);
    write_json_atomic(&rd.file("workload.json"), &out)?;

    if let (Some(chk), Some(before)) = (&files.check, written_before) {
        check_rows(rd, sampler.client(), chk, before, all.transactions)?;
    }
    // After the closing sample: this read of the table changes nothing measured.
    if let Some(h) = &files.hot_rows {
        crate::snapshot::record_hot_rows(sampler.client(), rd, h, "end")?;
    }
    eprintln!(
        "hotlab: {} transactions in the measured {:.1} s ({:.1} TPS; p95 {} ms)",
        w.measured.transactions,
        w.measured_s,
        w.measured.transactions as f64 / w.measured_s.max(1e-9),
        opt(w.measured.latency_p95_ms)
    );
    Ok(())
}
