//! The tidy results of one arm run, for history and for anyone's notebook: `results.parquet`
//! (the runs table: one row, the run's identity, its fingerprint's parts, status, start and end,
//! and the headline figures) and `samples.parquet` (the long-format snapshots with the run's
//! identity columns), written into the arm directory by `analyze`. The run directory stays the
//! source of truth: both files are rebuilt from it (`analyze --rebuild-index`). The columns are
//! documented in docs/results.md; `SCHEMA_VERSION` changes when a column changes meaning or goes.

use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};
use polars::prelude::*;
use polars_io::prelude::{
    CsvReadOptions, ParquetCompression, ParquetReader, ParquetWriter, SerReader,
};

use super::arms::{figure, ArmStats};
use super::fingerprint;
use super::load::ArmRun;

/// The version of both files' columns. A reader refuses files from a newer version.
pub const SCHEMA_VERSION: i64 = 1;

/// The runs table's file in an arm directory.
pub const RUNS_FILE: &str = "results.parquet";
/// The samples table's file in an arm directory.
pub const SAMPLES_FILE: &str = "samples.parquet";

/// One row of the runs table (docs/results.md names every column).
#[derive(Debug, Clone, PartialEq, Default, serde::Serialize, schemars::JsonSchema)]
pub struct RunRow {
    pub schema_version: i64,
    pub study: String,
    pub(crate) size: String,
    /// The sweep directory's name (`<YYYYMMDD-HHMMSS>-<label>`).
    pub(crate) sweep: String,
    /// The arm directory's name (`tuned-r2`).
    pub(crate) run: String,
    pub(crate) arm: String,
    pub dir: String,
    /// The first 8 hex digits of the fingerprint's sha256 (`analyze/fingerprint.rs`).
    pub(crate) fingerprint: String,
    pub(crate) status: String,
    pub start: String,
    pub(crate) end: String,
    pub(crate) workload: String,
    /// The study's tables, comma-separated.
    pub(crate) tables: String,
    /// The arm as resolved, without its name: fillfactors, index fillfactors, partitioning.
    pub(crate) arm_spec: String,
    pub(crate) size_spec: String,
    pub(crate) settings: String,
    pub(crate) postgres: String,
    pub(crate) host: String,
    pub(crate) hotlab: String,
    pub(crate) warehouses: Option<f64>,
    pub(crate) clients: Option<f64>,
    pub(crate) window_s: Option<f64>,
    /// What `throughput` counts: NOPM (TPROC-C), TPS (pgbench scripts), statements/s (study 003).
    pub(crate) metric: String,
    pub(crate) throughput: Option<f64>,
    /// HOT share of every update in the run's tables over the measured window.
    pub(crate) hot_pct: Option<f64>,
    pub(crate) newpage_pct: Option<f64>,
    pub(crate) wal_per_txn: Option<f64>,
    pub(crate) checkpoints: Option<f64>,
    pub(crate) latency_p50_ms: Option<f64>,
    pub(crate) latency_p95_ms: Option<f64>,
    pub(crate) latency_p99_ms: Option<f64>,
}

/// The headline figures `--baseline` compares: (column, label).
pub(crate) const HEADLINES: &[(&str, &str)] = &[
    ("throughput", "throughput"),
    ("hot_pct", "HOT %"),
    ("newpage_pct", "new-page %"),
    ("wal_per_txn", "WAL/txn bytes"),
    ("checkpoints", "checkpoints"),
    ("latency_p95_ms", "latency p95 ms"),
];

