//! `bench driver`: hotlab's TPROC-C driver against pgbench doing the same server work: the same
//! functions (New-Order through the same exception wrapper in both arms), the same 10/10/1/1/1
//! mix (weighted `-f` scripts), each client on the same home warehouses (HammerDB's
//! all-warehouses lists: client k draws from k, k + clients, …), same clients and duration.
//! Per arm: TPS, and where a transaction's time goes: server execution (pg_stat_statements,
//! top-level calls), client CPU, and the rest (round trips, lock waits, scheduling). Also the
//! driver run `bench snapshot` repeats.

use anyhow::{bail, Result};
use serde_json::json;

use super::runner::{out_dir, Runner};
use super::{cpu_seconds, figures, libpq_env, Load};
use crate::ctx::Ctx;
use crate::io::write_json_atomic;
use crate::rundir::RunDir;
use crate::server::Server;
use crate::snapshot::Sampler;
use crate::workload::{pgbench, tprocc};

const PGBENCH_SCRIPTS: &[(&str, &str, u32)] = &[
    (
        "new_order.pgbench",
        include_str!("../../sql/bench/new_order.pgbench"),
        10,
    ),
    (
        "payment.pgbench",
        include_str!("../../sql/bench/payment.pgbench"),
        10,
    ),
    (
        "delivery.pgbench",
        include_str!("../../sql/bench/delivery.pgbench"),
        1,
    ),
    (
        "stock_level.pgbench",
        include_str!("../../sql/bench/stock_level.pgbench"),
        1,
    ),
    (
        "order_status.pgbench",
        include_str!("../../sql/bench/order_status.pgbench"),
        1,
    ),
];
const WRAPPERS: &str = include_str!("../../sql/bench/pgbench_wrappers.sql");

const DB: &str = "hotlab_bench_driver";

/// A fresh copy of the template with the wrapper, and pg_stat_statements emptied, so the server
/// time read after the run is this run's.
pub(crate) fn fresh_db(server: &Server, template: &str) -> Result<()> {
    server.drop_own_database(DB)?;
    server.create_own_database(DB, Some(template))?;
    let mut c = server.connect(DB)?;
    c.batch_execute(WRAPPERS)?;
    c.batch_execute("SELECT pg_stat_statements_reset()")?;
    Ok(())
}

/// The five transactions' top-level calls in the benchmark database since `fresh_db`: server
/// execution milliseconds per call, and the calls.
fn server_ms_per_call(server: &Server) -> Result<(f64, i64)> {
    let r = server.connect(DB)?.query_one(
        "SELECT coalesce(sum(s.total_exec_time), 0)::float8, coalesce(sum(s.calls), 0)::int8 \
         FROM pg_stat_statements s JOIN pg_database d ON d.oid = s.dbid \
         WHERE d.datname = $1 AND s.toplevel \
           AND s.query ~* '^select (neword_caught|payment|ostat|delivery|slev)\\('",
        &[&DB],
    )?;
    let (ms, calls): (f64, i64) = (r.get(0), r.get(1));
    Ok((if calls > 0 { ms / calls as f64 } else { 0.0 }, calls))
}

pub(crate) fn bench_driver(ctx: &Ctx, server: &Server, load: &Load) -> Result<()> {
    let Load {
        warehouses,
        vus,
        duration,
        repeats,
        warmup,
    } = *load;
    let dir = out_dir(&ctx.runs_dir(), "driver")?;
    let (size, template) = load.size_and_template(server)?;
    let shape = tprocc::Shape::of(&size)?;
    for (name, text, _) in PGBENCH_SCRIPTS {
        std::fs::write(dir.join(name), text)?;
    }
    let runner = Runner {
        arms: &["hotlab", "pgbench"],
        repeats,
        warmup,
        dir: dir.clone(),
    };
    let samples = runner.run(|arm, k| {
        if arm == "hotlab" {
            hotlab_run(
                server,
                &template,
                &shape,
                &dir.join(format!("hotlab-{k}")),
                duration,
            )
        } else {
            pgbench_run(server, &template, &dir, load)
        }
    })?;
    server.drop_own_database(DB)?;
    let tps_ratio = samples.ratio(("hotlab", "tps"), ("pgbench", "tps"));
    let cpu_ratio = samples.ratio(("hotlab", "cpu_s_per_1000"), ("pgbench", "cpu_s_per_1000"));
    println!(
        "bench driver ({warehouses} warehouses, {vus} clients, {duration} s per run, order {})",
        samples.order
    );
    println!(
        "  hotlab   {:>8.1} TPS (spread {:.0} %)  {:.3} CPU s / 1,000 (VU threads; whole process {:.3})",
        samples.mean("hotlab", "tps"),
        samples.spread("hotlab", "tps"),
        samples.mean("hotlab", "cpu_s_per_1000"),
        samples.mean("hotlab", "process_cpu_s_per_1000")
    );
    println!(
        "  pgbench  {:>8.1} TPS (spread {:.0} %)  {:.3} CPU s / 1,000",
        samples.mean("pgbench", "tps"),
        samples.spread("pgbench", "tps"),
        samples.mean("pgbench", "cpu_s_per_1000")
    );
    println!(
        "  TPS ratio {tps_ratio:.2} (target >= 1.0); CPU ratio {cpu_ratio:.2} (target <= 1.0)"
    );
    // Where a transaction's time goes, per client: wall = clients / TPS; the server's execution
    // of the call; the client's CPU; the rest is round trips, lock waits and scheduling.
    println!("  per transaction and client (ms): wall = server + client CPU + rest");
    for arm in ["hotlab", "pgbench"] {
        let wall = samples.mean(arm, "wall_ms_per_txn");
        let srv = samples.mean(arm, "server_ms_per_txn");
        let cpu = samples.mean(arm, "cpu_s_per_1000");
        println!(
            "  {arm:<8} {wall:>7.3} = {srv:.3} + {cpu:.3} + {:.3}",
            wall - srv - cpu
        );
    }
    write_json_atomic(
        &dir.join("result.json"),
        &json!({"what": "driver", "warehouses": warehouses, "vus": vus, "duration_s": duration,
                "order": samples.order, "runs": samples.json(), "tps_ratio": tps_ratio,
                "cpu_ratio": cpu_ratio,
                "process_cpu_ratio": samples.ratio(("hotlab", "process_cpu_s_per_1000"), ("pgbench", "cpu_s_per_1000"))}),
    )?;
    Ok(())
}

