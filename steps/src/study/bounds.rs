//! Bounds of every number a user gives hotlab (flags and study fields): finite, and inside a
//! stated range, checked before anything acts. There is no panic path from input: a value out
//! of range is one line naming it and the range.

use anyhow::{bail, Result};

/// The longest duration hotlab accepts: 7 days.
pub(crate) const MAX_SECONDS: f64 = 7.0 * 86_400.0;

/// A value as a user would write it back: `1e308`, not three hundred digits.
fn shown(v: f64) -> String {
    if v.is_finite() && v.abs() >= 1e9 {
        format!("{v:e}")
    } else {
        v.to_string()
    }
}

/// A duration in seconds: finite, at least `min`, at most 7 days.
pub(crate) fn seconds(name: &str, v: f64, min: f64) -> Result<f64> {
    if !v.is_finite() || v < min || v > MAX_SECONDS {
        bail!(
            "{name} {} is out of range: seconds from {min} to {MAX_SECONDS} (7 days)",
            shown(v)
        );
    }
    Ok(v)
}

/// A percentage: finite, 0 to 100.
pub(crate) fn percent(name: &str, v: f64) -> Result<f64> {
    if !v.is_finite() || !(0.0..=100.0).contains(&v) {
        bail!(
            "{name} {} is out of range: a percentage from 0 to 100",
            shown(v)
        );
    }
    Ok(v)
}

/// clap's parser of a percentage flag (`--threshold`).
pub(crate) fn parse_percent(s: &str) -> std::result::Result<f64, String> {
    let v: f64 = s.parse().map_err(|_| format!("{s:?} is not a number"))?;
    percent("the value", v).map_err(|e| e.to_string())
}

/// clap's parser of a flag in seconds that may be 0 (`--rampup`).
pub(crate) fn parse_seconds(s: &str) -> std::result::Result<f64, String> {
    let v: f64 = s.parse().map_err(|_| format!("{s:?} is not a number"))?;
    seconds("the value", v, 0.0).map_err(|e| e.to_string())
}

/// clap's parser of a measured duration (`--duration`): at least a second.
pub(crate) fn parse_duration(s: &str) -> std::result::Result<f64, String> {
    let v: f64 = s.parse().map_err(|_| format!("{s:?} is not a number"))?;
    seconds("the value", v, 1.0).map_err(|e| e.to_string())
}

/// Any other number: finite, from `lo` to `hi`.
pub(crate) fn count(name: &str, v: f64, lo: f64, hi: f64) -> Result<f64> {
    if !v.is_finite() || v < lo || v > hi {
        bail!("{name} {} is out of range: from {lo} to {hi}", shown(v));
    }
    Ok(v)
}

/// `snapshot_every_s` of a size: at least 0.1 s.
pub(crate) fn snapshot_every(e: Option<f64>) -> Result<()> {
    if let Some(e) = e {
        seconds("snapshot_every_s", e, 0.1)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn non_finite_and_out_of_range_values_are_refused() {
        for v in [f64::NAN, f64::INFINITY, -1.0, 1e308, 1e12, 1e-7] {
            assert!(seconds("--duration", v, 1.0).is_err(), "{v}");
        }
        assert_eq!(seconds("--duration", 60.0, 1.0).unwrap(), 60.0);
        for v in [f64::NAN, -1.0, 1e12, 100.5] {
            assert!(percent("--threshold", v).is_err(), "{v}");
        }
        assert!(percent("--threshold", 0.0).is_ok() && percent("--threshold", 100.0).is_ok());
        let e = seconds("rampup_s", f64::NAN, 0.0).unwrap_err().to_string();
        assert!(e.contains("rampup_s") && e.contains("7 days"), "{e}");
        let e = seconds("--duration", 1e308, 1.0).unwrap_err().to_string();
        assert!(e.starts_with("--duration 1e308 is out of range"), "{e}");
    }
}
