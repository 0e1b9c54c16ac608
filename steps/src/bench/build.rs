//! `bench build`: bytes per second of a fresh TPROC-C build against `pgbench -i -I dtgvp` of
//! about the same size, and the template rebuild (`CREATE DATABASE … TEMPLATE`) against the
//! fresh build. Each timed build starts after a CHECKPOINT and ends with one.

use std::time::Instant;

use anyhow::{bail, Result};
use serde_json::json;

use super::runner::{out_dir, Runner};
use super::{checkpoint, db_bytes, figures, libpq_env, tprocc_loader};
use crate::build::{load_template, Loader};
use crate::ctx::Ctx;
use crate::io::write_json_atomic;
use crate::server::Server;

/// hotlab's arm: a fresh TPROC-C template load to a durable database (a CHECKPOINT before and
/// after), then a copy of it, as `build` makes an arm's database.
fn hotlab_build(server: &Server, loader: &Loader) -> Result<Vec<(String, f64)>> {
    server.drop_own_database("hotlab_bench_pgbench")?;
    checkpoint(server)?;
    let t = Instant::now();
    load_template(server, "hotlab_bench_build", loader)?;
    checkpoint(server)?;
    let secs = t.elapsed().as_secs_f64();
    let bytes = db_bytes(server, "hotlab_bench_build")?;
    let t = Instant::now();
    server.create_own_database("hotlab_bench_copy", Some("hotlab_bench_build"))?;
    checkpoint(server)?;
    let copy = t.elapsed().as_secs_f64();
    eprintln!(
        "  hotlab build: {} MiB in {secs:.1} s; template copy {copy:.2} s",
        bytes / 1048576
    );
    Ok(figures(&[
        ("bytes_per_s", bytes as f64 / secs),
        ("bytes", bytes as f64),
        ("seconds", secs),
        ("template_copy_s", copy),
    ]))
}

/// pgbench's arm: `pgbench -i` at the scale of about the same bytes, to a durable database.
fn pgbench_init(server: &Server, scale: i64) -> Result<Vec<(String, f64)>> {
    server.drop_own_database("hotlab_bench_build")?;
    server.drop_own_database("hotlab_bench_pgbench")?;
    server.create_own_database("hotlab_bench_pgbench", None)?;
    checkpoint(server)?;
    let t = Instant::now();
    let scale_s = scale.to_string();
    let run = crate::proc::run_killable(
        "pgbench -i",
        duct::cmd!(
            server.bin("pgbench"),
            "-i",
            "-q",
            "-I",
            "dtgvp",
            "-s",
            scale_s
        )
        .full_env(libpq_env(server, "hotlab_bench_pgbench")),
    )?;
    if !run.status.success() {
        bail!("pgbench -i failed: {}", run.output.trim());
    }
    checkpoint(server)?;
    let secs = t.elapsed().as_secs_f64();
    let bytes = db_bytes(server, "hotlab_bench_pgbench")?;
    eprintln!(
        "  pgbench -i -s {scale}: {} MiB in {secs:.1} s",
        bytes / 1048576
    );
    Ok(figures(&[
        ("bytes_per_s", bytes as f64 / secs),
        ("bytes", bytes as f64),
        ("seconds", secs),
    ]))
}

pub(crate) fn bench_build(
    ctx: &Ctx,
    server: &Server,
    warehouses: i64,
    repeats: u32,
    warmup: u32,
) -> Result<()> {
    if warehouses < 1 {
        bail!("--warehouses must be at least 1");
    }
    let dir = out_dir(&ctx.runs_dir(), "build")?;
    let loader = tprocc_loader(warehouses)?;
    // pgbench scale with about the same bytes (≈103 MB per warehouse, ≈15.6 MB per scale).
    let scale = ((warehouses as f64 * 103.0 / 15.6).round() as i64).max(1);
    let runner = Runner {
        arms: &["hotlab", "pgbench"],
        repeats,
        warmup,
        dir: dir.clone(),
    };
    let samples = runner.run(|arm, _| {
        server.drop_own_database("hotlab_bench_copy")?;
        if arm == "hotlab" {
            hotlab_build(server, &loader)
        } else {
            pgbench_init(server, scale)
        }
    })?;
    for db in [
        "hotlab_bench_copy",
        "hotlab_bench_build",
        "hotlab_bench_pgbench",
    ] {
        server.drop_own_database(db)?;
    }
    let ratio = samples.ratio(("hotlab", "bytes_per_s"), ("pgbench", "bytes_per_s"));
    let tpl = samples.ratio(("hotlab", "seconds"), ("hotlab", "template_copy_s"));
    println!(
        "bench build ({warehouses} warehouses, order {})",
        samples.order
    );
    println!(
        "  hotlab fresh build   {:>8.1} MB/s  (spread {:.0} %)",
        samples.mean("hotlab", "bytes_per_s") / 1e6,
        samples.spread("hotlab", "bytes_per_s")
    );
    println!(
        "  pgbench -i -I dtgvp  {:>8.1} MB/s  (spread {:.0} %)",
        samples.mean("pgbench", "bytes_per_s") / 1e6,
        samples.spread("pgbench", "bytes_per_s")
    );
    println!("  ratio                {ratio:>8.2}x   (target >= 1.2)");
    println!(
        "  template rebuild     {:>8.2} s vs fresh {:.1} s: {tpl:.0}x faster (target >= 10)",
        samples.mean("hotlab", "template_copy_s"),
        samples.mean("hotlab", "seconds")
    );
    write_json_atomic(
        &dir.join("result.json"),
        &json!({"what": "build", "warehouses": warehouses, "pgbench_scale": scale,
                "order": samples.order, "runs": samples.json(),
                "hotlab_bytes_per_s": samples.mean("hotlab", "bytes_per_s"),
                "pgbench_bytes_per_s": samples.mean("pgbench", "bytes_per_s"),
                "ratio": ratio, "template_speedup": tpl}),
    )?;
    Ok(())
}
