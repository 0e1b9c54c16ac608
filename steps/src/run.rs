//! `run`: the timed workload with statistics snapshots. For `spv`: pgbench runs the update
//! script with one client while a second connection samples every `snapshot_every_s` seconds
//! (phase `measured`, from a sample just before the first statement to one after the last
//! backend has flushed its statistics). Ctrl-C stops pgbench, keeps what was sampled and marks
//! the run interrupted. Writes workload.csv (per interval), workload.json, check.json and
//! snapshots/*.csv.

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};
use serde_json::json;

use crate::ctx::Ctx;
use crate::interrupt::{catch_interrupts, interrupted};
use crate::io::{write_json_atomic, CsvAppender};
use crate::rundir::RunDir;
use crate::server::Server;
use crate::snapshot::Sampler;
use crate::study::{ArmPlan, Size, SpvSize, TproccSize};
use crate::workload::{pgbench, spv, tprocc};

pub const WORKLOAD_HEADER: &[&str] = &[
    "t_s",
    "transactions",
    "tps",
    "latency_avg_ms",
    "latency_min_ms",
    "latency_max_ms",
    "failures",
];

#[derive(clap::Args, Debug, Default)]
pub struct Args {
    /// Arm run directory (built and with its fillfactor applied)
    #[arg(long, env = "HOTLAB_RUN")]
    pub run: PathBuf,
    /// TPROC-C: virtual users (default: the size's)
    #[arg(long)]
    pub vus: Option<u32>,
    /// TPROC-C: ramp-up seconds (default: the size's)
    #[arg(long)]
    pub rampup: Option<f64>,
    /// TPROC-C: measured seconds (default: the size's)
    #[arg(long)]
    pub duration: Option<f64>,
}

pub fn run(ctx: &Ctx, args: &Args) -> Result<()> {
    let rd = RunDir::open(&args.run)?;
    let db = rd.database()?;
    if !rd.file("fillfactor.json").exists() {
        bail!(
            "no fillfactor.json in {}; run `cargo xtask apply-fillfactor --run {}` first",
            rd.path.display(),
            rd.path.display()
        );
    }
    let meta = rd.meta()?;
    let previous = meta["steps"]["run"]["status"].as_str().map(str::to_string);
    let finished = previous.as_deref() == Some("complete");
    if finished || (previous.is_none() && rd.file("workload.json").exists()) {
        bail!(
            "{} already holds a measured run; create a new one with `cargo xtask init`",
            rd.path.display()
        );
    }
    let ran = rd.file("workload.csv").exists() || rd.file("workload.json").exists();
    if let Some(status) = previous.filter(|_| ran) {
        // A retry: the failed or interrupted attempt's files go aside, whole, and this one
        // starts clean (analyze reads only the arm directory's own files).
        let to = rd.move_attempt_aside()?;
        eprintln!(
            "hotlab: the previous run ({status}) moved to {}; this attempt starts clean. Its database already ran part of a workload: for a cold, clean start run the whole arm again (`just arm {}`)",
            to.display(),
            rd.path.display()
        );
    }
    catch_interrupts();
    rd.step_graceful("run", || {
        let plan = rd.plan()?;
        match plan.size()?.clone() {
            Size::Spv(size) => run_spv(ctx, &rd, &db, &size),
            Size::Tprocc(mut size) => {
                if let Some(v) = args.vus {
                    size.vus = Some(v);
                }
                if let Some(r) = args.rampup {
                    size.rampup_s = Some(r);
                }
                if let Some(d) = args.duration {
                    size.duration_s = Some(d);
                }
                run_tprocc(ctx, &rd, &plan, &db, &size)
            }
        }
    })
}

