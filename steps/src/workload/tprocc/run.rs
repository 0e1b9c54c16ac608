//! TPROC-C's `run`: the driver (driver.rs) on the arm's database, the server confined to the
//! size's RAM for the run where the platform allows, and this machine's churn recorded for the
//! next scale model.

use anyhow::{Context, Result};

use super::size::TproccSize;
use super::Shape;
use crate::ctx::Ctx;
use crate::io::write_json_atomic;
use crate::rundir::meta::MemoryLimit;
use crate::rundir::RunDir;
use crate::server::Server;
use crate::snapshot::{wait_for_backends, Sampler};
use crate::study::ArmPlan;

/// Runs TPROC-C on the arm's database, confined to the size's RAM where it states one.
impl crate::workload::Room for TproccSize {
    fn loader(&self, _plan: &ArmPlan) -> Result<crate::workload::Loader> {
        Ok(super::Shape::of(self)?.loader())
    }

    fn run(
        &self,
        ctx: &Ctx,
        rd: &RunDir,
        plan: &ArmPlan,
        db: &str,
        o: crate::workload::Overrides,
    ) -> Result<()> {
        let mut size = self.clone();
        size.vus = o.vus.or(size.vus);
        size.rampup_s = o.rampup_s.or(size.rampup_s);
        size.duration_s = o.duration_s.or(size.duration_s);
        run(ctx, rd, plan, db, &size)
    }

    /// The TPC-C consistency conditions its profile guarantees.
    fn has_check(&self) -> bool {
        true
    }

    fn check(&self, c: &mut postgres::Client, db: &str) -> Result<crate::rundir::CheckJson> {
        let profile = super::Shape::of(self)?.profile;
        super::check_database(c, db, profile)?;
        super::check::run(c, profile)
    }
}

pub(crate) fn run(
    ctx: &Ctx,
    rd: &RunDir,
    plan: &ArmPlan,
    db: &str,
    size: &TproccSize,
) -> Result<()> {
    let shape = Shape::of(size)?;
    let server = Server::ensure(ctx)?;
    super::check_database(&mut server.connect(db)?, db, shape.profile)?;
    let mut sampler = Sampler::new(&server, db, rd)?;
    eprintln!(
        "hotlab: tprocc ({}): {} VUs on {} warehouse(s), ramp-up {} s, measured {} s",
        shape.profile.name(),
        shape.vus,
        shape.warehouses,
        shape.rampup_s,
        shape.duration_s
    );
    let (limit, mut memory_limit) = confine(&server, size.ram.as_deref())?;
    if let Some(m) = &memory_limit {
        let m = m.clone();
        rd.update_meta(|meta| meta.memory_limit = Some(m))?;
    }
    let out = super::driver::run(&server, db, &shape, &mut sampler, &rd.path);
    if let (Some(c), Some(m)) = (&limit, &mut memory_limit) {
        (m.usage_bytes_end, m.usage_bytes_peak) = c.usage();
        let m = m.clone();
        rd.update_meta(|meta| meta.memory_limit = Some(m))?;
    }
    drop(limit);
    let out = out.context("the TPROC-C run did not finish (the samples taken so far are kept)")?;
    write_json_atomic(&rd.file("workload.json"), &out.file)?;
    // A complete run of a scale model tells the next `init` how fast this machine churns.
    if plan.scale.is_some() && !out.interrupted && out.nopm > 0.0 {
        let key = crate::churn::key(&plan.study, &plan.size, shape.warehouses, shape.vus);
        crate::churn::record(&ctx.home, &key, out.nopm / shape.warehouses as f64)?;
    }
    wait_for_backends(sampler.client(), db)?;
    sampler.take(crate::snapshot::Phase::Post)?;
    eprintln!("hotlab: NOPM {:.0}, TPM {:.0}", out.nopm, out.tpm);
    Ok(())
}
/// Confines the server to the size's RAM (page cache included) for the workload, where the size
/// states one and the platform allows. Returns the confinement and meta.json's `memory_limit`:
/// what was applied, or why not.
fn confine(
    server: &Server,
    ram: Option<&str>,
) -> Result<(
    Option<crate::server::memlimit::Confinement>,
    Option<MemoryLimit>,
)> {
    let Some(ram) = ram else {
        return Ok((None, None));
    };
    let bytes = (crate::study::scale::parse_kb(ram)? * 1024.0) as u64;
    let pid = server.embedded.as_ref().and_then(|e| e.pid());
    let outcome = match pid {
        None => Err(format!(
            "the {:?} server does not run on this machine under hotlab",
            server.kind
        )),
        Some(pid) => crate::server::memlimit::confine(pid as i32, bytes),
    };
    Ok(match outcome {
        Ok(c) => {
            eprintln!(
                "hotlab: server confined to {ram} of memory, page cache included (cgroup v{}: {})",
                c.version,
                c.path().display()
            );
            let m = MemoryLimit {
                applied: true,
                bytes,
                ram: ram.into(),
                cgroup_version: Some(c.version),
                cgroup: Some(c.path().display().to_string()),
                ..Default::default()
            };
            (Some(c), Some(m))
        }
        Err(why) => {
            eprintln!("hotlab: not confining the server to {ram}: {why}");
            let m = MemoryLimit {
                applied: false,
                bytes,
                ram: ram.into(),
                why: Some(why),
                ..Default::default()
            };
            (None, Some(m))
        }
    })
}
