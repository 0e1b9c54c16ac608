//! The one benchmark runner every `bench` subcommand uses: arms in alternating order over the
//! repeats (A B B A …, `stats::alternating`), optional warm-up rounds that are run and recorded
//! but left out of the figures, every run's figures appended to `samples.csv` (and flushed) as
//! they are taken, and the statistics (`stats`) and the ratio line printed from those samples.

use std::path::{Path, PathBuf};

use anyhow::{bail, Result};
use serde_json::{json, Value};

use crate::interrupt::interrupted;
use crate::io::CsvAppender;
use crate::stats::{alternating, mean, spread};

pub(crate) const SAMPLES_HEADER: &[&str] = &["round", "arm", "warmup", "metric", "value"];

/// How the arms of one benchmark are run.
pub(crate) struct Runner<'a> {
    /// The arms' labels, as `samples.csv` and the printed lines name them.
    pub(crate) arms: &'a [&'a str],
    /// Measured rounds (2 = A B B A).
    pub(crate) repeats: u32,
    /// Unmeasured rounds first (A B), to warm caches and the server.
    pub(crate) warmup: u32,
    pub(crate) dir: PathBuf,
}

/// One arm run: its label, round, and figures.
#[derive(Debug, Clone)]
pub(crate) struct Sample {
    pub(crate) arm: String,
    pub(crate) round: u32,
    pub(crate) figures: Vec<(String, f64)>,
}

/// The measured runs of a benchmark.
#[derive(Debug, Clone, Default)]
pub(crate) struct Samples {
    pub(crate) runs: Vec<Sample>,
    /// The order the measured runs took, e.g. "ABBA".
    pub(crate) order: String,
}

impl Runner<'_> {
    /// Runs `body(arm label, run index)` for every warm-up and measured run in order; the body
    /// returns the run's figures (a metric may appear more than once).
    pub(crate) fn run(
        &self,
        mut body: impl FnMut(&str, usize) -> Result<Vec<(String, f64)>>,
    ) -> Result<Samples> {
        if self.repeats == 0 {
            bail!("--repeats must be at least 1");
        }
        std::fs::create_dir_all(&self.dir)?;
        let mut csv = CsvAppender::open(&self.dir.join("samples.csv"), SAMPLES_HEADER)?;
        let warm = alternating(self.arms, self.warmup);
        let measured = alternating(self.arms, self.repeats);
        let letters = |v: &[(u32, &str)]| -> String {
            v.iter()
                .map(|(_, a)| {
                    let i = self.arms.iter().position(|x| x == a).unwrap_or(0);
                    (b'A' + i as u8) as char
                })
                .collect()
        };
        let mut out = Samples {
            runs: vec![],
            order: letters(&measured),
        };
        let all = warm
            .iter()
            .map(|x| (true, *x))
            .chain(measured.iter().map(|x| (false, *x)));
        for (i, (warmup, (round, arm))) in all.enumerate() {
            if interrupted() {
                bail!(
                    "interrupted; the samples taken are in {}",
                    self.dir.join("samples.csv").display()
                );
            }
            if warmup {
                eprintln!("  (warm-up) {arm}");
            }
            let figures = body(arm, i)?;
            let rows: Vec<Vec<String>> = figures
                .iter()
                .map(|(m, v)| {
                    vec![
                        round.to_string(),
                        arm.to_string(),
                        warmup.to_string(),
                        m.clone(),
                        v.to_string(),
                    ]
                })
                .collect();
            csv.rows(&rows)?;
            if !warmup {
                out.runs.push(Sample {
                    arm: arm.to_string(),
                    round,
                    figures,
                });
            }
        }
        Ok(out)
    }
}

impl Samples {
    /// Every measured value of `metric` in `arm`'s runs.
    pub(crate) fn of(&self, arm: &str, metric: &str) -> Vec<f64> {
        self.runs
            .iter()
            .filter(|r| r.arm == arm)
            .flat_map(|r| {
                r.figures
                    .iter()
                    .filter(|(m, _)| m == metric)
                    .map(|(_, v)| *v)
            })
            .collect()
    }

    pub(crate) fn mean(&self, arm: &str, metric: &str) -> f64 {
        mean(&self.of(arm, metric))
    }

    pub(crate) fn spread(&self, arm: &str, metric: &str) -> f64 {
        spread(&self.of(arm, metric))
    }

    pub(crate) fn max(&self, arm: &str, metric: &str) -> f64 {
        self.of(arm, metric).into_iter().fold(0.0, f64::max)
    }

    /// Mean of `a`'s metric over mean of `b`'s.
    pub(crate) fn ratio(&self, a: (&str, &str), b: (&str, &str)) -> f64 {
        self.mean(a.0, a.1) / self.mean(b.0, b.1)
    }

    /// The measured runs for result.json: arm, round and figures (repeated metrics as lists).
    pub(crate) fn json(&self) -> Value {
        let runs: Vec<Value> = self
            .runs
            .iter()
            .map(|r| {
                let mut o = json!({"arm": r.arm, "round": r.round});
                for (m, v) in &r.figures {
                    match &o[m] {
                        Value::Null => o[m] = json!(v),
                        Value::Array(_) => o[m].as_array_mut().expect("array").push(json!(v)),
                        prev => o[m] = json!([prev.clone(), v]),
                    }
                }
                o
            })
            .collect();
        json!(runs)
    }
}

/// A benchmark's output directory: `data/runs/bench/<time>-<what>/`.
pub(crate) fn out_dir(runs_dir: &Path, what: &str) -> Result<PathBuf> {
    let d = runs_dir.join("bench").join(format!(
        "{}-{what}",
        chrono::Local::now().format("%Y%m%d-%H%M%S")
    ));
    std::fs::create_dir_all(&d)?;
    Ok(d)
}
