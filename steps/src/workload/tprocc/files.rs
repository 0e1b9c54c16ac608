//! TPROC-C's workload.json as a type: the driver writes it and `analyze` reads it through the
//! same struct (docs/run-directory.md has the contract). Fields added later are optional, so
//! older run directories still read.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// One transaction type over the measured window, client side.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct TxnFigures {
    pub count: u64,
    pub errors: u64,
    pub rollbacks: u64,
    pub p50_ms: f64,
    pub p90_ms: f64,
    pub p95_ms: f64,
    pub p99_ms: f64,
    pub max_ms: f64,
    /// The window's latency histogram, `[[µs, count], …]`, which analyze merges across repeats.
    #[serde(default)]
    pub hist_us: Vec<[u64; 2]>,
}

/// What the VUs' backends were doing, sampled every `every_ms` over the measured window.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct WaitEvents {
    pub every_ms: u64,
    pub samples: u64,
    pub counts: BTreeMap<String, u64>,
}

/// workload.json of a TPROC-C run.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct WorkloadJson {
    /// Always `tprocc`.
    pub workload: String,
    pub profile: String,
    pub warehouses: i64,
    pub vus: u32,
    #[serde(default)]
    pub all_warehouses: bool,
    pub rampup_s: f64,
    /// Measured seconds.
    pub duration_s: f64,
    pub nopm: f64,
    pub tpm: f64,
    pub tpm_per_nopm: f64,
    pub new_orders: i64,
    pub server_transactions: i64,
    pub client_transactions_per_s: f64,
    pub vu_cpu_s: f64,
    /// Per transaction type (`new_order`, `payment`, …), the measured window.
    pub transactions: BTreeMap<String, TxnFigures>,
    /// Per transaction type, committed during the ramp-up.
    pub rampup_transactions: BTreeMap<String, u64>,
    #[serde(default)]
    pub wait_events: Option<WaitEvents>,
    pub interrupted: bool,
}

impl WorkloadJson {
    /// A run directory's workload.json as this type, if it is a TPROC-C one.
    pub fn of(v: &serde_json::Value) -> Option<WorkloadJson> {
        (v["workload"] == "tprocc")
            .then(|| serde_json::from_value(v.clone()).ok())
            .flatten()
    }
}
