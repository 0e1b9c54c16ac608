//! A pgbench-script study (study 001's small-table upsert, or a user's own table): per arm, with
//! repeats (mean, min–max, spread), throughput (the final sample and the window's mean),
//! updates/s, latency percentiles, HOT % and new-page %, dead tuples, heap and index size at the
//! start and end of the window, the buffer-cache footprint and dirty buffers at the end, WAL
//! bytes per transaction and checkpoints; for study 001 the article's figures beside ours with a
//! direction flag, and its five claims checked. Partitions are already added up into their
//! parent by `load`. Reads only what `load` read plus workload.csv.

pub(crate) mod small_table;

use std::collections::BTreeMap;

use serde::Serialize;

use super::files::WorkloadJson;
use crate::analyze::arms::{figure, ArmStats};
use crate::analyze::fingerprint::{identity, Identity};
use crate::analyze::load::ArmRun;
use crate::analyze::mechanism::add;
use crate::analyze::{by_arm, bytes, charts, md_table, num, pct};
use crate::stats::Stats;

/// One run's figures for the updated table `t`.
#[derive(Debug, Clone, Default)]
pub(crate) struct Row {
    pub(crate) name: String,
    pub(crate) arm: String,
    pub(crate) complete: bool,
    pub(crate) tps: Option<f64>,
    pub(crate) tps_final: Option<f64>,
    pub(crate) upd_per_s: Option<f64>,
    pub(crate) p50: Option<f64>,
    pub(crate) p95: Option<f64>,
    pub(crate) p99: Option<f64>,
    pub(crate) hot_pct: Option<f64>,
    pub(crate) newpage_pct: Option<f64>,
    /// HOT % of the first and the last interval between samples.
    pub(crate) hot_first: Option<f64>,
    pub(crate) hot_last: Option<f64>,
    pub(crate) dead_end: Option<f64>,
    pub(crate) heap_start: Option<f64>,
    pub(crate) heap_end: Option<f64>,
    pub(crate) index_start: Option<f64>,
    pub(crate) index_end: Option<f64>,
    /// Shared buffers of the table and its indexes at the end, and dirty ones.
    pub(crate) buffers_end: Option<f64>,
    pub(crate) dirty_end: Option<f64>,
    /// The whole cache at the end (every database): used and dirty buffers.
    pub(crate) cache_used_end: Option<f64>,
    pub(crate) cache_dirty_end: Option<f64>,
    pub(crate) pk_hits: Option<f64>,
    pub(crate) wal_per_txn: Option<f64>,
    pub(crate) checkpoints: Option<f64>,
    pub(crate) database_end: Option<f64>,
    pub(crate) shared_buffers: Option<f64>,
    /// Full-page images written per transaction (Δ pg_stat_wal.wal_fpi / transactions).
    pub(crate) fpi_per_txn: Option<f64>,
    /// Buffers and dirty buffers of the table and its indexes at the window's middle sample.
    pub(crate) buffers_mid: Option<f64>,
    pub(crate) dirty_mid: Option<f64>,
    /// The share (%) of the table's pages holding a row the scripts hit, after the build and
    /// after the run (hot_rows.csv).
    pub(crate) hot_pages_start: Option<f64>,
    pub(crate) hot_pages_end: Option<f64>,
    /// TPS of the window's last third against its first third, in % (per-second log).
    pub(crate) tps_rise_pct: Option<f64>,
    /// HOT updates per second per interval (the article's "HOT activity": a rate, not a share).
    pub(crate) hot_rate_series: Vec<(f64, f64)>,
    /// What the arm varied besides fillfactor: its data layout variable and build route.
    pub(crate) layout: String,
    pub(crate) build: String,
    /// The arm ran at the same time as others on one server.
    pub(crate) together: bool,
}

/// The indexes of `t` seen in the snapshots (a partitioned table's own, not its leaves').
fn indexes_of<'a>(r: &'a ArmRun, t: &str) -> Vec<&'a str> {
    let mut v: Vec<&str> = r
        .tables
        .index_of
        .iter()
        .filter(|(_, tbl)| tbl.as_str() == t)
        .map(|(i, _)| i.as_str())
        .collect();
    v.sort();
    v
}