impl RunRow {
    pub fn of(r: &ArmRun) -> RunRow {
        let parts = fingerprint::parts(r);
        let part = |k: &str| parts.get(k).cloned().unwrap_or_default();
        let id = fingerprint::Identity::of(r, &parts);
        let metric = super::throughput(r.plan.workload).label;
        let h = super::headline(r);
        let (mut upd, mut hot, mut newpage) = (None, None, None);
        let add = |a: Option<f64>, b: Option<f64>| match (a, b) {
            (a, Some(b)) => Some(a.unwrap_or(0.0) + b),
            (a, None) => a,
        };
        for ((object, metric), win) in &r.tables.window {
            if metric != "n_tup_upd" || r.tables.partitions.contains(object) {
                continue;
            }
            upd = add(upd, win.delta);
            hot = add(hot, r.table(object, "n_tup_hot_upd").delta);
            newpage = add(newpage, r.table(object, "n_tup_newpage_upd").delta);
        }
        let wal = r.source("lsn", "insert_lsn_bytes").delta;
        let txns = r.source("cluster", "xact_total").delta;
        RunRow {
            schema_version: SCHEMA_VERSION,
            study: id.study,
            size: id.size,
            sweep: id.sweep,
            run: id.run,
            arm: id.arm,
            dir: r.dir.display().to_string(),
            fingerprint: id.fingerprint,
            status: r.status(),
            start: id.start,
            end: id.end,
            workload: r.plan.workload.name().to_string(),
            tables: r.plan.tables.join(","),
            arm_spec: part("4 arm"),
            size_spec: part("3 size as resolved"),
            settings: part("5 server settings"),
            postgres: id.postgres,
            host: id.host,
            hotlab: id.hotlab,
            warehouses: h.warehouses,
            clients: h.clients,
            window_s: h.window_s,
            metric: metric.into(),
            throughput: h.throughput,
            hot_pct: super::pct(hot, upd),
            newpage_pct: super::pct(newpage, upd),
            wal_per_txn: match (wal, txns) {
                (Some(b), Some(n)) if n > 0.0 => Some(b / n),
                _ => None,
            },
            checkpoints: r.source("checkpointer", "num_done").delta,
            latency_p50_ms: h.latency_ms[0],
            latency_p95_ms: h.latency_ms[1],
            latency_p99_ms: h.latency_ms[2],
        }
    }

    /// A headline figure by its column name (`HEADLINES`).
    pub(crate) fn figure(&self, column: &str) -> Option<f64> {
        match column {
            "throughput" => self.throughput,
            "hot_pct" => self.hot_pct,
            "newpage_pct" => self.newpage_pct,
            "wal_per_txn" => self.wal_per_txn,
            "checkpoints" => self.checkpoints,
            "latency_p50_ms" => self.latency_p50_ms,
            "latency_p95_ms" => self.latency_p95_ms,
            "latency_p99_ms" => self.latency_p99_ms,
            _ => None,
        }
    }

    /// The date of the run's start (`2026-12-03`).
    pub(crate) fn date(&self) -> &str {
        self.start.get(..10).unwrap_or("?")
    }
}

/// The text columns of the runs table, in order, with their readers.
type TextField = (
    &'static str,
    fn(&RunRow) -> &String,
    fn(&mut RunRow, String),
);
/// The number columns.
type NumField = (
    &'static str,
    fn(&RunRow) -> Option<f64>,
    fn(&mut RunRow, Option<f64>),
);

macro_rules! text_fields {
    ($($f:ident),*) => { &[$((stringify!($f), |r: &RunRow| &r.$f, |r: &mut RunRow, v| r.$f = v)),*] };
}
macro_rules! num_fields {
    ($($f:ident),*) => { &[$((stringify!($f), |r: &RunRow| r.$f, |r: &mut RunRow, v| r.$f = v)),*] };
}

const TEXT: &[TextField] = text_fields!(
    study,
    size,
    sweep,
    run,
    arm,
    dir,
    fingerprint,
    status,
    start,
    end,
    workload,
    tables,
    arm_spec,
    size_spec,
    settings,
    postgres,
    host,
    hotlab,
    metric
);
const NUM: &[NumField] = num_fields!(
    warehouses,
    clients,
    window_s,
    throughput,
    hot_pct,
    newpage_pct,
    wal_per_txn,
    checkpoints,
    latency_p50_ms,
    latency_p95_ms,
    latency_p99_ms
);

/// The runs table as a frame.
pub fn runs_frame(rows: &[RunRow]) -> Result<DataFrame> {
    let mut cols = vec![Column::new(
        "schema_version".into(),
        rows.iter().map(|r| r.schema_version).collect::<Vec<_>>(),
    )];
    for (name, get, _) in TEXT {
        cols.push(Column::new(
            (*name).into(),
            rows.iter().map(|r| get(r).as_str()).collect::<Vec<_>>(),
        ));
    }
    for (name, get, _) in NUM {
        cols.push(Column::new(
            (*name).into(),
            rows.iter().map(get).collect::<Vec<Option<f64>>>(),
        ));
    }
    Ok(DataFrame::new(rows.len(), cols)?)
}

