//! `analyze NEW… --baseline OLD…`: per arm and headline figure, the baseline's and today's
//! value, the change, and a verdict that respects noise, plus what differs between the two sides'
//! fingerprints.
//!
//! The verdict: "changed" only when the two sets of repeats do not overlap (every new run above
//! every baseline run, or below) and the means differ by at least the minimum change; else
//! "within noise". With two repeats a side there is no distribution to test, and a t-test on
//! n = 2 would claim a confidence it does not have; non-overlapping ranges are what a reader can
//! check by eye in the every-run table. A side with one run has no range: its verdict says so.

use std::collections::{BTreeMap, BTreeSet};

use anyhow::{bail, Result};

use super::load::ArmRun;
use super::results::{arm_stats, RunRow, HEADLINES};
use super::{fingerprint, md_table, num};
use crate::stats::Stats;

/// The default minimum change (%) a verdict calls "changed".
pub const DEFAULT_MIN_CHANGE: f64 = 5.0;

/// One figure's comparison.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub(crate) struct Verdict {
    pub(crate) arm: String,
    pub(crate) figure: String,
    #[serde(rename = "baseline")]
    pub(crate) base: Option<Stats>,
    pub(crate) new: Option<Stats>,
    pub(crate) change_pct: Option<f64>,
    pub(crate) verdict: String,
}

/// The verdict on two sets of repeats (see the module's comment).
pub(crate) fn verdict(
    base: Option<Stats>,
    new: Option<Stats>,
    min_change_pct: f64,
) -> (Option<f64>, String) {
    let (Some(b), Some(n)) = (base, new) else {
        return (None, "not measured".into());
    };
    let change = (b.mean != 0.0).then(|| 100.0 * (n.mean - b.mean) / b.mean.abs());
    let big = change.is_some_and(|c| c.abs() >= min_change_pct) || (b.mean == 0.0 && n.mean != 0.0);
    let apart = n.min > b.max || n.max < b.min;
    let v = if b.n < 2 || n.n < 2 {
        if big {
            "beyond the minimum; noise unknown (one run a side)"
        } else {
            "below the minimum (one run a side)"
        }
    } else if apart && big {
        "changed"
    } else {
        "within noise"
    };
    (change, v.into())
}

/// One arm's headline figures, baseline against new: the per-arm aggregates are a group-by over
/// each side's runs table.
fn arm_verdicts(
    arm: &str,
    nr: &[RunRow],
    br: &[RunRow],
    min_change_pct: f64,
) -> Result<Vec<Verdict>> {
    let (ns, bs) = (arm_stats(nr)?, arm_stats(br)?);
    let mut out = vec![];
    for (column, label) in HEADLINES {
        let (bst, nst) = (bs.get(arm, column), ns.get(arm, column));
        if bst.is_none() && nst.is_none() {
            continue;
        }
        let figure = if *column == "throughput" {
            nr[0].metric.clone()
        } else {
            label.to_string()
        };
        let (change, v) = verdict(bst, nst, min_change_pct);
        out.push(Verdict {
            arm: arm.to_string(),
            figure,
            base: bst,
            new: nst,
            change_pct: change,
            verdict: v,
        });
    }
    Ok(out)
}

impl Verdict {
    /// The row of the comparison table: arm, figure, baseline, new, change, verdict.
    fn row(&self) -> Vec<String> {
        let cell = |s: Option<Stats>| super::spread_cell(s, |x| num(Some(x), decimals(x)));
        vec![
            self.arm.clone(),
            self.figure.clone(),
            cell(self.base),
            cell(self.new),
            self.change_pct
                .map(|c| format!("{c:+.1} %"))
                .unwrap_or_else(|| "–".into()),
            if self.verdict == "changed" {
                "**changed**".into()
            } else {
                self.verdict.clone()
            },
        ]
    }
}

