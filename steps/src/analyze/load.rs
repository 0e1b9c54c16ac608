//! Reads one arm directory into figures: its metadata and, for every (object, metric) of the
//! snapshots, the values at the first and last sample of the measured window and their delta,
//! plus per-sample series of the metrics the charts use. Partitions are rolled up into their
//! parent. Polars does the reading, the window (first, last, delta per object and metric), the
//! windows' roll-up and the series' roll-up as lazy queries.
//! Nothing here connects to a database.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::Result;
use polars::prelude::*;
use polars_io::prelude::{CsvReadOptions, SerReader};
use serde_json::Value;

use crate::io::{csv_maps, read_json};
use crate::rundir::{FillfactorJson, RunDir, StepStatus};
use crate::study::ArmPlan;

/// First, last and delta of one metric over the measured window.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Window {
    pub first: Option<f64>,
    pub last: Option<f64>,
    pub delta: Option<f64>,
    pub(crate) last_text: Option<String>,
}

/// Everything analyze knows about one arm run.
#[derive(Debug, Clone)]
pub struct ArmRun {
    pub dir: PathBuf,
    /// The plan `init` resolved (older run directories: what their meta.json has).
    pub plan: ArmPlan,
    /// meta.json as a whole: what the steps recorded beside the plan (`build`, `server`,
    /// `memory_limit`, `host`, `status`).
    pub(crate) meta: crate::rundir::Meta,
    /// fillfactor.json (None before apply-fillfactor ran).
    pub fillfactor: Option<FillfactorJson>,
    pub workload: Value,
    pub resets: Vec<Value>,
    /// snapshots/tables.csv: windows and series per (object, metric), partitions rolled up
    pub(crate) tables: Snapshots,
    /// snapshots/database.csv: windows and series per (source, metric)
    pub(crate) database: Snapshots,
    /// snapshots/buffers.csv: windows and series per (relation, metric)
    pub buffers: Snapshots,
    /// table → post-run VACUUM seconds, from vacuum.csv
    pub(crate) vacuum: HashMap<String, f64>,
    /// hot_rows.csv (pgbench-script studies with a hot_rows query): one map per row.
    pub hot_rows: Vec<std::collections::BTreeMap<String, String>>,
}

impl ArmRun {
    pub fn load(dir: &Path) -> Result<ArmRun> {
        let rd = RunDir::open(dir)?;
        let mut meta = rd.meta()?;
        let plan = rd.plan_any()?;
        // A damaged arm is reported as such and never averaged in: its files are not read.
        if let Some(why) = rd.damage() {
            eprintln!(
                "hotlab: warning: {} is damaged: {why}; it is left out",
                dir.display()
            );
            meta.status = Some(StepStatus::Damaged);
            meta.damage = Some(why);
            return Ok(ArmRun {
                dir: dir.to_path_buf(),
                plan,
                fillfactor: None,
                workload: Value::Null,
                resets: vec![],
                tables: Snapshots::default(),
                database: Snapshots::default(),
                buffers: Snapshots::default(),
                vacuum: HashMap::new(),
                hot_rows: vec![],
                meta,
            });
        }
        // A step left `running` by a process that is gone (its lock is free): it died.
        if meta.status == Some(StepStatus::Running) && rd.lock_free() {
            meta.status = Some(StepStatus::Died);
        }
        let opt_json = |name: &str| -> Value { read_json(&dir.join(name)).unwrap_or(Value::Null) };
        let resets = std::fs::read_to_string(dir.join("reset.jsonl"))
            .unwrap_or_default()
            .lines()
            .filter_map(|l| serde_json::from_str(l).ok())
            .collect();
        let workload = opt_json("workload.json");
        Ok(ArmRun {
            dir: dir.to_path_buf(),
            plan,
            fillfactor: FillfactorJson::of(&opt_json("fillfactor.json")),
            workload,
            resets,
            tables: snapshots(&dir.join("snapshots/tables.csv"))?,
            database: snapshots(&dir.join("snapshots/database.csv"))?,
            buffers: snapshots(&dir.join("snapshots/buffers.csv"))?,
            vacuum: csv_maps(&std::fs::read_to_string(dir.join("vacuum.csv")).unwrap_or_default())
                .unwrap_or_default()
                .into_iter()
                .filter_map(|m| Some((m.get("table")?.clone(), m.get("seconds")?.parse().ok()?)))
                .collect(),
            hot_rows: csv_maps(
                &std::fs::read_to_string(dir.join("hot_rows.csv")).unwrap_or_default(),
            )
            .unwrap_or_default(),
            meta,
        })
    }

