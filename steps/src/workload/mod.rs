//! The workloads: how each builds its schema and data, and how it generates load.
//! `spv` is study 003; `tprocc` is study 000 (HammerDB-compatible TPC-C); `pgbench` runs scripts through the pgbench binary and parses its output; `script` is the
//! pgbench-script workload (study 001 and a user's own table).

pub mod pgbench;
pub mod script;
pub mod spv;
pub mod tprocc;

use anyhow::{bail, Result};
use serde_json::json;
use sha2::{Digest, Sha256};

use crate::ctx::Ctx;
use crate::rundir::RunDir;
use crate::server::Server;
use crate::study::{ArmPlan, Size};

/// Bumped whenever a loader changes what it writes, so old templates are not reused.
const LOADER_VERSION: &str = "1";

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

/// What a workload's loader must provide to the template machinery.
pub struct Loader {
    pub workload: &'static str,
    /// (table, expected rows; None: at least one)
    pub expected: Vec<(String, Option<i64>)>,
    /// TPROC-C loads with its own loader (its one part is the record of what it builds); other
    /// workloads run `parts` in order.
    pub tprocc: Option<tprocc::Shape>,
    /// The build as SQL, in pieces named by the file each came from (a failure names its file).
    pub parts: Vec<(String, String)>,
}

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

    /// Runs the load in the (empty) database `db` over `c`: the SQL parts in order, or
    /// TPROC-C's own loader.
    pub fn load(&self, server: &Server, db: &str, c: &mut postgres::Client) -> Result<()> {
        match &self.tprocc {
            None => {
                for (file, sql) in &self.parts {
                    c.batch_execute(sql).map_err(|e| {
                        anyhow::anyhow!("{file} failed: {}", crate::server::db_error_line(&e))
                    })?;
                }
                Ok(())
            }
            Some(shape) => shape.load(server, db, c),
        }
    }

    /// The workload's own consistency check of a fresh load, beside the row counts.
    pub fn verify(
        &self,
        c: &mut postgres::Client,
        db: &str,
        out: &mut serde_json::Map<String, serde_json::Value>,
    ) -> Result<()> {
        if self.tprocc.is_some() {
            let r = c.query_one(
                "SELECT (SELECT count(*) FROM order_line), (SELECT sum(o_ol_cnt)::bigint FROM orders)",
                &[],
            )?;
            let (lines, want): (i64, i64) = (r.get(0), r.get(1));
            if lines != want {
                bail!("{db}.order_line has {lines} rows, orders say {want}; the build is incomplete: run `cargo xtask build --no-template` again");
            }
            out.insert("order_line".into(), json!(lines));
        }
        Ok(())
    }

    /// The whole build as one SQL text (ddl.sql): its parts in order.
    pub fn ddl(&self) -> String {
        let parts: Vec<&str> = self.parts.iter().map(|(_, sql)| sql.as_str()).collect();
        parts.join("\n")
    }

    /// The template's name: workload plus a hash of everything that shapes the data.
    pub fn template_name(&self) -> String {
        let mut h = Sha256::new();
        h.update(self.workload);
        h.update(LOADER_VERSION);
        h.update(self.ddl());
        format!(
            "hotlab_tpl_{}_{}",
            self.workload,
            &format!("{:x}", h.finalize())[..10]
        )
    }
}
