//! Runs a pgbench script with the pgbench of the same PostgreSQL installation, shows its `-P`
//! progress on stderr, and parses its summary and its `--aggregate-interval` log into
//! per-interval rows. Writes the aggregate log under the run directory.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::{bail, Context, Result};
use serde::Serialize;

/// pgbench's own end-of-run figures.
#[derive(Debug, Default, Clone, Serialize)]
pub(crate) struct Summary {
    pub(crate) transactions: u64,
    pub(crate) failed: u64,
    pub(crate) latency_avg_ms: Option<f64>,
    pub(crate) latency_stddev_ms: Option<f64>,
    pub(crate) tps: Option<f64>,
    pub(crate) initial_connection_ms: Option<f64>,
    /// Wall-clock seconds of the pgbench process.
    pub(crate) wall_s: f64,
}

/// One `--aggregate-interval` line.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub(crate) struct Interval {
    pub(crate) start_epoch_s: i64,
    pub(crate) transactions: u64,
    pub(crate) latency_avg_ms: f64,
    pub(crate) latency_min_ms: f64,
    pub(crate) latency_max_ms: f64,
    pub(crate) failures: u64,
}

pub(crate) struct Invocation {
    pub(crate) bin: PathBuf,
    pub(crate) env: Vec<(String, String)>,
    pub(crate) args: Vec<String>,
    /// Where the log goes (pgbench appends `.<pid>`).
    pub(crate) log_prefix: PathBuf,
    /// The args ask for `--aggregate-interval` logs, returned parsed; else the per-transaction
    /// log is left for the caller.
    pub(crate) aggregate: bool,
}

/// Runs pgbench to completion, or until `stop()` says so (then it is killed).
pub(crate) fn run(
    inv: &Invocation,
    mut stop: impl FnMut() -> bool,
) -> Result<(Summary, Vec<Interval>)> {
    let mut args = inv.args.clone();
    args.push("-l".into());
    args.push(format!("--log-prefix={}", inv.log_prefix.display()));
    let started = Instant::now();
    let handle = duct::cmd(&inv.bin, &args)
        .full_env(inv.env.iter().cloned())
        .stderr_to_stdout()
        .unchecked()
        .reader()
        .with_context(|| format!("starting {}", inv.bin.display()))?;
    let mut out = String::new();
    let reader = BufReader::new(&handle);
    for line in reader.lines() {
        let line = line?;
        if line.starts_with("progress:") {
            eprintln!("  pgbench {line}");
        }
        out.push_str(&line);
        out.push('\n');
        if stop() {
            handle.kill()?;
            break;
        }
    }
    let status = handle.try_wait()?.map(|o| o.status);
    let mut summary = parse_summary(&out);
    summary.wall_s = started.elapsed().as_secs_f64();
    if let Some(st) = status {
        if !st.success() && !stop() {
            let tail: Vec<&str> = out.lines().rev().take(3).collect();
            bail!("pgbench failed ({st}): {}", tail.join(" | "));
        }
    }
    let intervals = if inv.aggregate {
        read_aggregate_logs(&inv.log_prefix)?
    } else {
        vec![]
    };
    Ok((summary, intervals))
}

fn number_after(line: &str, key: &str) -> Option<f64> {
    let rest = line.split(key).nth(1)?;
    rest.split_whitespace()
        .next()?
        .trim_end_matches(',')
        .parse()
        .ok()
}

/// Parses pgbench's closing report.
pub(crate) fn parse_summary(text: &str) -> Summary {
    let mut s = Summary::default();
    for line in text.lines() {
        if line.starts_with("number of transactions actually processed:") {
            if let Some(v) = line.split(':').nth(1) {
                s.transactions = v
                    .trim()
                    .split('/')
                    .next()
                    .unwrap_or("0")
                    .parse()
                    .unwrap_or(0);
            }
        } else if line.starts_with("number of failed transactions:") {
            s.failed = number_after(line, "transactions:").unwrap_or(0.0) as u64;
        } else if line.starts_with("latency average") {
            s.latency_avg_ms = number_after(line, "= ");
        } else if line.starts_with("latency stddev") {
            s.latency_stddev_ms = number_after(line, "= ");
        } else if line.starts_with("initial connection time") {
            s.initial_connection_ms = number_after(line, "= ");
        } else if line.starts_with("tps = ") {
            s.tps = number_after(line, "tps = ");
        }
    }
    s
}

/// Parses `--aggregate-interval` lines: interval_start num_transactions sum_latency
/// sum_latency_2 min_latency max_latency failures … (latencies in microseconds).
pub(crate) fn parse_aggregate_line(line: &str) -> Option<Interval> {
    let f: Vec<&str> = line.split_whitespace().collect();
    if f.len() < 6 {
        return None;
    }
    let n: u64 = f[1].parse().ok()?;
    let sum: f64 = f[2].parse().ok()?;
    Some(Interval {
        start_epoch_s: f[0].parse().ok()?,
        transactions: n,
        latency_avg_ms: if n > 0 { sum / n as f64 / 1000.0 } else { 0.0 },
        latency_min_ms: f[4].parse::<f64>().ok()? / 1000.0,
        latency_max_ms: f[5].parse::<f64>().ok()? / 1000.0,
        failures: f.get(6).and_then(|x| x.parse().ok()).unwrap_or(0),
    })
}

