//! `analyze`: turns run directories into the articles' tables. Reads only files under the given
//! directories (never a database): meta.json, fillfactor.json, workload.json, reset.jsonl and
//! the snapshot CSVs. Writes summary.md (also printed), summary.json, report.html and
//! charts/*.svg into the output directory.

pub mod answer;
pub(crate) mod arms;
pub mod baseline;
pub(crate) mod charts;
pub(crate) mod fingerprint;
pub mod ladder;
pub mod load;
pub(crate) mod mechanism;
pub(crate) mod reference;
pub(crate) mod report;
pub mod results;
pub mod summary;

use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};
use serde_json::Value;

use crate::ctx::Ctx;
use crate::io::write_json_atomic;
use crate::rundir::find_arm_dirs;
use crate::study::{each_workload, Workload};
use load::ArmRun;

#[derive(clap::Args, Debug)]
pub struct Args {
    /// Run directories: a sweep (data/runs/<study>/<time>-<label>), arms, or several of them
    #[arg(required = true)]
    pub dirs: Vec<PathBuf>,
    /// Compare with earlier runs of the same study: per arm and headline figure, the change
    /// and whether it is beyond the noise of the repeats (docs/run-directory.md, "Results over time")
    #[arg(long, num_args = 1.., value_name = "DIR")]
    pub baseline: Vec<PathBuf>,
    /// With --baseline: the smallest change of a mean (%) that can be called "changed"
    #[arg(long, default_value_t = baseline::DEFAULT_MIN_CHANGE, value_parser = crate::study::bounds::parse_percent)]
    pub min_change: f64,
    /// Only (re)write every run's results.parquet and samples.parquet under DIRS (e.g.
    /// data/runs) from its run directory, for `history`; no summary
    #[arg(long)]
    pub rebuild_index: bool,
    /// Where to write summary.md, summary.json, report.html, charts/ (default: the one input
    /// directory)
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Accept runs of different studies in one analysis
    #[arg(long)]
    pub allow_mixed: bool,
    /// Average runs of one arm even when their fingerprints differ (size, settings, PostgreSQL
    /// version, host, hotlab revision, …); the summary says what was pooled
    #[arg(long)]
    pub mix: bool,
    /// Sweep recommendation: the new-page share (percent of updates) at or below which a
    /// saturated fillfactor is enough (the rule: docs/advise.md)
    #[arg(long, default_value_t = DEFAULT_THRESHOLD, value_parser = crate::study::bounds::parse_percent)]
    pub threshold: f64,
    /// Print the short answer (at most 15 lines: each claim's verdict, the recommendation, the
    /// regime, the noise caveat, the report's path) instead of the whole summary, which is
    /// written to summary.md either way; the study recipes pass it unless VERBOSE=1
    #[arg(long)]
    pub brief: bool,
}

/// What a study's analysis returns: Markdown, JSON, and (file name, SVG) charts.
/// A study's analysis, from its room: the Markdown, its tables for summary.json (serialized from
/// the room's types), its charts, and what the short answer says of it.
pub(crate) struct Tables {
    pub(crate) markdown: String,
    pub(crate) json: Value,
    pub(crate) charts: Vec<(String, String)>,
    pub(crate) findings: Findings,
}

/// What the short answer (`answer.rs`) says of a study, besides the sections every study has.
#[derive(Debug, Clone, Default)]
pub(crate) struct Findings {
    /// The article's claims and our verdict on each.
    pub(crate) claims: Vec<(String, String)>,
    /// Each arm's throughput against the first: (arm, gain %, the article's gain %).
    pub(crate) gains: Vec<(String, f64, Option<f64>)>,
    /// The first arm, which the gains are against.
    pub(crate) base_arm: Option<String>,
    /// Whether the runs were in the article's regime (None: no article to be like), and why.
    pub(crate) regime: Option<(Option<bool>, String)>,
}

/// The figure a workload reports its throughput in: its label, and the decimals it is shown
/// with (its value is `Headline::throughput`).
pub(crate) struct Throughput {
    pub(crate) label: &'static str,
    pub(crate) decimals: usize,
}

