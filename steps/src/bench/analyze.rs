//! `bench analyze`: `analyze` over a generated set of runs × samples shaped like a real TPROC-C
//! arm's snapshots (regenerated from the repository's test data). Target: ≤ 2 s.

use std::time::Instant;

use anyhow::{bail, Result};
use serde_json::json;

use super::figures;
use super::runner::{out_dir, Runner};
use crate::ctx::Ctx;
use crate::io::write_json_atomic;

/// A TPROC-C arm's snapshot files regenerated with `samples` measured samples: every
/// (object, metric) of the template's last measured sample, counters growing per sample.
fn generate_run(
    template: &std::path::Path,
    to: &std::path::Path,
    samples: usize,
    seed: u64,
) -> Result<()> {
    use std::io::Write as _;
    std::fs::create_dir_all(to.join("snapshots"))?;
    for f in [
        "meta.json",
        "workload.json",
        "fillfactor.json",
        "vacuum.csv",
        "reset.jsonl",
    ] {
        if template.join(f).exists() {
            std::fs::copy(template.join(f), to.join(f))?;
        }
    }
    let t0 = chrono::DateTime::parse_from_rfc3339("2026-01-01T00:00:00Z")?;
    for f in ["tables.csv", "database.csv", "buffers.csv"] {
        let text = std::fs::read_to_string(template.join("snapshots").join(f))?;
        let mut lines = text.lines();
        let header = lines.next().unwrap_or_default();
        let cols: Vec<&str> = header.split(',').collect();
        let (si, pi, vi) = (
            cols.iter().position(|c| *c == "sample").unwrap_or(0),
            cols.iter().position(|c| *c == "phase").unwrap_or(2),
            cols.len() - 1,
        );
        let rows: Vec<Vec<&str>> = lines.map(|l| l.split(',').collect()).collect();
        let last = rows
            .iter()
            .rev()
            .find(|r| r.get(pi) == Some(&"measured"))
            .map(|r| r[si])
            .unwrap_or("1");
        let base: Vec<&Vec<&str>> = rows.iter().filter(|r| r[si] == last).collect();
        let mut out = std::io::BufWriter::new(std::fs::File::create(to.join("snapshots").join(f))?);
        writeln!(out, "{header}")?;
        for s in 1..=samples {
            let ts = (t0 + chrono::Duration::seconds(10 * s as i64))
                .to_rfc3339_opts(chrono::SecondsFormat::Millis, true);
            for r in &base {
                let mut r: Vec<String> = r.iter().map(|x| x.to_string()).collect();
                r[si] = s.to_string();
                r[1] = ts.clone();
                r[pi] = "measured".into();
                if let Ok(v) = r[vi].parse::<f64>() {
                    let grown =
                        v + (s as f64) * ((seed % 7) as f64 + 1.0) * (v.abs().min(1e6) / 100.0);
                    r[vi] = format!("{}", grown.round());
                }
                writeln!(out, "{}", r.join(","))?;
            }
        }
        out.flush()?;
    }
    Ok(())
}

pub(crate) fn bench_analyze(ctx: &Ctx, runs: usize, samples: usize, repeats: u32) -> Result<()> {
    if runs == 0 || samples < 2 {
        bail!("bench analyze needs --runs >= 1 and --samples >= 2");
    }
    let template = crate::ctx::project_root().join("steps/tests/data/tprocc-ci-repeats/default-r1");
    if !template.join("meta.json").exists() {
        bail!(
            "{} is missing: bench analyze needs the repository's test data",
            template.display()
        );
    }
    let dir = out_dir(&ctx.runs_dir(), "analyze")?;
    let set = dir.join("runs");
    let t = Instant::now();
    let mut dirs = vec![];
    for k in 0..runs {
        let d = set.join(format!("run-{k:03}"));
        generate_run(&template, &d, samples, k as u64)?;
        dirs.push(d);
    }
    let generated = t.elapsed().as_secs_f64();
    let mut rows = 0;
    for f in ["tables.csv", "database.csv", "buffers.csv"] {
        rows += std::fs::read_to_string(dirs[0].join("snapshots").join(f))?
            .lines()
            .count();
    }
    // Timed passes (the first with whatever page cache the generation left): median and best.
    let mut analysis = None;
    let runner = Runner {
        arms: &["analyze"],
        repeats,
        warmup: 0,
        dir: dir.clone(),
    };
    let timed = runner.run(|_, _| {
        let t = Instant::now();
        analysis = Some(crate::analyze::analyze_dirs(&dirs, false)?);
        Ok(figures(&[("seconds", t.elapsed().as_secs_f64())]))
    })?;
    let t = Instant::now();
    crate::analyze::write(&dir, analysis.as_ref().expect("one pass at least"))?;
    let report = t.elapsed().as_secs_f64();
    // What the analyze step adds after the report: every run's results files (Parquet).
    let t = Instant::now();
    for r in &analysis.as_ref().expect("one pass at least").runs {
        crate::analyze::results::write(r)?;
    }
    let results = t.elapsed().as_secs_f64();
    let times = timed.of("analyze", "seconds");
    let mut sorted = times.clone();
    sorted.sort_by(f64::total_cmp);
    let (best, secs) = (sorted[0], sorted[sorted.len() / 2]);
    println!("bench analyze ({runs} runs x {samples} samples, {rows} CSV rows per run; generated in {generated:.1} s)");
    println!(
        "  analyze          {secs:>6.2} s median of {}, best {best:.2} s (target <= 2)",
        times.len()
    );
    println!("  writing the report {report:>4.2} s");
    println!("  writing {runs} runs' results.parquet and samples.parquet {results:>4.2} s");
    write_json_atomic(
        &dir.join("result.json"),
        &json!({"what": "analyze", "runs": runs, "samples": samples, "rows_per_run": rows,
                "seconds": times, "median_s": secs, "best_s": best, "report_s": report, "results_s": results}),
    )?;
    // The generated set is large and only for this measurement.
    std::fs::remove_dir_all(&set)?;
    Ok(())
}