pub(crate) fn row(r: &ArmRun, t: &str) -> Row {
    let w: Option<WorkloadJson> = r.workload_as();
    let w = w.as_ref();
    let measured_s = w.map(|w| w.measured_s);
    let txns = w.map(|w| w.transactions as f64);
    let upd = r.table(t, "n_tup_upd").delta;
    let hot_series = charts::hot_per_interval(
        r.table_series(t, "n_tup_upd"),
        r.table_series(t, "n_tup_hot_upd"),
    );
    let idx = indexes_of(r, t);
    let rels: Vec<&str> = std::iter::once(t).chain(idx.iter().copied()).collect();
    let at_end = buffers_at(r, Moment::End);
    let buf = |m: &str| rels.iter().map(|o| at_end(o, m)).fold(None, add);
    let at_mid = buffers_at(r, Moment::Middle);
    let buf_mid = |m: &str| rels.iter().map(|o| at_mid(o, m)).fold(None, add);
    let pk = format!("{t}_pkey");
    let shared_buffers = crate::analyze::mechanism::shared_buffers(r);
    Row {
        name: r.name(),
        arm: r.arm(),
        complete: r.status() == "complete",
        tps: w.map(|w| w.tps),
        tps_final: w.map(|w| w.tps_final_sample),
        upd_per_s: match (upd, measured_s) {
            (Some(u), Some(s)) if s > 0.0 => Some(u / s),
            _ => None,
        },
        p50: w.and_then(|w| w.latency_p50_ms),
        p95: w.and_then(|w| w.latency_p95_ms),
        p99: w.and_then(|w| w.latency_p99_ms),
        hot_pct: pct(r.table(t, "n_tup_hot_upd").delta, upd),
        newpage_pct: pct(r.table(t, "n_tup_newpage_upd").delta, upd),
        hot_first: hot_series.first().map(|x| x.1),
        hot_last: hot_series.last().map(|x| x.1),
        dead_end: r.table(t, "n_dead_tup").last,
        heap_start: r.table(t, "heap_bytes").first,
        heap_end: r.table(t, "heap_bytes").last,
        index_start: r.table(t, "index_bytes").first,
        index_end: r.table(t, "index_bytes").last,
        buffers_end: buf("buffers"),
        dirty_end: buf("dirty"),
        cache_used_end: at_end("_all", "buffers_used"),
        cache_dirty_end: at_end("_all", "buffers_dirty"),
        pk_hits: r.table(&pk, "idx_blks_hit").delta,
        wal_per_txn: match (r.source("lsn", "insert_lsn_bytes").delta, txns) {
            (Some(b), Some(n)) if n > 0.0 => Some(b / n),
            _ => None,
        },
        checkpoints: add(
            r.source("checkpointer", "num_timed").delta,
            r.source("checkpointer", "num_requested").delta,
        ),
        database_end: r.source("size", "database_bytes").last,
        shared_buffers,
        fpi_per_txn: match (r.source("wal", "wal_fpi").delta, txns) {
            (Some(f), Some(n)) if n > 0.0 => Some(f / n),
            _ => None,
        },
        buffers_mid: buf_mid("buffers"),
        dirty_mid: buf_mid("dirty"),
        hot_pages_start: r.hot_pages_pct("start"),
        hot_pages_end: r.hot_pages_pct("end"),
        tps_rise_pct: tps_rise(r),
        hot_rate_series: charts::per_interval(r.table_series(t, "n_tup_hot_upd"), 1.0),
        layout: match r.plan.size_spec.as_ref() {
            Some(crate::study::Size::Pgbench(p)) => p.var("layout").unwrap_or_default(),
            _ => String::new(),
        },
        build: r.plan.arm.build.name().to_string(),
        together: !r.plan.together.is_empty(),
    }
}

/// TPS of the measured window's last third against its first third, in %, from the per-second
/// log (workload.csv): whether throughput was still rising when the window ended.
fn tps_rise(r: &ArmRun) -> Option<f64> {
    let v: Vec<f64> = r
        .workload_column("tps")
        .into_iter()
        .filter(|(_, _, measured)| *measured)
        .map(|(_, tps, _)| tps)
        .collect();
    // The last second is partial (the run ends inside it): left out.
    let v = &v[..v.len().saturating_sub(1)];
    if v.len() < 6 {
        return None;
    }
    let third = v.len() / 3;
    let first = crate::stats::mean(&v[..third]);
    let last = crate::stats::mean(&v[v.len() - third..]);
    (first > 0.0).then(|| 100.0 * (last - first) / first)
}

