//! Study 003's `run`: pgbench runs the update script (one client by default) while a second
//! connection samples; Ctrl-C stops pgbench, keeps what was sampled and marks the run
//! interrupted. Writes workload.csv (pgbench's 1-s aggregate log), workload.json, check.json.

use std::time::Duration;

use anyhow::{bail, Context, Result};

use super::files::WorkloadJson;
use super::size::SpvSize;
use super::{Shape, SCRIPT};
use crate::ctx::Ctx;
use crate::interrupt::interrupted;
use crate::io::{write_json_atomic, CsvAppender};
use crate::rundir::RunDir;
use crate::server::Server;
use crate::snapshot::{Sampled, Sampler};
use crate::workload::pgbench;

/// workload.csv's columns: one row per second of pgbench's aggregate log.
pub(crate) const WORKLOAD_HEADER: &[&str] = &[
    "t_s",
    "transactions",
    "tps",
    "latency_avg_ms",
    "latency_min_ms",
    "latency_max_ms",
    "failures",
];

/// workload.csv: pgbench's 1-s aggregate log, by second since its first interval.
fn write_intervals(rd: &RunDir, intervals: &[pgbench::Interval]) -> Result<()> {
    let mut csv = CsvAppender::open(&rd.file("workload.csv"), WORKLOAD_HEADER)?;
    let t0 = intervals.first().map(|i| i.start_epoch_s).unwrap_or(0);
    for iv in intervals {
        csv.row(&[
            (iv.start_epoch_s - t0).to_string(),
            iv.transactions.to_string(),
            iv.transactions.to_string(),
            format!("{:.3}", iv.latency_avg_ms),
            format!("{:.3}", iv.latency_min_ms),
            format!("{:.3}", iv.latency_max_ms),
            iv.failures.to_string(),
        ])?;
    }
    Ok(())
}

/// check.json: every statement added 1 to exactly `rows_per_statement` rows. No query touches
/// the table before the workload (the cache must stay cold); the build loads val = 0 everywhere,
/// so the sum before is 0.
fn check_sum(
    server: &Server,
    rd: &RunDir,
    db: &str,
    statements: u64,
    rows_per_statement: u64,
) -> Result<()> {
    let sum_before: i64 = 0;
    let mut check = server.connect(db)?;
    let sum_after: i64 = check
        .query_one("SELECT coalesce(sum(val), 0)::bigint FROM spv", &[])
        .context("reading sum(val) after the run")?
        .get(0);
    let expected = statements as i64 * rows_per_statement as i64;
    let ok = sum_after - sum_before == expected || interrupted();
    rd.write_check(
        "sum(val) grew by statements x rows_per_statement",
        expected,
        sum_after - sum_before,
        ok,
    )?;
    if !ok {
        bail!(
            "spv check failed: sum(val) grew by {}, expected {expected}",
            sum_after - sum_before
        );
    }
    Ok(())
}

/// Runs study 003's updates: pgbench with one client while the sampler takes a sample every
/// `snapshot_every_s` (phase `measured`, from just before the first statement to after the last
/// backend flushed its statistics); check.json holds the invariant sum(val).
impl crate::workload::Room for SpvSize {
    fn loader(&self, _plan: &crate::study::ArmPlan) -> Result<crate::workload::Loader> {
        Ok(super::Shape::of(self)?.loader())
    }

    fn run(
        &self,
        ctx: &Ctx,
        rd: &RunDir,
        _plan: &crate::study::ArmPlan,
        db: &str,
        _o: crate::workload::Overrides,
    ) -> Result<()> {
        run(ctx, rd, db, self)
    }
}

pub(crate) fn run(ctx: &Ctx, rd: &RunDir, db: &str, size: &SpvSize) -> Result<()> {
    let shape = Shape::of(size)?;
    let server = Server::ensure(ctx)?;
    let script = rd.file("workload.pgbench");
    std::fs::write(&script, SCRIPT)?;

    let mut sampler = Sampler::new(&server, db, rd)?;
    sampler.take(crate::snapshot::Phase::Measured)?;
    let every = Duration::from_secs_f64(shape.snapshot_every_s);
    let args = shape.pgbench_args(&script.display().to_string(), db);
    let inv = pgbench::Invocation {
        bin: server.bin("pgbench"),
        env: server.conn.child_env(db),
        args: args.clone(),
        log_prefix: rd.file("pgbench_log"),
        aggregate: true,
    };
    eprintln!(
        "hotlab: pgbench: {} statements of {} rows on {db}",
        shape.statements, shape.rows_per_statement
    );
    let pgbench::SampledRun {
        result,
        sampled:
            Sampled {
                mut sampler,
                n: n_samples,
                max_ms,
                ..
            },
        ..
    } = pgbench::run_sampled(&inv, sampler, every, Duration::ZERO, db)?;
    sampler.take(crate::snapshot::Phase::Measured)?;
    let (mut summary, intervals) = result?;
    if interrupted() && summary.transactions == 0 {
        // pgbench was killed before its report: count what its interval log saw.
        summary.transactions = intervals.iter().map(|i| i.transactions).sum();
    }

    write_intervals(rd, &intervals)?;
    // pgbench's own tps excludes connection time; duration follows from it.
    let duration_s = match summary.tps {
        Some(tps) if tps > 0.0 => summary.transactions as f64 / tps,
        _ => summary.wall_s,
    };
    let statements_per_s = summary.transactions as f64 / duration_s;
    let version = crate::proc::version(&server.bin("pgbench"));
    write_json_atomic(
        &rd.file("workload.json"),
        &WorkloadJson {
            workload: "spv".into(),
            tool: version,
            command: std::iter::once("pgbench".to_string()).chain(args).collect(),
            clients: shape.clients,
            statements: shape.statements,
            rows_per_statement: shape.rows_per_statement,
            random_seed: shape.random_seed,
            transactions: summary.transactions,
            failed: summary.failed,
            duration_s,
            wall_s: summary.wall_s,
            statements_per_s,
            rows_per_s: statements_per_s * shape.rows_per_statement as f64,
            tps_reported: summary.tps,
            latency_avg_ms: summary.latency_avg_ms,
            latency_stddev_ms: summary.latency_stddev_ms,
            samples_during_run: n_samples,
            sample_ms_max: max_ms,
            interrupted: interrupted(),
        },
    )?;

    check_sum(
        &server,
        rd,
        db,
        summary.transactions,
        shape.rows_per_statement,
    )?;
    eprintln!(
        "hotlab: {} statements in {duration_s:.2} s ({statements_per_s:.1}/s)",
        summary.transactions
    );
    Ok(())
}
