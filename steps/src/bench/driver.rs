//! `bench driver`: hotlab's TPROC-C driver against pgbench running the same functions with the
//! same 10/10/1/1/1 mix (weighted `-f` scripts), same clients and duration: TPS and client CPU
//! seconds per 1,000 transactions. Also the driver run `bench snapshot` repeats.

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

pub fn fresh_db(server: &Server, template: &str) -> Result<()> {
    server.drop_own_database("hotlab_bench_driver")?;
    server.create_own_database("hotlab_bench_driver", Some(template))?;
    server
        .connect("hotlab_bench_driver")?
        .batch_execute(WRAPPERS)?;
    Ok(())
}

pub fn bench_driver(ctx: &Ctx, server: &Server, load: &Load) -> Result<()> {
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
            let c0 = cpu_seconds(libc::RUSAGE_SELF);
            let (out, _) = driver_run(server, &template, &shape, &dir.join(format!("hotlab-{k}")))?;
            let process = cpu_seconds(libc::RUSAGE_SELF) - c0;
            // The load generator is the VU threads; the monitor and the statistics sampler
            // (which pgbench does not have) are reported apart.
            let t = out.client_transactions_per_s;
            let per_k = out.vu_cpu_s / (t * duration / 1000.0);
            let per_k_process = process / (t * duration / 1000.0);
            eprintln!(
                "  hotlab driver: {t:.1} TPS, {per_k:.3} CPU s per 1,000 (whole process {per_k_process:.3})"
            );
            Ok(figures(&[
                ("tps", t),
                ("cpu_s", out.vu_cpu_s),
                ("process_cpu_s", process),
                ("cpu_s_per_1000", per_k),
                ("process_cpu_s_per_1000", per_k_process),
            ]))
        } else {
            fresh_db(server, &template)?;
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
            ];
            for (name, _, w) in PGBENCH_SCRIPTS {
                a.push("-f".into());
                a.push(format!("{}@{w}", dir.join(name).display()));
            }
            a.push("hotlab_bench_driver".into());
            let c0 = cpu_seconds(libc::RUSAGE_CHILDREN);
            let run = crate::proc::run_killable(
                "pgbench",
                duct::cmd(server.bin("pgbench"), &a)
                    .full_env(libpq_env(server, "hotlab_bench_driver")),
            )?;
            let c = cpu_seconds(libc::RUSAGE_CHILDREN) - c0;
            if !run.status.success() {
                bail!(
                    "pgbench failed: {}",
                    run.output.lines().rev().take(3).collect::<Vec<_>>().join(" | ")
                );
            }
            let s = pgbench::parse_summary(&run.output);
            let t = s.tps.unwrap_or(0.0);
            let per_k = c / (s.transactions as f64 / 1000.0);
            eprintln!("  pgbench:       {t:.1} TPS, {per_k:.3} CPU s per 1,000");
            Ok(figures(&[
                ("tps", t),
                ("transactions", s.transactions as f64),
                ("cpu_s", c),
                ("cpu_s_per_1000", per_k),
            ]))
        }
    })?;
    server.drop_own_database("hotlab_bench_driver")?;
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
    write_json_atomic(
        &dir.join("result.json"),
        &json!({"what": "driver", "warehouses": warehouses, "vus": vus, "duration_s": duration,
                "order": samples.order, "runs": samples.json(), "tps_ratio": tps_ratio,
                "cpu_ratio": cpu_ratio,
                "process_cpu_ratio": samples.ratio(("hotlab", "process_cpu_s_per_1000"), ("pgbench", "cpu_s_per_1000"))}),
    )?;
    Ok(())
}

/// One driver run on a fresh copy of `template`, snapshots in `dir`; returns workload.json's
/// content and how long each snapshot took (ms).
pub fn driver_run(
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
    let mut sampler = Sampler::new(server, "hotlab_bench_driver", &rd)?;
    let out = tprocc::driver::run(server, "hotlab_bench_driver", shape, &mut sampler, &rd.path)?;
    Ok((out, sampler.taken_ms.clone()))
}
