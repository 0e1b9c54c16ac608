//! The workloads: how each builds its schema and data, and how it generates load.
//! `spv` is study 003; `tprocc` is study 000 (HammerDB-compatible TPC-C); `pgbench` runs scripts through the pgbench binary and parses its output; `script` is the
//! pgbench-script workload (study 001 and a user's own table).

pub(crate) mod pgbench;
pub(crate) mod script;
pub(crate) mod spv;
pub(crate) mod tprocc;

use anyhow::Result;

use crate::ctx::Ctx;
use crate::rundir::RunDir;
use crate::study::{each_size, ArmPlan};

pub(crate) mod loader;
pub use loader::Loader;

/// What `run --vus/--rampup/--duration` override in the arm's size.
#[derive(Debug, Default, Clone, Copy)]
pub(crate) struct Overrides {
    pub(crate) vus: Option<u32>,
    pub(crate) rampup_s: Option<f64>,
    pub(crate) duration_s: Option<f64>,
}

/// What `build` and `run` ask of a workload: implemented on its size type, in its room.
pub(crate) trait Room {
    /// The loader of an arm's plan whose size this is (`build`).
    fn loader(&self, plan: &ArmPlan) -> Result<Loader>;
    /// Runs the workload on `db` with `run`'s overrides, into the arm's run directory.
    fn run(&self, ctx: &Ctx, rd: &RunDir, plan: &ArmPlan, db: &str, o: Overrides) -> Result<()>;
    /// Whether the workload has a consistency check of its database for the `check` step (the
    /// others check what they can during `run`, into check.json).
    fn has_check(&self) -> bool {
        false
    }
    /// The consistency check of `db` after the run (`check`), where `has_check`.
    fn check(&self, _c: &mut postgres::Client, db: &str) -> Result<crate::rundir::CheckJson> {
        anyhow::bail!("{db}: this workload has no consistency check of its own")
    }
}

/// Whether the arm's workload has a consistency check, and the check (the dispatch of `check`).
pub(crate) fn has_check(plan: &ArmPlan) -> Result<bool> {
    Ok(each_size!(plan.size()?, s => s.has_check()))
}

/// The consistency check of the arm's database (`check`).
pub(crate) fn check(
    plan: &ArmPlan,
    c: &mut postgres::Client,
    db: &str,
) -> Result<crate::rundir::CheckJson> {
    each_size!(plan.size()?, s => s.check(c, db))
}

/// The one place `run` picks a workload: the arm's size says which, and its room runs it.
pub(crate) fn run(ctx: &Ctx, rd: &RunDir, plan: &ArmPlan, db: &str, o: Overrides) -> Result<()> {
    each_size!(plan.size()?, s => s.run(ctx, rd, plan, db, o))
}

impl Loader {
    /// The loader of an arm's plan (the one dispatch of `build`).
    pub fn for_plan(plan: &ArmPlan) -> Result<Loader> {
        each_size!(plan.size()?, s => s.loader(plan))
    }
}
