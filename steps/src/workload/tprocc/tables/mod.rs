//! Study 000's tables from TPROC-C runs: throughput per run and per arm (mean, min, max, spread
//! over repeats), HOT / new-page / same-page shares per updated table, the article's "every run"
//! table, stock's heap growth and post-run VACUUM, the new-page share at fillfactor 100, and the
//! order_line bloat curve, each with the published value beside ours where the article printed
//! one (from data/reference/, at the article size nearest ours) and a flag where the direction
//! of the default → tuned change disagrees. Plus the five charts.

mod waits;

use std::collections::{BTreeMap, HashMap};

use anyhow::Result;
use serde::Serialize;

use super::files::WorkloadJson;
use crate::analyze::arms::{figure, ArmStats, Figure};
use crate::analyze::fingerprint::{identity, Identity};
use crate::analyze::load::ArmRun;
use crate::analyze::reference::{self, Row};
use crate::analyze::{bytes, charts, direction, md_table, mechanism, num, pct};
use crate::stats::Stats;

const TABLES: &[&str] = &[
    "warehouse",
    "district",
    "customer",
    "stock",
    "orders",
    "order_line",
];

const EVERY_RUN: &str = include_str!("../../../../../data/reference/000-every-run.csv");
const STOCK_GROWTH: &str = include_str!("../../../../../data/reference/000-stock-growth.csv");
const NEWPAGE_FF100: &str = include_str!("../../../../../data/reference/000-newpage-ff100.csv");
const ONPAGE: &str = include_str!("../../../../../data/reference/000-onpage.csv");

/// Rows of a small reference CSV as header → value maps.
fn csv_rows(text: &str) -> Vec<BTreeMap<String, String>> {
    crate::io::csv_maps(text).expect("the reference CSVs are compiled in and well-formed")
}

fn field(row: &BTreeMap<String, String>, k: &str) -> Option<f64> {
    row.get(k).and_then(|v| v.parse().ok())
}

/// The article size our runs are compared with: the same warehouse count, or else the nearest.
fn reference_warehouses(ours: Option<f64>) -> u32 {
    let w = ours.unwrap_or(20.0);
    *[20u32, 40, 100]
        .iter()
        .min_by(|a, b| (**a as f64 - w).abs().total_cmp(&(**b as f64 - w).abs()))
        .unwrap()
}

/// The article's arm of the same name: only `default` and `tuned` have published values.
fn article_arm(arm: &str) -> Option<&'static str> {
    match arm {
        "default" => Some("default"),
        "tuned" => Some("tuned"),
        _ => None,
    }
}

/// The article's every-run rows beside our arms: each arm joined to the published row of the
/// article arm of its name at `wh` warehouses.
fn published_rows(arms: &[String], wh: u32) -> Result<HashMap<String, Row>> {
    let keys: Vec<_> = arms
        .iter()
        .map(|a| (a.clone(), article_arm(a).map(str::to_string)))
        .collect();
    reference::join(EVERY_RUN, "arm", &keys, &[("warehouses", wh.to_string())])
}

/// The per-table figures the arm tables aggregate.
const TABLE_FIGURES: &[&str] = &[
    "fillfactor",
    "n_tup_upd",
    "hot_pct",
    "newpage_pct",
    "samepage_nonhot_pct",
];

/// The figures aggregated per arm: `nopm`, … and `<table>:<figure>` for every table.
fn arm_figures() -> Vec<Figure<'static, RunFigures>> {
    let mut f = vec![
        figure("nopm", |f: &RunFigures| f.nopm),
        figure("tpm", |f: &RunFigures| f.tpm),
        figure("ratio", |f: &RunFigures| f.ratio),
        figure("stock_growth", |f: &RunFigures| f.stock_growth),
        figure("vacuum_stock", |f: &RunFigures| f.vacuum_stock),
    ];
    for t in TABLES {
        for k in TABLE_FIGURES {
            f.push(figure(format!("{t}:{k}"), move |f: &RunFigures| {
                f.tables.get(*t)?.get(k)
            }));
        }
    }
    f
}