/// Per arm and headline column (`HEADLINES`), the complete runs' count, mean, min and max: one
/// group-by over the runs table (`arms.rs`). Columns an arm never measured are absent.
pub(crate) fn arm_stats(rows: &[RunRow]) -> Result<ArmStats> {
    let arms = super::by_arm(rows, |r| r.arm.clone(), |r| r.status == "complete");
    let figures: Vec<_> = HEADLINES
        .iter()
        .map(|(c, _)| figure(*c, move |r: &RunRow| r.figure(c)))
        .collect();
    ArmStats::of(&arms, &figures)
}

/// Rows back from a runs frame. A frame of a newer schema is refused by `read_runs`.
pub(crate) fn rows_of(df: &DataFrame) -> Result<Vec<RunRow>> {
    let mut rows = vec![RunRow::default(); df.height()];
    let versions = df
        .column("schema_version")?
        .as_materialized_series()
        .i64()?
        .clone();
    for (i, r) in rows.iter_mut().enumerate() {
        r.schema_version = versions.get(i).unwrap_or(0);
    }
    for (name, _, set) in TEXT {
        let c = df.column(name)?.as_materialized_series().str()?.clone();
        for (i, r) in rows.iter_mut().enumerate() {
            set(r, c.get(i).unwrap_or_default().to_string());
        }
    }
    for (name, _, set) in NUM {
        let c = df.column(name)?.as_materialized_series().f64()?.clone();
        for (i, r) in rows.iter_mut().enumerate() {
            set(r, c.get(i));
        }
    }
    Ok(rows)
}

/// The long-format snapshots of one run with its identity: `file` (tables, database, buffers),
/// every column of the CSVs (`parent` and `kind` empty where a file has none), `value` as a
/// number where it is one and `text` as sampled.
pub(crate) fn samples_frame(row: &RunRow, dir: &Path) -> Result<DataFrame> {
    let mut frames = vec![];
    for file in ["tables", "database", "buffers"] {
        let path = dir.join("snapshots").join(format!("{file}.csv"));
        if !path.exists() {
            continue;
        }
        let df = CsvReadOptions::default()
            .with_has_header(true)
            .with_infer_schema_length(Some(0))
            .try_into_reader_with_file_path(Some(path.clone()))?
            .finish()
            .map_err(|e| anyhow::anyhow!("reading {}: {e}", path.display()))?;
        let header = super::load::header_of(&path)?;
        let mut lf = df.lazy();
        for c in ["parent", "kind"] {
            if !header.split(',').any(|h| h == c) {
                lf = lf.with_column(lit(NULL).cast(DataType::String).alias(c));
            }
        }
        frames.push(lf.select([
            lit(file).alias("file"),
            col("sample").cast(DataType::Int64),
            col("ts"),
            col("phase"),
            col("object"),
            col("parent"),
            col("kind"),
            col("metric"),
            col("value").cast(DataType::Float64).alias("value"),
            col("value").alias("text"),
        ]));
    }
    let ident = [
        lit(SCHEMA_VERSION).alias("schema_version"),
        lit(row.study.as_str()).alias("study"),
        lit(row.size.as_str()).alias("size"),
        lit(row.sweep.as_str()).alias("sweep"),
        lit(row.run.as_str()).alias("run"),
        lit(row.arm.as_str()).alias("arm"),
        lit(row.fingerprint.as_str()).alias("fingerprint"),
    ];
    let frames_empty = frames.is_empty();
    let all = if frames_empty {
        DataFrame::empty().lazy()
    } else {
        concat(frames, UnionArgs::default())?
    };
    let mut cols = ident.to_vec();
    if !frames_empty {
        cols.extend(SAMPLE_COLUMNS.iter().map(|c| col(*c)));
    }
    Ok(all.select(cols).collect()?)
}