/// An arm's latency percentiles (p50, p95, p99 in ms) over all its complete runs' transactions:
/// their window histograms merged, never their percentiles averaged. A run without a histogram
/// (older directories) can stand alone only: with more than one run, None.
pub(crate) fn pooled_latency(workloads: &[&WorkloadJson]) -> Option<[f64; 3]> {
    let mut h = crate::stats::new_histogram();
    for w in workloads {
        if w.hist_us.is_empty() {
            if workloads.len() == 1 {
                return Some([w.latency_p50_ms?, w.latency_p95_ms?, w.latency_p99_ms?]);
            }
            return None;
        }
        crate::stats::add_pairs(&mut h, &w.hist_us);
    }
    if h.is_empty() {
        return None;
    }
    let ms = |q: f64| h.value_at_quantile(q) as f64 / 1000.0;
    Some([ms(0.5), ms(0.95), ms(0.99)])
}

#[derive(Clone, Copy)]
enum Moment {
    Middle,
    End,
}

/// A relation's buffers at the window's last (or middle) sample (0 when it had none then). The
/// whole-cache row `_all` is in every sample: its samples are the window's.
fn buffers_at(r: &ArmRun, at: Moment) -> impl Fn(&str, &str) -> Option<f64> + '_ {
    let series = |o: &str, m: &str| r.buffers.series.get(&(o.to_string(), m.to_string()));
    let end = series("_all", "buffers_used")
        .and_then(|s| match at {
            Moment::End => s.last(),
            Moment::Middle => s.get(s.len() / 2),
        })
        .map(|x| x.0);
    move |object, metric| {
        let end = end?;
        Some(
            series(object, metric)
                .and_then(|s| s.iter().find(|(t, _)| (*t - end).abs() < 1e-6))
                .map_or(0.0, |x| x.1),
        )
    }
}

/// Per-second TPS of a run from its workload.csv (seconds since pgbench started).
pub(crate) fn tps_series(r: &ArmRun) -> Vec<(f64, f64)> {
    r.workload_column("tps")
        .into_iter()
        .map(|(t, v, _)| (t, v))
        .collect()
}

/// Per-second p95 latency (ms) of a run, for the seconds that finished a transaction.
fn p95_series(r: &ArmRun) -> Vec<(f64, f64)> {
    // A second with no transaction has an empty p95 cell, which workload_column skips.
    r.workload_column("latency_p95_ms")
        .into_iter()
        .map(|(t, v, _)| (t, v))
        .collect()
}

pub(crate) type Getter = fn(&Row) -> Option<f64>;

/// (label, getter, decimals, unit): the per-arm table's columns.
const FIGURES: &[(&str, Getter, usize, &str)] = &[
    ("final TPS sample", |r| r.tps_final, 0, ""),
    ("mean TPS", |r| r.tps, 0, ""),
    ("updates/s", |r| r.upd_per_s, 0, ""),
    ("HOT %", |r| r.hot_pct, 2, ""),
    ("new-page %", |r| r.newpage_pct, 2, ""),
    ("dead tuples (end)", |r| r.dead_end, 0, ""),
    ("heap start", |r| r.heap_start, 0, "bytes"),
    ("heap end", |r| r.heap_end, 0, "bytes"),
    ("indexes start", |r| r.index_start, 0, "bytes"),
    ("indexes end", |r| r.index_end, 0, "bytes"),
    ("buffers, table + indexes (end)", |r| r.buffers_end, 0, ""),
    ("dirty, table + indexes (end)", |r| r.dirty_end, 0, ""),
    ("buffers, whole cache (end)", |r| r.cache_used_end, 0, ""),
    ("dirty, whole cache (end)", |r| r.cache_dirty_end, 0, ""),
    ("primary-key index hits", |r| r.pk_hits, 0, ""),
    ("WAL bytes/txn", |r| r.wal_per_txn, 0, ""),
    ("checkpoints", |r| r.checkpoints, 0, ""),
    ("full-page images/txn", |r| r.fpi_per_txn, 3, ""),
    (
        "pages holding a hit row, start %",
        |r| r.hot_pages_start,
        1,
        "",
    ),
    ("pages holding a hit row, end %", |r| r.hot_pages_end, 1, ""),
];

