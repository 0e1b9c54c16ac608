//! `init`: creates a run directory for a study, size and set of arms (docs/run-directory.md): the sweep
//! directory with sweep.json and one arm directory with meta.json per arm run. Prints the arm
//! directories on stdout, one per line, in the order they should run.

use std::io::Write;
use std::path::PathBuf;

use anyhow::Result;

use crate::ctx::Ctx;
use crate::rundir::create_sweep;
use crate::study::PlanArgs;

#[derive(clap::Args, Debug)]
pub struct Args {
    #[command(flatten)]
    pub(crate) plan: PlanArgs,
    /// Label in the directory name (default: the study name)
    #[arg(long)]
    pub(crate) label: Option<String>,
    /// Exact directory to create instead of data/runs/<study>/<time>-<label>
    #[arg(long)]
    pub(crate) dir: Option<PathBuf>,
    /// Reuse an existing directory (its contents are deleted)
    #[arg(long)]
    pub(crate) force: bool,
}

pub fn run(ctx: &Ctx, args: &Args) -> Result<()> {
    let plan = args.plan.plan(ctx)?;
    if let Some(d) = &plan.scale {
        eprint!("hotlab: {}", d.describe());
    }
    let label = args
        .label
        .clone()
        .unwrap_or_else(|| plan.study.name.clone());
    let cmd: Vec<String> = std::env::args().collect();
    let (sweep, arms) = create_sweep(
        ctx,
        &plan,
        &label,
        args.dir.as_deref(),
        args.force,
        &cmd.join(" "),
    )?;
    eprintln!("hotlab: created {}", sweep.display());
    // A reader that stops early (`| head -1`) is not an error: the directories exist.
    let mut out = std::io::stdout().lock();
    for a in arms {
        if writeln!(out, "{}", a.path.display()).is_err() {
            break;
        }
    }
    Ok(())
}