/// A run's figures that every workload reports (the runs table, the ladder, the report), read
/// from its workload.json by its room.
#[derive(Debug, Clone, Default)]
pub(crate) struct Headline {
    /// The workload's throughput figure (`Throughput`).
    pub(crate) throughput: Option<f64>,
    /// Seconds of the measured window.
    pub(crate) window_s: Option<f64>,
    /// Latency p50, p95, p99 in ms, where the workload measures them.
    pub(crate) latency_ms: [Option<f64>; 3],
    /// The command that ran the load, where it was a command.
    pub(crate) command: Option<Vec<String>>,
    /// The size's warehouses and clients (virtual users), where it has them.
    pub(crate) warehouses: Option<f64>,
    pub(crate) clients: Option<f64>,
}

/// What `analyze` asks of a workload: implemented on its size type, in its room (`tables.rs`).
pub(crate) trait StudyTables {
    const THROUGHPUT: Throughput;
    /// A run's headline figures, from its workload.json.
    fn headline(r: &ArmRun) -> Headline;
    /// The study's tables of these runs (one study): markdown, JSON, and charts.
    fn tables(runs: &[ArmRun]) -> Result<Tables>;
}

/// A run's headline figures, by its workload.
pub(crate) fn headline(r: &ArmRun) -> Headline {
    each_workload!(r.plan.workload, W => W::headline(r))
}

/// The throughput figure of `workload`.
pub(crate) fn throughput(workload: Workload) -> Throughput {
    each_workload!(workload, W => W::THROUGHPUT)
}

/// The product of an analysis, before it is written anywhere.
pub struct Analysis {
    pub markdown: String,
    /// summary.json as written (`summary` serialized).
    pub json: Value,
    pub(crate) summary: summary::Summary,
    pub(crate) findings: Findings,
    pub charts: Vec<(String, String)>,
    pub(crate) runs: Vec<ArmRun>,
}

pub fn run(_ctx: &Ctx, args: &Args) -> Result<()> {
    let mut arm_dirs = vec![];
    for d in &args.dirs {
        if !d.exists() {
            bail!(
                "{} does not exist; pass a run directory under data/runs/",
                d.display()
            );
        }
        if !args.rebuild_index {
            arm_dirs.extend(find_arm_dirs(d)?);
        }
    }
    if args.rebuild_index {
        return rebuild_index(&args.dirs);
    }
    if arm_dirs.is_empty() {
        bail!(
            "no runs found in {}; run a study first (e.g. `just spv ci`)",
            args.dirs
                .iter()
                .map(|d| d.display().to_string())
                .collect::<Vec<_>>()
                .join(", ")
        );
    }
    let out = match (&args.out, args.dirs.as_slice()) {
        (Some(o), _) => o.clone(),
        (None, [one]) => one.clone(),
        _ => bail!("several input directories: pass --out DIR for the report"),
    };
    let mut analysis = analyze_opts(&arm_dirs, args.allow_mixed, args.mix, args.threshold)?;
    if !args.baseline.is_empty() {
        let mut base_dirs = vec![];
        for d in &args.baseline {
            if !d.exists() {
                bail!(
                    "--baseline {} does not exist; `cargo xtask history` lists the runs there are",
                    d.display()
                );
            }
            base_dirs.extend(results::arm_dirs_under(d)?);
        }
        let base: Vec<ArmRun> = base_dirs
            .iter()
            .map(|d| ArmRun::load(d))
            .collect::<Result<_>>()?;
        let (md, j) = baseline::compare(&analysis.runs, &base, args.min_change)?;
        analysis.markdown = format!("{md}\n{}", analysis.markdown);
        analysis.summary.sections.baseline = Some(j);
        analysis.json = analysis.summary.to_json();
    }
    write(&out, &analysis)?;
    // The tidy results of each run, for `history` (a failure here loses no summary).
    for r in &analysis.runs {
        if let Err(e) = results::write(r) {
            eprintln!(
                "hotlab: warning: results of {} not written: {e:#}",
                r.dir.display()
            );
        }
    }
    if args.brief {
        println!("{}", answer::lines(&analysis, &out).join("\n"));
    } else {
        println!("{}", analysis.markdown);
        eprintln!("hotlab: report: {}", out.join("report.html").display());
    }
    Ok(())
}

