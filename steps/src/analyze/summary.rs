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
    /// The study's own tables (`runs`, `arms`, `mechanism`, `ladder`, `claims`, `baseline`, …):
    /// docs/run-directory.md. Each row of `runs` carries `identity`.
    #[serde(flatten)]
    pub(crate) tables: Map<String, Value>,
}

/// The identity of a run as its rows of `runs` carry it.
fn identity(r: &RunRow) -> Value {
    serde_json::json!({
        "study": r.study, "size": r.size, "sweep": r.sweep, "run": r.run, "arm": r.arm,
        "fingerprint": r.fingerprint, "start": r.start, "end": r.end,
        "postgres": r.postgres, "host": r.host, "hotlab": r.hotlab,
    })
}

impl Summary {
    /// The study's tables (`json`, an object) under the versioned head.
    pub(crate) fn new(json: Value, studies: Vec<String>, runs: &[ArmRun]) -> Summary {
        let run_index: Vec<RunRow> = runs.iter().map(RunRow::of).collect();
        let mut tables = match json {
            Value::Object(m) => m,
            _ => Map::new(),
        };
        if let Some(Value::Array(rows)) = tables.get_mut("runs") {
            for row in rows {
                let dir = row["dir"].as_str().map(str::to_string);
                if let Some(r) = run_index.iter().find(|r| Some(&r.dir) == dir.as_ref()) {
                    row["identity"] = identity(r);
                }
            }
        }
        Summary {
            schema_version: SCHEMA_VERSION,
            generated: crate::io::now_rfc3339(),
            studies,
            run_index,
            tables,
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
