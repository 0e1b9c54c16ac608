//! `check`: the consistency check of the arm's database, for a workload that has one (TPROC-C:
//! the TPC-C conditions its profile guarantees, 1–9 for `hammerdb`, 1–10 and 12 for `spec`),
//! printed per condition with the number of violating rows. Writes check.json; exits non-zero
//! on any violation.

use std::path::PathBuf;

use anyhow::{bail, Result};

use crate::ctx::Ctx;
use crate::io::write_json_atomic;
use crate::rundir::RunDir;
use crate::server::Server;
use crate::workload;

#[derive(clap::Args, Debug)]
pub struct Args {
    /// Arm run directory of a TPROC-C study
    #[arg(long, env = crate::env::RUN)]
    pub run: PathBuf,
}

pub fn run(ctx: &Ctx, args: &Args) -> Result<()> {
    let rd = RunDir::open(&args.run)?;
    let db = rd.database()?;
    let plan = rd.plan()?;
    if !workload::has_check(&plan)? {
        bail!(
            "check verifies TPROC-C consistency, but {db} is a {:?} database; its run writes its own check.json",
            plan.workload
        );
    }
    crate::server::lease::step(ctx, &rd, "check", || {
        let server = Server::ensure(ctx)?;
        let mut c = server.connect(&db)?;
        let check = workload::check(&plan, &mut c, &db)?;
        for cond in &check.conditions {
            println!(
                "condition {:>2}  {:<55} {} violating rows",
                cond.condition.unwrap_or(0),
                cond.name,
                cond.violations
            );
        }
        write_json_atomic(&rd.file("check.json"), &check)?;
        if !check.ok {
            bail!(
                "consistency check failed for {db}; see {}",
                rd.file("check.json").display()
            );
        }
        Ok(())
    })
}
