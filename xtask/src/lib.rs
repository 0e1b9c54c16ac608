//! The `cargo xtask` command line: the clap definition of every subcommand and the dispatch to
//! one step of the `steps` library. A library so that tests can read the command tree through
//! clap's `CommandFactory`; `main.rs` only calls `main`. Nothing else lives here.

use clap::{Parser, Subcommand};
use steps::Ctx;

/// hotlab: reproduce PostgreSQL HOT-update and fillfactor studies, and answer the same question
/// for your own tables.
#[derive(Parser)]
#[command(name = "cargo xtask", version, about)]
pub struct Cli {
    /// When another arm holds the server (one workload per server), wait for it with a
    /// progress line instead of refusing (also HOTLAB_WAIT=1)
    #[arg(long, global = true)]
    pub wait: bool,
    #[command(subcommand)]
    pub step: Step,
}

#[derive(Subcommand)]
pub enum Step {
    /// Start, stop or inspect the PostgreSQL server (embedded by default)
    Server(steps::server::Args),
    /// Create a run directory for a study, size and arms; prints the arm directories
    Init(steps::init::Args),
    /// Checkpoint, stop, drop the OS page cache, start, and confirm shared buffers are cold
    ResetCold(steps::reset_cold::Args),
    /// Create the arm's database (from a cached template when possible) and verify it
    Build(steps::build::Args),
    /// Set the arm's fillfactor and rewrite the study's tables with VACUUM FULL
    ApplyFillfactor(steps::apply_fillfactor::Args),
    /// Run the timed workload with statistics snapshots
    Run(steps::run::Args),
    /// Take one sample of every statistics source
    Snapshot(steps::snapshot::Args),
    /// Time VACUUM of the study's tables after the run
    VacuumTiming(steps::vacuum_timing::Args),
    /// Verify the TPC-C consistency conditions of a TPROC-C arm
    Check(steps::check::Args),
    /// Put back server settings `build --apply-server-settings` changed (external servers)
    RestoreSettings(steps::restore_settings::Args),
    /// Benchmarks against pgbench measured in the same run: build, driver
    Bench(steps::bench::Args),
    /// Turn run directories into the articles' tables (summary.md, summary.json, report.html)
    Analyze(steps::analyze::Args),
    /// Every run with results, one line each: date, study, size, run, fingerprint, host,
    /// PostgreSQL, status, headline figure; filtered by words and flags
    History(steps::history::Args),
    /// Which tables could use a fillfactor? The three tests on any PostgreSQL 16+, read-only
    #[command(disable_help_flag = true)]
    Advise(steps::advise::Args),
}

/// Parses the command line and runs the step; exits non-zero with one line on error (130 when
/// interrupted).
pub fn main() {
    let cli = Cli::parse();
    let result = Ctx::from_env().and_then(|mut ctx| {
        ctx.wait |= cli.wait;
        dispatch(&ctx, &cli.step)
    });
    if let Err(e) = result {
        // One line: the outermost message first, then its causes.
        let msg = format!("{e:#}").replace('\n', " ");
        eprintln!("error: {msg}");
        std::process::exit(if steps::interrupt::interrupted() {
            130
        } else {
            1
        });
    }
}

fn dispatch(ctx: &Ctx, step: &Step) -> anyhow::Result<()> {
    match step {
        Step::Server(a) => steps::server::run(ctx, a),
        Step::Init(a) => steps::init::run(ctx, a),
        Step::ResetCold(a) => steps::reset_cold::run(ctx, a),
        Step::Build(a) => steps::build::run(ctx, a),
        Step::ApplyFillfactor(a) => steps::apply_fillfactor::run(ctx, a),
        Step::Run(a) => steps::run::run(ctx, a),
        Step::Snapshot(a) => steps::snapshot::run(ctx, a),
        Step::VacuumTiming(a) => steps::vacuum_timing::run(ctx, a),
        Step::Check(a) => steps::check::run(ctx, a),
        Step::RestoreSettings(a) => steps::restore_settings::run(ctx, a),
        Step::Analyze(a) => steps::analyze::run(ctx, a),
        Step::History(a) => steps::history::run(ctx, a),
        Step::Bench(a) => steps::bench::run(ctx, a),
        Step::Advise(a) => steps::advise::run(ctx, a),
    }
}