/// Samples every `every` on its own thread until told to stop; returns the sampler.
fn start_sampler(
    mut sampler: Sampler,
    every: Duration,
    stop: Arc<AtomicBool>,
) -> std::thread::JoinHandle<Result<(Sampler, u32, u128)>> {
    std::thread::spawn(move || {
        let (mut n, mut max_ms) = (0u32, 0u128);
        let mut next = Instant::now() + every;
        while !stop.load(Ordering::SeqCst) {
            if Instant::now() >= next {
                let took = sampler.take("measured")?;
                n += 1;
                max_ms = max_ms.max(took.as_millis());
                next += every;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        Ok((sampler, n, max_ms))
    })
}

/// Waits until no session but hotlab's own is connected to `db`, so every workload backend has
/// flushed its statistics before the closing sample.
fn wait_for_backends(c: &mut postgres::Client, db: &str) -> Result<()> {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let n: i64 = c
            .query_one(
                "SELECT count(*) FROM pg_stat_activity WHERE datname = $1 AND backend_type = 'client backend' \
                 AND coalesce(application_name, '') NOT LIKE 'hotlab%'",
                &[&db],
            )?
            .get(0);
        if n == 0 {
            return Ok(());
        }
        if Instant::now() > deadline {
            bail!("{n} sessions still connected to {db} 30 s after the workload ended");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn run_spv(ctx: &Ctx, rd: &RunDir, db: &str, size: &SpvSize) -> Result<()> {
    let shape = spv::Shape::of(size)?;
    let server = Server::ensure(ctx)?;
    let script = rd.file("workload.pgbench");
    std::fs::write(&script, spv::SCRIPT)?;
    // No query may touch the table before the workload: the cache must stay cold. The build
    // loads val = 0 everywhere, so the check below needs no "before" read.
    let sum_before: i64 = 0;

    let mut sampler = Sampler::new(&server, db, rd)?;
    sampler.take("measured")?;
    let every = Duration::from_secs_f64(shape.snapshot_every_s);
    let stop = Arc::new(AtomicBool::new(false));
    let sampling = start_sampler(sampler, every, stop.clone());

    let args = shape.pgbench_args(&script.display().to_string(), db);
    let inv = pgbench::Invocation {
        bin: server.bin("pgbench"),
        env: server.conn.libpq_env(db),
        args: args.clone(),
        log_prefix: rd.file("pgbench_log"),
    };
    eprintln!(
        "hotlab: pgbench: {} statements of {} rows on {db}",
        shape.statements, shape.rows_per_statement
    );
    let result = pgbench::run(&inv, interrupted);
    stop.store(true, Ordering::SeqCst);
    let (mut sampler, n_samples, max_ms) = sampling
        .join()
        .map_err(|_| anyhow::anyhow!("the sampling thread panicked"))??;
    wait_for_backends(sampler.client(), db)?;
    sampler.take("measured")?;
    let (mut summary, intervals) = result?;
    if interrupted() && summary.transactions == 0 {
        // pgbench was killed before its report: count what its interval log saw.
        summary.transactions = intervals.iter().map(|i| i.transactions).sum();
    }

    let mut csv = CsvAppender::open(&rd.file("workload.csv"), WORKLOAD_HEADER)?;
    let t0 = intervals.first().map(|i| i.start_epoch_s).unwrap_or(0);
    for iv in &intervals {
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
    // pgbench's own tps excludes connection time; duration follows from it.
    let duration_s = match summary.tps {
        Some(tps) if tps > 0.0 => summary.transactions as f64 / tps,
        _ => summary.wall_s,
    };
    let statements_per_s = summary.transactions as f64 / duration_s;
    let version = crate::proc::version(&server.bin("pgbench"));
    write_json_atomic(
        &rd.file("workload.json"),
        &json!({
            "workload": "spv",
            "tool": version,
            "command": std::iter::once("pgbench".to_string()).chain(args).collect::<Vec<_>>(),
            "clients": shape.clients,
            "statements": shape.statements,
            "rows_per_statement": shape.rows_per_statement,
            "random_seed": shape.random_seed,
            "transactions": summary.transactions,
            "failed": summary.failed,
            "duration_s": duration_s,
            "wall_s": summary.wall_s,
            "statements_per_s": statements_per_s,
            "rows_per_s": statements_per_s * shape.rows_per_statement as f64,
            "tps_reported": summary.tps,
            "latency_avg_ms": summary.latency_avg_ms,
            "latency_stddev_ms": summary.latency_stddev_ms,
            "samples_during_run": n_samples,
            "sample_ms_max": max_ms,
            "interrupted": interrupted(),
        }),
    )?;

    // The invariant: every statement added 1 to exactly rows_per_statement rows.
    let mut check = server.connect(db)?;
    let sum_after: i64 = check
        .query_one("SELECT coalesce(sum(val), 0)::bigint FROM spv", &[])
        .context("reading sum(val) after the run")?
        .get(0);
    let expected = summary.transactions as i64 * shape.rows_per_statement as i64;
    let ok = sum_after - sum_before == expected || interrupted();
    write_json_atomic(
        &rd.file("check.json"),
        &json!({
            "ok": ok,
            "conditions": [{
                "name": "sum(val) grew by statements x rows_per_statement",
                "expected": expected,
                "got": sum_after - sum_before,
                "violations": if ok { 0 } else { 1 },
            }],
        }),
    )?;
    if !ok {
        bail!(
            "spv check failed: sum(val) grew by {}, expected {expected}",
            sum_after - sum_before
        );
    }
    eprintln!(
        "hotlab: {} statements in {duration_s:.2} s ({statements_per_s:.1}/s)",
        summary.transactions
    );
    Ok(())
}

/// Confines the server to the size's RAM (page cache included) for the workload, where the size
/// states one and the platform allows. Returns the confinement and meta.json's `memory_limit`:
/// what was applied, or why not.
fn confine(
    server: &Server,
    ram: Option<&str>,
) -> Result<(
    Option<crate::server::memlimit::Confinement>,
    serde_json::Value,
)> {
    let Some(ram) = ram else {
        return Ok((None, serde_json::Value::Null));
    };
    let bytes = (crate::study::scale::parse_kb(ram)? * 1024.0) as u64;
    let pid = server.embedded.as_ref().and_then(|e| e.pid());
    let outcome = match pid {
        None => Err(format!(
            "the {:?} server does not run on this machine under hotlab",
            server.kind
        )),
        Some(pid) => crate::server::memlimit::confine(pid as i32, bytes),
    };
    Ok(match outcome {
        Ok(c) => {
            eprintln!(
                "hotlab: server confined to {ram} of memory, page cache included (cgroup v{}: {})",
                c.version,
                c.path().display()
            );
            let m = serde_json::json!({"applied": true, "bytes": bytes, "ram": ram,
                                       "cgroup_version": c.version,
                                       "cgroup": c.path().display().to_string()});
            (Some(c), m)
        }
        Err(why) => {
            eprintln!("hotlab: not confining the server to {ram}: {why}");
            (
                None,
                serde_json::json!({"applied": false, "bytes": bytes, "ram": ram, "why": why}),
            )
        }
    })
}

fn run_tprocc(ctx: &Ctx, rd: &RunDir, plan: &ArmPlan, db: &str, size: &TproccSize) -> Result<()> {
    let shape = tprocc::Shape::of(size)?;
    let server = Server::ensure(ctx)?;
    tprocc::check_database(&mut server.connect(db)?, db, shape.profile)?;
    let mut sampler = Sampler::new(&server, db, rd)?;
    let mut csv = CsvAppender::open(&rd.file("workload.csv"), tprocc::driver::WORKLOAD_HEADER)?;
    eprintln!(
        "hotlab: tprocc ({}): {} VUs on {} warehouse(s), ramp-up {} s, measured {} s",
        shape.profile.name(),
        shape.vus,
        shape.warehouses,
        shape.rampup_s,
        shape.duration_s
    );
    let (limit, mut memory_limit) = confine(&server, size.ram.as_deref())?;
    if !memory_limit.is_null() {
        rd.set_meta("memory_limit", memory_limit.clone())?;
    }
    let out = tprocc::driver::run(&server, db, &shape, &mut sampler, &mut csv);
    if let Some(c) = &limit {
        let (now, peak) = c.usage();
        memory_limit["usage_bytes_end"] = serde_json::json!(now);
        memory_limit["usage_bytes_peak"] = serde_json::json!(peak);
        rd.set_meta("memory_limit", memory_limit)?;
    }
    drop(limit);
    let out = out.context("the TPROC-C run did not finish (the samples taken so far are kept)")?;
    write_json_atomic(&rd.file("workload.json"), &out.json)?;
    // A complete run of a scale model tells the next `init` how fast this machine churns.
    if plan.scale.is_some() && !out.interrupted && out.nopm > 0.0 {
        let key = crate::churn::key(&plan.study, &plan.size, shape.warehouses, shape.vus);
        crate::churn::record(&ctx.home, &key, out.nopm / shape.warehouses as f64)?;
    }
    wait_for_backends(sampler.client(), db)?;
    sampler.take("post")?;
    eprintln!("hotlab: NOPM {:.0}, TPM {:.0}", out.nopm, out.tpm);
    Ok(())
}