/// The log files pgbench wrote under `prefix`: `<prefix>.<pid>` and `<prefix>.<pid>.<thread>`.
pub(crate) fn log_files(prefix: &Path) -> Result<Vec<PathBuf>> {
    let dir = prefix.parent().context("log prefix has no directory")?;
    let stem = format!(
        "{}.",
        prefix
            .file_name()
            .context("log prefix has no name")?
            .to_string_lossy()
    );
    let mut out = vec![];
    for e in std::fs::read_dir(dir)? {
        let p = e?.path();
        if p.file_name()
            .is_some_and(|n| n.to_string_lossy().starts_with(&stem))
        {
            out.push(p);
        }
    }
    out.sort();
    Ok(out)
}

fn read_aggregate_logs(prefix: &Path) -> Result<Vec<Interval>> {
    let mut by_start = std::collections::BTreeMap::<i64, Interval>::new();
    for p in log_files(prefix)? {
        for line in std::fs::read_to_string(&p)?.lines() {
            if let Some(iv) = parse_aggregate_line(line) {
                // Several threads write one file each: merge intervals by start time.
                by_start
                    .entry(iv.start_epoch_s)
                    .and_modify(|a| {
                        let n = a.transactions + iv.transactions;
                        if n > 0 {
                            a.latency_avg_ms = (a.latency_avg_ms * a.transactions as f64
                                + iv.latency_avg_ms * iv.transactions as f64)
                                / n as f64;
                        }
                        a.transactions = n;
                        a.latency_min_ms = a.latency_min_ms.min(iv.latency_min_ms);
                        a.latency_max_ms = a.latency_max_ms.max(iv.latency_max_ms);
                        a.failures += iv.failures;
                    })
                    .or_insert(iv);
            }
        }
    }
    Ok(by_start.into_values().collect())
}

/// What a pgbench run beside the sampling thread gives back: pgbench's outcome, the sampler
/// and its counts, and when pgbench started and ended (µs since the epoch).
pub(crate) struct SampledRun {
    pub(crate) result: Result<(Summary, Vec<Interval>)>,
    pub(crate) sampled: crate::snapshot::Sampled,
    pub(crate) start_epoch_us: i64,
    pub(crate) end_epoch_us: i64,
}

/// Runs pgbench while `sampler` samples on its own thread (`rampup` samples, then `measured`
/// ones every `every`), then waits until every workload backend of `db` has gone, so the
/// closing sample sees all of their statistics. Ctrl-C stops pgbench; what was sampled stays.
pub(crate) fn run_sampled(
    inv: &Invocation,
    sampler: crate::snapshot::Sampler,
    every: std::time::Duration,
    rampup: std::time::Duration,
    db: &str,
) -> Result<SampledRun> {
    use crate::snapshot::{epoch_us, start_sampler, wait_for_backends};
    use std::sync::atomic::{AtomicBool, Ordering};
    let stop = std::sync::Arc::new(AtomicBool::new(false));
    let start_epoch_us = epoch_us();
    let sampling = start_sampler(sampler, every, rampup, stop.clone());
    let result = run(inv, crate::interrupt::interrupted);
    stop.store(true, Ordering::SeqCst);
    let mut sampled = sampling
        .join()
        .map_err(|_| anyhow::anyhow!("the sampling thread panicked"))??;
    let end_epoch_us = epoch_us();
    wait_for_backends(sampled.sampler.client(), db)?;
    Ok(SampledRun {
        result,
        sampled,
        start_epoch_us,
        end_epoch_us,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_the_closing_report() {
        let text =
            "transaction type: spv.sql\nnumber of transactions actually processed: 1000/1000\n\
                    number of failed transactions: 0 (0.000%)\nlatency average = 5.663 ms\n\
                    latency stddev = 0.412 ms\ninitial connection time = 3.101 ms\n\
                    tps = 176.574803 (without initial connection time)\n";
        let s = parse_summary(text);
        assert_eq!(s.transactions, 1000);
        assert_eq!(s.failed, 0);
        assert_eq!(s.latency_avg_ms, Some(5.663));
        assert_eq!(s.tps, Some(176.574803));
    }

    #[test]
    fn parses_aggregate_lines() {
        let iv = parse_aggregate_line("1764680000 170 963000 5600000000 4100 9800 0").unwrap();
        assert_eq!(iv.transactions, 170);
        assert!((iv.latency_avg_ms - 5.6647).abs() < 0.001);
        assert_eq!(iv.latency_max_ms, 9.8);
        assert!(parse_aggregate_line("garbage").is_none());
    }
}