    pub fn table(&self, object: &str, metric: &str) -> Window {
        self.tables
            .window
            .get(&(object.to_string(), metric.to_string()))
            .cloned()
            .unwrap_or_default()
    }

    pub(crate) fn source(&self, object: &str, metric: &str) -> Window {
        self.database
            .window
            .get(&(object.to_string(), metric.to_string()))
            .cloned()
            .unwrap_or_default()
    }

    /// Per-sample values of a table metric (measured samples; seconds since the first).
    pub fn table_series(&self, object: &str, metric: &str) -> &[(f64, f64)] {
        self.tables
            .series
            .get(&(object.to_string(), metric.to_string()))
            .map(Vec::as_slice)
            .unwrap_or(&[])
    }

    /// Per-sample values of a database.csv source metric.
    pub(crate) fn source_series(&self, object: &str, metric: &str) -> &[(f64, f64)] {
        self.database
            .series
            .get(&(object.to_string(), metric.to_string()))
            .map(Vec::as_slice)
            .unwrap_or(&[])
    }

    /// The arm's name without the repeat suffix (`tuned-r2` → `tuned`).
    pub fn arm(&self) -> String {
        self.plan.arm.name.clone()
    }

    /// The fillfactor `table` had: what the snapshots saw during the run, else what
    /// apply-fillfactor read back, else what the plan asked. The one place analyze reads it.
    pub(crate) fn fillfactor(&self, table: &str) -> Option<f64> {
        self.table(table, "fillfactor")
            .last
            .or_else(|| {
                let f = self.fillfactor.as_ref()?;
                Some(f.relations.get(table)?.read_back? as f64)
            })
            .or_else(|| self.plan.arm.fillfactor.get(table).map(|f| *f as f64))
    }

    pub fn name(&self) -> String {
        self.plan.run.clone()
    }

    /// workload.json as its workload's own type (None when the run has none, or it is
    /// another workload's).
    pub(crate) fn workload_as<T: serde::de::DeserializeOwned>(&self) -> Option<T> {
        serde_json::from_value(self.workload.clone()).ok()
    }

    /// One column of the run's workload.csv by its `t_s`: (t, value, in the measured window; a
    /// file without a phase column is all measured).
    pub(crate) fn workload_column(&self, column: &str) -> Vec<(f64, f64, bool)> {
        let text = std::fs::read_to_string(self.dir.join("workload.csv")).unwrap_or_default();
        csv_maps(&text)
            .unwrap_or_default()
            .iter()
            .filter_map(|m| {
                Some((
                    m.get("t_s")?.parse().ok()?,
                    m.get(column)?.parse().ok()?,
                    m.get("phase").is_none_or(|p| p == "measured"),
                ))
            })
            .collect()
    }

    /// The share (%) of the table's pages holding a row the scripts hit, at `phase` (start: the
    /// first record, after the build; end: the last, after the run), and the hit rows' count.
    pub fn hot_pages_pct(&self, phase: &str) -> Option<f64> {
        let mut rows = self
            .hot_rows
            .iter()
            .filter(|m| m.get("phase").map(String::as_str) == Some(phase));
        let m = if phase == "start" {
            rows.next()
        } else {
            rows.next_back()
        }?;
        let n = |k: &str| m.get(k).and_then(|v| v.parse::<f64>().ok());
        super::pct(n("pages_with_hot_row"), n("table_pages"))
    }

    pub fn status(&self) -> String {
        self.meta
            .status
            .map_or("unknown", |s| s.as_str())
            .to_string()
    }
}

/// The metrics analyze reads; every other row of the snapshot files is skipped right after
/// parsing (the files keep everything for anyone who wants more). All of them also get a series.
pub(crate) const METRICS: &[&str] = &[
    "fillfactor",
    "n_live_tup",
    "num_done",
    "relpages",
    "heap_bytes",
    "index_bytes",
    "n_dead_tup",
    "n_tup_ins",
    "n_tup_upd",
    "n_tup_hot_upd",
    "n_tup_newpage_upd",
    "xact_total",
    "xact_commit",
    "d_next_o_id_sum",
    "insert_lsn_bytes",
    "buffers",
    "dirty",
    "buffers_used",
    "buffers_dirty",
    // The mechanism (analyze/mechanism.rs).
    "num_timed",
    "num_requested",
    "wal_fpi",
    "heap_blks_read",
    "heap_blks_hit",
    "idx_blks_read",
    "idx_blks_hit",
    "cpu_s",
    "read_bytes",
    "write_bytes",
    "extend_bytes",
    "database_bytes",
    "busy_s",
    "idle_s",
    "iowait_s",
    "steal_s",
];