/// Figures of one run that the tables need.
struct RunFigures {
    name: String,
    arm: String,
    complete: bool,
    nopm: Option<f64>,
    tpm: Option<f64>,
    ratio: Option<f64>,
    tables: BTreeMap<&'static str, TableFigures>,
    wal_bytes: Option<f64>,
    wal_per_txn: Option<f64>,
    checkpoints: Option<f64>,
    vacuum_stock: Option<f64>,
    stock_growth: Option<f64>,
}

/// An updated table's figures over a run (summary.json `runs[].tables.<table>`).
#[derive(Debug, Clone, Serialize)]
struct TableFigures {
    fillfactor: Option<f64>,
    n_tup_upd: Option<f64>,
    n_tup_hot_upd: Option<f64>,
    n_tup_newpage_upd: Option<f64>,
    hot_pct: Option<f64>,
    newpage_pct: Option<f64>,
    samepage_nonhot_pct: Option<f64>,
    heap_bytes_before: Option<f64>,
    heap_bytes_after: Option<f64>,
    index_bytes_before: Option<f64>,
    index_bytes_after: Option<f64>,
    n_dead_tup: Option<f64>,
    vacuum_s: Option<f64>,
}

impl TableFigures {
    /// A figure of `TABLE_FIGURES` by its name.
    fn get(&self, name: &str) -> Option<f64> {
        match name {
            "fillfactor" => self.fillfactor,
            "n_tup_upd" => self.n_tup_upd,
            "hot_pct" => self.hot_pct,
            "newpage_pct" => self.newpage_pct,
            "samepage_nonhot_pct" => self.samepage_nonhot_pct,
            _ => None,
        }
    }
}

fn table_figures(r: &ArmRun, t: &str) -> TableFigures {
    let upd = r.table(t, "n_tup_upd").delta;
    let hot = r.table(t, "n_tup_hot_upd").delta;
    let newpage = r.table(t, "n_tup_newpage_upd").delta;
    let same_page = match (upd, hot, newpage) {
        (Some(u), Some(h), Some(n)) => Some(u - h - n),
        _ => None,
    };
    TableFigures {
        fillfactor: r.fillfactor(t),
        n_tup_upd: upd,
        n_tup_hot_upd: hot,
        n_tup_newpage_upd: newpage,
        hot_pct: pct(hot, upd),
        newpage_pct: pct(newpage, upd),
        samepage_nonhot_pct: pct(same_page, upd),
        heap_bytes_before: r.table(t, "heap_bytes").first,
        heap_bytes_after: r.table(t, "heap_bytes").last,
        index_bytes_before: r.table(t, "index_bytes").first,
        index_bytes_after: r.table(t, "index_bytes").last,
        n_dead_tup: r.table(t, "n_dead_tup").last,
        vacuum_s: r.vacuum.get(t).copied(),
    }
}

fn figures(r: &ArmRun) -> RunFigures {
    let w: Option<WorkloadJson> = r.workload_as();
    let w = w.as_ref();
    let wal = r.source("lsn", "insert_lsn_bytes").delta;
    let txns = r.source("cluster", "xact_total").delta;
    let ckpt = r.source("checkpointer", "num_done").delta;
    let heap = r.table("stock", "heap_bytes");
    RunFigures {
        name: r.name(),
        arm: r.arm(),
        complete: r.status() == "complete",
        nopm: w.map(|w| w.nopm),
        tpm: w.map(|w| w.tpm),
        ratio: w.map(|w| w.tpm_per_nopm),
        tables: TABLES.iter().map(|t| (*t, table_figures(r, t))).collect(),
        wal_bytes: wal,
        wal_per_txn: match (wal, txns) {
            (Some(b), Some(n)) if n > 0.0 => Some(b / n),
            _ => None,
        },
        checkpoints: ckpt,
        vacuum_stock: r.vacuum.get("stock").copied(),
        stock_growth: match (heap.first, heap.last) {
            (Some(a), Some(b)) => Some(b - a),
            _ => None,
        },
    }
}

