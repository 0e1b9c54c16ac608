//! Study 003's workload: `spv(id integer primary key, val integer not null, pad text not null)`
//! with `autovacuum_enabled = false`, filled with `rows` rows of `pad_chars` characters, then
//! updated by pgbench, one client, `statements` UPDATEs that each add 1 to `val` over a random
//! block of `rows_per_statement` consecutive ids.

pub(crate) mod files;
pub(crate) mod run;
pub(crate) mod size;
pub(crate) mod tables;

use anyhow::Result;

use crate::study::SizeKind;
use size::SpvSize;

pub(crate) const DDL: &str = include_str!("../../../sql/spv.sql");
pub(crate) const SCRIPT: &str = include_str!("../../../sql/spv_update.pgbench");

pub(crate) struct Shape {
    pub(crate) rows: u64,
    pub(crate) pad_chars: u32,
    pub(crate) statements: u64,
    pub(crate) rows_per_statement: u64,
    pub(crate) clients: u32,
    pub(crate) random_seed: u64,
    /// Seconds between statistics snapshots during `run`.
    pub(crate) snapshot_every_s: f64,
}

impl Shape {
    pub(crate) fn of(size: &SpvSize) -> Result<Shape> {
        size.check()?;
        Ok(Shape {
            rows: size.rows,
            pad_chars: size.pad_chars,
            statements: size.statements,
            rows_per_statement: size.rows_per_statement,
            clients: size.clients.unwrap_or(1).max(1),
            random_seed: size.random_seed.unwrap_or(1),
            snapshot_every_s: size.snapshot_every_s.unwrap_or(1.0),
        })
    }

    /// The template machinery's view of this size: one SQL file, `rows` rows.
    pub(crate) fn loader(&self) -> super::Loader {
        super::Loader {
            workload: "spv",
            expected: vec![("spv".into(), Some(self.rows as i64))],
            own: None,
            parts: vec![("spv.sql".into(), self.ddl())],
        }
    }

    /// The DDL and load with this size's values in place.
    pub(crate) fn ddl(&self) -> String {
        DDL.replace(":rows", &self.rows.to_string())
            .replace(":pad", &self.pad_chars.to_string())
    }

    /// pgbench arguments (script path and database come last).
    pub(crate) fn pgbench_args(&self, script: &str, db: &str) -> Vec<String> {
        vec![
            "-n".into(),
            "-c".into(),
            self.clients.to_string(),
            "-j".into(),
            self.clients.to_string(),
            "-t".into(),
            (self.statements / self.clients as u64).to_string(),
            "-P".into(),
            "1".into(),
            "--aggregate-interval=1".into(),
            format!("--random-seed={}", self.random_seed),
            "-D".into(),
            format!("rows={}", self.rows),
            "-D".into(),
            format!("per={}", self.rows_per_statement),
            "-f".into(),
            script.into(),
            db.into(),
        ]
    }
}
