//! The sweep ladder (`just sweep TABLE FF…`): per fillfactor of the swept table, HOT %, new-page
//! %, same-page non-HOT %, throughput, heap growth and post-run VACUUM seconds, and the
//! recommendation (`recommend`, the rule docs/advise.md states): step the fillfactor down while a
//! step still buys something, stop where it saturates, and say when the table is a poor
//! candidate at all.

use std::collections::BTreeMap;

use super::load::ArmRun;
use super::{bytes, md_table, num, pct};
use crate::stats::mean_of;

/// The swept table, from the sweep.json beside the runs.
pub(crate) fn swept_table(runs: &[ArmRun]) -> Option<String> {
    runs.iter().find_map(|r| r.plan.sweep_table.clone())
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
    /// Live rows of the table at the end of its runs (summed like `upd`).
    rows: f64,
}

/// The sweep's runs of `table` by fillfactor: their names and statuses, and the complete ones'
/// counters, throughput, heap growth and VACUUM time.
fn steps_of(runs: &[ArmRun], table: &str) -> BTreeMap<u32, Step> {
    let mut steps: BTreeMap<u32, Step> = BTreeMap::new();
    // Only the runs of the sweep itself: a comparison analysed alongside may change the same
    // table in one of its arms.
    for r in runs
        .iter()
        .filter(|r| r.plan.sweep_table.as_deref() == Some(table))
    {
        let Some(ff) = r.fillfactor(table).map(|f| f.round() as u64) else {
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
        s.rows += r.table(table, "n_live_tup").last.unwrap_or(0.0);
        s.throughput.extend(super::headline(r).throughput);
        let heap = r.table(table, "heap_bytes");
        if let (Some(a), Some(b)) = (heap.first, heap.last) {
            s.growth.push(b - a);
        }
        s.vacuum.extend(r.vacuum.get(table).copied());
    }
    steps
}

/// The sweep ladder of `table`: its Markdown and summary.json's `ladder` (None without runs).
pub(crate) fn ladder(runs: &[ArmRun], table: &str, threshold: f64) -> Option<(String, LadderJson)> {
    // The throughput each workload reports: NOPM, pgbench scripts' TPS, study 003's statements/s.
    let first = runs.first()?;
    let super::Throughput { label, decimals } = super::throughput(first.plan.workload);
    let steps = steps_of(runs, table);
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
            if let (Some(n), Some(same)) = (newpage, same) {
                candidates.push(Rung {
                    fillfactor: *ff,
                    newpage_pct: n,
                    samepage_nonhot_pct: same,
                    updates_per_row: (s.rows > 0.0).then(|| s.upd / s.rows),
                });
            }
        }
        let status = s.statuses.join(", ");
        rows.push(vec![
            ff.to_string(),
            status.clone(),
            num(hot, 2),
            num(newpage, 2),
            num(same, 2),
            num(mean_of(&s.throughput), decimals),
            bytes(mean_of(&s.growth)),
            num(mean_of(&s.vacuum), 2),
        ]);
        json_rows.push(LadderRow {
            fillfactor: *ff,
            runs: s.runs.clone(),
            status,
            n_tup_upd: s.upd,
            hot_pct: hot,
            newpage_pct: newpage,
            samepage_nonhot_pct: same,
            throughput: mean_of(&s.throughput),
            heap_growth_bytes: mean_of(&s.growth),
            vacuum_s: mean_of(&s.vacuum),
        });
    }
    let rec = recommend(table, &candidates, threshold);
    let (answer, text) = (rec.fillfactor, rec.text.clone());
    let mut md = format!("## Sweep of {table}: which fillfactor does it need?\n\n");
    md.push_str(&md_table(
        &[
            "fillfactor",
            "status",
            "HOT %",
            "new-page %",
            "same-page non-HOT %",
            label,
            "heap growth",
            "VACUUM s",
        ],
        &rows,
    ));
    md.push_str(&format!("\n{text}\n"));
    Some((
        md,
        LadderJson {
            table: table.to_string(),
            threshold_pct: threshold,
            min_gain_pts: MIN_GAIN_PTS,
            rows: json_rows,
            recommendation: Recommendation {
                fillfactor: answer,
                verdict: rec.verdict,
                text,
            },
        },
    ))
}

