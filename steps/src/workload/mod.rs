//! The workloads: how each builds its schema and data, and how it generates load.
//! `spv` is study 003; `tprocc` is study 000 (HammerDB-compatible TPC-C); `pgbench` runs scripts through the pgbench binary and parses its output; `script` is the
//! pgbench-script workload (study 001 and a user's own table).

pub mod pgbench;
pub mod script;
pub mod spv;
pub mod tprocc;

use anyhow::{bail, Result};

use crate::ctx::Ctx;
use crate::rundir::RunDir;
use crate::study::{ArmPlan, Size};

pub mod loader;
pub use loader::Loader;

/// What `run --vus/--rampup/--duration` override in the arm's size.
#[derive(Debug, Default, Clone, Copy)]
pub struct Overrides {
    pub vus: Option<u32>,
    pub rampup_s: Option<f64>,
    pub duration_s: Option<f64>,
}

/// The one place `run` picks a workload: the arm's size says which, and its room runs it.
pub fn run(ctx: &Ctx, rd: &RunDir, plan: &ArmPlan, db: &str, o: Overrides) -> Result<()> {
    match plan.size()?.clone() {
        Size::Spv(size) => spv::run::run(ctx, rd, db, &size),
        Size::Tprocc(mut size) => {
            size.vus = o.vus.or(size.vus);
            size.rampup_s = o.rampup_s.or(size.rampup_s);
            size.duration_s = o.duration_s.or(size.duration_s);
            tprocc::run::run(ctx, rd, plan, db, &size)
        }
        Size::Pgbench(mut size) => {
            size.rampup_s = o.rampup_s.or(size.rampup_s);
            if let Some(d) = o.duration_s {
                size.duration_s = Some(d);
                size.transactions = None;
            }
            script::run::run(ctx, rd, plan, db, &size)
        }
    }
}

/// Each workload's loader, picked by the arm's size (the one dispatch of `build`).
impl Loader {
    pub fn for_size(size: &Size) -> Result<Loader> {
        Ok(match size {
            Size::Spv(size) => spv::Shape::of(size)?.loader(),
            Size::Tprocc(size) => tprocc::Shape::of(size)?.loader(),
            Size::Pgbench(_) => bail!("a pgbench-script size needs its plan: Loader::for_plan"),
        })
    }

    /// The loader of an arm's plan: the size's, and for a pgbench-script study the study's files
    /// and the arm's partitioning (part of the schema, so part of the template's key).
    pub fn for_plan(plan: &crate::study::ArmPlan) -> Result<Loader> {
        let Size::Pgbench(size) = plan.size()? else {
            return Loader::for_size(plan.size()?);
        };
        script::Shape::of(size)?.loader(plan)
    }
}
