//! A pgbench-script run's workload.json as a type: `run` writes it and the study's tables read
//! it through the same struct (docs/run-directory.md has the contract).

use serde::{Deserialize, Serialize};

/// A script of the run and its weight (`-f file@weight`).
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub(crate) struct ScriptWeight {
    pub(crate) file: String,
    pub(crate) weight: u32,
}

/// pgbench's own summary, over the whole run (the ramp-up included).
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub(crate) struct PgbenchReported {
    pub(crate) transactions: u64,
    pub(crate) failed: u64,
    pub(crate) tps: Option<f64>,
    pub(crate) latency_avg_ms: Option<f64>,
}

/// workload.json of a pgbench-script run: the measured window's figures from the
/// per-transaction logs.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub(crate) struct WorkloadJson {
    /// Always `pgbench`.
    pub(crate) workload: String,
    /// `pgbench --version`.
    pub(crate) tool: Option<String>,
    pub(crate) command: Vec<String>,
    pub(crate) scripts: Vec<ScriptWeight>,
    pub(crate) protocol: String,
    pub(crate) clients: u32,
    pub(crate) jobs: u32,
    pub(crate) random_seed: u64,
    pub(crate) rampup_s: f64,
    /// Seconds of the measured window (after the ramp-up).
    pub(crate) measured_s: f64,
    pub(crate) start_epoch_us: i64,
    pub(crate) measured_from_epoch_us: i64,
    pub(crate) transactions: u64,
    pub(crate) failed: u64,
    pub(crate) tps: f64,
    /// TPS of the last `final_sample_s` seconds.
    pub(crate) tps_final_sample: f64,
    pub(crate) final_sample_s: f64,
    pub(crate) latency_avg_ms: Option<f64>,
    pub(crate) latency_p50_ms: Option<f64>,
    pub(crate) latency_p95_ms: Option<f64>,
    pub(crate) latency_p99_ms: Option<f64>,
    pub(crate) latency_max_ms: Option<f64>,
    /// The window's latency histogram, `[[µs, count], …]`, which analyze merges across repeats.
    #[serde(default)]
    pub(crate) hist_us: Vec<[u64; 2]>,
    pub(crate) transactions_all: u64,
    pub(crate) failed_all: u64,
    pub(crate) pgbench_reported: PgbenchReported,
    pub(crate) wall_s: f64,
    /// Statistics samples taken while the workload ran, and the longest in ms (added later:
    /// older runs have neither).
    #[serde(default)]
    pub(crate) samples_during_run: u32,
    #[serde(default)]
    pub(crate) sample_ms_max: u128,
    pub(crate) interrupted: bool,
}