/// One hotlab arm run: TPS, the VU threads' CPU (the monitor and the statistics sampler, which
/// pgbench does not have, are reported apart as the whole process's), and the server's time.
fn hotlab_run(
    server: &Server,
    template: &str,
    shape: &tprocc::Shape,
    dir: &std::path::Path,
    duration: f64,
) -> Result<Vec<(String, f64)>> {
    let vus = shape.vus;
    let c0 = cpu_seconds(libc::RUSAGE_SELF);
    let (out, _) = driver_run(server, template, shape, dir)?;
    let process = cpu_seconds(libc::RUSAGE_SELF) - c0;
    let (server_ms, _) = server_ms_per_call(server)?;
    // The load generator is the VU threads; the monitor and the statistics sampler
    // (which pgbench does not have) are reported apart.
    let t = out.client_transactions_per_s;
    let per_k = out.vu_cpu_s / (t * duration / 1000.0);
    let per_k_process = process / (t * duration / 1000.0);
    eprintln!(
        "  hotlab driver: {t:.1} TPS, {per_k:.3} CPU s per 1,000 (whole process {per_k_process:.3}), server {server_ms:.3} ms per call"
    );
    Ok(figures(&[
        ("tps", t),
        ("server_ms_per_txn", server_ms),
        ("wall_ms_per_txn", 1000.0 * vus as f64 / t.max(1e-9)),
        ("cpu_s", out.vu_cpu_s),
        ("process_cpu_s", process),
        ("cpu_s_per_1000", per_k),
        ("process_cpu_s_per_1000", per_k_process),
    ]))
}

/// One pgbench arm run: the same functions, mix, clients, home warehouses and duration.
fn pgbench_run(
    server: &Server,
    template: &str,
    dir: &std::path::Path,
    load: &Load,
) -> Result<Vec<(String, f64)>> {
    let Load {
        warehouses,
        vus,
        duration,
        ..
    } = *load;
    fresh_db(server, template)?;
    let mut a = vec![
        "-n".to_string(),
        "-M".into(),
        "prepared".into(),
        "-c".into(),
        vus.to_string(),
        "-j".into(),
        vus.to_string(),
        "-T".into(),
        format!("{}", duration.round() as i64),
        "-D".into(),
        format!("max_w={warehouses}"),
        "-D".into(),
        format!("vus={vus}"),
        "-D".into(),
        format!("per={}", (warehouses as u32).div_ceil(vus).max(1)),
    ];
    for (name, _, w) in PGBENCH_SCRIPTS {
        a.push("-f".into());
        a.push(format!("{}@{w}", dir.join(name).display()));
    }
    a.push(DB.into());
    let c0 = cpu_seconds(libc::RUSAGE_CHILDREN);
    let run = crate::proc::run_killable(
        "pgbench",
        duct::cmd(server.bin("pgbench"), &a).full_env(libpq_env(server, DB)),
    )?;
    let c = cpu_seconds(libc::RUSAGE_CHILDREN) - c0;
    if !run.status.success() {
        bail!(
            "pgbench failed: {}",
            run.output
                .lines()
                .rev()
                .take(3)
                .collect::<Vec<_>>()
                .join(" | ")
        );
    }
    let s = pgbench::parse_summary(&run.output);
    let t = s.tps.unwrap_or(0.0);
    let per_k = c / (s.transactions as f64 / 1000.0);
    let (server_ms, _) = server_ms_per_call(server)?;
    eprintln!(
        "  pgbench:       {t:.1} TPS, {per_k:.3} CPU s per 1,000, server {server_ms:.3} ms per call"
    );
    Ok(figures(&[
        ("tps", t),
        ("server_ms_per_txn", server_ms),
        ("wall_ms_per_txn", 1000.0 * vus as f64 / t.max(1e-9)),
        ("transactions", s.transactions as f64),
        ("cpu_s", c),
        ("cpu_s_per_1000", per_k),
    ]))
}

/// One driver run on a fresh copy of `template`, snapshots in `dir`; returns workload.json's
/// content and how long each snapshot took (ms).
pub(crate) fn driver_run(
    server: &Server,
    template: &str,
    shape: &tprocc::Shape,
    dir: &std::path::Path,
) -> Result<(tprocc::driver::Outcome, Vec<f64>)> {
    fresh_db(server, template)?;
    let rd = RunDir {
        path: dir.to_path_buf(),
    };
    std::fs::create_dir_all(rd.file("snapshots"))?;
    let mut sampler = Sampler::new(server, DB, &rd)?;
    // The same New-Order call as pgbench's script: through the exception wrapper.
    let shape = tprocc::Shape {
        neword: "neword_caught",
        ..shape.clone()
    };
    let out = tprocc::driver::run(server, DB, &shape, &mut sampler, &rd.path)?;
    Ok((out, sampler.taken_ms.clone()))
}