/// One tried fillfactor of a table, as the recommendation sees it.
#[derive(Debug, Clone, PartialEq)]
pub struct Rung {
    pub fillfactor: u32,
    /// Shares of the table's updates, 0–100.
    pub newpage_pct: f64,
    pub samepage_nonhot_pct: f64,
    /// Updates per live row over the window, where known.
    pub updates_per_row: Option<f64>,
}

/// A step down must cut the new-page share by at least this many points to be worth its
/// working set ("use the lowest reserve that works": past saturation a lower value buys nothing
/// and is still paid for).
pub(crate) const MIN_GAIN_PTS: f64 = 0.5;
/// Same-page non-HOT updates at or above this share mean an indexed column changes: no
/// fillfactor can make those HOT.
pub(crate) const INDEXED_PCT: f64 = 5.0;
/// A table updated this many times per row whose new-page share is at most `HEALTHY_NEWPAGE_PCT`
/// keeps itself healthy by pruning (the article's district and warehouse).
pub(crate) const BUSY_UPDATES_PER_ROW: f64 = 10.0;
pub(crate) const HEALTHY_NEWPAGE_PCT: f64 = 10.0;

/// summary.json's `ladder`: the swept table, the rule's thresholds, a row per fillfactor tried
/// and the recommendation.
#[derive(Debug, Clone, serde::Serialize)]
pub(crate) struct LadderJson {
    pub(crate) table: String,
    pub(crate) threshold_pct: f64,
    pub(crate) min_gain_pts: f64,
    pub(crate) rows: Vec<LadderRow>,
    pub(crate) recommendation: Recommendation,
}

/// One fillfactor of the sweep (its complete runs summed or averaged).
#[derive(Debug, Clone, serde::Serialize)]
pub(crate) struct LadderRow {
    pub(crate) fillfactor: u32,
    pub(crate) runs: Vec<String>,
    pub(crate) status: String,
    pub(crate) n_tup_upd: f64,
    pub(crate) hot_pct: Option<f64>,
    pub(crate) newpage_pct: Option<f64>,
    pub(crate) samepage_nonhot_pct: Option<f64>,
    pub(crate) throughput: Option<f64>,
    pub(crate) heap_growth_bytes: Option<f64>,
    pub(crate) vacuum_s: Option<f64>,
}

/// The answer for one table.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Recommendation {
    pub fillfactor: Option<u32>,
    /// "set", "leave" (poor candidate: keep 100), "indexed" (fix the index, not the
    /// fillfactor), "try lower", "plateau" or "none".
    pub verdict: &'static str,
    pub text: String,
}