fn hot_of(f: &RunFigures, t: &str) -> Option<f64> {
    f.tables.get(t)?.hot_pct
}

fn mean(s: Option<Stats>) -> Option<f64> {
    s.map(|s| s.mean)
}

/// "mean (min–max)" for repeated figures, the plain mean for one run.
fn ms(s: Option<Stats>, d: usize) -> String {
    match s {
        None => "–".into(),
        Some(s) if s.n == 1 => num(Some(s.mean), d),
        Some(s) => format!(
            "{} ({}–{})",
            num(Some(s.mean), d),
            num(Some(s.min), d),
            num(Some(s.max), d)
        ),
    }
}

/// Like `ms`, with the spread ((max − min) / mean) for throughput figures.
fn ms_spread(s: Option<Stats>, d: usize) -> String {
    crate::analyze::spread_cell(s, |x| num(Some(x), d))
}

/// What every table of the TPROC-C summary reads.
struct Cx<'a> {
    runs: &'a [ArmRun],
    figs: &'a [RunFigures],
    arms: Vec<(String, Vec<&'a RunFigures>)>,
    /// The arms' aggregates (`arm_figures`), one group-by.
    st: ArmStats,
    /// Our arm → the article's every-run row at `wh` (arms the article did not run are absent).
    published: HashMap<String, Row>,
    /// The article size compared with, and how it relates to ours.
    wh: u32,
    wh_note: String,
}

/// The TPROC-C summary: one function per printed table, in the order printed.
pub(crate) fn tables(runs: &[ArmRun]) -> Result<crate::analyze::Tables> {
    let figs: Vec<RunFigures> = runs.iter().map(figures).collect();
    let arms = crate::analyze::by_arm(&figs, |f| f.arm.clone(), |f| f.complete);
    let ours_wh = runs
        .first()
        .and_then(|r| r.workload_as::<WorkloadJson>())
        .map(|w| w.warehouses as f64);
    let wh = reference_warehouses(ours_wh);
    let wh_note = match ours_wh {
        Some(w) if w as u32 == wh => format!("{wh} warehouses, as ours"),
        Some(w) => format!("{wh} warehouses, the article size nearest our {w}: compare directions and ratios, not levels"),
        None => format!("{wh} warehouses"),
    };
    let names: Vec<String> = arms.iter().map(|(a, _)| a.clone()).collect();
    let c = Cx {
        runs,
        figs: &figs,
        st: ArmStats::of(&arms, &arm_figures())?,
        published: published_rows(&names, wh)?,
        arms,
        wh,
        wh_note,
    };
    let mut md = throughput_per_run(&c);
    let (arm_md, arm_json) = throughput_per_arm(&c);
    md.push_str(&arm_md);
    md.push_str(&updates_per_table(&c));
    md.push_str(&every_run(&c));
    // The mechanism beside the outcome, and latency.
    let pub_mech = |arm: &str| {
        let p = c.published.get(arm)?;
        Some((field(p, "wal_bytes_per_txn")?, field(p, "checkpoints")?))
    };
    let (mech_md, mech_json) = mechanism::tables(runs, TABLES, &pub_mech, &c.wh_note)?;
    md.push_str(&mech_md);
    let (wait_md, wait_json) = waits::waits(runs);
    md.push_str(&wait_md);
    let (lat_md, lat_json, lat_chart) = waits::latency(runs);
    md.push_str(&lat_md);
    md.push_str(&stock_growth(&c));
    md.push_str(&newpage_at_ff100(&c));
    md.push_str(&bloat_curve(&c));
    let findings = findings(&arm_json, &mech_json);
    let out = TproccSummary {
        study: "tprocc",
        reference_warehouses: c.wh,
        arms: arm_json,
        mechanism: mech_json,
        wait_events: wait_json,
        latency: lat_json,
        runs: runs_json(&c),
    };
    let mut charts = if runs.iter().all(|r| r.dir.join("samples.csv").exists()) {
        // Each run's samples.csv read once: (NOPM, p95) per second, by run directory.
        let per_second: std::collections::HashMap<&std::path::Path, (Series, Series)> = runs
            .iter()
            .map(|r| (r.dir.as_path(), new_order_per_second(r)))
            .collect();
        let nopm = |r: &ArmRun| per_second[r.dir.as_path()].0.clone();
        let mut c = charts::standard(
            runs,
            TABLES,
            "order_line",
            ("NOPM (client New-Orders × 60, 1-s resolution)", &nopm),
        )?;
        let p95: Vec<charts::Line> = runs
            .iter()
            .map(|r| (r.arm(), per_second[r.dir.as_path()].1.clone()))
            .collect();
        c.push((
            "latency_p95.svg".into(),
            charts::line_chart(
                "New-Order p95 latency per second",
                "seconds into the measured window",
                "p95 latency, ms",
                &p95,
            )?,
        ));
        c
    } else {
        // Runs from before samples.csv: the snapshot interval's resolution.
        let nopm =
            |r: &ArmRun| charts::per_interval(r.source_series("tprocc", "d_next_o_id_sum"), 60.0);
        charts::standard(
            runs,
            TABLES,
            "order_line",
            ("NOPM per snapshot interval", &nopm),
        )?
    };
    charts.extend(lat_chart);
    Ok(crate::analyze::Tables {
        markdown: md,
        json: serde_json::to_value(out)?,
        charts,
        findings,
    })
}

