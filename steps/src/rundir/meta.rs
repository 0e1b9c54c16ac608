//! meta.json as types. `init` writes the arm's plan (`ArmPlan`, read back through it) with the
//! host and hotlab; every step then records its section here, and `analyze` reads them through
//! the same structs (docs/run-directory.md has the contract). A key this version does not know
//! is kept as it is; a section's key an older version did not write reads as its default.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::StepStatus;
use crate::ctx::BackendKind;
use crate::host::{HostInfo, HotlabInfo};

/// meta.json.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub(crate) struct Meta {
    /// The arm's status (the last step's outcome).
    #[serde(default)]
    pub(crate) status: Option<StepStatus>,
    /// When the first step started and the last ended, RFC 3339.
    #[serde(default)]
    pub(crate) start: Option<String>,
    #[serde(default)]
    pub(crate) end: Option<String>,
    /// Each step's record, by step name.
    #[serde(default)]
    pub(crate) steps: BTreeMap<String, StepRecord>,
    /// The arm's result files at the end of the last step (`RunDir::manifest`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) files: Option<BTreeMap<String, FileEntry>>,
    /// Why `analyze` found the arm damaged (set in memory by `analyze`, never written).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) damage: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) host: Option<HostInfo>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) hotlab: Option<HotlabInfo>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) server: Option<ServerInfo>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) build: Option<BuildRecord>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) memory_limit: Option<MemoryLimit>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) database_end: Option<DatabaseEnd>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) server_lease: Option<LeaseRecord>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) server_settings_restore: Option<SettingsRestore>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) server_settings_diff: Option<Vec<SettingDiff>>,
    /// The plan `init` wrote (read through `ArmPlan`), and any key another version wrote.
    #[serde(flatten)]
    pub(crate) plan: BTreeMap<String, Value>,
}

/// One step's record.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(default)]
pub(crate) struct StepRecord {
    pub(crate) status: Option<StepStatus>,
    pub(crate) start: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) end: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) pid: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) error: Option<String>,
}

/// A result file's size, and its line count for CSV, JSONL and logs.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub(crate) struct FileEntry {
    pub(crate) bytes: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) rows: Option<u64>,
}

/// The server `build` measured on (meta.json's `server`).
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(default)]
pub(crate) struct ServerInfo {
    /// `SELECT version()`.
    pub(crate) version: String,
    pub(crate) version_num: i64,
    pub(crate) backend: Option<BackendKind>,
    pub(crate) host: String,
    pub(crate) port: u16,
    /// The settings not at their defaults, with their units.
    pub(crate) settings: BTreeMap<String, String>,
}

/// What `build` did (meta.json's `build`).
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(default)]
pub(crate) struct BuildRecord {
    pub(crate) database: String,
    /// `rewrite` or `create-with`.
    pub(crate) route: String,
    /// What the route leaves in the cache.
    pub(crate) cache: String,
    pub(crate) template: Option<String>,
    pub(crate) template_reused: bool,
    pub(crate) copy_seconds: Option<f64>,
    pub(crate) seconds: f64,
    /// Rows per table, as verified.
    pub(crate) rows: BTreeMap<String, i64>,
    pub(crate) database_bytes: i64,
    /// The server settings `build --apply-server-settings` changed.
    #[serde(default)]
    pub(crate) settings_changed: Vec<String>,
}

/// The memory confinement of `run` (meta.json's `memory_limit`): applied, or why not.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(default)]
pub(crate) struct MemoryLimit {
    pub(crate) applied: bool,
    pub(crate) bytes: u64,
    pub(crate) ram: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) cgroup_version: Option<u8>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) cgroup: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) why: Option<String>,
    /// The cgroup's charge at the end of the workload and at most (page cache included).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) usage_bytes_end: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) usage_bytes_peak: Option<u64>,
}

/// The arm's database after `vacuum-timing` (meta.json's `database_end`).
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(default)]
pub(crate) struct DatabaseEnd {
    pub(crate) name: String,
    pub(crate) kept: bool,
    pub(crate) dropped: bool,
}

/// The server lease this arm's last step held (meta.json's `server_lease`).
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(default)]
pub(crate) struct LeaseRecord {
    pub(crate) generation: u64,
    pub(crate) cold_generation: Option<u64>,
    pub(crate) holder: Option<String>,
}

/// What `build --apply-server-settings` changed, to put back (meta.json's
/// `server_settings_restore`): each setting's previous postgresql.auto.conf value.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(default)]
pub(crate) struct SettingsRestore {
    pub(crate) previous: BTreeMap<String, Option<String>>,
    pub(crate) restored: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) done: Option<Vec<String>>,
}

/// One setting where the server is not at the study's value.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct SettingDiff {
    pub(crate) name: String,
    pub(crate) study: String,
    pub(crate) server: String,
}
