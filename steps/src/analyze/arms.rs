//! Per-arm aggregates: the count, mean, min and max (and from them the spread) of named per-run
//! figures, computed as one Polars group-by over a long table (arm, figure, value) of the arms'
//! runs. The study tables (`tprocc`, `script`, `mechanism`) and the baseline comparison read
//! their cells from here; `Stats::of` stays for one-off figures outside a table.

use std::collections::HashMap;

use anyhow::Result;
use polars::prelude::*;

use crate::stats::Stats;

/// A figure of a run: its name and how to read it (None when the run did not measure it).
pub(crate) type Figure<'a, T> = (String, Box<dyn Fn(&T) -> Option<f64> + 'a>);

/// (arm, figure) → the arm's runs' aggregate; absent when no run of the arm has the figure.
#[derive(Debug, Default, Clone)]
pub(crate) struct ArmStats(HashMap<(String, String), Stats>);

impl ArmStats {
    /// One group-by over every (arm, figure, value) of `arms`' runs.
    pub(crate) fn of<T>(arms: &[(String, Vec<&T>)], figures: &[Figure<'_, T>]) -> Result<ArmStats> {
        let (mut arm, mut figure, mut value) = (vec![], vec![], vec![]);
        for (a, runs) in arms {
            for r in runs {
                for (name, get) in figures {
                    if let Some(v) = get(r) {
                        arm.push(a.as_str());
                        figure.push(name.as_str());
                        value.push(v);
                    }
                }
            }
        }
        let df = DataFrame::new(
            value.len(),
            vec![
                Column::new("arm".into(), arm),
                Column::new("figure".into(), figure),
                Column::new("value".into(), value),
            ],
        )?
        .lazy()
        .group_by([col("arm"), col("figure")])
        .agg([
            col("value").count().cast(DataType::Float64).alias("n"),
            col("value").mean().alias("mean"),
            col("value").min().alias("min"),
            col("value").max().alias("max"),
        ])
        .collect()?;
        let text = |c: &str| super::load::text(&df, c);
        let number = |c: &str| super::load::number(&df, c);
        let (arms_c, figures_c) = (text("arm")?, text("figure")?);
        let (n, mean, min, max) = (
            number("n")?,
            number("mean")?,
            number("min")?,
            number("max")?,
        );
        let mut out = HashMap::new();
        for i in 0..df.height() {
            if let (Some(a), Some(f), Some(n), Some(mean), Some(min), Some(max)) = (
                arms_c.get(i),
                figures_c.get(i),
                n.get(i),
                mean.get(i),
                min.get(i),
                max.get(i),
            ) {
                out.insert(
                    (a.to_string(), f.to_string()),
                    Stats::from_parts(n as usize, mean, min, max),
                );
            }
        }
        Ok(ArmStats(out))
    }

    /// The aggregate of `figure` over `arm`'s runs.
    pub(crate) fn get(&self, arm: &str, figure: &str) -> Option<Stats> {
        self.0.get(&(arm.to_string(), figure.to_string())).copied()
    }

    /// Its mean.
    pub(crate) fn mean(&self, arm: &str, figure: &str) -> Option<f64> {
        self.get(arm, figure).map(|s| s.mean)
    }
}

/// A figure from a name and a getter.
pub(crate) fn figure<'a, T>(
    name: impl Into<String>,
    get: impl Fn(&T) -> Option<f64> + 'a,
) -> Figure<'a, T> {
    (name.into(), Box::new(get))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_group_by_agrees_with_stats_of() {
        let runs = [
            (Some(10.0), 1.0),
            (Some(14.5), 2.0),
            (None, 3.0),
            (Some(-2.0), 4.0),
        ];
        let refs: Vec<&(Option<f64>, f64)> = runs.iter().collect();
        let arms = vec![
            ("a".to_string(), refs[..3].to_vec()),
            ("b".to_string(), refs[3..].to_vec()),
        ];
        let figs = [
            figure("x", |r: &(Option<f64>, f64)| r.0),
            figure("y", |r: &(Option<f64>, f64)| Some(r.1)),
        ];
        let s = ArmStats::of(&arms, &figs).unwrap();
        assert_eq!(s.get("a", "x"), Stats::of(&[10.0, 14.5]));
        assert_eq!(s.get("a", "y"), Stats::of(&[1.0, 2.0, 3.0]));
        assert_eq!(s.get("b", "x"), Stats::of(&[-2.0]));
        assert_eq!(s.get("b", "nosuch"), None);
        assert_eq!(s.mean("b", "y"), Some(4.0));
        // An arm none of whose runs has the figure has no aggregate, not a zero.
        let none = vec![("c".to_string(), vec![&runs[2]])];
        assert_eq!(ArmStats::of(&none, &figs).unwrap().get("c", "x"), None);
    }
}