/// (x, y) points of a chart line.
type Series = Vec<(f64, f64)>;

/// New-Order from a run's samples.csv over the measured window, in seconds into it: the
/// committed New-Orders per minute of each second (a row under half a second, cut short by a
/// snapshot, is folded into the next) and each second's p95 latency in ms.
fn new_order_per_second(r: &ArmRun) -> (Series, Series) {
    let text = std::fs::read_to_string(r.dir.join("samples.csv")).unwrap_or_default();
    let rows = crate::io::csv_maps(&text).unwrap_or_default();
    let f = |m: &std::collections::BTreeMap<String, String>, k: &str| -> f64 {
        m.get(k).and_then(|v| v.parse().ok()).unwrap_or(0.0)
    };
    let (mut nopm, mut p95) = (vec![], vec![]);
    let (mut m0, mut since, mut acc) = (0.0, 0.0, 0.0);
    for m in rows
        .iter()
        .filter(|m| m.get("txn").map(String::as_str) == Some("new_order"))
    {
        let t = f(m, "t_s");
        if m.get("phase").map(String::as_str) != Some("measured") {
            (m0, since) = (t, t);
            continue;
        }
        acc += f(m, "count");
        if f(m, "count") > 0.0 {
            p95.push((t - m0, f(m, "p95_ms")));
        }
        if t - since >= 0.5 {
            nopm.push((t - m0, acc * 60.0 / (t - since)));
            (since, acc) = (t, 0.0);
        }
    }
    (nopm, p95)
}

/// The throughput of every run: NOPM, TPM and their ratio.
fn throughput_per_run(c: &Cx) -> String {
    let mut md = String::new();
    // Throughput per run.
    md.push_str("## TPROC-C: throughput per run\n\n");
    let rows: Vec<Vec<String>> = c
        .runs
        .iter()
        .zip(c.figs)
        .map(|(r, f)| {
            let w: Option<WorkloadJson> = r.workload_as();
            let w = w.as_ref();
            vec![
                f.name.clone(),
                r.status(),
                w.map_or("–".into(), |w| w.profile.clone()),
                num(w.map(|w| w.warehouses as f64), 0),
                num(w.map(|w| w.vus as f64), 0),
                num(w.map(|w| w.duration_s), 0),
                num(f.nopm, 0),
                num(f.tpm, 0),
                num(f.ratio, 2),
            ]
        })
        .collect();
    md.push_str(&md_table(
        &[
            "run",
            "status",
            "profile",
            "warehouses",
            "VUs",
            "measured s",
            "NOPM",
            "TPM",
            "TPM/NOPM",
        ],
        &rows,
    ));
    md.push_str("\nNOPM = Δsum(d_next_o_id) per minute and TPM = Δsum(xact_commit + xact_rollback) of pg_stat_database (whole cluster) per minute, over the measured window, as HammerDB computes them. The article saw TPM/NOPM = 2.30 in all six runs.\n\n");

    md
}