/// `--rebuild-index`: every run's results files under `dirs`, rewritten from its run directory.
fn rebuild_index(dirs: &[PathBuf]) -> Result<()> {
    let mut n = 0;
    for d in dirs {
        for arm in results::arm_dirs_under(d)? {
            let r = ArmRun::load(&arm)?;
            results::write(&r)?;
            n += 1;
        }
    }
    if n == 0 {
        bail!(
            "no run directories under {}; pass a directory holding runs (data/runs, a sweep, an arm)",
            dirs.iter()
                .map(|d| d.display().to_string())
                .collect::<Vec<_>>()
                .join(", ")
        );
    }
    eprintln!(
        "hotlab: wrote {} and {} for {n} run(s); `cargo xtask history` lists them",
        results::RUNS_FILE,
        results::SAMPLES_FILE
    );
    Ok(())
}

/// The default sweep threshold: 1 % of updates on a new page (the article's order_line answer,
/// fillfactor 80, left 0.58 %).
pub const DEFAULT_THRESHOLD: f64 = 1.0;

pub fn analyze_dirs(arm_dirs: &[PathBuf], allow_mixed: bool) -> Result<Analysis> {
    analyze_with(arm_dirs, allow_mixed, DEFAULT_THRESHOLD)
}

pub fn analyze_with(arm_dirs: &[PathBuf], allow_mixed: bool, threshold: f64) -> Result<Analysis> {
    analyze_opts(arm_dirs, allow_mixed, false, threshold)
}

/// Every arm directory read, two readers at a time: the files are independent, and each read
/// is mostly single-threaded.
fn load_all(arm_dirs: &[PathBuf]) -> Result<Vec<ArmRun>> {
    std::thread::scope(|s| {
        let half = arm_dirs.len().div_ceil(2);
        let parts: Vec<_> = arm_dirs
            .chunks(half.max(1))
            .map(|chunk| s.spawn(move || chunk.iter().map(|d| ArmRun::load(d)).collect::<Vec<_>>()))
            .collect();
        parts
            .into_iter()
            .flat_map(|h| {
                h.join()
                    .unwrap_or_else(|_| vec![Err(anyhow::anyhow!("a reader panicked"))])
            })
            .collect::<Result<_>>()
    })
}

/// The runs left out of every mean (damaged, or died mid-step): the summary's note and JSON.
fn left_out(runs: &[ArmRun]) -> Option<(String, Vec<LeftOut>)> {
    let left_out: Vec<(String, String, String)> = runs
        .iter()
        .filter(|r| matches!(r.status().as_str(), "damaged" | "died"))
        .map(|r| {
            let why = match r.status().as_str() {
                "damaged" => r.meta.damage.clone().unwrap_or_else(|| "?".into()),
                _ => "marked running, but no process holds it: it died".to_string(),
            };
            (r.name(), r.status(), why)
        })
        .collect();
    if left_out.is_empty() {
        return None;
    }
    let mut md = String::from("**Left out, not averaged:**\n\n");
    for (run, status, why) in &left_out {
        md.push_str(&format!("- {run}: {status}: {why}\n"));
    }
    let json = left_out
        .into_iter()
        .map(|(run, status, why)| LeftOut { run, status, why })
        .collect();
    Some((md, json))
}

