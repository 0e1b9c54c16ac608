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
use crate::study::{ArmPlan, PgbenchSize, Size, SpvSize, TproccSize};
use crate::workload::script::txlog;
use crate::workload::{pgbench, script, spv, tprocc};

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
    #[arg(long, env = crate::env::RUN)]
    pub run: PathBuf,
    /// TPROC-C: virtual users, 1 to 10,000 (default: the size's)
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..=10_000))]
    pub vus: Option<u32>,
    /// TPROC-C and pgbench scripts: ramp-up seconds, 0 to 7 days (default: the size's)
    #[arg(long, value_parser = crate::study::bounds::parse_seconds)]
    pub rampup: Option<f64>,
    /// TPROC-C and pgbench scripts: measured seconds, 1 to 7 days (default: the size's)
    #[arg(long, value_parser = crate::study::bounds::parse_duration)]
    pub duration: Option<f64>,
}

pub fn run(ctx: &Ctx, args: &Args) -> Result<()> {
    // Check first: arguments (clap, with their bounds), then the arm's state, then (in
    // cycle_step) its lock and the server's lease; only then is anything moved or recorded.
    let rd = RunDir::open(&args.run)?;
    let db = rd.database()?;
    let plan = rd.plan()?;
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
    // A retry: the failed or interrupted attempt's files go aside, whole, and this one starts
    // clean (analyze reads only the arm directory's own files). Only under the arm's lock: a
    // second `run` refused because the first still runs moves nothing.
    let retry = || -> Result<()> {
        if let Some(status) = previous.as_deref().filter(|_| ran) {
            let to = rd.move_attempt_aside()?;
            eprintln!(
                "hotlab: the previous run ({status}) moved to {}; this attempt starts clean. Its database already ran part of a workload: for a cold, clean start run the whole arm again (`just arm {}`)",
                to.display(),
                rd.path.display()
            );
        }
        Ok(())
    };
    catch_interrupts();
    crate::server::lease::cycle_step(ctx, &rd, "run", true, retry, || {
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
            Size::Pgbench(mut size) => {
                if let Some(r) = args.rampup {
                    size.rampup_s = Some(r);
                }
                if let Some(d) = args.duration {
                    size.duration_s = Some(d);
                    size.transactions = None;
                }
                run_script(ctx, &rd, &plan, &db, &size)
            }
        }
    })
}

pub const SCRIPT_WORKLOAD_HEADER: &[&str] = &[
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

/// A pgbench-script study: pgbench runs the scripts while the sampler takes `rampup` samples,
/// one `measured` sample when the ramp-up ends (the window's start), `measured` samples every
/// `snapshot_every_s`, and a last one after every backend has flushed its statistics.
/// workload.csv and workload.json come from pgbench's per-transaction logs (latency
/// percentiles per second and over the window); check.json from the row counters.
fn run_script(ctx: &Ctx, rd: &RunDir, plan: &ArmPlan, db: &str, size: &PgbenchSize) -> Result<()> {
    let shape = script::Shape::of(size)?;
    let files = script::files_of(plan)?;
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
        "measured"
    } else {
        "rampup"
    })?;
    let args = shape.pgbench_args(files, &scripts, db);
    let inv = pgbench::Invocation {
        bin: server.bin("pgbench"),
        env: server.conn.child_env(db),
        args: args.clone(),
        log_prefix: rd.file("pgbench_log"),
        aggregate: false,
    };
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
    let stop = Arc::new(AtomicBool::new(false));
    let start_epoch_us = epoch_us();
    let sampling = start_sampler(sampler, every, rampup, stop.clone());
    let result = pgbench::run(&inv, interrupted);
    stop.store(true, Ordering::SeqCst);
    let Sampled {
        mut sampler,
        n: n_samples,
        max_ms,
        measured_from_us: boundary,
    } = sampling
        .join()
        .map_err(|_| anyhow::anyhow!("the sampling thread panicked"))??;
    let end_epoch_us = epoch_us();
    wait_for_backends(sampler.client(), db)?;
    if boundary == 0 {
        bail!(
            "pgbench ended within the ramp-up ({} s): nothing was measured; lower rampup_s or give the size more transactions",
            shape.rampup_s
        );
    }
    sampler.take("measured")?;
    let (summary, _) = result?;

    let txns = txlog::read(&rd.file("pgbench_log"))?;
    let mut csv = CsvAppender::open(&rd.file("workload.csv"), SCRIPT_WORKLOAD_HEADER)?;
    let opt = |v: Option<f64>| v.map(|x| format!("{x:.3}")).unwrap_or_default();
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
    let window: Vec<txlog::Txn> = txns
        .iter()
        .copied()
        .filter(|t| t.end_us >= boundary)
        .collect();
    let measured = txlog::figures(&window);
    // The window's latencies as a histogram: analyze pools an arm's repeats by merging these.
    let mut hist = crate::stats::new_histogram();
    for t in &window {
        if let Some(l) = t.latency_us {
            let _ = hist.record(l.max(1));
        }
    }
    let measured_s = (end_epoch_us - boundary) as f64 / 1e6;
    let last_end = txns.last().map(|t| t.end_us).unwrap_or(end_epoch_us);
    let final_from = last_end - every.as_micros() as i64;
    let final_n = window
        .iter()
        .filter(|t| t.end_us > final_from && t.latency_us.is_some())
        .count();
    let all = txlog::figures(&txns);
    let version = crate::proc::version(&server.bin("pgbench"));
    let out = json!({
        "workload": "pgbench",
        "tool": version,
        "command": std::iter::once("pgbench".to_string()).chain(args).collect::<Vec<_>>(),
        "scripts": files.scripts.iter().map(|s| json!({"file": s.name, "weight": s.weight})).collect::<Vec<_>>(),
        "protocol": files.protocol.name(),
        "clients": shape.clients,
        "jobs": shape.jobs,
        "random_seed": shape.random_seed,
        "rampup_s": shape.rampup_s,
        "measured_s": measured_s,
        "start_epoch_us": start_epoch_us,
        "measured_from_epoch_us": boundary,
        "transactions": measured.transactions,
        "failed": measured.failures,
        "tps": measured.transactions as f64 / measured_s.max(1e-9),
        "tps_final_sample": final_n as f64 / every.as_secs_f64(),
        "final_sample_s": every.as_secs_f64(),
        "latency_avg_ms": measured.latency_avg_ms,
        "latency_p50_ms": measured.latency_p50_ms,
        "latency_p95_ms": measured.latency_p95_ms,
        "latency_p99_ms": measured.latency_p99_ms,
        "latency_max_ms": measured.latency_max_ms,
        "hist_us": crate::stats::hist_buckets(&hist),
        "transactions_all": all.transactions,
        "failed_all": all.failures,
        "pgbench_reported": {"transactions": summary.transactions, "failed": summary.failed,
                              "tps": summary.tps, "latency_avg_ms": summary.latency_avg_ms},
        "wall_s": summary.wall_s,
        "samples_during_run": n_samples,
        "sample_ms_max": max_ms,
        "interrupted": interrupted(),
    });
    write_json_atomic(&rd.file("workload.json"), &out)?;

    if let (Some(chk), Some(before)) = (&files.check, written_before) {
        let after = rows_written(sampler.client(), &chk.table)?;
        let expected = all.transactions as i64 * chk.rows_per_transaction as i64;
        let ok = after - before == expected || interrupted();
        write_check(
            rd,
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
                all.transactions
            );
        }
    }
    // After the closing sample: this read of the table changes nothing measured.
    if let Some(h) = &files.hot_rows {
        crate::snapshot::record_hot_rows(sampler.client(), rd, h, "end")?;
    }
    eprintln!(
        "hotlab: {} transactions in the measured {measured_s:.1} s ({:.1} TPS; p95 {} ms)",
        measured.transactions,
        measured.transactions as f64 / measured_s.max(1e-9),
        opt(measured.latency_p95_ms)
    );
    Ok(())
}