/// Counters and sizes that add up across partitions (the rest, like fillfactor, do not).
fn additive(metric: &str) -> bool {
    metric.starts_with("n_")
        || metric.ends_with("_bytes")
        || metric.ends_with("_hit")
        || metric.ends_with("_read")
        || metric.ends_with("_count")
        || metric.ends_with("_fetch")
        || matches!(
            metric,
            "relpages" | "reltuples" | "seq_scan" | "idx_scan" | "buffers" | "dirty"
        )
}

/// (object, metric) → its points.
pub(crate) type SeriesMap = HashMap<(String, String), Vec<(f64, f64)>>;

/// One snapshot file reduced to its measured window and its per-sample series.
#[derive(Debug, Default, Clone)]
pub struct Snapshots {
    pub window: HashMap<(String, String), Window>,
    /// (object, metric) → (seconds since the first measured sample, value), measured samples.
    pub(crate) series: SeriesMap,
    /// Parents their partitions were added up into (a sum over objects skips them).
    pub(crate) rolled: std::collections::HashSet<String>,
    /// The partitions themselves (a sum over tables that counts the parents skips these).
    pub(crate) partitions: std::collections::HashSet<String>,
    /// Index → its table (tables.csv's index rows of kind `i`).
    pub(crate) index_of: HashMap<String, String>,
}

/// Reads a long-format snapshot file: the measured window and series per (object, metric), and
/// partitions rolled up into their parent (additive metrics summed; the parent's own row for a
/// metric is replaced by the sum of its partitions).
pub(crate) fn snapshots(path: &Path) -> Result<Snapshots> {
    let mut out = Snapshots::default();
    if !path.exists() {
        return Ok(out);
    }
    let err = |e: PolarsError| anyhow::anyhow!("analysing {}: {e}", path.display());
    let measured = measured_frame(path)
        .and_then(|lf| lf.collect())
        .map_err(err)?;
    let df = window_query(measured.clone().lazy())
        .collect()
        .map_err(err)?;
    let (objects, parents, kinds, metrics, last_text) = (
        text(&df, "object")?,
        text(&df, "parent")?,
        text(&df, "kind")?,
        text(&df, "metric")?,
        text(&df, "last")?,
    );
    let (first, last, delta) = (
        number(&df, "first_num")?,
        number(&df, "last_num")?,
        number(&df, "delta")?,
    );
    for i in 0..df.height() {
        let (Some(o), Some(m)) = (objects.get(i), metrics.get(i)) else {
            continue;
        };
        let w = Window {
            first: first.get(i),
            last: last.get(i),
            delta: delta.get(i),
            last_text: last_text.get(i).map(str::to_string),
        };
        if kinds.get(i) == Some("i") {
            if let Some(p) = parents.get(i).filter(|p| !p.is_empty()) {
                out.index_of.insert(o.to_string(), p.to_string());
            }
        }
        if let Some(p) = partition_of(parents.get(i), kinds.get(i)) {
            out.rolled.insert(p.to_string());
            out.partitions.insert(o.to_string());
        }
        out.window.insert((o.to_string(), m.to_string()), w);
    }
    if !out.rolled.is_empty() {
        let rolled = rollup_query(df.lazy()).collect().map_err(err)?;
        out.window.extend(rollup_windows(&rolled)?);
    }
    out.series = series_of(measured, !out.rolled.is_empty(), path)?;
    Ok(out)
}