/// Throughput per arm, repeats summarised, beside the article; and `arms` for summary.json.
fn throughput_per_arm(c: &Cx) -> (String, Vec<ArmJson>) {
    let mut md = String::new();
    // Throughput per arm, repeats summarised, beside the article.
    let base = c.arms.first().map(|(a, _)| c.st.mean(a, "nopm"));
    md.push_str(&format!(
        "## Throughput per arm (published: {})\n\n",
        c.wh_note
    ));
    let mut rows = vec![];
    let mut arms_json = vec![];
    let pub_base = c
        .arms
        .first()
        .and_then(|(a, _)| c.published.get(a))
        .and_then(|p| field(p, "nopm"));
    for (arm, v) in &c.arms {
        let nopm = c.st.get(arm, "nopm");
        let tpm = c.st.get(arm, "tpm");
        let pub_nopm = c.published.get(arm).and_then(|p| field(p, "nopm"));
        let gain = match (mean(nopm), base.flatten()) {
            (Some(a), Some(b)) if b > 0.0 => Some(100.0 * (a / b - 1.0)),
            _ => None,
        };
        let pub_gain = match (pub_nopm, pub_base) {
            (Some(a), Some(b)) if b > 0.0 => Some(100.0 * (a / b - 1.0)),
            _ => None,
        };
        let first = c.arms.first().map(|(a, _)| a == arm).unwrap_or(true);
        rows.push(vec![
            arm.clone(),
            v.len().to_string(),
            ms_spread(nopm, 0),
            ms_spread(tpm, 0),
            num(c.st.mean(arm, "ratio"), 2),
            num(pub_nopm, 0),
            if first { "–".into() } else { num(gain, 1) },
            if first {
                "–".into()
            } else {
                num(pub_gain, 1)
            },
            if first {
                "–".into()
            } else {
                direction(gain, pub_gain)
            },
        ]);
        arms_json.push(ArmJson {
            arm: arm.clone(),
            runs: v.iter().map(|f| f.name.clone()).collect(),
            nopm,
            tpm,
            published_nopm: pub_nopm,
            gain_pct: gain,
            published_gain_pct: pub_gain,
            hot_pct: TABLES
                .iter()
                .map(|t| (*t, c.st.get(arm, &format!("{t}:hot_pct"))))
                .collect(),
        });
    }
    md.push_str(&md_table(
        &[
            "arm",
            "runs",
            "NOPM",
            "TPM",
            "TPM/NOPM",
            "published NOPM",
            "gain %",
            "published gain %",
            "direction",
        ],
        &rows,
    ));
    md.push_str("\nWith repeats: mean (min–max, spread = (max − min) / mean). Gain is against the first arm. Incomplete runs are listed above but not counted here.");
    if c.arms.iter().any(|(_, v)| v.len() < 2) {
        md.push_str(" An arm with one run has no spread: on a shared machine a gain of a few percent is within run-to-run noise; repeat the comparison (`REPEATS=2 just compare …`, A B B A) before trusting it.");
    }
    md.push_str("\n\n");

    (md, arms_json)
}

/// An arm's throughput and HOT % over its complete runs (summary.json `arms`).
#[derive(Debug, Clone, Serialize)]
struct ArmJson {
    arm: String,
    runs: Vec<String>,
    nopm: Option<Stats>,
    tpm: Option<Stats>,
    published_nopm: Option<f64>,
    gain_pct: Option<f64>,
    published_gain_pct: Option<f64>,
    hot_pct: BTreeMap<&'static str, Option<Stats>>,
}