/// check.json with one condition: what was expected, what was found.
fn write_check(rd: &RunDir, name: &str, expected: i64, got: i64, ok: bool) -> Result<()> {
    write_json_atomic(
        &rd.file("check.json"),
        &json!({
            "ok": ok,
            "conditions": [{
                "name": name,
                "expected": expected,
                "got": got,
                "violations": if ok { 0 } else { 1 },
            }],
        }),
    )
}

fn epoch_us() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_micros() as i64)
        .unwrap_or(0)
}

/// What the sampling thread hands back: the sampler, how many samples it took, the longest one,
/// and when the measured window began (µs since the epoch; 0 if the ramp-up never ended).
struct Sampled {
    sampler: Sampler,
    n: u32,
    max_ms: u128,
    measured_from_us: i64,
}

/// Samples on its own thread until told to stop: `rampup` samples every `every` during the
/// ramp-up, one `measured` sample the moment it ends (the window's start), then `measured`
/// samples every `every`. With no ramp-up the window starts now.
fn start_sampler(
    mut sampler: Sampler,
    every: Duration,
    rampup: Duration,
    stop: Arc<AtomicBool>,
) -> std::thread::JoinHandle<Result<Sampled>> {
    std::thread::spawn(move || {
        let started = Instant::now();
        let (mut n, mut max_ms) = (0u32, 0u128);
        let mut measured_from_us = if rampup.is_zero() { epoch_us() } else { 0 };
        let mut next = started
            + if rampup.is_zero() {
                every
            } else {
                every.min(rampup)
            };
        while !stop.load(Ordering::SeqCst) {
            let now = Instant::now();
            let took = if measured_from_us == 0 && now >= started + rampup {
                measured_from_us = epoch_us();
                next = now + every;
                Some(sampler.take("measured")?)
            } else if now >= next {
                next += every;
                let phase = if measured_from_us == 0 {
                    "rampup"
                } else {
                    "measured"
                };
                Some(sampler.take(phase)?)
            } else {
                None
            };
            if let Some(took) = took {
                n += 1;
                max_ms = max_ms.max(took.as_millis());
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        Ok(Sampled {
            sampler,
            n,
            max_ms,
            measured_from_us,
        })
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
    let sampling = start_sampler(sampler, every, Duration::ZERO, stop.clone());

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
    let result = pgbench::run(&inv, interrupted);
    stop.store(true, Ordering::SeqCst);
    let Sampled {
        mut sampler,
        n: n_samples,
        max_ms,
        ..
    } = sampling
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
    write_check(
        rd,
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
    let out = tprocc::driver::run(&server, db, &shape, &mut sampler, &rd.path);
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
