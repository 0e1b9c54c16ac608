//! Reads one arm directory into figures: its metadata and, for every (object, metric) of the
//! snapshots, the values at the first and last sample of the measured window and their delta.
//! Polars does the reshaping; nothing here connects to a database.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::Result;
use polars::prelude::*;
use serde_json::Value;

use crate::rundir::read_json;

/// First, last and delta of one metric over the measured window.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Window {
    pub first: Option<f64>,
    pub last: Option<f64>,
    pub delta: Option<f64>,
    pub last_text: Option<String>,
}

/// Everything analyze knows about one arm run.
#[derive(Debug, Clone)]
pub struct ArmRun {
    pub dir: PathBuf,
    pub meta: Value,
    pub fillfactor: Value,
    pub workload: Value,
    pub resets: Vec<Value>,
    /// (object, metric) → window, from snapshots/tables.csv
    pub tables: HashMap<(String, String), Window>,
    /// (object, metric) → window, from snapshots/database.csv
    pub database: HashMap<(String, String), Window>,
    /// table → post-run VACUUM seconds, from vacuum.csv
    pub vacuum: HashMap<String, f64>,
}

impl ArmRun {
    pub fn load(dir: &Path) -> Result<ArmRun> {
        let meta = read_json(&dir.join("meta.json"))?;
        let opt_json = |name: &str| -> Value { read_json(&dir.join(name)).unwrap_or(Value::Null) };
        let resets = std::fs::read_to_string(dir.join("reset.jsonl"))
            .unwrap_or_default()
            .lines()
            .filter_map(|l| serde_json::from_str(l).ok())
            .collect();
        Ok(ArmRun {
            dir: dir.to_path_buf(),
            fillfactor: opt_json("fillfactor.json"),
            workload: opt_json("workload.json"),
            resets,
            tables: window(&dir.join("snapshots/tables.csv"))?,
            database: window(&dir.join("snapshots/database.csv"))?,
            vacuum: std::fs::read_to_string(dir.join("vacuum.csv"))
                .unwrap_or_default()
                .lines()
                .skip(1)
                .filter_map(|l| {
                    let mut f = l.split(',');
                    Some((f.next()?.to_string(), f.next()?.parse().ok()?))
                })
                .collect(),
            meta,
        })
    }

    pub fn table(&self, object: &str, metric: &str) -> Window {
        self.tables
            .get(&(object.to_string(), metric.to_string()))
            .cloned()
            .unwrap_or_default()
    }

    pub fn source(&self, object: &str, metric: &str) -> Window {
        self.database
            .get(&(object.to_string(), metric.to_string()))
            .cloned()
            .unwrap_or_default()
    }

    pub fn name(&self) -> String {
        self.meta["run"].as_str().unwrap_or("?").to_string()
    }

    pub fn status(&self) -> String {
        self.meta["status"]
            .as_str()
            .unwrap_or("unknown")
            .to_string()
    }
}

/// Reads a long-format snapshot file and reduces it to the measured window per (object, metric).
pub fn window(path: &Path) -> Result<HashMap<(String, String), Window>> {
    let mut out = HashMap::new();
    if !path.exists() {
        return Ok(out);
    }
    let df =
        window_frame(path).map_err(|e| anyhow::anyhow!("analysing {}: {e}", path.display()))?;
    let objects = df.column("object")?.as_materialized_series().str()?.clone();
    let metrics = df.column("metric")?.as_materialized_series().str()?.clone();
    let first = df
        .column("first_num")?
        .as_materialized_series()
        .f64()?
        .clone();
    let last = df
        .column("last_num")?
        .as_materialized_series()
        .f64()?
        .clone();
    let delta = df.column("delta")?.as_materialized_series().f64()?.clone();
    let last_text = df.column("last")?.as_materialized_series().str()?.clone();
    for i in 0..df.height() {
        let (Some(o), Some(m)) = (objects.get(i), metrics.get(i)) else {
            continue;
        };
        out.insert(
            (o.to_string(), m.to_string()),
            Window {
                first: first.get(i),
                last: last.get(i),
                delta: delta.get(i),
                last_text: last_text.get(i).map(str::to_string),
            },
        );
    }
    Ok(out)
}

/// The polars query: measured samples only; per (object, metric) the value at the first and
/// the last sample, both as numbers where they parse, and their difference.
pub fn window_frame(path: &Path) -> PolarsResult<DataFrame> {
    let header = std::fs::read_to_string(path)
        .map_err(|e| PolarsError::IO {
            error: Arc::new(e),
            msg: None,
        })?
        .lines()
        .next()
        .unwrap_or_default()
        .to_string();
    let schema: Schema = header
        .split(',')
        .map(|c| {
            let dt = if c == "sample" {
                DataType::Int64
            } else {
                DataType::String
            };
            Field::new(c.into(), dt)
        })
        .collect();
    let df = CsvReadOptions::default()
        .with_has_header(true)
        .with_schema(Some(Arc::new(schema)))
        .try_into_reader_with_file_path(Some(path.to_path_buf()))?
        .finish()?;
    let by_sample = || SortMultipleOptions::default();
    df.lazy()
        .filter(col("phase").eq(lit("measured")))
        .group_by([col("object"), col("metric")])
        .agg([
            col("value")
                .sort_by([col("sample")], by_sample())
                .first()
                .alias("first"),
            col("value")
                .sort_by([col("sample")], by_sample())
                .last()
                .alias("last"),
        ])
        .with_columns([
            col("first").cast(DataType::Float64).alias("first_num"),
            col("last").cast(DataType::Float64).alias("last_num"),
        ])
        .with_column((col("last_num") - col("first_num")).alias("delta"))
        .collect()
}
