//! `bench`: benchmarks that print hotlab's figure, pgbench's figure measured in the same run,
//! and their ratio (never timed unit tests). Runs alternate A B B A with `--repeats 2`.
//! - `bench build`: bytes per second of a fresh TPROC-C build vs `pgbench -i -I dtgvp` of a
//!   comparable size, and the template rebuild (`CREATE DATABASE … TEMPLATE`) vs the fresh build.
//!   Each timed build starts after a CHECKPOINT and ends with one: time to a durable database.
//! - `bench driver`: hotlab's driver vs pgbench running the same functions with the same
//!   10/10/1/1/1 mix (weighted `-f` scripts), same clients and duration: TPS and client CPU
//!   seconds per 1,000 transactions.
//!
//! - `bench snapshot`: milliseconds per statistics snapshot on a TPROC-C database (idle and under
//!   load), and the throughput cost of snapshotting every 10 s: the same driver run with and
//!   without, alternating. Targets: ≤ 100 ms, ≤ 1 %.
//! - `bench analyze`: `analyze` over a generated set of 100 runs × 100 samples (shaped like a
//!   real TPROC-C arm's snapshots). Target: ≤ 2 s.
//!
//! Every subcommand runs through one runner (`runner.rs`): alternating order, warm-up rounds,
//! raw samples in `samples.csv`, the statistics and the ratio line.
//! Writes `data/runs/bench/<time>-<what>/` (samples.csv, result.json, the driver's snapshots).

pub mod runner;

use std::time::Instant;

use anyhow::{bail, Result};
use serde_json::json;

use crate::build::{ensure_template, load_template, Loader};
use crate::ctx::Ctx;
use crate::io::{write_json_atomic, CsvAppender};
use crate::rundir::RunDir;
use crate::server::Server;
use crate::snapshot::Sampler;
use crate::study::{Size, TproccSize};
use crate::workload::{pgbench, tprocc};
use runner::{out_dir, Runner};

#[derive(clap::Args, Debug)]
pub struct Args {
    #[command(subcommand)]
    pub what: What,
}

/// The TPROC-C load of a driver benchmark.
#[derive(clap::Args, Debug, Clone, Copy)]
pub struct Load {
    /// Warehouses in the database (the quick size has 4)
    #[arg(long, default_value_t = 4)]
    pub warehouses: i64,
    /// Clients (virtual users)
    #[arg(long, default_value_t = 2)]
    pub vus: u32,
    /// Seconds per run
    #[arg(long, default_value_t = 60.0)]
    pub duration: f64,
    /// Pairs of runs (2 = A B B A)
    #[arg(long, default_value_t = 2)]
    pub repeats: u32,
    /// Unmeasured rounds (A B) before the measured ones
    #[arg(long, default_value_t = 0)]
    pub warmup: u32,
}

impl Load {
    /// The TPROC-C size of these runs (no ramp-up, HammerDB's all-warehouses mode, snapshots only
    /// at the window's ends) and the template it is built from.
    fn size_and_template(&self, server: &Server) -> Result<(TproccSize, String)> {
        let size = TproccSize {
            warehouses: Some(self.warehouses),
            vus: Some(self.vus),
            duration_s: Some(self.duration),
            rampup_s: Some(0.0),
            snapshot_every_s: Some(self.duration),
            all_warehouses: Some(true),
            ..Default::default()
        };
        let loader = Loader::for_size(&Size::Tprocc(size.clone()))?;
        let (template, _) = ensure_template(server, &loader, false)?;
        Ok((size, template))
    }
}

#[derive(clap::Subcommand, Debug)]
pub enum What {
    /// Fresh TPROC-C build vs `pgbench -i` (bytes/s), and template rebuild vs fresh build
    Build {
        /// Warehouses to build
        #[arg(long, default_value_t = 4)]
        warehouses: i64,
        /// Pairs of runs (2 = A B B A)
        #[arg(long, default_value_t = 2)]
        repeats: u32,
        /// Unmeasured rounds (A B) before the measured ones
        #[arg(long, default_value_t = 0)]
        warmup: u32,
    },
    /// hotlab's TPROC-C driver vs pgbench on the same functions and mix
    Driver {
        #[command(flatten)]
        load: Load,
    },
    /// Milliseconds per snapshot, and the throughput cost of snapshotting every 10 s
    Snapshot {
        #[command(flatten)]
        load: Load,
        /// Snapshot interval of the "with" runs, seconds
        #[arg(long, default_value_t = 10.0)]
        every: f64,
    },
    /// `analyze` over generated run directories
    Analyze {
        /// Runs to generate
        #[arg(long, default_value_t = 100)]
        runs: usize,
        /// Measured samples per run
        #[arg(long, default_value_t = 100)]
        samples: usize,
        /// Timed passes (the median is the figure)
        #[arg(long, default_value_t = 3)]
        repeats: u32,
    },
}

