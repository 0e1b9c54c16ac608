//! `bench snapshot`: milliseconds per statistics snapshot on a TPROC-C database (idle and under
//! load), and the throughput cost of snapshotting every 10 s: the same driver run with and
//! without, alternating. Targets: ≤ 100 ms, ≤ 1 %.

use anyhow::{bail, Result};
use serde_json::json;

use super::driver::{driver_run, fresh_db};
use super::runner::{out_dir, Runner};
use super::{figures, Load};
use crate::ctx::Ctx;
use crate::io::write_json_atomic;
use crate::rundir::RunDir;
use crate::server::Server;
use crate::snapshot::Sampler;
use crate::workload::tprocc;

pub(crate) fn bench_snapshot(ctx: &Ctx, server: &Server, load: &Load, every: f64) -> Result<()> {
    let Load {
        warehouses,
        vus,
        duration,
        repeats,
        warmup,
    } = *load;
    if every <= 0.0 || every >= duration {
        bail!("--every must be above 0 and below --duration ({duration} s)");
    }
    let dir = out_dir(&ctx.runs_dir(), "snapshot")?;
    let (size, template) = load.size_and_template(server)?;
    // Idle: twenty samples of the whole database.
    fresh_db(server, &template)?;
    let rd = RunDir {
        path: dir.join("idle"),
    };
    std::fs::create_dir_all(rd.file("snapshots"))?;
    let mut sampler = Sampler::new(server, "hotlab_bench_driver", &rd)?;
    for _ in 0..20 {
        sampler.take(crate::snapshot::Phase::Measured)?;
    }
    let idle = sampler.taken_ms.clone();
    drop(sampler);
    // Under load: "with" snapshots every `every` seconds, "without" only at the window's ends.
    let runner = Runner {
        arms: &["with", "without"],
        repeats,
        warmup,
        dir: dir.clone(),
    };
    let samples = runner.run(|arm, k| {
        let mut size = size.clone();
        size.snapshot_every_s = Some(if arm == "with" { every } else { duration });
        let shape = tprocc::Shape::of(&size)?;
        let (out, ms) = driver_run(
            server,
            &template,
            &shape,
            &dir.join(format!("run-{k}-{arm}")),
        )?;
        let tps = out.client_transactions_per_s;
        eprintln!("  {arm:<7} snapshots: {tps:.1} TPS ({} samples)", ms.len());
        let mut f = figures(&[("tps", tps)]);
        f.extend(ms.iter().map(|m| ("snapshot_ms".to_string(), *m)));
        Ok(f)
    })?;
    server.drop_own_database("hotlab_bench_driver")?;
    let loaded_ms = samples.of("with", "snapshot_ms");
    let idle_max = idle.iter().cloned().fold(0.0, f64::max);
    let cost = 100.0 * (1.0 - samples.ratio(("with", "tps"), ("without", "tps")));
    let m = crate::stats::mean;
    println!(
        "bench snapshot ({warehouses} warehouses, {vus} clients, {duration} s per run, every {every} s, order {})",
        samples.order
    );
    println!(
        "  per snapshot, idle        {:>7.1} ms mean, {idle_max:.1} ms max (target <= 100)",
        m(&idle)
    );
    println!(
        "  per snapshot, under load  {:>7.1} ms mean, {:.1} ms max",
        m(&loaded_ms),
        samples.max("with", "snapshot_ms")
    );
    println!(
        "  with snapshots    {:>8.1} TPS (spread {:.1} %)",
        samples.mean("with", "tps"),
        samples.spread("with", "tps")
    );
    println!(
        "  without           {:>8.1} TPS (spread {:.1} %)",
        samples.mean("without", "tps"),
        samples.spread("without", "tps")
    );
    println!("  throughput cost   {cost:>8.2} % (target <= 1; compare with the spreads)");
    // What the spreads cannot resolve: the time the snapshots occupy, as a share of the interval.
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get()) as f64;
    let duty = 100.0 * m(&loaded_ms) / (every * 1000.0);
    println!(
        "  snapshot duty     {duty:>8.2} % of one core every {every} s ({:.2} % of {cores} cores: the cost if the workload used every core)",
        duty / cores
    );
    write_json_atomic(
        &dir.join("result.json"),
        &json!({"what": "snapshot", "warehouses": warehouses, "vus": vus, "duration_s": duration,
                "every_s": every, "idle_ms": idle, "order": samples.order, "runs": samples.json(),
                "idle_ms_mean": m(&idle), "loaded_ms_mean": m(&loaded_ms),
                "tps_with": samples.mean("with", "tps"), "tps_without": samples.mean("without", "tps"),
                "cost_pct": cost, "duty_pct_of_one_core": duty}),
    )?;
    Ok(())
}