fn cell(s: Option<Stats>, decimals: usize, unit: &str) -> String {
    crate::analyze::spread_cell(s, |x| {
        if unit == "bytes" {
            bytes(Some(x))
        } else {
            num(Some(x), decimals)
        }
    })
}

fn stats(rows: &[&Row], g: Getter) -> Option<Stats> {
    let v: Vec<f64> = rows.iter().filter_map(|r| g(r)).collect();
    Stats::of(&v)
}

/// Rows per arm (complete runs, in the order they first ran).
pub(crate) type Arms<'a> = [(String, Vec<&'a Row>)];

/// One figure of one arm over its runs.
pub(crate) fn arm_stats(arms: &Arms, arm: &str, g: Getter) -> Option<Stats> {
    let (_, v) = arms.iter().find(|(a, _)| a == arm)?;
    stats(v, g)
}

/// The mean of a figure of arm `a` over the mean of arm `b`.
pub(crate) fn arm_ratio(arms: &Arms, a: &str, b: &str, g: Getter) -> Option<f64> {
    match (arm_stats(arms, a, g), arm_stats(arms, b, g)) {
        (Some(x), Some(y)) if y.mean > 0.0 => Some(x.mean / y.mean),
        _ => None,
    }
}

/// A study's own sections after the per-arm table (study 001's comparison with its article):
/// given the rows per arm and the runs, its Markdown, claims and the rest of its JSON.
pub(crate) type Section = fn(
    &Arms,
    &[&ArmRun],
) -> (
    String,
    Vec<small_table::ClaimJson>,
    small_table::Study001Json,
);

pub(crate) fn tables(
    runs: &[ArmRun],
    section: Option<Section>,
) -> anyhow::Result<crate::analyze::Tables> {
    let plan = &runs[0].plan;
    let t = plan
        .sweep_table
        .clone()
        .or_else(|| plan.tables.first().cloned())
        .unwrap_or_default();
    // In the order they ran: an arm's first appearance is its place in the study (A B B A).
    let mut runs: Vec<&ArmRun> = runs.iter().collect();
    runs.sort_by_key(|r| r.meta.start.clone().unwrap_or_default());
    let rows: Vec<Row> = runs.iter().map(|r| row(r, &t)).collect();
    let arms = by_arm(&rows, |r| r.arm.clone(), |r| r.complete);
    let mut md = format!(
        "## {} — {t}, per arm (mean; with repeats min–max and spread)\n\n",
        plan.title
    );
    let final_s = runs
        .iter()
        .find_map(|r| r.workload_as::<WorkloadJson>().map(|w| w.final_sample_s));
    let (header, table_rows, arms_json) = per_arm(&runs, &arms, final_s)?;
    let h: Vec<&str> = header.iter().map(String::as_str).collect();
    md.push_str(&md_table(&h, &table_rows));
    md.push_str(&format!(
        "\nThe final TPS sample is the transactions that ended in the last {} s of the run (pgbench's per-transaction log, counted per `snapshot_every_s`, the study's sampling interval); latency percentiles pool every measured transaction of an arm's complete runs (their histograms merged).\n",
        num(final_s, 1)
    ));
    if rows.iter().any(|r| r.together) {
        md.push_str("\n**These arms ran at the same time on one server** (`just together`), each in its own database with its share of the clients: they competed for CPU, I/O and the buffer cache, and the server-wide figures (WAL, full-page images, checkpoints, the whole cache) are the server's, shared by all of them.\n");
    }
    // Only study 001 has an article here (its section); a user's study has none to be like.
    let (regime_md, regime_json) = regime(&rows, section.is_some());
    md.push_str(&regime_md);
    let mut claims = vec![];
    let mut study_json = None;
    if let Some(section) = section {
        let (cmd, cl, sj) = section(&arms, &runs);
        md.push_str(&cmd);
        claims = cl;
        study_json = Some(sj);
    }
    let findings = crate::analyze::Findings {
        claims: claims
            .iter()
            .map(|c| (c.claim.clone(), c.direction.clone()))
            .collect(),
        regime: regime_json.as_ref().map(|r| (r.in_regime, r.why.clone())),
        ..Default::default()
    };
    let json = ScriptSummary {
        study: plan.study.clone(),
        table: t.clone(),
        runs: runs_json(&rows, &runs),
        arms: arms_json,
        onlyff_ori_buffer_ratio: arm_ratio(&arms, "onlyff", "ori", |r| r.buffers_end),
        claims,
        regime: regime_json,
        study_001: study_json,
    };
    Ok(crate::analyze::Tables {
        markdown: md,
        json: serde_json::to_value(json)?,
        charts: charts_of(&runs, &t)?,
        findings,
    })
}

