//! Study 003's table: per fillfactor, time, statements/s, rows/s, HOT %, new-page %, live and
//! dead tuples, table and index size before and after, WAL bytes; the article's claims checked
//! against our numbers, and its one published figure beside ours.

use anyhow::Result;
use serde::Serialize;

use super::files::WorkloadJson;
use crate::analyze::fingerprint::{identity, Identity};
use crate::analyze::load::ArmRun;
use crate::analyze::{bytes, md_table, num, pct, report::bar_chart, stepwise};

const TABLE: &str = "spv";
/// The article's one printed number: requests per second at one (unnamed) fillfactor.
const PUBLISHED_REQUESTS_PER_S: f64 = 176.6;

struct Row {
    arm: String,
    status: String,
    ff: Option<f64>,
    duration_s: Option<f64>,
    statements_per_s: Option<f64>,
    rows_per_s: Option<f64>,
    upd: Option<f64>,
    hot: Option<f64>,
    newpage: Option<f64>,
    live: Option<f64>,
    dead: Option<f64>,
    heap_before: Option<f64>,
    heap_after: Option<f64>,
    idx_before: Option<f64>,
    idx_after: Option<f64>,
    wal: Option<f64>,
}

impl Row {
    fn hot_pct(&self) -> Option<f64> {
        pct(self.hot, self.upd)
    }
    fn newpage_pct(&self) -> Option<f64> {
        pct(self.newpage, self.upd)
    }
}

fn row(r: &ArmRun) -> Row {
    let w: Option<WorkloadJson> = r.workload_as();
    let w = w.as_ref();
    Row {
        arm: r.name(),
        status: r.status(),
        ff: r.fillfactor(TABLE),
        duration_s: w.map(|w| w.duration_s),
        statements_per_s: w.map(|w| w.statements_per_s),
        rows_per_s: w.map(|w| w.rows_per_s),
        upd: r.table(TABLE, "n_tup_upd").delta,
        hot: r.table(TABLE, "n_tup_hot_upd").delta,
        newpage: r.table(TABLE, "n_tup_newpage_upd").delta,
        live: r.table(TABLE, "n_live_tup").last,
        dead: r.table(TABLE, "n_dead_tup").last,
        heap_before: r.table(TABLE, "heap_bytes").first,
        heap_after: r.table(TABLE, "heap_bytes").last,
        idx_before: r.table(TABLE, "index_bytes").first,
        idx_after: r.table(TABLE, "index_bytes").last,
        wal: r.source("lsn", "insert_lsn_bytes").delta,
    }
}

/// A claim of the article checked at every step between adjacent fillfactors measured (highest
/// first): "agrees", "agrees from 100 to 75, not below", "**disagrees**" (see `stepwise`).
fn claims(rows: &[&Row]) -> Vec<Claim> {
    let done: Vec<&Row> = rows
        .iter()
        .copied()
        .filter(|r| r.status == "complete")
        .collect();
    if done.len() < 2 {
        return vec![];
    }
    let mut done = done;
    done.sort_by(|a, b| b.ff.unwrap_or(0.0).total_cmp(&a.ff.unwrap_or(0.0)));
    let check = |claim: &str, get: &dyn Fn(&Row) -> Option<f64>, expect_less: bool| -> Claim {
        let pts: Vec<(String, Option<f64>)> = done.iter().map(|r| (num(r.ff, 0), get(r))).collect();
        let (verdict, agrees) = stepwise(&pts, expect_less);
        Claim {
            claim: claim.to_string(),
            agrees,
            verdict,
        }
    };
    vec![
        check(
            "lower fillfactor finishes the updates faster",
            &|r| r.duration_s,
            true,
        ),
        check(
            "lower fillfactor gives a higher HOT ratio",
            &|r| r.hot_pct(),
            false,
        ),
        check(
            "lower fillfactor leaves fewer dead tuples",
            &|r| r.dead,
            true,
        ),
        check(
            "lower fillfactor starts with a larger table",
            &|r| r.heap_before,
            false,
        ),
        check(
            "lower fillfactor ends with a smaller table",
            &|r| r.heap_after,
            true,
        ),
        check(
            "lower fillfactor ends with a smaller index",
            &|r| r.idx_after,
            true,
        ),
        check(
            "lower fillfactor (higher HOT ratio) writes less WAL",
            &|r| r.wal,
            true,
        ),
    ]
}

