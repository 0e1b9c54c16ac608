//! `check`: the TPC-C consistency conditions that the arm's TPROC-C profile guarantees (1–9 for
//! `hammerdb`, 1–10 and 12 for `spec`), printed per condition with the number of violating
//! rows. Writes check.json; exits non-zero on any violation.

use std::path::PathBuf;

use anyhow::{bail, Result};

use crate::ctx::Ctx;
use crate::io::write_json_atomic;
use crate::rundir::RunDir;
use crate::server::Server;
use crate::study::Size;
use crate::workload::tprocc;

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
    let Size::Tprocc(size) = plan.size()? else {
        bail!(
            "check verifies TPROC-C consistency, but {db} is a {:?} database; its run writes its own check.json",
            plan.workload
        );
    };
    let shape = tprocc::Shape::of(size)?;
    crate::server::lease::step(ctx, &rd, "check", || {
        let server = Server::ensure(ctx)?;
        let mut c = server.connect(&db)?;
        tprocc::check_database(&mut c, &db, shape.profile)?;
        let check = tprocc::check::run(&mut c, shape.profile)?;
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
