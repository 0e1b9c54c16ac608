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

pub(crate) mod analyze;
pub(crate) mod build;
pub(crate) mod driver;
pub(crate) mod runner;
pub(crate) mod snapshot;

use anyhow::Result;

use crate::build::{ensure_template, Loader};
use crate::ctx::Ctx;
use crate::server::Server;
use crate::workload::tprocc::size::TproccSize;

#[derive(clap::Args, Debug)]
pub struct Args {
    #[command(subcommand)]
    pub(crate) what: What,
}

/// The TPROC-C load of a driver benchmark.
#[derive(clap::Args, Debug, Clone, Copy)]
pub(crate) struct Load {
    /// Warehouses in the database (the quick size has 4)
    #[arg(long, default_value_t = 4)]
    pub(crate) warehouses: i64,
    /// Clients (virtual users)
    #[arg(long, default_value_t = 2)]
    pub(crate) vus: u32,
    /// Seconds per run
    #[arg(long, default_value_t = 60.0, value_parser = crate::study::bounds::parse_duration)]
    pub(crate) duration: f64,
    /// Pairs of runs (2 = A B B A)
    #[arg(long, default_value_t = 2)]
    pub(crate) repeats: u32,
    /// Unmeasured rounds (A B) before the measured ones
    #[arg(long, default_value_t = 0)]
    pub(crate) warmup: u32,
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
        let loader = crate::workload::tprocc::Shape::of(&size)?.loader();
        let (template, _) = ensure_template(server, &loader, false)?;
        Ok((size, template))
    }
}

#[derive(clap::Subcommand, Debug)]
pub(crate) enum What {
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
pub(crate) fn cpu_seconds(who: i32) -> f64 {
    // SAFETY: getrusage fills the struct we pass; RUSAGE_SELF/CHILDREN are valid selectors.
    let mut u: libc::rusage = unsafe { std::mem::zeroed() };
    unsafe { libc::getrusage(who, &mut u) };
    let t = |tv: libc::timeval| tv.tv_sec as f64 + tv.tv_usec as f64 / 1e6;
    t(u.ru_utime) + t(u.ru_stime)
}

/// The loader of a default TPROC-C size of `warehouses`.
pub(crate) fn tprocc_loader(warehouses: i64) -> Result<Loader> {
    let size = TproccSize {
        warehouses: Some(warehouses),
        ..Default::default()
    };
    Ok(crate::workload::tprocc::Shape::of(&size)?.loader())
}

pub(crate) fn db_bytes(server: &Server, db: &str) -> Result<i64> {
    Ok(server
        .connect(db)?
        .query_one("SELECT pg_database_size(current_database())", &[])?
        .get(0))
}

/// Every timed build ends with a CHECKPOINT (and starts after one), so each figure is the time to
/// a durable database, not to dirty buffers that the next step would pay for.
pub(crate) fn checkpoint(server: &Server) -> Result<()> {
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
        return analyze::bench_analyze(ctx, *runs, *samples, *repeats);
    }
    // A benchmark is a workload too: never while an arm holds the server.
    crate::server::lease::ensure_free(ctx)?;
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
        } => build::bench_build(ctx, &server, *warehouses, *repeats, *warmup),
        What::Driver { load } => driver::bench_driver(ctx, &server, load),
        What::Snapshot { load, every } => snapshot::bench_snapshot(ctx, &server, load, *every),
        What::Analyze { .. } => unreachable!("handled before the server starts"),
    }
}

/// Named figures of one run.
pub(crate) fn figures(v: &[(&str, f64)]) -> Vec<(String, f64)> {
    v.iter().map(|(k, x)| (k.to_string(), *x)).collect()
}

/// A pgbench child's environment: this process's without libpq's variables, plus the server's
/// resolved settings (`ConnInfo::child_env`).
pub(crate) fn libpq_env(server: &Server, db: &str) -> std::collections::HashMap<String, String> {
    server.conn.child_env(db).into_iter().collect()
}