pub(crate) fn tables(runs: &[ArmRun]) -> Result<crate::analyze::Tables> {
    let mut rows: Vec<(Row, &ArmRun)> = runs.iter().map(|r| (row(r), r)).collect();
    // The article's order: fillfactor 100 → 30.
    rows.sort_by(|a, b| {
        b.0.ff
            .partial_cmp(&a.0.ff)
            .unwrap_or(std::cmp::Ordering::Equal)
    });
    let cl = claims(&rows.iter().map(|(r, _)| r).collect::<Vec<_>>());
    let mut md = fillfactor_table(&rows);
    md.push_str(&claims_table(&cl));
    md.push_str(&published_rate(&rows));

    let findings = crate::analyze::Findings {
        claims: cl
            .iter()
            .map(|c| (c.claim.clone(), c.verdict.clone()))
            .collect(),
        ..Default::default()
    };
    let json = SpvJson {
        study: "spv",
        runs: runs_json(&rows),
        claims: cl,
        published: Published {
            requests_per_s: PUBLISHED_REQUESTS_PER_S,
        },
    };
    let charts = charts(runs, &rows)?;
    Ok(crate::analyze::Tables {
        markdown: md,
        json: serde_json::to_value(json)?,
        charts,
        findings,
    })
}

/// Study 003's tables in summary.json.
#[derive(Serialize)]
struct SpvJson {
    study: &'static str,
    runs: Vec<RunJson>,
    claims: Vec<Claim>,
    published: Published,
}

/// The article's one printed figure.
#[derive(Serialize)]
struct Published {
    requests_per_s: f64,
}

/// A claim of the article and our verdict on it.
#[derive(Serialize)]
struct Claim {
    claim: String,
    agrees: Option<bool>,
    verdict: String,
}

/// One run's figures.
#[derive(Serialize)]
struct RunJson {
    arm: String,
    dir: std::path::PathBuf,
    identity: Identity,
    fillfactor: std::collections::BTreeMap<String, u32>,
    status: String,
    duration_s: Option<f64>,
    statements_per_s: Option<f64>,
    rows_per_s: Option<f64>,
    wal_bytes: Option<f64>,
    /// The one table, by name.
    tables: std::collections::BTreeMap<&'static str, TableJson>,
}

/// The updated table's counters and sizes.
#[derive(Serialize)]
struct TableJson {
    n_tup_upd: Option<f64>,
    n_tup_hot_upd: Option<f64>,
    n_tup_newpage_upd: Option<f64>,
    hot_pct: Option<f64>,
    newpage_pct: Option<f64>,
    n_live_tup: Option<f64>,
    n_dead_tup: Option<f64>,
    heap_bytes_before: Option<f64>,
    heap_bytes_after: Option<f64>,
    index_bytes_before: Option<f64>,
    index_bytes_after: Option<f64>,
}

/// The runs' figures as summary.json carries them.
fn runs_json(rows: &[(Row, &ArmRun)]) -> Vec<RunJson> {
    rows.iter()
        .map(|(r, a)| RunJson {
            arm: r.arm.clone(),
            dir: a.dir.clone(),
            identity: identity(a),
            fillfactor: a.plan.arm.fillfactor.clone(),
            status: r.status.clone(),
            duration_s: r.duration_s,
            statements_per_s: r.statements_per_s,
            rows_per_s: r.rows_per_s,
            wal_bytes: r.wal,
            tables: [(
                TABLE,
                TableJson {
                    n_tup_upd: r.upd,
                    n_tup_hot_upd: r.hot,
                    n_tup_newpage_upd: r.newpage,
                    hot_pct: r.hot_pct(),
                    newpage_pct: r.newpage_pct(),
                    n_live_tup: r.live,
                    n_dead_tup: r.dead,
                    heap_bytes_before: r.heap_before,
                    heap_bytes_after: r.heap_after,
                    index_bytes_before: r.idx_before,
                    index_bytes_after: r.idx_after,
                },
            )]
            .into(),
        })
        .collect()
}

/// The study's bar charts (one bar per fillfactor) and the per-second charts of every run.
fn charts(runs: &[ArmRun], rows: &[(Row, &ArmRun)]) -> Result<Vec<(String, String)>> {
    let labels: Vec<String> = rows
        .iter()
        .map(|(r, _)| format!("ff {}", num(r.ff, 0)))
        .collect();
    let series = |f: &dyn Fn(&Row) -> Option<f64>| -> Vec<f64> {
        rows.iter().map(|(r, _)| f(r).unwrap_or(0.0)).collect()
    };
    let charts = vec![
        (
            "hot_pct.svg".to_string(),
            bar_chart(
                "HOT updates (% of n_tup_upd)",
                &labels,
                &series(&|r| r.hot_pct()),
                "%",
            ),
        ),
        (
            "wal.svg".to_string(),
            bar_chart(
                "WAL written (MiB)",
                &labels,
                &series(&|r| r.wal.map(|w| w / 1048576.0)),
                "MiB",
            ),
        ),
        (
            "table_after.svg".to_string(),
            bar_chart(
                "Table size after the updates (KiB)",
                &labels,
                &series(&|r| r.heap_after.map(|b| b / 1024.0)),
                "KiB",
            ),
        ),
        (
            "dead_tuples_after.svg".to_string(),
            bar_chart(
                "Dead tuples after the updates",
                &labels,
                &series(&|r| r.dead),
                "",
            ),
        ),
    ];
    let per_s = |r: &ArmRun| per_second(r, "tps");
    let mut charts = charts;
    charts.extend(crate::analyze::charts::standard(
        runs,
        &[TABLE],
        TABLE,
        ("statements/s, 1-s resolution", &per_s),
    )?);
    let latency: Vec<crate::analyze::charts::Line> = runs
        .iter()
        .map(|r| (r.arm(), per_second(r, "latency_avg_ms")))
        .collect();
    charts.push((
        "latency_avg.svg".into(),
        crate::analyze::charts::line_chart(
            "Mean latency per second (pgbench's aggregate log keeps no percentiles)",
            "seconds since pgbench started",
            "mean latency, ms",
            &latency,
        )?,
    ));
    Ok(charts)
}

