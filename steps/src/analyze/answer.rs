//! The short answer a study recipe ends with (`analyze --brief`): at most `MAX_LINES` lines, read
//! from the analysis already made — what ran, each claim's verdict, the recommendation, whether
//! the runs were in the article's regime, the noise caveat, and where the full summary is.

use std::path::Path;

use serde_json::Value;

use super::Analysis;

fn text(v: &Value) -> &str {
    v.as_str().unwrap_or("?")
}

/// The most lines the answer prints.
pub(crate) const MAX_LINES: usize = 15;

/// Markdown emphasis and code marks out of a line printed on a terminal.
fn plain(s: &str) -> String {
    s.replace("**", "").replace('`', "")
}

/// `--baseline`: how many figures changed (and which), how many are within noise.
fn baseline_line(j: &Value) -> Option<String> {
    let figs = j["baseline"]["figures"].as_array()?;
    let verdict = |f: &Value| f["verdict"].as_str().unwrap_or("").to_string();
    let changed: Vec<String> = figs
        .iter()
        .filter(|f| verdict(f) == "changed")
        .map(|f| format!("{} {}", text(&f["arm"]), text(&f["figure"])))
        .collect();
    let noise = figs.iter().filter(|f| verdict(f) == "within noise").count();
    let unknown = figs.len() - changed.len() - noise;
    Some(format!(
        "Against the baseline: {} changed{}, {noise} within noise, {unknown} without a noise test (one run a side or not measured).",
        changed.len(),
        if changed.is_empty() { String::new() } else { format!(" ({})", changed.join(", ")) }
    ))
}

/// Whether the runs were in the article's regime (the mechanism's or the study's verdict).
fn regime_line(j: &Value) -> Option<String> {
    let regime = &j["mechanism"]["regime"];
    let regime = if regime.is_null() {
        &j["regime"]
    } else {
        regime
    };
    match (regime["in_regime"].as_bool(), regime["why"].as_str()) {
        (Some(true), Some(why)) => Some(format!("In the article's regime: {why}.")),
        (Some(false), Some(why)) => Some(format!(
            "Not in the article's regime: {why}; compare directions, not levels."
        )),
        (None, Some(why)) => Some(format!("Regime: {why}.")),
        _ => None,
    }
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
    let j = &a.json;
    let mut findings = vec![];
    // The article's claims, where the study checks them.
    for c in j["claims"].as_array().into_iter().flatten() {
        let verdict = c["verdict"].as_str().or(c["direction"].as_str());
        if let (Some(claim), Some(v)) = (c["claim"].as_str(), verdict) {
            findings.push(format!("- {}: {}", plain(claim), plain(v)));
        }
    }
    // TPROC-C: each arm's throughput against the first, beside the article's.
    for arm in j["arms"].as_array().into_iter().flatten().skip(1) {
        let (Some(name), Some(gain)) = (arm["arm"].as_str(), arm["gain_pct"].as_f64()) else {
            continue;
        };
        let base = j["arms"][0]["arm"].as_str().unwrap_or("the first arm");
        let article = arm["published_gain_pct"]
            .as_f64()
            .map(|p| {
                let dir = super::direction(Some(gain), Some(p));
                format!(" (article {p:+.1} %: {})", plain(&dir))
            })
            .unwrap_or_default();
        findings.push(format!(
            "- {name}: NOPM {gain:+.1} % against {base}{article}"
        ));
    }
    let mut tail = vec![];
    tail.extend(baseline_line(j));
    if let Some(t) = j["ladder"]["recommendation"]["text"].as_str() {
        let t = plain(t);
        tail.push(if t.starts_with("Recommendation") {
            t
        } else {
            format!("Recommendation: {t}")
        });
    }
    tail.extend(regime_line(j));
    if arms.iter().any(|(_, v)| v.len() == 1) {
        tail.push(
            "An arm with one run has no spread: repeat (REPEATS=2, A B B A) before trusting a difference of a few percent."
                .into(),
        );
    }
    if let Some(left) = j["left_out"].as_array().filter(|l| !l.is_empty()) {
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