/// The samples table's columns after the identity ones.
const SAMPLE_COLUMNS: &[&str] = &[
    "file", "sample", "ts", "phase", "object", "parent", "kind", "metric", "value", "text",
];

fn write_parquet(path: &Path, df: &mut DataFrame) -> Result<()> {
    let tmp = path.with_extension("parquet.tmp");
    let f = std::fs::File::create(&tmp).with_context(|| format!("creating {}", tmp.display()))?;
    let written = ParquetWriter::new(f)
        .with_compression(ParquetCompression::Snappy)
        .finish(df);
    if let Err(e) = written {
        let _ = std::fs::remove_file(&tmp);
        bail!("writing {}: {e}", path.display());
    }
    std::fs::rename(&tmp, path).with_context(|| format!("renaming onto {}", path.display()))?;
    Ok(())
}

/// Writes both files of one arm run into its directory; returns its row.
pub(crate) fn write(r: &ArmRun) -> Result<RunRow> {
    let row = RunRow::of(r);
    write_parquet(
        &r.dir.join(RUNS_FILE),
        &mut runs_frame(std::slice::from_ref(&row))?,
    )?;
    write_parquet(&r.dir.join(SAMPLES_FILE), &mut samples_frame(&row, &r.dir)?)?;
    Ok(row)
}

/// Reads one results file, refusing a newer schema in one line.
pub(crate) fn read_runs(path: &Path) -> Result<DataFrame> {
    let f = std::fs::File::open(path).with_context(|| format!("opening {}", path.display()))?;
    let df = ParquetReader::new(f)
        .finish()
        .map_err(|e| anyhow::anyhow!("reading {}: {e}", path.display()))?;
    let newest = df
        .column("schema_version")
        .ok()
        .and_then(|c| c.as_materialized_series().i64().ok()?.max())
        .unwrap_or(0);
    if newest > SCHEMA_VERSION {
        bail!(
            "{} has results schema version {newest}; this hotlab reads up to version {SCHEMA_VERSION}: update hotlab (git pull), or rewrite the file with `cargo xtask analyze --rebuild-index {}`",
            path.display(),
            path.parent().map(|p| p.display().to_string()).unwrap_or_default()
        );
    }
    Ok(df)
}

/// Every arm directory under `root`: itself, its arms, a sweep's arms, a study's sweeps' arms
/// (`data/runs`: study/sweep/arm), never an `attempt-<n>` a retry moved aside.
pub(crate) fn arm_dirs_under(root: &Path) -> Result<Vec<PathBuf>> {
    fn walk(dir: &Path, depth: u32, out: &mut Vec<PathBuf>) -> Result<()> {
        if dir.join("meta.json").exists() {
            out.push(dir.to_path_buf());
            return Ok(());
        }
        if depth == 0 {
            return Ok(());
        }
        let rd = std::fs::read_dir(dir).with_context(|| format!("reading {}", dir.display()))?;
        for e in rd {
            let p = e?.path();
            if p.is_dir() {
                walk(&p, depth - 1, out)?;
            }
        }
        Ok(())
    }
    let mut out = vec![];
    walk(root, 3, &mut out)?;
    out.sort();
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_row_survives_the_frame() {
        let row = RunRow {
            schema_version: SCHEMA_VERSION,
            study: "spv".into(),
            run: "ff100-r2".into(),
            throughput: Some(12.5),
            hot_pct: None,
            ..Default::default()
        };
        let df = runs_frame(std::slice::from_ref(&row)).unwrap();
        assert_eq!(rows_of(&df).unwrap(), vec![row]);
    }

    #[test]
    fn arm_stats_group_complete_runs_like_stats_of() {
        let run = |arm: &str, status: &str, t: Option<f64>| RunRow {
            arm: arm.into(),
            status: status.into(),
            throughput: t,
            ..Default::default()
        };
        let rows = [
            run("a", "complete", Some(10.0)),
            run("a", "complete", Some(14.0)),
            run("a", "failed", Some(100.0)),
            run("b", "complete", None),
        ];
        let s = arm_stats(&rows).unwrap();
        assert_eq!(
            s.get("a", "throughput"),
            crate::stats::Stats::of(&[10.0, 14.0])
        );
        assert_eq!(s.get("b", "throughput"), None);
    }
}
