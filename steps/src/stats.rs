//! Statistics of repeated figures, the one place for them: mean, min, max and spread, used by
//! `analyze` (arms' repeats) and `bench` (A B B A runs), and latency histograms that are merged,
//! never averaged. A leaf.

use hdrhistogram::Histogram;

/// Mean, min, max and spread ((max − min) / mean, in %) of repeated figures; in summary.json
/// `{n, mean, min, max, spread_pct}`.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub(crate) struct Stats {
    pub(crate) n: usize,
    pub(crate) mean: f64,
    pub(crate) min: f64,
    pub(crate) max: f64,
    pub(crate) spread_pct: Option<f64>,
}

impl Stats {
    pub(crate) fn of(v: &[f64]) -> Option<Stats> {
        if v.is_empty() {
            return None;
        }
        let mean = v.iter().sum::<f64>() / v.len() as f64;
        let (min, max) = v
            .iter()
            .fold((f64::MAX, f64::MIN), |(a, b), x| (a.min(*x), b.max(*x)));
        Some(Stats::from_parts(v.len(), mean, min, max))
    }

    /// From an aggregate computed elsewhere (a Polars group-by): the spread derived the one way.
    pub(crate) fn from_parts(n: usize, mean: f64, min: f64, max: f64) -> Stats {
        Stats {
            n,
            mean,
            min,
            max,
            spread_pct: (mean != 0.0).then(|| 100.0 * (max - min) / mean.abs()),
        }
    }
}

/// The mean of `v`, None when empty.
pub(crate) fn mean_of(v: &[f64]) -> Option<f64> {
    Stats::of(v).map(|s| s.mean)
}

/// The mean of `v` (0 when empty).
pub(crate) fn mean(v: &[f64]) -> f64 {
    Stats::of(v).map_or(0.0, |s| s.mean)
}

/// The spread of `v` in % (0 when empty or the mean is 0).
pub(crate) fn spread(v: &[f64]) -> f64 {
    Stats::of(v).and_then(|s| s.spread_pct).unwrap_or(0.0)
}

/// Items in alternating order over `repeats` rounds (A B, B A, A B …) with each round's index:
/// the one place the comparison order is decided, for arms (`init`) and benchmarks alike.
pub(crate) fn alternating<T: Clone>(items: &[T], repeats: u32) -> Vec<(u32, T)> {
    let mut out = vec![];
    for k in 0..repeats {
        let mut round = items.to_vec();
        if k % 2 == 1 {
            round.reverse();
        }
        out.extend(round.into_iter().map(|x| (k, x)));
    }
    out
}

/// A latency histogram as `[[microseconds, count], …]` of its recorded buckets (each bucket's
/// highest equivalent value): `analyze` merges these across runs and reads percentiles from the
/// merged histogram, never by averaging percentiles.
pub(crate) fn hist_buckets(h: &Histogram<u64>) -> Vec<[u64; 2]> {
    h.iter_recorded()
        .map(|v| {
            [
                h.highest_equivalent(v.value_iterated_to()),
                v.count_at_value(),
            ]
        })
        .collect()
}

/// The inverse of `hist_buckets`: adds `[[µs, count], …]` buckets (a workload.json's `hist_us`)
/// into a histogram.
pub(crate) fn add_pairs(into: &mut Histogram<u64>, buckets: &[[u64; 2]]) {
    for [v, n] in buckets {
        let _ = into.record_n((*v).max(1), *n);
    }
}

/// The histogram `TxnStats` keeps: 1 µs to 10 min, 3 significant digits.
pub(crate) fn new_histogram() -> Histogram<u64> {
    Histogram::new_with_bounds(1, 600_000_000, 3).expect("histogram bounds")
}
