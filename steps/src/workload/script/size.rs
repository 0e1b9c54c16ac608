//! A pgbench-script size: clients, jobs, how long, the load's variables, its scale model.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::study::bounds;
use crate::study::kind::SizeKind;

/// A pgbench-script workload (study 001, and a user's own table): the study names the files
/// (`PgbenchSpec`); a size says how hard and how long, and the values of the load's variables.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PgbenchSize {
    /// pgbench -c
    pub(crate) clients: u32,
    /// pgbench -j (default 1)
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) jobs: Option<u32>,
    /// Seconds at the start left out of the measured deltas (as TPROC-C's ramp-up).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) rampup_s: Option<f64>,
    /// Measured seconds after the ramp-up (pgbench -T rampup + duration); or `transactions`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) duration_s: Option<f64>,
    /// Transactions in all (pgbench -t, divided among the clients); or `duration_s`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) transactions: Option<u64>,
    /// Seconds between statistics snapshots during `run`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) snapshot_every_s: Option<f64>,
    /// pgbench --random-seed, the same in every arm so arms see the same sequence.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) random_seed: Option<u64>,
    /// The variables of the load SQL (`:name`) and of the scripts (`-D name=value`).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub(crate) vars: BTreeMap<String, serde_json::Value>,
    /// Server settings for this size, on top of the study's.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub(crate) server: BTreeMap<String, String>,
    /// The RAM of the machine this size stands for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) ram: Option<String>,
    /// This size is a scale model of another (docs/study-001-small-table.md: the scale rule).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) scale: Option<PgbenchScale>,
}

/// `scale:` of a pgbench-script size: a model of the article size `from` at `factor` of its data.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct PgbenchScale {
    pub(crate) from: String,
    /// Bytes × this (the data variables, shared_buffers, max_wal_size), and time × this.
    pub(crate) factor: f64,
    /// The variables that count data (rows, users): scaled by `factor`.
    pub(crate) vars: Vec<String>,
    /// The article's throughput at its size: the model runs `article_tps` × the article's
    /// ramp-up and duration × `factor` transactions.
    pub(crate) article_tps: f64,
}

/// Variable names pgbench and the load accept, and values that are a number or a string.
pub(crate) fn check_vars(vars: &BTreeMap<String, serde_json::Value>) -> anyhow::Result<()> {
    for (k, v) in vars {
        if k.is_empty()
            || !k.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
            || k.starts_with(|c: char| c.is_ascii_digit())
        {
            anyhow::bail!("variable name {k:?}: use letters, digits and _");
        }
        if !(v.is_number() || v.is_string()) {
            anyhow::bail!("variable {k} must be a number or a string (got {v})");
        }
    }
    Ok(())
}

impl PgbenchSize {
    /// A variable's value as text (strings as written, numbers as JSON prints them).
    pub fn var(&self, name: &str) -> Option<String> {
        self.vars.get(name).map(|v| match v {
            serde_json::Value::String(s) => s.clone(),
            other => other.to_string(),
        })
    }
}

impl SizeKind for PgbenchSize {
    fn server(&self) -> &BTreeMap<String, String> {
        &self.server
    }

    fn check(&self) -> anyhow::Result<()> {
        if self.clients == 0 {
            anyhow::bail!("clients must be at least 1");
        }
        let jobs = self.jobs.unwrap_or(1);
        if jobs == 0 || jobs > self.clients {
            anyhow::bail!(
                "jobs ({jobs}) must be between 1 and clients ({})",
                self.clients
            );
        }
        match (self.duration_s, self.transactions) {
            (Some(_), Some(_)) | (None, None) => {
                anyhow::bail!("give either duration_s or transactions (one of them)")
            }
            (Some(d), None) => {
                bounds::seconds("duration_s", d, 1.0)?;
            }
            (None, Some(t)) if t == 0 || !t.is_multiple_of(self.clients as u64) => anyhow::bail!(
                "transactions ({t}) must be positive and divide evenly among {} clients",
                self.clients
            ),
            _ => {}
        }
        if let Some(r) = self.rampup_s {
            bounds::seconds("rampup_s", r, 0.0)?;
        }
        check_vars(&self.vars)?;
        bounds::snapshot_every(self.snapshot_every_s)
    }

    fn scale_from(&self) -> Option<&str> {
        self.scale.as_ref().map(|s| s.from.as_str())
    }
}