/// A pgbench-script study's tables in summary.json.
#[derive(Serialize)]
struct ScriptSummary {
    study: String,
    table: String,
    runs: Vec<RunJson>,
    /// Per arm, per figure of the per-arm table (its label): the repeats' statistics, or the
    /// pooled latency percentile.
    arms: BTreeMap<String, BTreeMap<String, ArmFigure>>,
    onlyff_ori_buffer_ratio: Option<f64>,
    claims: Vec<small_table::ClaimJson>,
    regime: Option<Regime>,
    study_001: Option<small_table::Study001Json>,
}

/// A cell of the per-arm table: the statistics of the arm's repeats, or one pooled figure.
#[derive(Serialize)]
#[serde(untagged)]
enum ArmFigure {
    Stats(Option<Stats>),
    Pooled(Option<f64>),
}

/// Whether the data stayed in shared buffers (`in_regime` only where an article asks for it).
#[derive(Serialize)]
struct Regime {
    fits: bool,
    in_regime: Option<bool>,
    why: String,
}

/// The per-arm table's header and rows, and the arms' JSON.
type PerArm = (
    Vec<String>,
    Vec<Vec<String>>,
    BTreeMap<String, BTreeMap<String, ArmFigure>>,
);

/// The per-arm table (header and rows: every figure, with the pooled latency percentiles after
/// updates/s) and the arms' JSON.
#[allow(clippy::type_complexity)]
fn per_arm(runs: &[&ArmRun], arms: &Arms, final_s: Option<f64>) -> anyhow::Result<PerArm> {
    let mut header = vec!["figure".to_string()];
    header.extend(arms.iter().map(|(a, v)| format!("{a} (n={})", v.len())));
    let mut table_rows = vec![];
    let mut arms_json: BTreeMap<String, BTreeMap<String, ArmFigure>> = BTreeMap::new();
    // Latency: every transaction of an arm's complete runs pooled, never a mean of percentiles;
    // each run's workload.json read once.
    let pooled: BTreeMap<String, Option<[f64; 3]>> =
        by_arm(runs, |r| r.arm(), |r| r.status() == "complete")
            .into_iter()
            .map(|(arm, v)| {
                let ws: Vec<WorkloadJson> = v.iter().filter_map(|r| r.workload_as()).collect();
                (arm, pooled_latency(&ws.iter().collect::<Vec<_>>()))
            })
            .collect();
    // The per-arm table's aggregates: one group-by over the runs' figures.
    let figures: Vec<_> = FIGURES
        .iter()
        .map(|(label, g, _, _)| figure(*label, *g))
        .collect();
    let st = ArmStats::of(arms, &figures)?;
    let mut arm_json = |a: &str, label: &str, v: ArmFigure| {
        arms_json
            .entry(a.to_string())
            .or_default()
            .insert(label.to_string(), v);
    };
    for (name, _, dec, unit) in FIGURES {
        let label = match (*name, final_s) {
            ("final TPS sample", Some(f)) => format!("final TPS sample (last {f} s)"),
            _ => name.to_string(),
        };
        let mut line = vec![label.clone()];
        for (a, _) in arms {
            let s = st.get(a, name);
            line.push(cell(s, *dec, unit));
            arm_json(a, &label, ArmFigure::Stats(s));
        }
        table_rows.push(line);
        if label == "updates/s" {
            for (i, q) in ["p50", "p95", "p99"].iter().enumerate() {
                let label = format!("latency {q} ms (pooled)");
                let mut line = vec![label.clone()];
                for (a, _) in arms {
                    let p = pooled.get(a).copied().flatten().map(|p| p[i]);
                    line.push(num(p, 2));
                    arm_json(a, &label, ArmFigure::Pooled(p));
                }
                table_rows.push(line);
            }
        }
    }
    Ok((header, table_rows, arms_json))
}