/// The rule: (1) if at the highest value tried `INDEXED_PCT` or more of the updates stayed on
/// their page without HOT, an indexed column changes: no fillfactor helps. (2) If the table takes
/// `BUSY_UPDATES_PER_ROW` or more updates per row and its new-page share at the highest value is
/// already at most `HEALTHY_NEWPAGE_PCT`, pruning keeps it healthy: leave it at 100. (3)
/// Otherwise walk from the highest value down, stepping while the next lower value cuts the
/// new-page share by at least `MIN_GAIN_PTS` points; where it stops, the value is the answer if
/// its new-page share is at most `threshold`; if the walk ran out of values above the threshold,
/// try lower; if it stopped on a plateau above the threshold, fillfactor is not what moves rows.
pub fn recommend(table: &str, rungs: &[Rung], threshold: f64) -> Recommendation {
    let mut r: Vec<&Rung> = rungs.iter().collect();
    r.sort_by_key(|x| std::cmp::Reverse(x.fillfactor));
    let Some(top) = r.first() else {
        return Recommendation {
            fillfactor: None,
            verdict: "none",
            text: format!("No completed run of the {table} sweep: nothing to recommend."),
        };
    };
    if top.samepage_nonhot_pct >= INDEXED_PCT {
        return Recommendation {
            fillfactor: None,
            verdict: "indexed",
            text: format!(
                "{table} is a poor candidate: {:.2} % of its updates stayed on their page and still were not HOT at fillfactor {}, so they change an indexed column; no fillfactor makes those HOT. Drop or change the index on the updated column first.",
                top.samepage_nonhot_pct, top.fillfactor
            ),
        };
    }
    if let Some(upr) = top.updates_per_row {
        if upr >= BUSY_UPDATES_PER_ROW && top.newpage_pct <= HEALTHY_NEWPAGE_PCT {
            return Recommendation {
                fillfactor: Some(100),
                verdict: "leave",
                text: format!(
                    "{table} is a poor candidate: {upr:.0} updates per row and only {:.2} % of them moved to a new page at fillfactor {}: pruning keeps a constantly updated page healthy, leave it at 100 (the article's district and warehouse).",
                    top.newpage_pct, top.fillfactor
                ),
            };
        }
    }
    let mut i = 0;
    while i + 1 < r.len() && r[i].newpage_pct - r[i + 1].newpage_pct >= MIN_GAIN_PTS {
        i += 1;
    }
    let at = r[i];
    let steps: Vec<String> = r
        .iter()
        .map(|x| format!("{:.2} % at {}", x.newpage_pct, x.fillfactor))
        .collect();
    let steps = steps.join(", ");
    if at.newpage_pct <= threshold {
        let why = if i + 1 < r.len() {
            format!(
                "stepping down to {} would cut the new-page share by only {:.2} points (less than {MIN_GAIN_PTS}), and at {} it is already {:.2} %, at most {threshold} %",
                r[i + 1].fillfactor,
                at.newpage_pct - r[i + 1].newpage_pct,
                at.fillfactor,
                at.newpage_pct
            )
        } else if i == 0 {
            format!(
                "it is the only value tried and {:.2} % of the updates moved to a new page (at most {threshold} %)",
                at.newpage_pct
            )
        } else {
            format!(
                "every step down to it cut the new-page share by {MIN_GAIN_PTS} points or more, and at {} it is {:.2} %, at most {threshold} %",
                at.fillfactor, at.newpage_pct
            )
        };
        return Recommendation {
            fillfactor: Some(at.fillfactor),
            verdict: "set",
            text: format!(
                "Recommendation for {table}: fillfactor {}, because {why} (new-page share: {steps}). Lower values cost working set for nothing.",
                at.fillfactor
            ),
        };
    }
    if i + 1 == r.len() {
        Recommendation {
            fillfactor: None,
            verdict: "try lower",
            text: format!(
                "None of the tried values is enough for {table}: try lower (at {} the new-page share was still {:.2} %, above {threshold} %; new-page share: {steps}).",
                at.fillfactor, at.newpage_pct
            ),
        }
    } else {
        Recommendation {
            fillfactor: None,
            verdict: "plateau",
            text: format!(
                "Fillfactor does not fix {table}: its new-page share stays above {threshold} % and stops falling below {} ({steps}); rows move for another reason (rows that grow, long transactions holding old versions).",
                at.fillfactor
            ),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rung(ff: u32, newpage: f64) -> Rung {
        Rung {
            fillfactor: ff,
            newpage_pct: newpage,
            samepage_nonhot_pct: 0.0,
            updates_per_row: None,
        }
    }

    #[test]
    fn verdicts() {
        let r = recommend("t", &[rung(100, 30.0), rung(90, 10.0)], 1.0);
        assert_eq!(r.verdict, "try lower");
        let r = recommend("t", &[rung(100, 30.0), rung(90, 29.9), rung(80, 29.8)], 1.0);
        assert_eq!(r.verdict, "plateau");
        let mut ix = rung(100, 1.0);
        ix.samepage_nonhot_pct = 40.0;
        assert_eq!(recommend("t", &[ix], 1.0).verdict, "indexed");
        assert_eq!(recommend("t", &[], 1.0).verdict, "none");
        let r = recommend("t", &[rung(100, 0.2), rung(90, 0.0)], 1.0);
        assert_eq!((r.verdict, r.fillfactor), ("set", Some(100)));
    }
}
