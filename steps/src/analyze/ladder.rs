//! The sweep ladder (`just sweep TABLE FF…`): per fillfactor of the swept table, HOT %, new-page
//! %, same-page non-HOT %, throughput, heap growth and post-run VACUUM seconds, and the
//! recommendation: the highest fillfactor whose new-page share is at or below the threshold.

use std::collections::BTreeMap;

use serde_json::{json, Value};

use super::load::ArmRun;
use super::{bytes, md_table, num, pct};

/// The swept table, from the sweep.json beside the runs.
pub fn swept_table(runs: &[ArmRun]) -> Option<String> {
    runs.iter().find_map(|r| crate::rundir::swept_table(&r.dir))
}

#[derive(Default)]
struct Step {
    runs: Vec<String>,
    statuses: Vec<String>,
    upd: f64,
    hot: f64,
    newpage: f64,
    throughput: Vec<f64>,
    growth: Vec<f64>,
    vacuum: Vec<f64>,
}

fn mean(v: &[f64]) -> Option<f64> {
    super::Stats::of(v).map(|s| s.mean)
}

pub fn ladder(runs: &[ArmRun], table: &str, threshold: f64) -> (String, Value) {
    let tprocc = runs.iter().any(|r| r.meta["workload"] == "tprocc");
    let mut steps: BTreeMap<u32, Step> = BTreeMap::new();
    // Only the runs of the sweep itself: a comparison analysed alongside may change the same
    // table in one of its arms.
    for r in runs
        .iter()
        .filter(|r| crate::rundir::swept_table(&r.dir).as_deref() == Some(table))
    {
        let Some(ff) = r.meta["arm"]["fillfactor"][table].as_u64() else {
            continue;
        };
        let s = steps.entry(ff as u32).or_default();
        s.runs.push(r.name());
        s.statuses.push(r.status());
        if r.status() != "complete" {
            continue;
        }
        s.upd += r.table(table, "n_tup_upd").delta.unwrap_or(0.0);
        s.hot += r.table(table, "n_tup_hot_upd").delta.unwrap_or(0.0);
        s.newpage += r.table(table, "n_tup_newpage_upd").delta.unwrap_or(0.0);
        let key = if tprocc { "nopm" } else { "statements_per_s" };
        s.throughput.extend(r.workload[key].as_f64());
        let heap = r.table(table, "heap_bytes");
        if let (Some(a), Some(b)) = (heap.first, heap.last) {
            s.growth.push(b - a);
        }
        s.vacuum.extend(r.vacuum.get(table).copied());
    }
    let mut rows = vec![];
    let mut json_rows = vec![];
    let mut candidates = vec![];
    for (ff, s) in steps.iter().rev() {
        let complete = s.statuses.iter().any(|x| x == "complete");
        let (hot, newpage) = (
            pct(Some(s.hot), Some(s.upd)),
            pct(Some(s.newpage), Some(s.upd)),
        );
        let same = pct(Some(s.upd - s.hot - s.newpage), Some(s.upd));
        if complete {
            if let Some(n) = newpage {
                candidates.push((*ff, n));
            }
        }
        let status = s.statuses.join(", ");
        rows.push(vec![
            ff.to_string(),
            status.clone(),
            num(hot, 2),
            num(newpage, 2),
            num(same, 2),
            num(mean(&s.throughput), if tprocc { 0 } else { 1 }),
            bytes(mean(&s.growth)),
            num(mean(&s.vacuum), 2),
        ]);
        json_rows.push(json!({
            "fillfactor": ff, "runs": s.runs, "status": status, "n_tup_upd": s.upd,
            "hot_pct": hot, "newpage_pct": newpage, "samepage_nonhot_pct": same,
            "throughput": mean(&s.throughput), "heap_growth_bytes": mean(&s.growth),
            "vacuum_s": mean(&s.vacuum),
        }));
    }
    // Highest fillfactor first: the first at or below the threshold is the answer.
    let pick = candidates.iter().find(|(_, n)| *n <= threshold).copied();
    let (answer, text) = match pick {
        Some((ff, n)) => {
            let above: Vec<String> = candidates
                .iter()
                .filter(|(f, _)| *f > ff)
                .map(|(f, n)| format!("{n:.2} % at {f}"))
                .collect();
            let why = if above.is_empty() {
                format!("it is the highest value tried, and only {n:.2} % of {table}'s updates moved to a new page (threshold {threshold} %)")
            } else {
                format!(
                    "it is the highest value tried whose new-page share ({n:.2} %) is at or below {threshold} % (higher values: {})",
                    above.join(", ")
                )
            };
            (Some(ff), format!("Recommendation for {table}: fillfactor {ff}, because {why}. Lower values cost working set for nothing."))
        }
        None => (
            None,
            match candidates.last() {
                Some((f, n)) => format!("None of the tried values is enough for {table}: try lower (at {f} the new-page share was still {n:.2} %, threshold {threshold} %)."),
                None => format!("No completed run of the {table} sweep: nothing to recommend."),
            },
        ),
    };
    let mut md = format!("## Sweep of {table}: which fillfactor does it need?\n\n");
    md.push_str(&md_table(
        &[
            "fillfactor",
            "status",
            "HOT %",
            "new-page %",
            "same-page non-HOT %",
            if tprocc { "NOPM" } else { "statements/s" },
            "heap growth",
            "VACUUM s",
        ],
        &rows,
    ));
    md.push_str(&format!("\n{text}\n"));
    (
        md,
        json!({ "table": table, "threshold_pct": threshold, "rows": json_rows,
                "recommendation": { "fillfactor": answer, "text": text } }),
    )
}