/// One column of a run's workload.csv (pgbench's 1-s aggregate log), by second since its start.
fn per_second(r: &ArmRun, column: &str) -> Vec<(f64, f64)> {
    r.workload_column(column)
        .into_iter()
        .map(|(t, v, _)| (t, v))
        .collect()
}

/// Study 003's table: one row per run, fillfactor 100 first.
fn fillfactor_table(rows: &[(Row, &ArmRun)]) -> String {
    let header = [
        "run",
        "fillfactor",
        "status",
        "seconds",
        "statements/s",
        "rows/s",
        "HOT %",
        "new-page %",
        "live tuples",
        "dead tuples",
        "table before",
        "table after",
        "index before",
        "index after",
        "WAL",
    ];
    let md_rows: Vec<Vec<String>> = rows
        .iter()
        .map(|(r, _)| {
            vec![
                r.arm.clone(),
                num(r.ff, 0),
                r.status.clone(),
                num(r.duration_s, 2),
                num(r.statements_per_s, 1),
                num(r.rows_per_s, 0),
                num(r.hot_pct(), 1),
                num(r.newpage_pct(), 1),
                num(r.live, 0),
                num(r.dead, 0),
                bytes(r.heap_before),
                bytes(r.heap_after),
                bytes(r.idx_before),
                bytes(r.idx_after),
                bytes(r.wal),
            ]
        })
        .collect();
    let mut md = String::from("## Study 003: fillfactor, HOT updates and single-page vacuum\n\n");
    md.push_str(&md_table(&header, &md_rows));
    md.push_str("\nHOT % and new-page % are shares of `n_tup_upd` over the measured window; ");
    md.push_str("sizes are `pg_relation_size` / `pg_indexes_size` at its first and last sample; ");
    md.push_str("WAL is the insert-LSN difference.\n\n");
    md
}

/// The article's claims, each checked step by step against these runs.
fn claims_table(cl: &[Claim]) -> String {
    let mut md = String::new();
    if !cl.is_empty() {
        md.push_str("### The article's claims, checked against these runs\n\n");
        let claim_rows: Vec<Vec<String>> = cl
            .iter()
            .map(|c| vec![c.claim.clone(), c.verdict.clone()])
            .collect();
        md.push_str(&md_table(&["claim (003)", "ours"], &claim_rows));
    }
    md
}

/// The one rate the article publishes, beside ours.
fn published_rate(rows: &[(Row, &ArmRun)]) -> String {
    let best_rate = rows
        .iter()
        .filter_map(|(r, _)| r.statements_per_s)
        .fold(None::<f64>, |a, b| Some(a.map_or(b, |a| a.max(b))));
    format!(
        "\nPublished: {PUBLISHED_REQUESTS_PER_S} requests/s at one fillfactor the article does not name \
         ({} rows/s); ours ranged up to {} statements/s. Absolute rates depend on the machine; \
         the article's other results are charts without values.\n",
        PUBLISHED_REQUESTS_PER_S * 1000.0,
        num(best_rate, 1)
    )
}

impl crate::analyze::StudyTables for super::size::SpvSize {
    const THROUGHPUT: crate::analyze::Throughput = crate::analyze::Throughput {
        label: "statements/s",
        decimals: 1,
    };

    fn headline(r: &ArmRun) -> crate::analyze::Headline {
        let w: Option<WorkloadJson> = r.workload_as();
        crate::analyze::Headline {
            throughput: w.as_ref().map(|w| w.statements_per_s),
            window_s: w.as_ref().map(|w| w.duration_s),
            latency_ms: [None; 3],
            command: w.map(|w| w.command),
            warehouses: None,
            clients: match &r.plan.size_spec {
                Some(crate::study::Size::Spv(s)) => s.clients.map(f64::from),
                _ => None,
            },
        }
    }

    fn tables(runs: &[ArmRun]) -> Result<crate::analyze::Tables> {
        tables(runs)
    }
}
