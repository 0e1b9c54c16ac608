//! The short answer a study recipe ends with (`analyze --brief`): at most `MAX_LINES` lines, read
//! from the analysis already made — what ran, each claim's verdict, the recommendation, whether
//! the runs were in the article's regime, the noise caveat, and where the full summary is.

use std::path::Path;

use super::baseline::BaselineJson;
use super::{Analysis, Findings};

/// The most lines the answer prints.
pub(crate) const MAX_LINES: usize = 15;

/// Markdown emphasis and code marks out of a line printed on a terminal.
fn plain(s: &str) -> String {
    s.replace("**", "").replace('`', "")
}

/// `--baseline`: how many figures changed (and which), how many are within noise.
fn baseline_line(b: Option<&BaselineJson>) -> Option<String> {
    let figs = &b?.figures;
    let changed: Vec<String> = figs
        .iter()
        .filter(|f| f.verdict == "changed")
        .map(|f| format!("{} {}", f.arm, f.figure))
        .collect();
    let noise = figs.iter().filter(|f| f.verdict == "within noise").count();
    let unknown = figs.len() - changed.len() - noise;
    Some(format!(
        "Against the baseline: {} changed{}, {noise} within noise, {unknown} without a noise test (one run a side or not measured).",
        changed.len(),
        if changed.is_empty() { String::new() } else { format!(" ({})", changed.join(", ")) }
    ))
}

/// Whether the runs were in the article's regime (the mechanism's or the study's verdict).
fn regime_line(f: &Findings) -> Option<String> {
    let (in_regime, why) = f.regime.as_ref()?;
    Some(match in_regime {
        Some(true) => format!("In the article's regime: {why}."),
        Some(false) => {
            format!("Not in the article's regime: {why}; compare directions, not levels.")
        }
        None => format!("Regime: {why}."),
    })
}

/// The answer's lines (no trailing newlines), at most `MAX_LINES`.
pub fn lines(a: &Analysis, out: &Path) -> Vec<String> {
    let mut head = vec![];
    let Some(first) = a.runs.first() else {
        return vec!["no runs".into()];
    };
    let complete = a.runs.iter().filter(|r| r.status() == "complete").count();
    let arms = super::by_arm(&a.runs, |r| r.arm(), |r| r.status() == "complete");
    head.push(format!(
        "{} — size {}: {} run(s) of {} arm(s), {complete} complete",
        first.plan.label(),
        first.plan.size,
        a.runs.len(),
        arms.len()
    ));
    let (f, sections) = (&a.findings, &a.summary.sections);
    let mut findings = vec![];
    // The article's claims, where the study checks them.
    for (claim, verdict) in &f.claims {
        findings.push(format!("- {}: {}", plain(claim), plain(verdict)));
    }
    // TPROC-C: each arm's throughput against the first, beside the article's.
    let base = f.base_arm.as_deref().unwrap_or("the first arm");
    for (name, gain, published) in &f.gains {
        let article = published
            .map(|p| {
                let dir = super::direction(Some(*gain), Some(p));
                format!(" (article {p:+.1} %: {})", plain(&dir))
            })
            .unwrap_or_default();
        findings.push(format!(
            "- {name}: NOPM {gain:+.1} % against {base}{article}"
        ));
    }
    let mut tail = vec![];
    tail.extend(baseline_line(sections.baseline.as_ref()));
    if let Some(l) = &sections.ladder {
        let t = plain(&l.recommendation.text);
        tail.push(if t.starts_with("Recommendation") {
            t
        } else {
            format!("Recommendation: {t}")
        });
    }
    tail.extend(regime_line(f));
    if arms.iter().any(|(_, v)| v.len() == 1) {
        tail.push(
            "An arm with one run has no spread: repeat (REPEATS=2, A B B A) before trusting a difference of a few percent."
                .into(),
        );
    }
    if let Some(left) = sections.left_out.as_ref().filter(|l| !l.is_empty()) {
        tail.push(format!(
            "{} run(s) left out, not averaged (see summary.md).",
            left.len()
        ));
    }
    tail.push(format!("Report: {}", out.join("report.html").display()));
    tail.push(format!(
        "Summary: {} (all tables; `cargo xtask analyze DIR` prints it)",
        out.join("summary.md").display()
    ));
    // The findings give way first: the head, the recommendation, the regime and the paths stay.
    let room = MAX_LINES.saturating_sub(head.len() + tail.len());
    if findings.len() > room {
        let more = findings.len() + 1 - room;
        findings.truncate(room.saturating_sub(1));
        findings.push(format!("- … {more} more in summary.md"));
    }
    head.extend(findings);
    head.extend(tail);
    head.truncate(MAX_LINES);
    head
}
