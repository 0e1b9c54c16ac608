//! TPROC-C's latency per arm and transaction type (merged histograms) and what its VUs' backends
//! waited on: tables and charts from workload.json's per-transaction figures.

use std::collections::BTreeMap;

use hdrhistogram::Histogram;
use serde::Serialize;

use super::super::driver::{new_histogram, TXNS};
use super::super::files::WorkloadJson;
use crate::analyze::load::ArmRun;
use crate::analyze::{charts, md_table, num};
use crate::stats::add_pairs;

/// A transaction type's latency over an arm's complete runs (summary.json `latency`).
#[derive(Debug, Clone, Serialize)]
pub(crate) struct LatencyJson {
    arm: String,
    txn: &'static str,
    count: u64,
    p50_ms: f64,
    p95_ms: f64,
    p99_ms: f64,
    max_ms: f64,
}

/// What an arm's VU backends waited on (summary.json `wait_events`).
#[derive(Debug, Clone, Serialize)]
pub(crate) struct WaitJson {
    arm: String,
    slots: f64,
    share_pct: BTreeMap<String, Option<f64>>,
}

/// Each arm's complete runs, in first-seen order.
fn complete_by_arm(runs: &[ArmRun]) -> Vec<(String, Vec<&ArmRun>)> {
    crate::analyze::by_arm(runs, ArmRun::arm, |r| r.status() == "complete")
}

/// Latency per arm and transaction: p50/p95/p99/max of the merged histograms of its complete
/// runs (older workload.json files without histograms give "–"), and per transaction type a
/// chart of its percentiles per arm on a logarithmic axis.
pub(crate) fn latency(
    runs: &[ArmRun],
) -> (String, Option<Vec<LatencyJson>>, Vec<(String, String)>) {
    let per_arm: Vec<(String, BTreeMap<&str, Histogram<u64>>)> = complete_by_arm(runs)
        .into_iter()
        .map(|(arm, rs)| {
            let mut hs = BTreeMap::new();
            for r in rs {
                let Some(w) = r.workload_as::<WorkloadJson>() else {
                    continue;
                };
                for t in TXNS {
                    if let Some(f) = w.transactions.get(t).filter(|f| !f.hist_us.is_empty()) {
                        add_pairs(hs.entry(t).or_insert_with(new_histogram), &f.hist_us);
                    }
                }
            }
            (arm, hs)
        })
        .collect();
    if per_arm.iter().all(|(_, h)| h.is_empty()) {
        return (String::new(), None, vec![]);
    }
    let ms = |h: &Histogram<u64>, q: f64| h.value_at_quantile(q) as f64 / 1000.0;
    let mut rows = vec![];
    let mut js = vec![];
    for (arm, hs) in &per_arm {
        for t in TXNS {
            let Some(h) = hs.get(t).filter(|h| !h.is_empty()) else {
                continue;
            };
            rows.push(vec![
                arm.clone(),
                t.to_string(),
                h.len().to_string(),
                format!("{:.2}", ms(h, 0.5)),
                format!("{:.2}", ms(h, 0.95)),
                format!("{:.2}", ms(h, 0.99)),
                format!("{:.2}", h.max() as f64 / 1000.0),
            ]);
            js.push(LatencyJson {
                arm: arm.clone(),
                txn: t,
                count: h.len(),
                p50_ms: ms(h, 0.5),
                p95_ms: ms(h, 0.95),
                p99_ms: ms(h, 0.99),
                max_ms: h.max() as f64 / 1000.0,
            });
        }
    }
    let mut md = String::from("## Latency per arm and transaction\n\n");
    md.push_str(&md_table(
        &[
            "arm",
            "transaction",
            "count",
            "p50 ms",
            "p95 ms",
            "p99 ms",
            "max ms",
        ],
        &rows,
    ));
    md.push_str("\nMeasured window, client side, from each arm's complete runs merged into one HdrHistogram per transaction (percentiles are never averaged).\n\n");
    let qs = [50.0, 75.0, 90.0, 95.0, 99.0, 99.5, 99.9, 99.99];
    let mut charts = vec![];
    for t in TXNS {
        let lines: Vec<charts::Line> = per_arm
            .iter()
            .filter_map(|(arm, hs)| {
                let h = hs.get(t).filter(|h| !h.is_empty())?;
                Some((
                    arm.clone(),
                    qs.iter().map(|q| (*q, ms(h, q / 100.0))).collect(),
                ))
            })
            .collect();
        if lines.is_empty() {
            continue;
        }
        let title = format!("{t} latency by percentile (each arm's runs merged)");
        if let Ok(svg) = charts::percentile_chart(&title, &lines) {
            charts.push((format!("latency_{t}.svg"), svg));
        }
    }
    (md, Some(js), charts)
}