/// `mix`: average runs of one arm whose fingerprints differ (`fingerprint.rs`).
pub fn analyze_opts(
    arm_dirs: &[PathBuf],
    allow_mixed: bool,
    mix: bool,
    threshold: f64,
) -> Result<Analysis> {
    let runs = load_all(arm_dirs)?;
    let mut studies: Vec<String> = runs.iter().map(|r| r.plan.study.clone()).collect();
    studies.sort();
    studies.dedup();
    if studies.len() > 1 && !allow_mixed {
        bail!(
            "these runs mix studies ({}); analyze them separately or pass --allow-mixed",
            studies.join(", ")
        );
    }
    let pooled = fingerprint::differences(&runs);
    if let (Some((arm, diff)), false) = (pooled.first(), mix) {
        bail!(
            "runs of arm {arm} differ in {}: they are not averaged together; analyze them apart, or pass --mix to pool them on purpose",
            fingerprint::describe(diff)
        );
    }
    let Tables {
        mut markdown,
        json: tables,
        charts,
        findings,
    } = each_workload!(runs[0].plan.workload, W => W::tables(&runs)?);
    let mut sections = summary::Sections::default();
    if let Some((md, lj)) =
        ladder::swept_table(&runs).and_then(|t| ladder::ladder(&runs, &t, threshold))
    {
        markdown = format!("{md}\n{markdown}");
        sections.ladder = Some(lj);
    }
    if !pooled.is_empty() {
        let mut md = String::from(
            "**Pooled on purpose (`--mix`).** These arms average runs whose fingerprints differ:\n\n",
        );
        for (arm, diff) in &pooled {
            md.push_str(&format!("- {arm}: {}\n", fingerprint::describe(diff)));
        }
        md.push('\n');
        md.push_str(&fingerprint::runs_table(&runs, &pooled));
        markdown = format!("{md}\n{markdown}");
        sections.pooled = Some(fingerprint::pooled(&pooled));
    }
    let (cold_md, cold_json) = cold_starts(&runs);
    sections.cold_start = cold_json;
    if let Some(md) = cold_md {
        markdown = format!("{md}\n{markdown}");
    }
    if let Some((md, nj)) = not_at_study_settings(&runs) {
        markdown = format!("{md}\n{markdown}");
        sections.not_at_study_settings = Some(nj);
    }
    if let Some((md, lj)) = left_out(&runs) {
        markdown = format!("{md}\n{markdown}");
        sections.left_out = Some(lj);
    }
    let summary = summary::Summary::new(tables, sections, studies, &runs);
    Ok(Analysis {
        markdown,
        json: summary.to_json(),
        summary,
        findings,
        charts,
        runs,
    })
}

/// Which caches each run started without: the last reset before its workload (reset.jsonl),
/// per run in the JSON. Said in the summary when a run's start was not fully cold (a server
/// hotlab cannot restart or whose OS page cache it cannot drop), so that no figure is read as a
/// cold start's.
fn cold_starts(runs: &[ArmRun]) -> (Option<String>, Vec<ColdStart>) {
    let outcome = |reset: &Value, action: &str| -> Option<String> {
        reset["actions"]
            .as_array()?
            .iter()
            .find(|a| a["action"] == action)
            .and_then(|a| a["outcome"].as_str())
            .map(str::to_string)
    };
    let mut lines = vec![];
    let mut j = vec![];
    for r in runs {
        let Some(last) = r.resets.last() else {
            continue;
        };
        let shared = last["cold"] == true;
        let kept = last["kept_warm"] == true;
        let os = outcome(last, "os_cache");
        let os_cold = os
            .as_deref()
            .is_some_and(|o| o.starts_with("dropped") || o.starts_with("fadvise"));
        let how = outcome(last, "evict")
            .filter(|e| e.starts_with("evicted"))
            .map(|e| format!("evicted without a restart: {e}"))
            .or_else(|| outcome(last, "stop").map(|_| "restarted".to_string()))
            .or_else(|| outcome(last, "restart"));
        j.push(ColdStart {
            run: r.name(),
            shared_buffers_cold: shared,
            shared_buffers: how.clone(),
            os_cache_cold: os_cold,
            os_cache: os.clone(),
            kept_warm: kept,
        });
        if kept || (shared && os_cold) {
            continue;
        }
        lines.push(format!(
            "- {}: shared buffers {} ({}); OS page cache {} ({})",
            r.name(),
            if shared { "cold" } else { "**warm**" },
            how.unwrap_or_else(|| "–".into()),
            if os_cold {
                "dropped"
            } else {
                "**not dropped**"
            },
            os.unwrap_or_else(|| "–".into()),
        ));
    }
    let md = (!lines.is_empty()).then(|| {
        format!(
            "**Not a full cold start.** These runs began with a cache still warm, so reads that would have gone to disk may have been served from memory:\n\n{}\n",
            lines.join("\n")
        )
    });
    (md, j)
}

/// A run's start as its last reset left the caches (summary.json `cold_start`).
#[derive(Debug, Clone, serde::Serialize)]
pub(crate) struct ColdStart {
    run: String,
    shared_buffers_cold: bool,
    /// How shared buffers were emptied (restarted, evicted without a restart), if they were.
    shared_buffers: Option<String>,
    os_cache_cold: bool,
    /// What the OS page cache reset did.
    os_cache: Option<String>,
    /// Left warm on purpose (an arm built create-with).
    kept_warm: bool,
}

