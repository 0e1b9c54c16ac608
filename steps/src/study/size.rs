//! One size type per workload, as the study file writes them (`deny_unknown_fields` on each, so
//! a misspelt or misplaced field is refused by the parser, with its name). A size says what the
//! workload needs; `workload::*::Shape::of` fills the defaults and checks ranges.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// A size of a study: which workload's parameters it holds is the study's `workload:`.
#[derive(Debug, Clone, PartialEq)]
pub enum Size {
    Spv(SpvSize),
    Tprocc(TproccSize),
    Pgbench(PgbenchSize),
}

impl Size {
    /// Server settings for this size, on top of the study's.
    pub fn server(&self) -> &BTreeMap<String, String> {
        match self {
            Size::Spv(s) => &s.server,
            Size::Tprocc(s) => &s.server,
            Size::Pgbench(s) => &s.server,
        }
    }

    /// The RAM of the machine this size stands for (`run` confines the server to it).
    pub fn ram(&self) -> Option<&str> {
        match self {
            Size::Spv(s) => s.ram.as_deref(),
            Size::Tprocc(s) => s.ram.as_deref(),
            Size::Pgbench(s) => s.ram.as_deref(),
        }
    }

    pub fn workload(&self) -> super::Workload {
        match self {
            Size::Spv(_) => super::Workload::Spv,
            Size::Tprocc(_) => super::Workload::Tprocc,
            Size::Pgbench(_) => super::Workload::Pgbench,
        }
    }

    /// Parses a size of `workload` from JSON (meta.json's `size_spec`).
    pub fn from_json(workload: super::Workload, v: serde_json::Value) -> serde_json::Result<Size> {
        Ok(match workload {
            super::Workload::Spv => Size::Spv(serde_json::from_value(v)?),
            super::Workload::Tprocc => Size::Tprocc(serde_json::from_value(v)?),
            super::Workload::Pgbench => Size::Pgbench(serde_json::from_value(v)?),
        })
    }
}

/// Written flat (the workload is named beside it), as meta.json's `size_spec` always was.
impl Serialize for Size {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Size::Spv(x) => x.serialize(s),
            Size::Tprocc(x) => x.serialize(s),
            Size::Pgbench(x) => x.serialize(s),
        }
    }
}

/// Study 003: many-row UPDATE statements through pgbench on one small table.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SpvSize {
    pub rows: u64,
    pub pad_chars: u32,
    pub statements: u64,
    pub rows_per_statement: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub clients: Option<u32>,
    /// Seconds between statistics snapshots during `run`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub snapshot_every_s: Option<f64>,
    /// pgbench --random-seed, the same in every arm so arms see the same update sequence.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub random_seed: Option<u64>,
    /// Server settings for this size, on top of the study's.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub server: BTreeMap<String, String>,
    /// The RAM of the machine this size stands for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ram: Option<String>,
}

/// Study 000: HammerDB-compatible TPC-C. Every field may be left out of a scale model, which
/// takes them from its article size (`scale.rs`); `tprocc::Shape::of` checks the rest.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TproccSize {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub warehouses: Option<i64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub vus: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rampup_s: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub duration_s: Option<f64>,
    /// Seconds between statistics snapshots during `run`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub snapshot_every_s: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub profile: Option<Profile>,
    /// HammerDB's "use all warehouses": each VU spreads over a list of warehouses.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub all_warehouses: Option<bool>,
    /// Server settings for this size, on top of the study's.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub server: BTreeMap<String, String>,
    /// Article sizes: new orders per warehouse per minute the article's default arm ran (its
    /// churn), the time base of a scale model.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nopm_per_warehouse: Option<f64>,
    /// The RAM of the machine this size stands for. `run` confines a server on this machine to
    /// it (page cache included) where the platform allows; a scale model scales it as bytes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ram: Option<String>,
    /// A scale model of an article size (see `scale.rs` and docs/scale-models.md).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scale: Option<Scale>,
}

