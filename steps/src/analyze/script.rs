//! A pgbench-script study (study 001's small-table upsert, or a user's own table): per arm, with
//! repeats (mean, min–max, spread), throughput (the final sample and the window's mean),
//! updates/s, latency percentiles, HOT % and new-page %, dead tuples, heap and index size at the
//! start and end of the window, the buffer-cache footprint and dirty buffers at the end, WAL
//! bytes per transaction and checkpoints; for study 001 the article's figures beside ours with a
//! direction flag, and its five claims checked. Partitions are already added up into their
//! parent by `load`. Reads only what `load` read plus workload.csv.

use serde_json::{json, Value};

use super::load::ArmRun;
use super::mechanism::add;
use super::{by_arm, bytes, charts, direction, md_table, num, pct};
use crate::io::csv_maps;
use crate::stats::Stats;

/// One run's figures for the updated table `t`.
#[derive(Debug, Clone, Default)]
pub struct Row {
    pub name: String,
    pub arm: String,
    pub complete: bool,
    pub tps: Option<f64>,
    pub tps_final: Option<f64>,
    pub upd_per_s: Option<f64>,
    pub p50: Option<f64>,
    pub p95: Option<f64>,
    pub p99: Option<f64>,
    pub hot_pct: Option<f64>,
    pub newpage_pct: Option<f64>,
    /// HOT % of the first and the last interval between samples.
    pub hot_first: Option<f64>,
    pub hot_last: Option<f64>,
    pub dead_end: Option<f64>,
    pub heap_start: Option<f64>,
    pub heap_end: Option<f64>,
    pub index_start: Option<f64>,
    pub index_end: Option<f64>,
    /// Shared buffers of the table and its indexes at the end, and dirty ones.
    pub buffers_end: Option<f64>,
    pub dirty_end: Option<f64>,
    /// The whole cache at the end (every database): used and dirty buffers.
    pub cache_used_end: Option<f64>,
    pub cache_dirty_end: Option<f64>,
    pub pk_hits: Option<f64>,
    pub wal_per_txn: Option<f64>,
    pub checkpoints: Option<f64>,
    pub database_end: Option<f64>,
    pub shared_buffers: Option<f64>,
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

pub fn row(r: &ArmRun, t: &str) -> Row {
    let w = &r.workload;
    let measured_s = w["measured_s"].as_f64();
    let txns = w["transactions"].as_f64();
    let upd = r.table(t, "n_tup_upd").delta;
    let hot_series = charts::hot_per_interval(
        r.table_series(t, "n_tup_upd"),
        r.table_series(t, "n_tup_hot_upd"),
    );
    let idx = indexes_of(r, t);
    let rels: Vec<&str> = std::iter::once(t).chain(idx.iter().copied()).collect();
    let at_end = buffers_at_end(r);
    let buf = |m: &str| rels.iter().map(|o| at_end(o, m)).fold(None, add);
    let pk = format!("{t}_pkey");
    let shared_buffers = super::mechanism::shared_buffers(r);
    Row {
        name: r.name(),
        arm: r.arm(),
        complete: r.status() == "complete",
        tps: w["tps"].as_f64(),
        tps_final: w["tps_final_sample"].as_f64(),
        upd_per_s: match (upd, measured_s) {
            (Some(u), Some(s)) if s > 0.0 => Some(u / s),
            _ => None,
        },
        p50: w["latency_p50_ms"].as_f64(),
        p95: w["latency_p95_ms"].as_f64(),
        p99: w["latency_p99_ms"].as_f64(),
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
    }
}

/// A relation's buffers at the last sample of the window (0 when it had none then). The
/// whole-cache row `_all` is in every sample: its last one is the window's end.
fn buffers_at_end(r: &ArmRun) -> impl Fn(&str, &str) -> Option<f64> + '_ {
    let series = |o: &str, m: &str| r.buffers.series.get(&(o.to_string(), m.to_string()));
    let end = series("_all", "buffers_used")
        .and_then(|s| s.last())
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
pub fn tps_series(r: &ArmRun) -> Vec<(f64, f64)> {
    let text = std::fs::read_to_string(r.dir.join("workload.csv")).unwrap_or_default();
    csv_maps(&text)
        .unwrap_or_default()
        .iter()
        .filter_map(|m| Some((m.get("t_s")?.parse().ok()?, m.get("tps")?.parse().ok()?)))
        .collect()
}

/// The article's figures (data/reference/001-small-table.csv; README there).
const REFERENCE: &str = include_str!("../../../data/reference/001-small-table.csv");

/// (variant, final TPS sample, final buffers) of the PostgreSQL 18.2 rows.
fn published() -> Vec<(String, Option<f64>, Option<f64>)> {
    csv_maps(REFERENCE)
        .unwrap_or_default()
        .into_iter()
        .filter(|m| m.get("version").is_some_and(|v| v.contains("18.2")))
        .map(|m| {
            let n = |k: &str| m.get(k).and_then(|v| v.parse().ok());
            (
                m.get("variant").cloned().unwrap_or_default(),
                n("final_tps_sample"),
                n("final_buffers"),
            )
        })
        .collect()
}

type Getter = fn(&Row) -> Option<f64>;

/// (label, getter, decimals, unit): the per-arm table's columns.
const FIGURES: &[(&str, Getter, usize, &str)] = &[
    ("final TPS sample", |r| r.tps_final, 0, ""),
    ("mean TPS", |r| r.tps, 0, ""),
    ("updates/s", |r| r.upd_per_s, 0, ""),
    ("latency p50 ms", |r| r.p50, 2, ""),
    ("latency p95 ms", |r| r.p95, 2, ""),
    ("latency p99 ms", |r| r.p99, 2, ""),
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
];

fn cell(s: Option<Stats>, decimals: usize, unit: &str) -> String {
    super::spread_cell(s, |x| {
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

pub fn tables(runs: &[ArmRun]) -> anyhow::Result<super::Tables> {
    let plan = &runs[0].plan;
    let t = plan
        .sweep_table
        .clone()
        .or_else(|| plan.tables.first().cloned())
        .unwrap_or_default();
    // In the order they ran: an arm's first appearance is its place in the study (A B B A).
    let mut runs: Vec<&ArmRun> = runs.iter().collect();
    runs.sort_by_key(|r| r.meta["start"].as_str().unwrap_or("").to_string());
    let rows: Vec<Row> = runs.iter().map(|r| row(r, &t)).collect();
    let arms = by_arm(&rows, |r| r.arm.clone(), |r| r.complete);
    let mut md = format!(
        "## {} — {t}, per arm (mean; with repeats min–max and spread)\n\n",
        plan.title
    );
    let mut header = vec!["figure".to_string()];
    header.extend(arms.iter().map(|(a, v)| format!("{a} (n={})", v.len())));
    let mut table_rows = vec![];
    let mut arms_json = serde_json::Map::new();
    for (label, g, dec, unit) in FIGURES {
        let mut line = vec![label.to_string()];
        for (a, v) in &arms {
            let s = stats(v, *g);
            line.push(cell(s, *dec, unit));
            arms_json
                .entry(a.clone())
                .or_insert_with(|| json!({}))
                .as_object_mut()
                .expect("an object")
                .insert(label.to_string(), Stats::json(s));
        }
        table_rows.push(line);
    }
    let h: Vec<&str> = header.iter().map(String::as_str).collect();
    md.push_str(&md_table(&h, &table_rows));
    let stat = |arm: &str, g: Getter| -> Option<Stats> {
        let (_, v) = arms.iter().find(|(a, _)| a == arm)?;
        stats(v, g)
    };
    let mean = |arm: &str, g: Getter| stat(arm, g).map(|s| s.mean);
    let ratio = match (
        mean("onlyff", |r| r.buffers_end),
        mean("ori", |r| r.buffers_end),
    ) {
        (Some(a), Some(b)) if b > 0.0 => Some(a / b),
        _ => None,
    };
    md.push_str(&regime(&rows));
    let mut claims = vec![];
    if plan.study == "small-table" || plan.title.contains("001") {
        let (cmd, cl) = article(&stat, ratio);
        md.push_str(&cmd);
        claims = cl;
    }
    let runs_json: Vec<Value> = rows
        .iter()
        .zip(&runs)
        .map(|(r, a)| {
            json!({
                "run": r.name, "arm": r.arm, "dir": a.dir, "status": a.status(),
                "fillfactor": a.plan.arm.fillfactor, "index_fillfactor": a.plan.arm.index_fillfactor,
                "partition": a.plan.arm.partition,
                "tps": r.tps, "tps_final_sample": r.tps_final, "updates_per_s": r.upd_per_s,
                "latency_p50_ms": r.p50, "latency_p95_ms": r.p95, "latency_p99_ms": r.p99,
                "hot_pct": r.hot_pct, "newpage_pct": r.newpage_pct,
                "hot_pct_first_interval": r.hot_first, "hot_pct_last_interval": r.hot_last,
                "n_dead_tup_end": r.dead_end,
                "heap_bytes_start": r.heap_start, "heap_bytes_end": r.heap_end,
                "index_bytes_start": r.index_start, "index_bytes_end": r.index_end,
                "buffers_end": r.buffers_end, "dirty_end": r.dirty_end,
                "cache_buffers_used_end": r.cache_used_end, "cache_buffers_dirty_end": r.cache_dirty_end,
                "pk_idx_blks_hit": r.pk_hits, "wal_bytes_per_txn": r.wal_per_txn,
                "checkpoints": r.checkpoints, "database_bytes_end": r.database_end,
                "shared_buffers_bytes": r.shared_buffers,
            })
        })
        .collect();
    let json = json!({
        "study": plan.study,
        "table": t,
        "runs": runs_json,
        "arms": arms_json,
        "onlyff_ori_buffer_ratio": ratio,
        "claims": claims,
    });
    Ok((md, json, charts_of(&runs, &t)?))
}

/// The regime the article asks for: every relation inside shared_buffers.
fn regime(rows: &[Row]) -> String {
    let worst = rows
        .iter()
        .filter_map(|r| Some((r.database_end?, r.shared_buffers?)))
        .fold(None, |a: Option<(f64, f64)>, x| match a {
            Some(a) if a.0 / a.1 >= x.0 / x.1 => Some(a),
            _ => Some(x),
        });
    match worst {
        Some((db, sb)) => format!(
            "\n**Regime.** The largest database at the end of a window was {} against shared_buffers of {} ({:.0} %): {}.\n",
            bytes(Some(db)),
            bytes(Some(sb)),
            100.0 * db / sb,
            if db < sb {
                "every relation fits in the buffer cache, as in the article"
            } else {
                "**the data outgrew shared_buffers: not the article's regime**"
            }
        ),
        None => String::new(),
    }
}

type Stat<'a> = &'a dyn Fn(&str, Getter) -> Option<Stats>;

/// Two arms' repeats overlap (min–max): their difference is within the noise of this run.
fn overlap(a: Option<Stats>, b: Option<Stats>) -> bool {
    matches!((a, b), (Some(a), Some(b)) if a.n > 1 && b.n > 1 && a.min <= b.max && b.min <= a.max)
}

/// Study 001: the article's figures beside ours, and its five claims.
fn article(stat: Stat<'_>, ratio: Option<f64>) -> (String, Vec<Value>) {
    let mean = |arm: &str, g: Getter| stat(arm, g).map(|s| s.mean);
    let mut md = String::from(
        "\n### Beside the article (PostgreSQL 18.2, one Docker run; `data/reference/001-small-table.csv`)\n\n",
    );
    let mut rows = vec![];
    let pubd = published();
    let pub_of = |arm: &str, k: usize| -> Option<f64> {
        pubd.iter()
            .find(|(a, _, _)| a == arm)
            .and_then(|p| if k == 0 { p.1 } else { p.2 })
    };
    for (arm, p, _) in pubd.iter().filter(|p| p.1.is_some()) {
        rows.push(vec![
            format!("final TPS sample, {arm}"),
            num(*p, 0),
            num(mean(arm, |r| r.tps_final), 0),
            num(mean(arm, |r| r.tps), 0),
        ]);
    }
    for (arm, _, b) in pubd.iter().filter(|p| p.2.is_some()) {
        rows.push(vec![
            format!("buffers at the end, {arm}"),
            num(*b, 0),
            num(mean(arm, |r| r.buffers_end), 0),
            "".into(),
        ]);
    }
    let pub_ratio = match (pub_of("onlyff", 1), pub_of("ori", 1)) {
        (Some(a), Some(b)) if b > 0.0 => Some(a / b),
        _ => None,
    };
    rows.push(vec![
        "buffers onlyff / ori".into(),
        num(pub_ratio, 2),
        num(ratio, 2),
        "".into(),
    ]);
    let pub_change = |a: &str, b: &str| match (pub_of(a, 0), pub_of(b, 0)) {
        (Some(x), Some(y)) if y > 0.0 => Some(100.0 * (x - y) / y),
        _ => None,
    };
    md.push_str(&md_table(
        &[
            "figure",
            "article",
            "ours (final sample / end)",
            "ours (window mean)",
        ],
        &rows,
    ));
    let change = |a: &str, b: &str, g: Getter| -> Option<f64> {
        match (mean(a, g), mean(b, g)) {
            (Some(x), Some(y)) if y != 0.0 => Some(100.0 * (x - y) / y),
            _ => None,
        }
    };
    let tps: Getter = |r| r.tps;
    let hash = change("by_hash", "ori", tps);
    let ff = change("onlyff", "ori", tps);
    let hash_noise = overlap(stat("by_hash", tps), stat("ori", tps));
    let ff_noise = overlap(stat("onlyff", tps), stat("ori", tps));
    let noise = "within noise (the repeats' ranges overlap)".to_string();
    let hot_early = change("onlyff", "ori", |r| r.hot_first);
    let dead = change("onlyff", "ori", |r| r.dead_end);
    let claims = [
        (
            "hash partitioning stays close to the default (within 5 % TPS)",
            format!("{} (final sample)", pct_text(pub_change("by_hash", "ori"))),
            hash,
            match hash {
                Some(h) if h.abs() <= 5.0 || hash_noise => "agrees".to_string(),
                Some(_) => "**disagrees**".to_string(),
                None => "–".to_string(),
            },
        ),
        (
            "fillfactor 50 (table and indexes) has lower throughput than the default",
            format!("{} (final sample)", pct_text(pub_change("onlyff", "ori"))),
            ff,
            if ff_noise {
                noise.clone()
            } else {
                direction(ff, pub_change("onlyff", "ori"))
            },
        ),
        (
            "fillfactor 50's buffer footprint is far larger (onlyff / ori buffers − 1)",
            pct_text(pub_ratio.map(|r| 100.0 * (r - 1.0))),
            ratio.map(|r| 100.0 * (r - 1.0)),
            direction(ratio.map(|r| r - 1.0), pub_ratio.map(|r| r - 1.0)),
        ),
        (
            "fillfactor 50 starts with more HOT (first interval's HOT %), yet lower throughput",
            "more HOT early, lower TPS".to_string(),
            hot_early,
            match (hot_early, ff) {
                _ if ff_noise => noise.clone(),
                (Some(h), Some(f)) if h > 0.0 && f < 0.0 => "agrees".to_string(),
                (Some(_), Some(_)) => "**disagrees**".to_string(),
                _ => "–".to_string(),
            },
        ),
        (
            "fillfactor 50 ends with fewer dead tuples, yet lower throughput",
            "fewer dead tuples, lower TPS".to_string(),
            dead,
            match (dead, ff) {
                _ if ff_noise => noise.clone(),
                (Some(d), Some(f)) if d < 0.0 && f < 0.0 => "agrees".to_string(),
                (Some(_), Some(_)) => "**disagrees**".to_string(),
                _ => "–".to_string(),
            },
        ),
    ];
    md.push_str("\n### The article's five claims\n\n");
    let cl_rows: Vec<Vec<String>> = claims
        .iter()
        .map(|(c, p, o, d)| vec![c.to_string(), p.clone(), pct_text(*o), d.clone()])
        .collect();
    md.push_str(&md_table(
        &["claim", "article", "ours (means, against ori)", "direction"],
        &cl_rows,
    ));
    md.push_str(
        "\nThe article's figures are single samples of one run; ours are window means and final samples over every repeat. Its buffer counts come from an exporter query it does not give; ours count the table's and its indexes' pages in shared_buffers after a cold start (README, \"Study 001\").\n",
    );
    let json = claims
        .iter()
        .map(|(c, p, o, d)| json!({"claim": c, "article": p, "ours_pct": o, "direction": d}))
        .collect();
    (md, json)
}

fn pct_text(v: Option<f64>) -> String {
    v.map(|x| format!("{x:+.1} %")).unwrap_or("–".into())
}

fn charts_of(runs: &[&ArmRun], t: &str) -> anyhow::Result<Vec<(String, String)>> {
    let x = "seconds into the measured window";
    let mut tps = vec![];
    let mut bufs = vec![];
    let mut dirty = vec![];
    let mut hot = vec![];
    let mut dead = vec![];
    let mut pk = vec![];
    for r in runs {
        let name = r.name();
        tps.push((name.clone(), tps_series(r)));
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
        bufs.push((name.clone(), sum_of("buffers")));
        dirty.push((name.clone(), sum_of("dirty")));
        hot.push((
            name.clone(),
            charts::hot_per_interval(
                r.table_series(t, "n_tup_upd"),
                r.table_series(t, "n_tup_hot_upd"),
            ),
        ));
        dead.push((name.clone(), r.table_series(t, "n_dead_tup").to_vec()));
        pk.push((
            name,
            charts::per_interval(r.table_series(&format!("{t}_pkey"), "idx_blks_hit"), 1.0),
        ));
    }
    Ok(vec![
        (
            "tps.svg".into(),
            charts::line_chart(
                "Transactions per second (every arm)",
                "seconds since pgbench started",
                "TPS",
                &tps,
            )?,
        ),
        (
            "buffers.svg".into(),
            charts::line_chart(
                &format!("Shared buffers of {t} and its indexes"),
                x,
                "buffers",
                &bufs,
            )?,
        ),
        (
            "dirty_buffers.svg".into(),
            charts::line_chart(
                &format!("Dirty buffers of {t} and its indexes"),
                x,
                "dirty buffers",
                &dirty,
            )?,
        ),
        (
            "hot_per_interval.svg".into(),
            charts::line_chart(
                &format!("HOT % of {t} updates per interval"),
                x,
                "HOT %",
                &hot,
            )?,
        ),
        (
            "dead_tuples.svg".into(),
            charts::line_chart(&format!("Dead tuples ({t})"), x, "n_dead_tup", &dead)?,
        ),
        (
            "pk_index_hits.svg".into(),
            charts::line_chart(
                &format!("{t}_pkey buffer hits per second"),
                x,
                "idx_blks_hit/s",
                &pk,
            )?,
        ),
    ])
}