/// The runs' figures as summary.json carries them.
fn runs_json(rows: &[Row], runs: &[&ArmRun]) -> Vec<RunJson> {
    rows.iter()
        .zip(runs)
        .map(|(r, a)| RunJson {
            run: r.name.clone(),
            arm: r.arm.clone(),
            dir: a.dir.clone(),
            identity: identity(a),
            status: a.status(),
            fillfactor: a.plan.arm.fillfactor.clone(),
            index_fillfactor: a.plan.arm.index_fillfactor.clone(),
            partition: a.plan.arm.partition.clone(),
            tps: r.tps,
            tps_final_sample: r.tps_final,
            updates_per_s: r.upd_per_s,
            latency_p50_ms: r.p50,
            latency_p95_ms: r.p95,
            latency_p99_ms: r.p99,
            hot_pct: r.hot_pct,
            newpage_pct: r.newpage_pct,
            hot_pct_first_interval: r.hot_first,
            hot_pct_last_interval: r.hot_last,
            n_dead_tup_end: r.dead_end,
            heap_bytes_start: r.heap_start,
            heap_bytes_end: r.heap_end,
            index_bytes_start: r.index_start,
            index_bytes_end: r.index_end,
            buffers_end: r.buffers_end,
            dirty_end: r.dirty_end,
            cache_buffers_used_end: r.cache_used_end,
            cache_buffers_dirty_end: r.cache_dirty_end,
            pk_idx_blks_hit: r.pk_hits,
            wal_bytes_per_txn: r.wal_per_txn,
            checkpoints: r.checkpoints,
            database_bytes_end: r.database_end,
            shared_buffers_bytes: r.shared_buffers,
            fpi_per_txn: r.fpi_per_txn,
            buffers_mid: r.buffers_mid,
            dirty_mid: r.dirty_mid,
            hot_pages_pct_start: r.hot_pages_start,
            hot_pages_pct_end: r.hot_pages_end,
            tps_rise_pct: r.tps_rise_pct,
            layout: r.layout.clone(),
            build: r.build.clone(),
            together: r.together,
        })
        .collect()
}

/// One run's figures (summary.json `runs`).
#[derive(Serialize)]
struct RunJson {
    run: String,
    arm: String,
    dir: std::path::PathBuf,
    identity: Identity,
    status: String,
    fillfactor: BTreeMap<String, u32>,
    index_fillfactor: BTreeMap<String, u32>,
    partition: Option<crate::study::Partition>,
    tps: Option<f64>,
    tps_final_sample: Option<f64>,
    updates_per_s: Option<f64>,
    latency_p50_ms: Option<f64>,
    latency_p95_ms: Option<f64>,
    latency_p99_ms: Option<f64>,
    hot_pct: Option<f64>,
    newpage_pct: Option<f64>,
    hot_pct_first_interval: Option<f64>,
    hot_pct_last_interval: Option<f64>,
    n_dead_tup_end: Option<f64>,
    heap_bytes_start: Option<f64>,
    heap_bytes_end: Option<f64>,
    index_bytes_start: Option<f64>,
    index_bytes_end: Option<f64>,
    buffers_end: Option<f64>,
    dirty_end: Option<f64>,
    cache_buffers_used_end: Option<f64>,
    cache_buffers_dirty_end: Option<f64>,
    pk_idx_blks_hit: Option<f64>,
    wal_bytes_per_txn: Option<f64>,
    checkpoints: Option<f64>,
    database_bytes_end: Option<f64>,
    shared_buffers_bytes: Option<f64>,
    fpi_per_txn: Option<f64>,
    buffers_mid: Option<f64>,
    dirty_mid: Option<f64>,
    hot_pages_pct_start: Option<f64>,
    hot_pages_pct_end: Option<f64>,
    tps_rise_pct: Option<f64>,
    layout: String,
    build: String,
    together: bool,
}

