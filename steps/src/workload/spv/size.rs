//! Study 003's size: the table, the statements and how they are sent.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::study::bounds;
use crate::study::kind::SizeKind;

/// Study 003: many-row UPDATE statements through pgbench on one small table.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SpvSize {
    pub(crate) rows: u64,
    pub(crate) pad_chars: u32,
    pub(crate) statements: u64,
    pub(crate) rows_per_statement: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) clients: Option<u32>,
    /// Seconds between statistics snapshots during `run`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) snapshot_every_s: Option<f64>,
    /// pgbench --random-seed, the same in every arm so arms see the same update sequence.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) random_seed: Option<u64>,
    /// Server settings for this size, on top of the study's.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub(crate) server: BTreeMap<String, String>,
    /// The RAM of the machine this size stands for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) ram: Option<String>,
}

impl SizeKind for SpvSize {
    fn server(&self) -> &BTreeMap<String, String> {
        &self.server
    }

    fn check(&self) -> anyhow::Result<()> {
        let (rows, per) = (self.rows, self.rows_per_statement);
        if per == 0 || per > rows {
            anyhow::bail!("rows_per_statement {per} must be between 1 and rows ({rows})");
        }
        let clients = self.clients.unwrap_or(1).max(1);
        if !self.statements.is_multiple_of(clients as u64) {
            anyhow::bail!(
                "statements ({}) must divide evenly among {clients} clients",
                self.statements
            );
        }
        bounds::snapshot_every(self.snapshot_every_s)
    }
}