/// Per-sample series: every (object, metric) as sampled, then (when `rolled`) the partitions'
/// additive metrics summed per parent and sample (a group-by) and added into the parent's
/// series; x is seconds since the first measured sample.
fn series_of(measured: DataFrame, rolled: bool, path: &Path) -> Result<SeriesMap> {
    let err = |e: PolarsError| anyhow::anyhow!("analysing {}: {e}", path.display());
    let all_ts = text(&measured, "ts")?;
    let first_ts = (0..all_ts.len())
        .filter_map(|i| all_ts.get(i))
        .find_map(parse_ts);
    let mut frames = vec![points(measured.clone().lazy(), "object")
        .collect()
        .map_err(err)?];
    if rolled {
        frames.push(
            series_rollup_query(measured.lazy())
                .collect()
                .map_err(err)?,
        );
    }
    let columns = frames
        .iter()
        .map(|df| {
            Ok((
                text(df, "object")?,
                text(df, "metric")?,
                text(df, "ts")?,
                number(df, "value")?,
            ))
        })
        .collect::<Result<Vec<_>>>()?;
    // Seconds since the first measured sample, parsed once per distinct timestamp.
    let mut seconds: HashMap<&str, Option<f64>> = HashMap::new();
    // Keyed by the frames' own strings while filling; owned keys once at the end.
    let mut series: HashMap<(&str, &str), Vec<(f64, f64)>> = HashMap::new();
    for (pass, (objects, metrics, ts, values)) in columns.iter().enumerate() {
        for i in 0..objects.len() {
            let (Some(o), Some(m), Some(t), Some(v)) =
                (objects.get(i), metrics.get(i), ts.get(i), values.get(i))
            else {
                continue;
            };
            let Some(t_s) = *seconds.entry(t).or_insert_with(|| {
                let (at, t0) = (parse_ts(t)?, first_ts?);
                Some((at - t0).num_milliseconds() as f64 / 1000.0)
            }) else {
                continue;
            };
            let pts = series.entry((o, m)).or_default();
            // A sample's rows are adjacent in the file; the partitions' sums meet the parent's
            // own points anywhere in its (time-ordered) series.
            if pass == 0 {
                match pts.last_mut() {
                    Some((x, sum)) if *x == t_s => *sum += v,
                    _ => pts.push((t_s, v)),
                }
            } else {
                match pts.binary_search_by(|(x, _)| x.total_cmp(&t_s)) {
                    Ok(k) => pts[k].1 += v,
                    Err(k) => pts.insert(k, (t_s, v)),
                }
            }
        }
    }
    Ok(series
        .into_iter()
        .map(|((o, m), mut v)| {
            v.sort_by(|a, b| a.0.total_cmp(&b.0));
            ((o.to_string(), m.to_string()), v)
        })
        .collect())
}

fn parse_ts(t: &str) -> Option<chrono::DateTime<chrono::FixedOffset>> {
    chrono::DateTime::parse_from_rfc3339(t).ok()
}

/// The partitions' part of the per-sample series: per (parent, additive metric, sample time)
/// the sum of the partitions' values, over the measured rows. Groups keep the order they first
/// appear in (file order, which is sample order).
fn series_rollup_query(measured: LazyFrame) -> LazyFrame {
    points(measured.filter(is_partition().and(is_additive())), "parent")
        .group_by_stable([col("object"), col("metric"), col("ts")])
        .agg([col("value").sum()])
}

/// (object, metric, ts, value as a number) of the rows with a value, `object` read from the
/// column named.
fn points(lf: LazyFrame, object: &str) -> LazyFrame {
    lf.select([
        col(object).alias("object"),
        col("metric"),
        col("ts"),
        col("value").cast(DataType::Float64),
    ])
    .filter(col("value").is_not_null().and(col("ts").is_not_null()))
}

/// Rows of a partition (`partition_of` as an expression).
fn is_partition() -> Expr {
    col("parent")
        .is_not_null()
        .and(col("parent").neq(lit("")))
        .and(col("kind").eq(lit("r")).or(col("kind").eq(lit("pi"))))
}

/// Rows of an additive metric (`additive` as an expression over `METRICS`).
fn is_additive() -> Expr {
    METRICS
        .iter()
        .filter(|m| additive(m))
        .map(|m| col("metric").eq(lit(*m)))
        .reduce(|a, b| a.or(b))
        .unwrap_or(lit(false))
}

/// A text column of a collected frame.
pub(super) fn text(df: &DataFrame, c: &str) -> Result<StringChunked> {
    Ok(df.column(c)?.as_materialized_series().str()?.clone())
}

/// A float column of a collected frame.
pub(super) fn number(df: &DataFrame, c: &str) -> Result<Float64Chunked> {
    Ok(df.column(c)?.as_materialized_series().f64()?.clone())
}

/// The parent a row rolls up into: a table (kind `r`) with a parent is a partition, an index of
/// kind `pi` a partition's index (its parent the partitioned index); other indexes carry their
/// table as parent and are not added into it. One level of partitioning.
fn partition_of<'a>(parent: Option<&'a str>, kind: Option<&str>) -> Option<&'a str> {
    parent.filter(|p| !p.is_empty() && matches!(kind, Some("r" | "pi")))
}