/// A run on a server whose settings differ from the study's (summary.json
/// `not_at_study_settings`).
#[derive(Debug, Clone, serde::Serialize)]
pub(crate) struct OffSettings {
    run: String,
    settings: Vec<crate::rundir::meta::SettingDiff>,
}

/// A run left out of every mean, and why (summary.json `left_out`).
#[derive(Debug, Clone, serde::Serialize)]
pub(crate) struct LeftOut {
    run: String,
    status: String,
    why: String,
}

/// Runs on a server hotlab does not own whose settings were left alone and differ from the
/// study's (`server_settings_diff` in meta.json): said first, so no figure is read as the study's.
fn not_at_study_settings(runs: &[ArmRun]) -> Option<(String, Vec<OffSettings>)> {
    let off: Vec<(String, &Vec<crate::rundir::meta::SettingDiff>)> = runs
        .iter()
        .filter_map(|r| {
            let d = r.meta.server_settings_diff.as_ref()?;
            (!d.is_empty()).then(|| (r.name(), d))
        })
        .collect();
    if off.is_empty() {
        return None;
    }
    let mut md = String::from(
        "**Not at the study's settings.** These runs used a server hotlab does not own and left its settings alone (`build --apply-server-settings` applies them for the arm and restores them after):\n\n",
    );
    for (run, diff) in &off {
        let items: Vec<String> = diff
            .iter()
            .map(|d| format!("{} {} (study {})", d.name, d.server, d.study))
            .collect();
        md.push_str(&format!("- {run}: {}\n", items.join(", ")));
    }
    let j = off
        .into_iter()
        .map(|(run, d)| OffSettings {
            run,
            settings: d.clone(),
        })
        .collect();
    Some((md, j))
}

pub fn write(out: &Path, a: &Analysis) -> Result<()> {
    std::fs::create_dir_all(out.join("charts"))
        .with_context(|| format!("creating {}", out.join("charts").display()))?;
    crate::io::write_atomic(&out.join("summary.md"), a.markdown.as_bytes())?;
    write_json_atomic(&out.join("summary.json"), &a.json)?;
    for (name, svg) in &a.charts {
        crate::io::write_atomic(&out.join("charts").join(name), svg.as_bytes())?;
    }
    crate::io::write_atomic(&out.join("report.html"), report::html(a, out).as_bytes())?;
    Ok(())
}

/// Human units for bytes.
pub(crate) fn bytes(b: Option<f64>) -> String {
    match b {
        None => "–".into(),
        Some(b) if b.abs() >= 1024.0 * 1024.0 * 1024.0 => format!("{:.2} GiB", b / 1073741824.0),
        Some(b) if b.abs() >= 1024.0 * 1024.0 => format!("{:.1} MiB", b / 1048576.0),
        Some(b) => format!("{:.0} KiB", b / 1024.0),
    }
}

pub(crate) fn num(v: Option<f64>, decimals: usize) -> String {
    match v {
        None => "–".into(),
        Some(x) => format!("{x:.decimals$}"),
    }
}

/// A Markdown table.
pub(crate) fn md_table(header: &[&str], rows: &[Vec<String>]) -> String {
    let mut s = format!("| {} |\n", header.join(" | "));
    s.push_str(&format!(
        "|{}\n",
        header.iter().map(|_| " --- |").collect::<String>()
    ));
    for r in rows {
        s.push_str(&format!("| {} |\n", r.join(" | ")));
    }
    s
}

/// "mean (min–max, spread %)" of an arm's repeats, the value alone for one run: the one format
/// of repeated figures in every study's tables.
pub(crate) fn spread_cell(s: Option<crate::stats::Stats>, fmt: impl Fn(f64) -> String) -> String {
    match s {
        None => "–".into(),
        Some(s) if s.n == 1 => fmt(s.mean),
        Some(s) => format!(
            "{} ({}–{}, spread {} %)",
            fmt(s.mean),
            fmt(s.min),
            fmt(s.max),
            num(s.spread_pct, 1)
        ),
    }
}

/// 100 × part / whole, when whole is positive.
pub(crate) fn pct(part: Option<f64>, whole: Option<f64>) -> Option<f64> {
    match (part, whole) {
        (Some(p), Some(w)) if w > 0.0 => Some(100.0 * p / w),
        _ => None,
    }
}