/// The regime the article asks for: every relation inside shared_buffers.
/// The regime: the largest database at the end of a window against shared_buffers. Study 001's
/// article kept every relation in the buffer cache; a study without an article is only told
/// which side it is on. With it, for the short answer: `{"fits": bool, "in_regime": …}`.
fn regime(rows: &[Row], article: bool) -> (String, Option<Regime>) {
    let worst = rows
        .iter()
        .filter_map(|r| Some((r.database_end?, r.shared_buffers?)))
        .fold(None, |a: Option<(f64, f64)>, x| match a {
            Some(a) if a.0 / a.1 >= x.0 / x.1 => Some(a),
            _ => Some(x),
        });
    let Some((db, sb)) = worst else {
        return (String::new(), None);
    };
    let fits = db < sb;
    let verdict = match (fits, article) {
        (true, true) => "every relation fits in the buffer cache, as in the article",
        (true, false) => "every relation fits in the buffer cache",
        (false, true) => "**the data outgrew shared_buffers: not the article's regime**",
        (false, false) => "the data outgrew shared_buffers",
    };
    (
        format!(
            "\n**Regime.** The largest database at the end of a window was {} against shared_buffers of {} ({:.0} %): {verdict}.\n",
            bytes(Some(db)),
            bytes(Some(sb)),
            100.0 * db / sb,
        ),
        Some(Regime {
            fits,
            in_regime: article.then_some(fits),
            why: verdict.replace("**", ""),
        }),
    )
}

fn charts_of(runs: &[&ArmRun], t: &str) -> anyhow::Result<Vec<(String, String)>> {
    let x = "seconds into the measured window";
    let started = "seconds since pgbench started";
    let mib = |s: Vec<(f64, f64)>| {
        charts::pages_to_bytes(s)
            .into_iter()
            .map(|(t, v)| (t, v / 1048576.0))
            .collect::<Vec<_>>()
    };
    let (mut tps, mut p95, mut bufs, mut dirty, mut hot, mut dead, mut pk) =
        (vec![], vec![], vec![], vec![], vec![], vec![], vec![]);
    for r in runs {
        let arm = r.arm();
        tps.push((arm.clone(), tps_series(r)));
        p95.push((arm.clone(), p95_series(r)));
        let rels: Vec<String> = std::iter::once(t.to_string())
            .chain(indexes_of(r, t).into_iter().map(str::to_string))
            .collect();
        let sum_of = |m: &str| {
            let s: Vec<&[(f64, f64)]> = rels
                .iter()
                .filter_map(|o| r.buffers.series.get(&(o.clone(), m.to_string())))
                .map(Vec::as_slice)
                .collect();
            charts::sum_series(&s)
        };
        bufs.push((arm.clone(), mib(sum_of("buffers"))));
        dirty.push((arm.clone(), mib(sum_of("dirty"))));
        hot.push((
            arm.clone(),
            charts::hot_per_interval(
                r.table_series(t, "n_tup_upd"),
                r.table_series(t, "n_tup_hot_upd"),
            ),
        ));
        dead.push((arm.clone(), r.table_series(t, "n_dead_tup").to_vec()));
        pk.push((
            arm,
            charts::per_interval(r.table_series(&format!("{t}_pkey"), "idx_blks_hit"), 1.0),
        ));
    }
    let qs = [50.0, 75.0, 90.0, 95.0, 99.0, 99.5, 99.9, 99.99];
    let percentiles: Vec<charts::Line> =
        crate::analyze::by_arm(runs, |r| r.arm(), |r| r.status() == "complete")
            .into_iter()
            .filter_map(|(arm, rs)| {
                let mut h = crate::stats::new_histogram();
                for r in rs {
                    if let Some(w) = r.workload_as::<WorkloadJson>() {
                        crate::stats::add_pairs(&mut h, &w.hist_us);
                    }
                }
                let ms = |q: f64| h.value_at_quantile(q / 100.0) as f64 / 1000.0;
                (!h.is_empty()).then(|| (arm, qs.iter().map(|q| (*q, ms(*q))).collect()))
            })
            .collect();
    let mut out = vec![
        (
            "tps.svg".into(),
            charts::line_chart(
                "Transactions per second (1-s resolution)",
                started,
                "transactions/s",
                &tps,
            )?,
        ),
        (
            "latency_p95.svg".into(),
            charts::line_chart("p95 latency per second", started, "p95 latency, ms", &p95)?,
        ),
        (
            "buffers.svg".into(),
            charts::line_chart(
                &format!("Shared buffers holding {t} and its indexes"),
                x,
                "MiB in shared_buffers",
                &bufs,
            )?,
        ),
        (
            "dirty_buffers.svg".into(),
            charts::line_chart(
                &format!("Dirty buffers of {t} and its indexes"),
                x,
                "MiB dirty in shared_buffers",
                &dirty,
            )?,
        ),
        (
            "hot_per_interval.svg".into(),
            charts::line_chart(
                &format!("HOT % of {t} updates per snapshot interval"),
                x,
                "HOT updates, % of updates",
                &hot,
            )?,
        ),
        (
            "dead_tuples.svg".into(),
            charts::line_chart(
                &format!("Dead tuples ({t})"),
                x,
                "dead tuples (n_dead_tup)",
                &dead,
            )?,
        ),
        (
            "pk_index_hits.svg".into(),
            charts::line_chart(
                &format!("{t}_pkey buffer hits per second"),
                x,
                "idx_blks_hit per second",
                &pk,
            )?,
        ),
    ];
    if !percentiles.is_empty() {
        out.push((
            "latency_percentiles.svg".into(),
            charts::percentile_chart(
                "Latency by percentile (each arm's runs merged)",
                &percentiles,
            )?,
        ));
    }
    Ok(out)
}

