//! TPROC-C's workload.json as a type: the driver writes it and `analyze` reads it through the
//! same struct (docs/run-directory.md has the contract). Fields added later are optional, so
//! older run directories still read.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// One transaction type over the measured window, client side.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub(crate) struct TxnFigures {
    pub(crate) count: u64,
    pub(crate) errors: u64,
    pub(crate) rollbacks: u64,
    pub(crate) p50_ms: f64,
    pub(crate) p90_ms: f64,
    pub(crate) p95_ms: f64,
    pub(crate) p99_ms: f64,
    pub(crate) max_ms: f64,
    /// The window's latency histogram, `[[µs, count], …]`, which analyze merges across repeats.
    #[serde(default)]
    pub(crate) hist_us: Vec<[u64; 2]>,
}

/// What the VUs' backends were doing, sampled every `every_ms` over the measured window.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub(crate) struct WaitEvents {
    pub(crate) every_ms: u64,
    pub(crate) samples: u64,
    pub(crate) counts: BTreeMap<String, u64>,
}

/// workload.json of a TPROC-C run.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub(crate) struct WorkloadJson {
    /// Always `tprocc`.
    pub(crate) workload: String,
    pub(crate) profile: String,
    pub(crate) warehouses: i64,
    pub(crate) vus: u32,
    #[serde(default)]
    pub(crate) all_warehouses: bool,
    pub(crate) rampup_s: f64,
    /// Measured seconds.
    pub(crate) duration_s: f64,
    pub(crate) nopm: f64,
    pub(crate) tpm: f64,
    pub(crate) tpm_per_nopm: f64,
    pub(crate) new_orders: i64,
    pub(crate) server_transactions: i64,
    pub(crate) client_transactions_per_s: f64,
    pub(crate) vu_cpu_s: f64,
    /// Per transaction type (`new_order`, `payment`, …), the measured window.
    pub(crate) transactions: BTreeMap<String, TxnFigures>,
    /// Per transaction type, committed during the ramp-up.
    pub(crate) rampup_transactions: BTreeMap<String, u64>,
    #[serde(default)]
    pub(crate) wait_events: Option<WaitEvents>,
    pub(crate) interrupted: bool,
}
