//! TPROC-C, HammerDB-compatible (facts in shared/reference/tprocc-hammerdb.md): HammerDB's nine
//! tables, keys and two secondary indexes, its load rules, the five transactions as PL/pgSQL
//! functions (sql/tprocc/), a Rust driver, and the TPC-C consistency checks. Two profiles:
//! `hammerdb` (default) and `spec`.

pub(crate) mod check;
pub(crate) mod driver;
pub(crate) mod files;
pub(crate) mod load;
pub(crate) mod rng;
pub(crate) mod run;
pub(crate) mod size;
pub(crate) mod tables;

use anyhow::{Context, Result};

use crate::study::SizeKind;
use size::TproccSize;

pub(crate) const SCHEMA: &str = include_str!("../../../sql/tprocc/schema.sql");
pub(crate) const INDEXES: &str = include_str!("../../../sql/tprocc/indexes.sql");
pub(crate) const FUNCTIONS: &str = include_str!("../../../sql/tprocc/functions.sql");

pub(crate) use size::Profile;

/// A TPROC-C size, validated.
#[derive(Debug, Clone)]
pub(crate) struct Shape {
    pub(crate) warehouses: i64,
    pub(crate) vus: u32,
    pub(crate) rampup_s: f64,
    pub(crate) duration_s: f64,
    pub(crate) snapshot_every_s: f64,
    pub(crate) profile: Profile,
    pub(crate) all_warehouses: bool,
    /// The New-Order function the VUs call: `neword`, or in the driver benchmark the wrapper
    /// that catches the 1 % invalid-item error as pgbench's script must (`neword_caught`).
    pub(crate) neword: &'static str,
}

impl Shape {
    pub(crate) fn of(size: &TproccSize) -> Result<Shape> {
        size.check()?;
        let warehouses = size.warehouses.unwrap_or(1);
        let duration_s = size.duration_s.unwrap_or(60.0);
        Ok(Shape {
            warehouses,
            vus: size.vus.unwrap_or(1),
            rampup_s: size.rampup_s.unwrap_or(0.0).max(0.0),
            duration_s,
            snapshot_every_s: size.snapshot_every_s.unwrap_or(duration_s),
            profile: size.profile.unwrap_or_default(),
            all_warehouses: size.all_warehouses.unwrap_or(false),
            neword: "neword",
        })
    }

    /// The template machinery's view of this size: HammerDB's row counts, loaded by `load`.
    pub(crate) fn loader(self) -> super::Loader {
        super::Loader {
            workload: "tprocc",
            parts: vec![("the TPROC-C loader".into(), self.ddl())],
            expected: self
                .expected()
                .into_iter()
                .map(|(t, n)| (t, Some(n)))
                .collect(),
            own: Some(Box::new(self)),
        }
    }

    /// The DDL a build of this shape runs (schema, then after the load indexes and functions).
    pub(crate) fn ddl(&self) -> String {
        format!(
            "-- tprocc, profile {}, {} warehouse(s)\n{SCHEMA}\n-- (data loaded here)\n{INDEXES}\n{FUNCTIONS}",
            self.profile.name(),
            self.warehouses
        )
    }

    /// Exact row counts after a load (order_line is checked against sum(o_ol_cnt)).
    pub(crate) fn expected(&self) -> Vec<(String, i64)> {
        let w = self.warehouses;
        vec![
            ("item".into(), load::ITEMS),
            ("warehouse".into(), w),
            ("district".into(), 10 * w),
            ("customer".into(), 30_000 * w),
            ("history".into(), 30_000 * w),
            ("orders".into(), 30_000 * w),
            ("new_order".into(), 9_000 * w),
            ("stock".into(), 100_000 * w),
        ]
    }
}

/// TPROC-C loads with its own loader: HammerDB's generation rules over several connections.
impl super::loader::OwnLoad for Shape {
    /// Loads the schema, the data (HOTLAB_LOAD_THREADS connections), the transaction functions
    /// and the profile's mark into the empty database `db`.
    fn load(
        &self,
        server: &crate::server::Server,
        db: &str,
        c: &mut postgres::Client,
    ) -> Result<()> {
        c.batch_execute(SCHEMA)
            .context("creating the TPROC-C schema")?;
        let threads = match crate::env::var(crate::env::LOAD_THREADS) {
            Some(v) => v
                .parse::<usize>()
                .ok()
                .filter(|n| *n > 0)
                .with_context(|| {
                    format!(
                        "{} must be a positive number, not {v:?}",
                        crate::env::LOAD_THREADS
                    )
                })?,
            None => std::thread::available_parallelism()
                .map(|n| n.get())
                .unwrap_or(2)
                .max(2),
        };
        load::load(server, db, self.warehouses, self.profile, threads, INDEXES)?;
        c.batch_execute(FUNCTIONS)
            .context("creating the transaction functions")?;
        c.batch_execute(&format!(
            "COMMENT ON TABLE district IS '{}'",
            mark(self.profile)
        ))?;
        Ok(())
    }

    /// Every order's lines are there: order_line's count is sum(o_ol_cnt).
    fn verify(
        &self,
        c: &mut postgres::Client,
        db: &str,
        out: &mut std::collections::BTreeMap<String, i64>,
    ) -> Result<()> {
        let r = c.query_one(
            "SELECT (SELECT count(*) FROM order_line), (SELECT sum(o_ol_cnt)::bigint FROM orders)",
            &[],
        )?;
        let (lines, want): (i64, i64) = (r.get(0), r.get(1));
        if lines != want {
            anyhow::bail!("{db}.order_line has {lines} rows, orders say {want}; the build is incomplete: run `cargo xtask build --no-template` again");
        }
        out.insert("order_line".into(), lines);
        Ok(())
    }
}

/// The comment that marks a TPROC-C database with its profile (set by build, checked by `run`
/// and `check`).
pub(crate) fn mark(profile: Profile) -> String {
    format!("hotlab tprocc profile={}", profile.name())
}

/// Refuses a database that was not built for TPROC-C with this profile.
pub(crate) fn check_database(c: &mut postgres::Client, db: &str, profile: Profile) -> Result<()> {
    let found: Option<String> = c
        .query_one(
            "SELECT CASE WHEN to_regclass('district') IS NULL THEN NULL \
                    ELSE obj_description(to_regclass('district'), 'pg_class') END",
            &[],
        )?
        .get(0);
    let want = mark(profile);
    if found.as_deref() != Some(want.as_str()) {
        anyhow::bail!(
            "database {db} was not built for tprocc profile {} (its mark: {}); run `cargo xtask build` for this run first",
            profile.name(),
            found.unwrap_or_else(|| "none".into())
        );
    }
    Ok(())
}