/// CPU seconds (user + system) of this process or of its waited-for children.
fn cpu_seconds(who: i32) -> f64 {
    // SAFETY: getrusage fills the struct we pass; RUSAGE_SELF/CHILDREN are valid selectors.
    let mut u: libc::rusage = unsafe { std::mem::zeroed() };
    unsafe { libc::getrusage(who, &mut u) };
    let t = |tv: libc::timeval| tv.tv_sec as f64 + tv.tv_usec as f64 / 1e6;
    t(u.ru_utime) + t(u.ru_stime)
}

fn tprocc_size(warehouses: i64) -> Size {
    Size::Tprocc(TproccSize {
        warehouses: Some(warehouses),
        ..Default::default()
    })
}

fn db_bytes(server: &Server, db: &str) -> Result<i64> {
    Ok(server
        .connect(db)?
        .query_one("SELECT pg_database_size(current_database())", &[])?
        .get(0))
}

/// Every timed build ends with a CHECKPOINT (and starts after one), so each figure is the time to
/// a durable database, not to dirty buffers that the next step would pay for.
fn checkpoint(server: &Server) -> Result<()> {
    server
        .connect(&server.conn.admin_db)?
        .batch_execute("CHECKPOINT")?;
    Ok(())
}

pub fn run(ctx: &Ctx, args: &Args) -> Result<()> {
    crate::interrupt::catch_interrupts();
    if let What::Analyze {
        runs,
        samples,
        repeats,
    } = &args.what
    {
        return bench_analyze(ctx, *runs, *samples, *repeats);
    }
    let server = Server::ensure(ctx)?;
    // Every server benchmark runs on the settings of study 000's quick size (1 GB of shared
    // buffers and the article's WAL and checkpoint settings), whatever the last study left.
    let study = crate::study::load_study(ctx, "hexacluster-tprocc")?;
    let quick = study.sizes.get("quick");
    let settings = crate::study::merge_settings(
        &study.server,
        quick
            .as_ref()
            .map(|s| s.server())
            .unwrap_or(&Default::default()),
    );
    let changed = server.apply_settings(&settings)?;
    if !changed.is_empty() {
        eprintln!(
            "hotlab: bench: applied study 000's quick-size settings: {}",
            changed.join(", ")
        );
    }
    match &args.what {
        What::Build {
            warehouses,
            repeats,
            warmup,
        } => bench_build(ctx, &server, *warehouses, *repeats, *warmup),
        What::Driver { load } => bench_driver(ctx, &server, load),
        What::Snapshot { load, every } => bench_snapshot(ctx, &server, load, *every),
        What::Analyze { .. } => unreachable!("handled before the server starts"),
    }
}

