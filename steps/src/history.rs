//! `history`: every run hotlab has results for, one line each, filtered. Reads the runs table
//! (`results.parquet`, `analyze/results.rs`) of every arm directory under `data/runs` and any
//! directory given, into one lazy Polars query that filters and sorts; never reads a snapshot
//! and never connects to a database. Runs without a results file are counted and named with the
//! command that writes them.

use std::path::PathBuf;

use anyhow::{bail, Result};
use polars::prelude::*;

use crate::analyze::results::{self, RunRow, RUNS_FILE};
use crate::ctx::Ctx;

#[derive(clap::Args, Debug, Default)]
pub struct Args {
    /// Words, each matching a study, an arm, a size or a table (`history tprocc stock`: runs of
    /// study tprocc that touched stock)
    pub words: Vec<String>,
    #[arg(long)]
    pub study: Option<String>,
    #[arg(long)]
    pub size: Option<String>,
    /// Arm name (`tuned`; repeats `tuned-r2` are runs of arm `tuned`)
    #[arg(long)]
    pub arm: Option<String>,
    /// A table the study touches
    #[arg(long)]
    pub table: Option<String>,
    /// Text in the host column (CPU model, cores, memory)
    #[arg(long)]
    pub host: Option<String>,
    /// PostgreSQL major.minor, or its major alone (`18`)
    #[arg(long = "pg")]
    pub postgres: Option<String>,
    /// Runs started since: `30d`, `12h`, `2w`, or a date (`2026-11-01`)
    #[arg(long, value_parser = parse_since)]
    pub since: Option<String>,
    /// Runs started before this date (`2026-12-01`)
    #[arg(long, value_parser = parse_since)]
    pub until: Option<String>,
    /// More directories to scan besides data/runs (repeatable)
    #[arg(long = "dir")]
    pub dirs: Vec<PathBuf>,
}

/// `30d`/`12h`/`2w` → the RFC 3339 instant that long ago; a date or timestamp as given.
fn parse_since(s: &str) -> Result<String, String> {
    let unit = s.chars().last().unwrap_or(' ');
    if let (Ok(n), Some(hours)) = (
        s[..s.len().saturating_sub(1)].parse::<i64>(),
        match unit {
            'h' => Some(1),
            'd' => Some(24),
            'w' => Some(24 * 7),
            _ => None,
        },
    ) {
        let at = chrono::Utc::now() - chrono::Duration::hours(n * hours);
        return Ok(at.format("%Y-%m-%dT%H:%M:%S").to_string());
    }
    if chrono::NaiveDate::parse_from_str(s.get(..10).unwrap_or(s), "%Y-%m-%d").is_ok() {
        return Ok(s.to_string());
    }
    Err(format!(
        "{s:?} is not a time: give 30d, 12h, 2w or a date like 2026-11-01"
    ))
}

/// The runs with results under the scanned directories, and the arm directories without.
pub struct Scan {
    pub(crate) runs: LazyFrame,
    pub without: Vec<PathBuf>,
    pub(crate) scanned: Vec<PathBuf>,
}

/// Every results file under `roots`, as one lazy frame.
pub(crate) fn scan(roots: &[PathBuf]) -> Result<Scan> {
    let mut frames = vec![];
    let mut without = vec![];
    for root in roots.iter().filter(|r| r.exists()) {
        for dir in results::arm_dirs_under(root)? {
            let file = dir.join(RUNS_FILE);
            if file.exists() {
                frames.push(results::read_runs(&file)?.lazy());
            } else {
                without.push(dir);
            }
        }
    }
    let runs = if frames.is_empty() {
        results::runs_frame(&[])?.lazy()
    } else {
        concat(
            frames,
            UnionArgs {
                // Older files lack the columns a later schema added: nulls.
                diagonal: true,
                ..Default::default()
            },
        )?
    };
    Ok(Scan {
        runs,
        without,
        scanned: roots.to_vec(),
    })
}

/// The runs `args` selects, oldest first.
pub fn select(ctx: &Ctx, args: &Args) -> Result<(Vec<RunRow>, Scan)> {
    let mut roots = vec![ctx.runs_dir()];
    roots.extend(args.dirs.iter().cloned());
    let scan = scan(&roots)?;
    let mut q = scan.runs.clone();
    let eq = |c: &str, v: &str| col(c).eq(lit(v.to_string()));
    for (c, v) in [
        ("study", &args.study),
        ("size", &args.size),
        ("arm", &args.arm),
    ] {
        if let Some(v) = v {
            q = q.filter(eq(c, v));
        }
    }
    if let Some(s) = &args.since {
        q = q.filter(col("start").gt_eq(lit(s.clone())));
    }
    if let Some(u) = &args.until {
        q = q.filter(col("start").lt(lit(u.clone())));
    }
    let df = q
        .sort_by_exprs([col("start"), col("run")], SortMultipleOptions::default())
        .collect()?;
    // Membership tests on comma lists and substrings stay in Rust: Polars' string functions
    // are a feature (and a compile) of their own.
    let rows: Vec<RunRow> = results::rows_of(&df)?
        .into_iter()
        .filter(|r| {
            let in_tables = |t: &str| r.tables.split(',').any(|x| x == t);
            args.words.iter().all(|w| {
                r.study == *w || r.arm == *w || r.size == *w || r.run == *w || in_tables(w)
            }) && args.table.as_deref().is_none_or(in_tables)
                && args.host.as_deref().is_none_or(|h| r.host.contains(h))
                && args
                    .postgres
                    .as_deref()
                    .is_none_or(|v| r.postgres == v || r.postgres.split('.').next() == Some(v))
        })
        .collect();
    Ok((rows, scan))
}