/// Updates per table and arm: HOT, new page, same page without HOT, beside the article.
fn updates_per_table(c: &Cx) -> String {
    let mut md = String::new();
    // Updates per table and arm.
    md.push_str("## Updates per table: HOT, new page, same page without HOT\n\n");
    // Our tables joined to the article's on-page shares at its size.
    let keys: Vec<_> = TABLES
        .iter()
        .map(|t| (t.to_string(), Some(t.to_string())))
        .collect();
    let onpage = reference::join(ONPAGE, "table", &keys, &[("warehouses", c.wh.to_string())])
        .unwrap_or_default();
    let mut trows = vec![];
    for (arm, _) in &c.arms {
        for t in TABLES {
            let g = |k: &str| c.st.get(arm, &format!("{t}:{k}"));
            let pub_hot = onpage
                .get(*t)
                .and_then(|p| field(p, &format!("{}_pct", article_arm(arm)?)));
            trows.push(vec![
                arm.clone(),
                t.to_string(),
                num(mean(g("fillfactor")), 0),
                num(mean(g("n_tup_upd")), 0),
                ms(g("hot_pct"), 1),
                ms(g("newpage_pct"), 1),
                num(mean(g("samepage_nonhot_pct")), 1),
                num(pub_hot, 2),
            ]);
        }
    }
    md.push_str(&md_table(
        &[
            "arm",
            "table",
            "fillfactor",
            "updates",
            "HOT %",
            "new-page %",
            "same-page non-HOT %",
            "published HOT %",
        ],
        &trows,
    ));
    md.push_str("\nShares of `n_tup_upd` over the measured window (deltas between its first and last sample). The article calls HOT % the on-page share.\n\n");

    md
}

/// The article's "every run" table, ours then the published rows.
fn every_run(c: &Cx) -> String {
    let mut md = String::new();
    // The article's "every run" table.
    md.push_str(&format!("## Every run (published: {})\n\n", c.wh_note));
    let mut erows = vec![];
    for f in c.figs {
        erows.push(vec![
            f.name.clone(),
            num(f.nopm, 0),
            num(hot_of(f, "order_line"), 2),
            num(hot_of(f, "stock"), 2),
            bytes(f.wal_bytes),
            num(f.wal_per_txn, 0),
            num(f.checkpoints, 0),
            num(f.vacuum_stock, 2),
        ]);
    }
    for (arm, _) in &c.arms {
        if let Some(p) = c.published.get(arm) {
            let g = |k: &str| p.get(k).cloned().unwrap_or_else(|| "–".into());
            erows.push(vec![
                format!("published {arm} ({} wh)", c.wh),
                g("nopm"),
                g("order_line_hot_pct"),
                g("stock_hot_pct"),
                format!("{} GiB", g("wal_gib")),
                g("wal_bytes_per_txn"),
                g("checkpoints"),
                g("vacuum_stock_s"),
            ]);
        }
    }
    md.push_str(&md_table(
        &[
            "run",
            "NOPM",
            "order_line HOT %",
            "stock HOT %",
            "WAL",
            "WAL bytes/txn",
            "checkpoints",
            "VACUUM stock s",
        ],
        &erows,
    ));
    md.push_str("\nWAL = Δ insert LSN over the measured window; WAL bytes per transaction divides it by the server's transactions (xact_commit + xact_rollback); checkpoints = Δ num_done; VACUUM stock = the post-run VACUUM.\n\n");

    md
}

