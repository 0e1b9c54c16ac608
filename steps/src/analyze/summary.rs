//! summary.json's versioned head: `schema_version`, when and what was analyzed, and `run_index`
//! (every run's identity and headline figures, the runs table's row); the study's own tables
//! sit beside them, and every per-run row of `runs` gets the run's identity. The JSON Schema in
//! docs/summary.schema.json is generated from these types; a unit test fails when it is stale.

use serde::Serialize;
use serde_json::{Map, Value};

use super::load::ArmRun;
use super::results::RunRow;

/// The version of summary.json's shape: raised when a field changes meaning or goes.
pub const SCHEMA_VERSION: u32 = 1;

/// summary.json.
#[derive(Serialize, schemars::JsonSchema)]
pub(crate) struct Summary {
    /// The version of this file's shape (raised when a field changes meaning or is removed).
    pub(crate) schema_version: u32,
    /// When `analyze` wrote the file, RFC 3339.
    pub(crate) generated: String,
    /// The studies of the runs analyzed.
    pub(crate) studies: Vec<String>,
    /// Every run analyzed, in the order read: identity, fingerprint parts, status, start, end,
    /// headline figures (docs/results.md, the runs table).
    pub(crate) run_index: Vec<RunRow>,
    /// What any study's analysis may add (`ladder`, `pooled`, `cold_start`, …): docs/run-directory.md.
    #[serde(flatten)]
    #[schemars(skip)]
    pub(crate) sections: Sections,
    /// The study's own tables (`runs`, `arms`, `mechanism`, `claims`, …), from its room's types:
    /// docs/run-directory.md. Each row of `runs` carries `identity`.
    #[serde(flatten)]
    pub(crate) tables: Map<String, Value>,
}

/// The sections of summary.json that do not depend on the study, each there only when it has
/// something to say (`cold_start` always).
#[derive(Debug, Default, Serialize)]
pub(crate) struct Sections {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) ladder: Option<super::ladder::LadderJson>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) pooled: Option<Vec<super::fingerprint::PooledArm>>,
    pub(crate) cold_start: Vec<super::ColdStart>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) not_at_study_settings: Option<Vec<super::OffSettings>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) left_out: Option<Vec<super::LeftOut>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) baseline: Option<super::baseline::BaselineJson>,
}

impl Summary {
    /// The study's tables (`tables`, an object of its room's types) and the other sections under
    /// the versioned head.
    pub(crate) fn new(
        tables: Value,
        sections: Sections,
        studies: Vec<String>,
        runs: &[ArmRun],
    ) -> Summary {
        Summary {
            schema_version: SCHEMA_VERSION,
            generated: crate::io::now_rfc3339(),
            studies,
            run_index: runs.iter().map(RunRow::of).collect(),
            sections,
            tables: match tables {
                Value::Object(m) => m,
                _ => Map::new(),
            },
        }
    }

    pub(crate) fn to_json(&self) -> Value {
        serde_json::to_value(self).expect("a summary serializes")
    }
}

/// The JSON Schema of summary.json, as checked in.
#[cfg(test)]
fn schema() -> String {
    let s = schemars::schema_for!(Summary);
    serde_json::to_string_pretty(&s).expect("a schema serializes") + "\n"
}

#[cfg(test)]
mod tests {
    /// docs/summary.schema.json is what the types generate; `HOTLAB_BLESS=1` rewrites it.
    #[test]
    fn summary_schema_is_current() {
        let path = crate::ctx::project_root().join("docs/summary.schema.json");
        let now = super::schema();
        if std::env::var_os(crate::env::BLESS).is_some() {
            std::fs::write(&path, &now).unwrap();
        }
        let checked_in = std::fs::read_to_string(&path).unwrap_or_default();
        assert!(
            checked_in == now,
            "docs/summary.schema.json is not what summary.json's types generate: regenerate it with `HOTLAB_BLESS=1 cargo test -p steps --lib summary_schema_is_current` and raise analyze::summary::SCHEMA_VERSION if a field changed meaning or went"
        );
    }
}
