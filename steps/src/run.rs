//! `run`: the timed workload with statistics snapshots, the same for every workload: refuses an
//! arm that already holds a measured run, moves a failed or interrupted attempt aside, then
//! hands the arm to its workload's room (`workload::run`) under the arm's lock and the server's
//! lease. Ctrl-C stops the workload, keeps what was sampled and marks the run interrupted.

use std::path::PathBuf;

use anyhow::{bail, Result};

use crate::ctx::Ctx;
use crate::interrupt::catch_interrupts;
use crate::rundir::RunDir;
use crate::rundir::StepStatus;

#[derive(clap::Args, Debug, Default)]
pub struct Args {
    /// Arm run directory (built and with its fillfactor applied)
    #[arg(long, env = crate::env::RUN)]
    pub run: PathBuf,
    /// TPROC-C: virtual users, 1 to 10,000 (default: the size's)
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..=10_000))]
    pub(crate) vus: Option<u32>,
    /// TPROC-C and pgbench scripts: ramp-up seconds, 0 to 7 days (default: the size's)
    #[arg(long, value_parser = crate::study::bounds::parse_seconds)]
    pub(crate) rampup: Option<f64>,
    /// TPROC-C and pgbench scripts: measured seconds, 1 to 7 days (default: the size's)
    #[arg(long, value_parser = crate::study::bounds::parse_duration)]
    pub(crate) duration: Option<f64>,
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
    let previous = meta.steps.get("run").and_then(|s| s.status);
    let finished = previous == Some(StepStatus::Complete);
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
        if let Some(status) = previous.map(StepStatus::as_str).filter(|_| ran) {
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
        let o = crate::workload::Overrides {
            vus: args.vus,
            rampup_s: args.rampup,
            duration_s: args.duration,
        };
        crate::workload::run(ctx, &rd, &plan, &db, o)
    })
}