pub fn run(ctx: &Ctx, args: &Args) -> Result<()> {
    let (rows, scan) = select(ctx, args)?;
    let where_ = scan
        .scanned
        .iter()
        .map(|d| d.display().to_string())
        .collect::<Vec<_>>()
        .join(", ");
    // The scanned directory that holds the runs without results: what to rebuild.
    let rebuild = scan
        .without
        .first()
        .and_then(|w| scan.scanned.iter().find(|s| w.starts_with(s)))
        .unwrap_or(&scan.scanned[0])
        .display()
        .to_string();
    if !scan.without.is_empty() {
        eprintln!(
            "hotlab: {} run(s) under {where_} have no {RUNS_FILE} (analyzed before hotlab wrote one, or never analyzed), e.g. {}: `cargo xtask analyze --rebuild-index {rebuild}` writes them",
            scan.without.len(),
            scan.without[0].display(),
        );
    }
    if rows.is_empty() {
        // Only now the unfiltered runs: to say what there is.
        let all = results::rows_of(&scan.runs.collect()?)?;
        if all.is_empty() {
            bail!(
                "no run with results under {where_}; run a study (`just demo`), or write results for existing runs with `cargo xtask analyze --rebuild-index {rebuild}`"
            );
        }
        bail!("no run matches {}; {}", filters(args), what_exists(&all));
    }
    print!("{}", lines(&rows));
    Ok(())
}

/// The filters asked, as `study=spv, since=…`.
fn filters(a: &Args) -> String {
    let mut f: Vec<String> = a.words.iter().map(|w| format!("{w:?}")).collect();
    for (k, v) in [
        ("study", &a.study),
        ("size", &a.size),
        ("arm", &a.arm),
        ("table", &a.table),
        ("host", &a.host),
        ("pg", &a.postgres),
        ("since", &a.since),
        ("until", &a.until),
    ] {
        if let Some(v) = v {
            f.push(format!("{k}={v}"));
        }
    }
    f.join(", ")
}

/// What the results hold: studies, sizes, arms, tables, PostgreSQL versions, dates.
fn what_exists(all: &[RunRow]) -> String {
    let distinct = |f: &dyn Fn(&RunRow) -> Vec<String>| {
        let mut v: Vec<String> = all.iter().flat_map(f).filter(|s| !s.is_empty()).collect();
        v.sort();
        v.dedup();
        v.join(", ")
    };
    let mut parts = vec![format!("there are {} runs", all.len())];
    for (what, values) in [
        ("studies", distinct(&|r| vec![r.study.clone()])),
        ("sizes", distinct(&|r| vec![r.size.clone()])),
        ("arms", distinct(&|r| vec![r.arm.clone()])),
        (
            "tables",
            distinct(&|r| r.tables.split(',').map(str::to_string).collect()),
        ),
        ("PostgreSQL", distinct(&|r| vec![r.postgres.clone()])),
    ] {
        if !values.is_empty() {
            parts.push(format!("{what} {values}"));
        }
    }
    parts.push(format!(
        "started {} to {}",
        all.iter().map(|r| r.date()).min().unwrap_or("?"),
        all.iter().map(|r| r.date()).max().unwrap_or("?")
    ));
    parts.join("; ")
}

/// One line per run: date, study, size, arm (run), fingerprint, host, PostgreSQL, status, the
/// headline figure; columns aligned.
pub fn lines(rows: &[RunRow]) -> String {
    let header = [
        "date", "study", "size", "run", "sweep", "fp", "host", "pg", "status", "headline",
    ];
    let mut table: Vec<Vec<String>> = vec![header.iter().map(|h| h.to_string()).collect()];
    for r in rows {
        let headline = match r.throughput {
            Some(t) => format!(
                "{} {}{}",
                r.metric,
                thousands(t),
                r.hot_pct
                    .map(|h| format!(", HOT {h:.1} %"))
                    .unwrap_or_default()
            ),
            None => "–".into(),
        };
        table.push(vec![
            r.start.get(..16).unwrap_or(&r.start).replace('T', " "),
            r.study.clone(),
            r.size.clone(),
            r.run.clone(),
            r.sweep.clone(),
            r.fingerprint.clone(),
            r.host.clone(),
            r.postgres.clone(),
            r.status.clone(),
            headline,
        ]);
    }
    let widths: Vec<usize> = (0..header.len())
        .map(|i| {
            table
                .iter()
                .map(|r| r[i].chars().count())
                .max()
                .unwrap_or(0)
        })
        .collect();
    let mut out = String::new();
    for r in &table {
        let cells: Vec<String> = r
            .iter()
            .zip(&widths)
            .map(|(c, w)| format!("{c:<w$}"))
            .collect();
        out.push_str(cells.join("  ").trim_end());
        out.push('\n');
    }
    out
}

/// 12345.6 → "12,346".
fn thousands(x: f64) -> String {
    let s = format!("{:.0}", x.abs());
    let mut out = String::new();
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    if x < 0.0 {
        format!("-{out}")
    } else {
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn since_takes_durations_and_dates() {
        assert!(parse_since("30d").unwrap().starts_with("20"));
        assert_eq!(parse_since("2026-11-01").unwrap(), "2026-11-01");
        assert!(parse_since("soon").unwrap_err().contains("30d"));
        assert_eq!(thousands(1234567.4), "1,234,567");
        assert_eq!(thousands(999.0), "999");
    }
}