/// The measured samples of the metrics analyze reads from a long-format snapshot file, every
/// column as text but `sample`; a file without `parent` or `kind` columns gets empty ones.
fn measured_frame(path: &Path) -> PolarsResult<LazyFrame> {
    let header = header_of(path)?;
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
    let missing: Vec<&str> = ["parent", "kind"]
        .into_iter()
        .filter(|m| !header.split(',').any(|c| c == *m))
        .collect();
    let df = CsvReadOptions::default()
        // One parsing thread per file: analyze reads two runs at a time, which uses the cores
        // better than splitting a few-MB file (bench analyze: 2.3 s -> 1.7 s).
        .with_n_threads(Some(1))
        .with_has_header(true)
        .with_schema(Some(Arc::new(schema)))
        .try_into_reader_with_file_path(Some(path.to_path_buf()))?
        .finish()?;
    let wanted = METRICS
        .iter()
        .map(|m| col("metric").eq(lit(*m)))
        .reduce(|a, b| a.or(b))
        .expect("a metric");
    let mut lf = df
        .lazy()
        .filter(col("phase").eq(lit("measured")).and(wanted));
    for m in missing {
        lf = lf.with_column(lit(NULL).cast(DataType::String).alias(m));
    }
    Ok(lf)
}

/// Partitions rolled up into their parent, over the window frame: per (parent, metric), the sum
/// of the partitions' first, last and delta for an additive metric (null when no partition has
/// a number), else the first partition's window that has a last value.
fn rollup_query(window: LazyFrame) -> LazyFrame {
    let sum = |c: &str| {
        when(col(c).count().gt(lit(0)))
            .then(col(c).sum())
            .otherwise(lit(NULL).cast(DataType::Float64))
    };
    let first_with_last = |c: &str| col(c).filter(col("last_num").is_not_null()).first();
    window
        .filter(is_partition())
        .group_by([col("parent"), col("metric")])
        .agg([
            is_additive().first().alias("additive"),
            sum("first_num").alias("first_sum"),
            sum("last_num").alias("last_sum"),
            sum("delta").alias("delta_sum"),
            first_with_last("first_num").alias("first_one"),
            first_with_last("last_num").alias("last_one"),
            first_with_last("delta").alias("delta_one"),
            first_with_last("last").alias("last_text_one"),
        ])
}

/// The rolled-up windows of `rollup_query`, keyed by (parent, metric).
fn rollup_windows(df: &DataFrame) -> Result<HashMap<(String, String), Window>> {
    let (parents, metrics, last_text) = (
        text(df, "parent")?,
        text(df, "metric")?,
        text(df, "last_text_one")?,
    );
    let additive = df
        .column("additive")?
        .as_materialized_series()
        .bool()?
        .clone();
    let n = |c: &str| number(df, c);
    let (fs, ls, ds, f1, l1, d1) = (
        n("first_sum")?,
        n("last_sum")?,
        n("delta_sum")?,
        n("first_one")?,
        n("last_one")?,
        n("delta_one")?,
    );
    let mut out = HashMap::new();
    for i in 0..df.height() {
        let (Some(p), Some(m)) = (parents.get(i), metrics.get(i)) else {
            continue;
        };
        let w = if additive.get(i) == Some(true) {
            Window {
                first: fs.get(i),
                last: ls.get(i),
                delta: ds.get(i),
                last_text: None,
            }
        } else {
            Window {
                first: f1.get(i),
                last: l1.get(i),
                delta: d1.get(i),
                last_text: last_text.get(i).map(str::to_string),
            }
        };
        out.insert((p.to_string(), m.to_string()), w);
    }
    Ok(out)
}

/// A snapshot CSV's header line (its column names, comma-separated).
pub(crate) fn header_of(path: &Path) -> std::io::Result<String> {
    let mut header = String::new();
    std::io::BufRead::read_line(
        &mut std::io::BufReader::new(std::fs::File::open(path)?),
        &mut header,
    )?;
    Ok(header.trim_end().to_string())
}

/// Per (object, metric): the value at the first and the last measured sample, both as numbers
/// where they parse, and their difference. Snapshot files are appended sample by sample, so file
/// order is sample order within a group.
fn window_query(measured: LazyFrame) -> LazyFrame {
    measured
        .group_by([col("object"), col("metric")])
        .agg([
            col("parent").first(),
            col("kind").first(),
            col("value").first().alias("first"),
            col("value").last().alias("last"),
        ])
        .with_columns([
            col("first").cast(DataType::Float64).alias("first_num"),
            col("last").cast(DataType::Float64).alias("last_num"),
        ])
        .with_column((col("last_num") - col("first_num")).alias("delta"))
}