fn bench_build(
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
    let loader = Loader::for_size(&tprocc_size(warehouses))?;
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
            server.drop_own_database("hotlab_bench_pgbench")?;
            checkpoint(server)?;
            let t = Instant::now();
            load_template(server, "hotlab_bench_build", &loader)?;
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
        } else {
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

/// Named figures of one run.
fn figures(v: &[(&str, f64)]) -> Vec<(String, f64)> {
    v.iter().map(|(k, x)| (k.to_string(), *x)).collect()
}

/// This process's environment plus the server's libpq variables, for a pgbench child.
fn libpq_env(server: &Server, db: &str) -> std::collections::HashMap<String, String> {
    std::env::vars().chain(server.conn.libpq_env(db)).collect()
}

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

fn fresh_db(server: &Server, template: &str) -> Result<()> {
    server.drop_own_database("hotlab_bench_driver")?;
    server.create_own_database("hotlab_bench_driver", Some(template))?;
    server
        .connect("hotlab_bench_driver")?
        .batch_execute(WRAPPERS)?;
    Ok(())
}

fn bench_driver(ctx: &Ctx, server: &Server, load: &Load) -> Result<()> {
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
fn driver_run(
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
    let mut csv = CsvAppender::open(&rd.file("workload.csv"), tprocc::driver::WORKLOAD_HEADER)?;
    let out = tprocc::driver::run(server, "hotlab_bench_driver", shape, &mut sampler, &mut csv)?;
    Ok((out, sampler.taken_ms.clone()))
}

fn bench_snapshot(ctx: &Ctx, server: &Server, load: &Load, every: f64) -> Result<()> {
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
        sampler.take("measured")?;
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

/// A TPROC-C arm's snapshot files regenerated with `samples` measured samples: every
/// (object, metric) of the template's last measured sample, counters growing per sample.
fn generate_run(
    template: &std::path::Path,
    to: &std::path::Path,
    samples: usize,
    seed: u64,
) -> Result<()> {
    use std::io::Write as _;
    std::fs::create_dir_all(to.join("snapshots"))?;
    for f in [
        "meta.json",
        "workload.json",
        "fillfactor.json",
        "vacuum.csv",
        "reset.jsonl",
    ] {
        if template.join(f).exists() {
            std::fs::copy(template.join(f), to.join(f))?;
        }
    }
    let t0 = chrono::DateTime::parse_from_rfc3339("2026-01-01T00:00:00Z")?;
    for f in ["tables.csv", "database.csv", "buffers.csv"] {
        let text = std::fs::read_to_string(template.join("snapshots").join(f))?;
        let mut lines = text.lines();
        let header = lines.next().unwrap_or_default();
        let cols: Vec<&str> = header.split(',').collect();
        let (si, pi, vi) = (
            cols.iter().position(|c| *c == "sample").unwrap_or(0),
            cols.iter().position(|c| *c == "phase").unwrap_or(2),
            cols.len() - 1,
        );
        let rows: Vec<Vec<&str>> = lines.map(|l| l.split(',').collect()).collect();
        let last = rows
            .iter()
            .rev()
            .find(|r| r.get(pi) == Some(&"measured"))
            .map(|r| r[si])
            .unwrap_or("1");
        let base: Vec<&Vec<&str>> = rows.iter().filter(|r| r[si] == last).collect();
        let mut out = std::io::BufWriter::new(std::fs::File::create(to.join("snapshots").join(f))?);
        writeln!(out, "{header}")?;
        for s in 1..=samples {
            let ts = (t0 + chrono::Duration::seconds(10 * s as i64))
                .to_rfc3339_opts(chrono::SecondsFormat::Millis, true);
            for r in &base {
                let mut r: Vec<String> = r.iter().map(|x| x.to_string()).collect();
                r[si] = s.to_string();
                r[1] = ts.clone();
                r[pi] = "measured".into();
                if let Ok(v) = r[vi].parse::<f64>() {
                    let grown =
                        v + (s as f64) * ((seed % 7) as f64 + 1.0) * (v.abs().min(1e6) / 100.0);
                    r[vi] = format!("{}", grown.round());
                }
                writeln!(out, "{}", r.join(","))?;
            }
        }
        out.flush()?;
    }
    Ok(())
}

fn bench_analyze(ctx: &Ctx, runs: usize, samples: usize, repeats: u32) -> Result<()> {
    if runs == 0 || samples < 2 {
        bail!("bench analyze needs --runs >= 1 and --samples >= 2");
    }
    let template = crate::ctx::project_root().join("steps/tests/data/tprocc-ci-repeats/default-r1");
    if !template.join("meta.json").exists() {
        bail!(
            "{} is missing: bench analyze needs the repository's test data",
            template.display()
        );
    }
    let dir = out_dir(&ctx.runs_dir(), "analyze")?;
    let set = dir.join("runs");
    let t = Instant::now();
    let mut dirs = vec![];
    for k in 0..runs {
        let d = set.join(format!("run-{k:03}"));
        generate_run(&template, &d, samples, k as u64)?;
        dirs.push(d);
    }
    let generated = t.elapsed().as_secs_f64();
    let mut rows = 0;
    for f in ["tables.csv", "database.csv", "buffers.csv"] {
        rows += std::fs::read_to_string(dirs[0].join("snapshots").join(f))?
            .lines()
            .count();
    }
    // Timed passes (the first with whatever page cache the generation left): median and best.
    let mut analysis = None;
    let runner = Runner {
        arms: &["analyze"],
        repeats,
        warmup: 0,
        dir: dir.clone(),
    };
    let timed = runner.run(|_, _| {
        let t = Instant::now();
        analysis = Some(crate::analyze::analyze_dirs(&dirs, false)?);
        Ok(figures(&[("seconds", t.elapsed().as_secs_f64())]))
    })?;
    let t = Instant::now();
    crate::analyze::write(&dir, analysis.as_ref().expect("one pass at least"))?;
    let report = t.elapsed().as_secs_f64();
    let times = timed.of("analyze", "seconds");
    let mut sorted = times.clone();
    sorted.sort_by(f64::total_cmp);
    let (best, secs) = (sorted[0], sorted[sorted.len() / 2]);
    println!("bench analyze ({runs} runs x {samples} samples, {rows} CSV rows per run; generated in {generated:.1} s)");
    println!(
        "  analyze          {secs:>6.2} s median of {}, best {best:.2} s (target <= 2)",
        times.len()
    );
    println!("  writing the report {report:>4.2} s");
    write_json_atomic(
        &dir.join("result.json"),
        &json!({"what": "analyze", "runs": runs, "samples": samples, "rows_per_run": rows,
                "seconds": times, "median_s": secs, "best_s": best, "report_s": report}),
    )?;
    // The generated set is large and only for this measurement.
    std::fs::remove_dir_all(&set)?;
    Ok(())
}