/// A pgbench-script workload (study 001, and a user's own table): the study names the files
/// (`PgbenchSpec`); a size says how hard and how long, and the values of the load's variables.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PgbenchSize {
    /// pgbench -c
    pub clients: u32,
    /// pgbench -j (default 1)
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub jobs: Option<u32>,
    /// Seconds at the start left out of the measured deltas (as TPROC-C's ramp-up).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rampup_s: Option<f64>,
    /// Measured seconds after the ramp-up (pgbench -T rampup + duration); or `transactions`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub duration_s: Option<f64>,
    /// Transactions in all (pgbench -t, divided among the clients); or `duration_s`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub transactions: Option<u64>,
    /// Seconds between statistics snapshots during `run`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub snapshot_every_s: Option<f64>,
    /// pgbench --random-seed, the same in every arm so arms see the same sequence.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub random_seed: Option<u64>,
    /// The variables of the load SQL (`:name`) and of the scripts (`-D name=value`).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub vars: BTreeMap<String, serde_json::Value>,
    /// Server settings for this size, on top of the study's.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub server: BTreeMap<String, String>,
    /// The RAM of the machine this size stands for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ram: Option<String>,
    /// This size is a scale model of another (docs/study-001-small-table.md: the scale rule).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scale: Option<PgbenchScale>,
}

/// `scale:` of a pgbench-script size: a model of the article size `from` at `factor` of its data.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PgbenchScale {
    pub from: String,
    /// Bytes × this (the data variables, shared_buffers, max_wal_size), and time × this.
    pub factor: f64,
    /// The variables that count data (rows, users): scaled by `factor`.
    pub vars: Vec<String>,
    /// The article's throughput at its size: the model runs `article_tps` × the article's
    /// ramp-up and duration × `factor` transactions.
    pub article_tps: f64,
}

/// Variable names pgbench and the load accept, and values that are a number or a string.
pub fn check_vars(vars: &BTreeMap<String, serde_json::Value>) -> anyhow::Result<()> {
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
    /// The ranges the type cannot say.
    pub fn check(&self) -> anyhow::Result<()> {
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
                super::bounds::seconds("duration_s", d, 1.0)?;
            }
            (None, Some(t)) if t == 0 || !t.is_multiple_of(self.clients as u64) => anyhow::bail!(
                "transactions ({t}) must be positive and divide evenly among {} clients",
                self.clients
            ),
            _ => {}
        }
        if let Some(r) = self.rampup_s {
            super::bounds::seconds("rampup_s", r, 0.0)?;
        }
        check_vars(&self.vars)?;
        check_snapshot_every(self.snapshot_every_s)
    }

    /// A variable's value as text (strings as written, numbers as JSON prints them).
    pub fn var(&self, name: &str) -> Option<String> {
        self.vars.get(name).map(|v| match v {
            serde_json::Value::String(s) => s.clone(),
            other => other.to_string(),
        })
    }
}

impl SpvSize {
    /// The ranges the type cannot say.
    pub fn check(&self) -> anyhow::Result<()> {
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
        check_snapshot_every(self.snapshot_every_s)
    }
}

impl TproccSize {
    /// The ranges the type cannot say (a scale model is checked once resolved).
    pub fn check(&self) -> anyhow::Result<()> {
        let Some(warehouses) = self.warehouses else {
            anyhow::bail!("tprocc sizes need warehouses");
        };
        if warehouses < 1 {
            anyhow::bail!("warehouses must be at least 1 (got {warehouses})");
        }
        if self.vus == Some(0) {
            anyhow::bail!("vus must be at least 1");
        }
        if let Some(d) = self.duration_s {
            super::bounds::seconds("duration_s", d, 1.0)?;
        }
        if let Some(r) = self.rampup_s {
            super::bounds::seconds("rampup_s", r, 0.0)?;
        }
        check_snapshot_every(self.snapshot_every_s)
    }
}

fn check_snapshot_every(e: Option<f64>) -> anyhow::Result<()> {
    if let Some(e) = e {
        super::bounds::seconds("snapshot_every_s", e, 0.1)?;
    }
    Ok(())
}

/// The TPROC-C transaction profile.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum Profile {
    /// HammerDB's update column set and 10/10/1/1/1 mix, uniform ids; two defects fixed.
    #[default]
    Hammerdb,
    /// The full TPC-C updates, NURand ids, 45/43/4/4/4.
    Spec,
}

impl Profile {
    pub fn name(self) -> &'static str {
        match self {
            Profile::Hammerdb => "hammerdb",
            Profile::Spec => "spec",
        }
    }
}

/// `scale:` in a size of the study file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Scale {
    /// The article size this one is a scale model of.
    pub from: String,
    /// Warehouses of the model: bytes scale by warehouses / the article size's warehouses.
    pub warehouses: i64,
    /// New orders per warehouse per minute this machine sustains at the model's size; the time
    /// factor is the article size's `nopm_per_warehouse` divided by this.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nopm_per_warehouse: Option<f64>,
    /// The time factor itself, instead of `nopm_per_warehouse`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub time_factor: Option<f64>,
}