impl crate::analyze::StudyTables for super::size::PgbenchSize {
    const THROUGHPUT: crate::analyze::Throughput = crate::analyze::Throughput {
        label: "TPS",
        decimals: 1,
    };

    fn headline(r: &ArmRun) -> crate::analyze::Headline {
        let w: Option<WorkloadJson> = r.workload_as();
        let w = w.as_ref();
        crate::analyze::Headline {
            throughput: w.map(|w| w.tps),
            window_s: w.map(|w| w.measured_s),
            latency_ms: [
                w.and_then(|w| w.latency_p50_ms),
                w.and_then(|w| w.latency_p95_ms),
                w.and_then(|w| w.latency_p99_ms),
            ],
            command: w.map(|w| w.command.clone()),
            warehouses: None,
            clients: match &r.plan.size_spec {
                Some(crate::study::Size::Pgbench(s)) => Some(f64::from(s.clients)),
                _ => None,
            },
        }
    }

    /// Study 001 adds its comparison with the article (`small_table.rs`).
    fn tables(runs: &[ArmRun]) -> anyhow::Result<crate::analyze::Tables> {
        let plan = &runs[0].plan;
        let article = plan.study == "small-table" || plan.title.contains("001");
        tables(runs, article.then_some(small_table::sections as Section))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Two runs: 1,000 transactions at 1 ms and 1,000 at 10 ms. Pooled, the median is 1 ms and
    /// p95 10 ms; the mean of the two runs' percentiles would say 5.5 ms for both.
    #[test]
    fn pooled_latency_is_the_percentile_of_all_transactions_not_a_mean() {
        let run = |us: u64| {
            let mut h = crate::stats::new_histogram();
            h.record_n(us, 1000).unwrap();
            WorkloadJson {
                hist_us: crate::stats::hist_buckets(&h),
                latency_p50_ms: Some(us as f64 / 1000.0),
                ..Default::default()
            }
        };
        let (a, b) = (run(1000), run(10000));
        let [p50, p95, p99] = pooled_latency(&[&a, &b]).unwrap();
        assert!((p50 - 1.0).abs() < 0.01, "{p50}");
        assert!((p95 - 10.0).abs() < 0.02, "{p95}");
        assert!((p99 - 10.0).abs() < 0.02, "{p99}");
        let mean_of_medians = (1.0 + 10.0) / 2.0;
        assert!((p50 - mean_of_medians).abs() > 4.0);
        // A run without a histogram stands alone only.
        let old = WorkloadJson {
            latency_p50_ms: Some(2.0),
            latency_p95_ms: Some(3.0),
            latency_p99_ms: Some(4.0),
            ..Default::default()
        };
        assert_eq!(pooled_latency(&[&old]), Some([2.0, 3.0, 4.0]));
        assert_eq!(pooled_latency(&[&old, &a]), None);
    }
}