/// Per arm, in first-seen order: the complete runs among `runs` (`arm` and `complete` read each).
pub(crate) fn by_arm<T>(
    runs: &[T],
    arm: impl Fn(&T) -> String,
    complete: impl Fn(&T) -> bool,
) -> Vec<(String, Vec<&T>)> {
    let mut out: Vec<(String, Vec<&T>)> = vec![];
    for r in runs {
        let a = arm(r);
        match out.iter_mut().find(|(x, _)| *x == a) {
            Some((_, v)) => v.push(r),
            None => out.push((a, vec![r])),
        }
    }
    for (_, v) in out.iter_mut() {
        v.retain(|r| complete(r));
    }
    out
}

/// Whether two changes point the same way: "agrees", "**disagrees**" (shown in red), or "–".
pub(crate) fn direction(ours: Option<f64>, published: Option<f64>) -> String {
    match (ours, published) {
        (Some(a), Some(b)) if a.abs() < 1e-9 || b.abs() < 1e-9 => "flat".into(),
        (Some(a), Some(b)) if (a > 0.0) == (b > 0.0) => "agrees".into(),
        (Some(_), Some(_)) => "**disagrees**".into(),
        _ => "–".into(),
    }
}

/// A claim "lower fillfactor → the figure goes down (`expect_less`) or up" checked at every step
/// between adjacent measured values (`points`: label and figure, highest fillfactor first), not
/// only between the ends. Returns the verdict and whether every step agrees (None when a figure
/// is missing): "agrees"; "agrees from 100 to 75, not below" when the first steps agree and the
/// rest do not; "agrees at 100→75, 50→30; not at 75→50" when they alternate; "**disagrees**"
/// when no step does.
pub(crate) fn stepwise(
    points: &[(String, Option<f64>)],
    expect_less: bool,
) -> (String, Option<bool>) {
    let mut ok = vec![];
    for w in points.windows(2) {
        let (Some(a), Some(b)) = (w[0].1, w[1].1) else {
            return ("not measured".into(), None);
        };
        ok.push(if expect_less { b < a } else { b > a });
    }
    let step = |i: usize| format!("{}→{}", points[i].0, points[i + 1].0);
    let agreeing = ok.iter().take_while(|x| **x).count();
    let verdict = if ok.iter().all(|x| *x) {
        "agrees".to_string()
    } else if !ok.iter().any(|x| *x) {
        "**disagrees**".to_string()
    } else if ok[agreeing..].iter().all(|x| !*x) {
        format!(
            "agrees from {} to {}, not below",
            points[0].0, points[agreeing].0
        )
    } else {
        let (yes, no): (Vec<usize>, Vec<usize>) = (0..ok.len()).partition(|i| ok[*i]);
        format!(
            "agrees at {}; **not at {}**",
            yes.into_iter().map(step).collect::<Vec<_>>().join(", "),
            no.into_iter().map(step).collect::<Vec<_>>().join(", ")
        )
    };
    (verdict, Some(ok.iter().all(|x| *x)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn claims_are_checked_step_by_step() {
        let pts = |v: &[f64]| -> Vec<(String, Option<f64>)> {
            ["100", "75", "50", "30"]
                .iter()
                .zip(v)
                .map(|(l, x)| (l.to_string(), Some(*x)))
                .collect()
        };
        // Study 003's statements/s went 327 -> 530 -> 520 -> 474: faster only from 100 to 75.
        let (v, all) = stepwise(&pts(&[327.0, 530.0, 520.0, 474.0]), false);
        assert_eq!(
            (v.as_str(), all),
            ("agrees from 100 to 75, not below", Some(false))
        );
        assert_eq!(stepwise(&pts(&[1.0, 2.0, 3.0, 4.0]), false).0, "agrees");
        assert_eq!(
            stepwise(&pts(&[4.0, 3.0, 2.0, 1.0]), false).0,
            "**disagrees**"
        );
        assert_eq!(
            stepwise(&pts(&[1.0, 2.0, 1.0, 2.0]), false).0,
            "agrees at 100→75, 50→30; **not at 75→50**"
        );
        let missing = vec![("100".to_string(), Some(1.0)), ("50".to_string(), None)];
        assert_eq!(stepwise(&missing, true).1, None);
    }
}
