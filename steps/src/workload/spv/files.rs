//! Study 003's workload.json as a type: `run` writes it and the study's tables read it through
//! the same struct (docs/run-directory.md has the contract).

use serde::{Deserialize, Serialize};

/// workload.json of a study 003 run: pgbench's summary of the UPDATE statements.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub(crate) struct WorkloadJson {
    /// Always `spv`.
    pub(crate) workload: String,
    /// `pgbench --version`.
    pub(crate) tool: Option<String>,
    pub(crate) command: Vec<String>,
    pub(crate) clients: u32,
    pub(crate) statements: u64,
    pub(crate) rows_per_statement: u64,
    pub(crate) random_seed: u64,
    pub(crate) transactions: u64,
    pub(crate) failed: u64,
    /// Seconds the statements took (transactions / pgbench's tps, which leaves out connecting).
    pub(crate) duration_s: f64,
    pub(crate) wall_s: f64,
    pub(crate) statements_per_s: f64,
    pub(crate) rows_per_s: f64,
    pub(crate) tps_reported: Option<f64>,
    pub(crate) latency_avg_ms: Option<f64>,
    pub(crate) latency_stddev_ms: Option<f64>,
    /// Statistics samples taken while the workload ran, and the longest in ms (added later:
    /// older runs have neither).
    #[serde(default)]
    pub(crate) samples_during_run: u32,
    #[serde(default)]
    pub(crate) sample_ms_max: u128,
    pub(crate) interrupted: bool,
}