/// stock's heap growth and post-run VACUUM per arm, directions against the first arm.
fn stock_growth(c: &Cx) -> String {
    let mut md = String::new();
    // Stock growth and VACUUM, default → tuned.
    md.push_str(&format!(
        "## stock: heap growth and post-run VACUUM (published: {})\n\n",
        c.wh_note
    ));
    // The article's growth at its size: a join on the warehouse count.
    let wh = c.wh.to_string();
    let growth = reference::join(STOCK_GROWTH, "warehouses", &[(wh.clone(), Some(wh))], &[])
        .unwrap_or_default();
    let pg = growth.values().next();
    // Per arm: (growth, VACUUM s) ours and published; directions against the first arm.
    let rows: Vec<_> = c
        .arms
        .iter()
        .map(|(arm, _)| {
            let pub_g = pg.and_then(|p| field(p, &format!("{}_mb", article_arm(arm)?)));
            let pub_v = c
                .published
                .get(arm)
                .and_then(|p| field(p, "vacuum_stock_s"));
            let (g, vac) = (c.st.get(arm, "stock_growth"), c.st.get(arm, "vacuum_stock"));
            (arm, g, vac, pub_g, pub_v)
        })
        .collect();
    let diff = |a: Option<f64>, b: Option<f64>| Some(a? - b?);
    let mut srows = vec![];
    for (i, (arm, g, vac, pub_g, pub_v)) in rows.iter().enumerate() {
        let (_, g0, v0, pub_g0, pub_v0) = &rows[0];
        let dir = |ours: Option<f64>, base: Option<f64>, p: Option<f64>, p0: Option<f64>| {
            if i == 0 {
                "–".to_string()
            } else {
                direction(diff(ours, base), diff(p, p0))
            }
        };
        srows.push(vec![
            arm.to_string(),
            bytes(mean(*g)),
            num(*pub_g, 0),
            dir(mean(*g), mean(*g0), *pub_g, *pub_g0),
            ms(*vac, 2),
            num(*pub_v, 1),
            dir(mean(*vac), mean(*v0), *pub_v, *pub_v0),
        ]);
    }
    md.push_str(&md_table(
        &[
            "arm",
            "stock heap growth",
            "published MB",
            "direction",
            "VACUUM stock s",
            "published s",
            "direction",
        ],
        &srows,
    ));
    md.push('\n');

    md
}

/// The new-page share at fillfactor 100 against the article's range: the evidence it chose fillfactors from.
fn newpage_at_ff100(c: &Cx) -> String {
    let mut md = String::new();
    // New-page share at fillfactor 100: the evidence the article chose fillfactors from.
    md.push_str("## New-page share at fillfactor 100 (the evidence for choosing a fillfactor)\n\n");
    let mut nrows = vec![];
    for p in csv_rows(NEWPAGE_FF100) {
        let t = p.get("table").cloned().unwrap_or_default();
        let ours: Vec<f64> = c
            .figs
            .iter()
            .filter(|f| f.complete)
            .filter(|f| f.tables.get(t.as_str()).and_then(|x| x.fillfactor) == Some(100.0))
            .filter_map(|f| f.tables.get(t.as_str())?.newpage_pct)
            .collect();
        let s = Stats::of(&ours);
        let (lo, hi) = (field(&p, "newpage_pct_min"), field(&p, "newpage_pct_max"));
        let verdict = match (s, lo, hi) {
            (Some(s), Some(lo), Some(hi)) if s.mean >= lo && s.mean <= hi => "inside".to_string(),
            (Some(s), Some(lo), Some(_)) if s.mean < lo => "below".to_string(),
            (Some(_), Some(_), Some(_)) => "above".to_string(),
            _ => "–".to_string(),
        };
        nrows.push(vec![
            t,
            ms(s, 2),
            match (lo, hi) {
                (Some(lo), Some(hi)) => format!("{lo:.1}–{hi:.1}"),
                _ => "–".into(),
            },
            verdict,
            p.get("decision_fillfactor").cloned().unwrap_or_default(),
        ]);
    }
    md.push_str(&md_table(
        &[
            "table",
            "new-page % (ours, ff 100)",
            "article range %",
            "ours vs range",
            "article's fillfactor",
        ],
        &nrows,
    ));
    md.push('\n');

    md
}

/// The bloat curve of order_line, per sample.
fn bloat_curve(c: &Cx) -> String {
    let mut md = String::new();
    // Bloat curve of order_line.
    md.push_str("## Bloat curve: order_line per sample\n\n");
    let mut brows = vec![];
    for r in c.runs {
        let heap = r.table_series("order_line", "heap_bytes");
        let idx = r.table_series("order_line", "index_bytes");
        let dead = r.table_series("order_line", "n_dead_tup");
        for (i, (t, h)) in heap.iter().enumerate() {
            brows.push(vec![
                r.name(),
                num(Some(*t), 0),
                bytes(Some(*h)),
                bytes(idx.get(i).map(|x| x.1)),
                num(dead.get(i).map(|x| x.1), 0),
            ]);
        }
    }
    md.push_str(&md_table(
        &["run", "t s", "heap", "indexes", "dead tuples"],
        &brows,
    ));
    md.push_str("\nThe article's curve (20 warehouses, every 10 minutes of an hour) is in data/reference/000-bloat-order-line-20wh.csv; ours covers the measured window of this size.\n");

    md
}