/// What the VUs' backends were doing over the measured window, per arm (the share of samples ×
/// VUs, summed over its complete runs): on CPU, waiting on an event, or idle waiting for the
/// driver. The ten largest, and the rest summed.
pub(crate) fn waits(runs: &[ArmRun]) -> (String, Option<Vec<WaitJson>>) {
    // Per arm: (arm, samples per state summed over its runs, sample slots = samples × VUs).
    let per_arm: Vec<(String, BTreeMap<String, f64>, f64)> = complete_by_arm(runs)
        .into_iter()
        .map(|(arm, rs)| {
            let (mut counts, mut slots) = (BTreeMap::new(), 0.0);
            for r in rs {
                let Some(w) = r.workload_as::<WorkloadJson>() else {
                    continue;
                };
                let Some(e) = &w.wait_events else { continue };
                slots += e.samples as f64 * w.vus.max(1) as f64;
                for (k, v) in &e.counts {
                    *counts.entry(k.clone()).or_default() += *v as f64;
                }
            }
            (arm, counts, slots)
        })
        .filter(|(_, _, slots)| *slots > 0.0)
        .collect();
    if per_arm.is_empty() {
        return (String::new(), None);
    }
    let share = |arm: &(String, BTreeMap<String, f64>, f64), k: &str| {
        (arm.2 > 0.0).then(|| 100.0 * arm.1.get(k).copied().unwrap_or(0.0) / arm.2)
    };
    let mut events: Vec<(String, f64)> = per_arm
        .iter()
        .flat_map(|(_, m, _)| m.keys().cloned())
        .collect::<std::collections::BTreeSet<_>>()
        .into_iter()
        .map(|k| {
            let top = per_arm
                .iter()
                .filter_map(|a| share(a, &k))
                .fold(0.0, f64::max);
            (k, top)
        })
        .collect();
    events.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    let (top, rest) = events.split_at(events.len().min(10));
    let mut rows: Vec<Vec<String>> = top
        .iter()
        .map(|(k, _)| {
            std::iter::once(k.clone())
                .chain(per_arm.iter().map(|a| num(share(a, k), 1)))
                .collect()
        })
        .collect();
    if !rest.is_empty() {
        rows.push(
            std::iter::once(format!("{} others", rest.len()))
                .chain(
                    per_arm
                        .iter()
                        .map(|a| num(Some(rest.iter().filter_map(|(k, _)| share(a, k)).sum()), 1)),
                )
                .collect(),
        );
    }
    let header: Vec<String> = std::iter::once("VU backends: state or wait event".to_string())
        .chain(per_arm.iter().map(|(a, _, _)| format!("{a} %")))
        .collect();
    let header: Vec<&str> = header.iter().map(String::as_str).collect();
    let mut md = String::from("## What the workload's backends waited on\n\n");
    md.push_str(&md_table(&header, &rows));
    md.push_str("\nShare of (samples × VUs) over the measured window, sampled every 100 ms from pg_stat_activity: `CPU` is active with no wait event (running, or waiting for a core), `client (idle)` is waiting for the driver's next call (client CPU and the round trip), the rest are wait events. Where one arm's time goes shows what limits it on this machine.\n\n");
    let js: Vec<WaitJson> = per_arm
        .iter()
        .map(|a| WaitJson {
            arm: a.0.clone(),
            slots: a.2,
            share_pct: a.1.keys().map(|k| (k.clone(), share(a, k))).collect(),
        })
        .collect();
    (md, Some(js))
}