/// The comparison of `new` with `base`: Markdown and JSON. Refused in one line when the
/// baseline holds no run of the new runs' study.
pub fn compare(
    new: &[ArmRun],
    base: &[ArmRun],
    min_change_pct: f64,
) -> Result<(String, BaselineJson)> {
    let studies: BTreeSet<&str> = new.iter().map(|r| r.plan.study.as_str()).collect();
    let base: Vec<&ArmRun> = base
        .iter()
        .filter(|r| studies.contains(r.plan.study.as_str()))
        .collect();
    if base.is_empty() {
        bail!(
            "--baseline: no run of study {} among the baseline directories; pass runs of the same study (`cargo xtask history {}` lists them)",
            studies.iter().copied().collect::<Vec<_>>().join(", "),
            studies.iter().next().copied().unwrap_or("")
        );
    }
    let complete = |r: &&ArmRun| r.status() == "complete";
    let mut arms: Vec<String> = vec![];
    for r in new {
        if !arms.contains(&r.arm()) {
            arms.push(r.arm());
        }
    }
    let mut verdicts = vec![];
    let mut diffs = vec![];
    let mut missing = vec![];
    for arm in &arms {
        let n: Vec<&ArmRun> = new
            .iter()
            .filter(|r| r.arm() == *arm)
            .filter(complete)
            .collect();
        let b: Vec<&ArmRun> = base
            .iter()
            .copied()
            .filter(|r| r.arm() == *arm)
            .filter(complete)
            .collect();
        if b.is_empty() || n.is_empty() {
            missing.push(arm.clone());
            continue;
        }
        diffs.push((arm.clone(), differences(&b, &n)));
        let nr: Vec<RunRow> = n.iter().map(|r| RunRow::of(r)).collect();
        let br: Vec<RunRow> = b.iter().map(|r| RunRow::of(r)).collect();
        verdicts.extend(arm_verdicts(arm, &nr, &br, min_change_pct)?);
    }
    let rows: Vec<Vec<String>> = verdicts.iter().map(Verdict::row).collect();
    let mut md = String::from("## Compared with the baseline\n\n");
    md.push_str(&format!(
        "Baseline: {} run(s) in {}. A figure is **changed** only when the two sets of repeats do not overlap and the means differ by {min_change_pct} % or more (`--min-change`); otherwise it is within noise. Each cell: mean (min–max, spread) over the arm's complete runs.\n\n",
        base.len(),
        dirs_of(&base)
    ));
    for (arm, d) in &diffs {
        md.push_str(&format!("- {arm}: {d}\n"));
    }
    md.push('\n');
    md.push_str(&md_table(
        &["arm", "figure", "baseline", "new", "change", "verdict"],
        &rows,
    ));
    if !missing.is_empty() {
        md.push_str(&format!(
            "\nNo complete run on both sides for: {}.\n",
            missing.join(", ")
        ));
    }
    let j = BaselineJson {
        min_change_pct,
        baseline_runs: base.iter().map(|r| r.dir.display().to_string()).collect(),
        differs: diffs
            .into_iter()
            .map(|(arm, differs)| ArmDiffers { arm, differs })
            .collect(),
        figures: verdicts,
        no_baseline: missing,
    };
    Ok((md, j))
}

/// summary.json's `baseline`: the comparison with earlier runs.
#[derive(Debug, Clone, serde::Serialize)]
pub struct BaselineJson {
    pub(crate) min_change_pct: f64,
    pub(crate) baseline_runs: Vec<String>,
    /// Per arm, the fingerprint parts that differ between the two sides, as one line.
    pub(crate) differs: Vec<ArmDiffers>,
    pub(crate) figures: Vec<Verdict>,
    /// Arms without complete runs on both sides.
    pub(crate) no_baseline: Vec<String>,
}

/// What differs between an arm's baseline runs and its new ones.
#[derive(Debug, Clone, serde::Serialize)]
pub(crate) struct ArmDiffers {
    pub(crate) arm: String,
    pub(crate) differs: String,
}

/// Decimals that keep 3–4 significant digits.
fn decimals(x: f64) -> usize {
    match x.abs() {
        a if a >= 100.0 => 0,
        a if a >= 10.0 => 1,
        _ => 2,
    }
}

/// The sweep directories the baseline came from.
fn dirs_of(runs: &[&ArmRun]) -> String {
    let mut d: Vec<String> = runs
        .iter()
        .filter_map(|r| r.dir.parent())
        .map(|p| p.display().to_string())
        .collect();
    d.sort();
    d.dedup();
    d.join(", ")
}

/// What differs between the baseline's fingerprints and the new ones: "PostgreSQL 18.6 → 18.7,
/// same host", or "same fingerprint".
fn differences(base: &[&ArmRun], new: &[&ArmRun]) -> String {
    let side = |runs: &[&ArmRun]| -> BTreeMap<&'static str, BTreeSet<String>> {
        let mut m: BTreeMap<&'static str, BTreeSet<String>> = BTreeMap::new();
        for r in runs {
            for (k, v) in fingerprint::parts(r) {
                m.entry(k).or_default().insert(v);
            }
        }
        m
    };
    let (b, n) = (side(base), side(new));
    let show = |s: &BTreeSet<String>| {
        let v: Vec<String> = s.iter().map(|x| fingerprint::cut(x, 60)).collect();
        v.join(" / ")
    };
    let mut out = vec![];
    for (k, bv) in &b {
        let nv = n.get(k).cloned().unwrap_or_default();
        let name = k.split_once(' ').map(|(_, l)| l).unwrap_or(k);
        if *bv != nv {
            out.push(format!("{name} {} → {}", show(bv), show(&nv)));
        }
    }
    if out.is_empty() {
        return "same fingerprint (study, size, arm, settings, PostgreSQL, host, hotlab)".into();
    }
    if b.get("7 host") == n.get("7 host") {
        out.push("same host".into());
    }
    out.join("; ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn verdicts_respect_noise_and_the_minimum() {
        let v = |b: &[f64], n: &[f64]| verdict(Stats::of(b), Stats::of(n), 5.0);
        // Overlapping repeats: within noise, however large the change of the means.
        assert_eq!(v(&[100.0, 140.0], &[130.0, 170.0]).1, "within noise");
        // Apart and beyond the minimum: changed.
        let (c, verdict) = v(&[100.0, 102.0], &[120.0, 125.0]);
        assert_eq!(verdict, "changed");
        assert!((c.unwrap() - 21.29).abs() < 0.01, "{c:?}");
        // Apart but below the minimum: within noise.
        assert_eq!(v(&[100.0, 100.5], &[101.0, 101.5]).1, "within noise");
        // One run a side: said.
        assert!(v(&[100.0], &[150.0]).1.contains("noise unknown"));
        assert_eq!(v(&[], &[1.0]).1, "not measured");
    }
}