/// What the short answer says: each arm's NOPM gain against the first, and the regime.
fn findings(arms: &[ArmJson], mech: &mechanism::MechanismJson) -> crate::analyze::Findings {
    crate::analyze::Findings {
        gains: arms
            .iter()
            .skip(1)
            .filter_map(|a| Some((a.arm.clone(), a.gain_pct?, a.published_gain_pct)))
            .collect(),
        base_arm: arms.first().map(|a| a.arm.clone()),
        regime: mech
            .regime()
            .map(|r| (Some(r.in_regime), r.why.to_string())),
        ..Default::default()
    }
}

/// One run's figures (summary.json `runs`).
#[derive(Debug, Clone, Serialize)]
struct RunJson {
    arm: String,
    arm_name: String,
    dir: std::path::PathBuf,
    identity: Identity,
    fillfactor: BTreeMap<String, u32>,
    status: String,
    nopm: Option<f64>,
    tpm: Option<f64>,
    tpm_per_nopm: Option<f64>,
    duration_s: Option<f64>,
    wal_bytes: Option<f64>,
    wal_bytes_per_txn: Option<f64>,
    checkpoints: Option<f64>,
    vacuum_stock_s: Option<f64>,
    stock_heap_growth_bytes: Option<f64>,
    tables: BTreeMap<&'static str, TableFigures>,
}

/// `runs` of summary.json.
fn runs_json(c: &Cx) -> Vec<RunJson> {
    c.runs
        .iter()
        .zip(c.figs)
        .map(|(r, f)| RunJson {
            arm: f.name.clone(),
            arm_name: f.arm.clone(),
            dir: r.dir.clone(),
            identity: identity(r),
            fillfactor: r.plan.arm.fillfactor.clone(),
            status: r.status(),
            nopm: f.nopm,
            tpm: f.tpm,
            tpm_per_nopm: f.ratio,
            duration_s: r.workload_as::<WorkloadJson>().map(|w| w.duration_s),
            wal_bytes: f.wal_bytes,
            wal_bytes_per_txn: f.wal_per_txn,
            checkpoints: f.checkpoints,
            vacuum_stock_s: f.vacuum_stock,
            stock_heap_growth_bytes: f.stock_growth,
            tables: f.tables.clone(),
        })
        .collect()
}

/// Study 000's tables in summary.json.
#[derive(Serialize)]
struct TproccSummary {
    study: &'static str,
    reference_warehouses: u32,
    arms: Vec<ArmJson>,
    mechanism: mechanism::MechanismJson,
    wait_events: Option<Vec<waits::WaitJson>>,
    latency: Option<Vec<waits::LatencyJson>>,
    runs: Vec<RunJson>,
}

impl crate::analyze::StudyTables for super::size::TproccSize {
    const THROUGHPUT: crate::analyze::Throughput = crate::analyze::Throughput {
        label: "NOPM",
        decimals: 0,
    };

    fn headline(r: &ArmRun) -> crate::analyze::Headline {
        let w: Option<WorkloadJson> = r.workload_as();
        crate::analyze::Headline {
            throughput: w.as_ref().map(|w| w.nopm),
            window_s: w.as_ref().map(|w| w.duration_s),
            warehouses: match &r.plan.size_spec {
                Some(crate::study::Size::Tprocc(s)) => s.warehouses.map(|w| w as f64),
                _ => None,
            },
            clients: match &r.plan.size_spec {
                Some(crate::study::Size::Tprocc(s)) => s.vus.map(f64::from),
                _ => None,
            },
            ..Default::default()
        }
    }

    fn tables(runs: &[ArmRun]) -> Result<crate::analyze::Tables> {
        tables(runs)
    }
}
