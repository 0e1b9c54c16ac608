//! This machine's churn at a scale model: new orders per warehouse per minute that complete
//! TPROC-C runs of a scaled size measured here, cached in `$HOTLAB_HOME/churn.json` (keyed by
//! study, size, warehouses and VUs; the last `KEEP` runs). `init` derives a scale model's time
//! factor from the median, so the model follows the machine it runs on; the first run of a size
//! uses the study file's value. Reads and writes only that file.

use std::path::Path;

use anyhow::{Context, Result};
use serde_json::{json, Value};

/// Runs kept per key.
pub(crate) const KEEP: usize = 6;

pub(crate) fn key(study: &str, size: &str, warehouses: i64, vus: u32) -> String {
    format!("{study}/{size}/{warehouses}wh/{vus}vu")
}

fn file(home: &Path) -> std::path::PathBuf {
    home.join("churn.json")
}

/// Appends one run's new orders per warehouse per minute under `key`.
pub(crate) fn record(home: &Path, key: &str, nopm_per_warehouse: f64) -> Result<()> {
    let path = file(home);
    let mut all: Value = std::fs::read_to_string(&path)
        .ok()
        .and_then(|t| serde_json::from_str(&t).ok())
        .filter(Value::is_object)
        .unwrap_or_else(|| json!({}));
    let list = all[key]
        .as_array()
        .cloned()
        .unwrap_or_default()
        .into_iter()
        .chain([json!(nopm_per_warehouse)])
        .collect::<Vec<_>>();
    let skip = list.len().saturating_sub(KEEP);
    all[key] = Value::Array(list.into_iter().skip(skip).collect());
    std::fs::create_dir_all(home)?;
    let tmp = path.with_extension(format!("json.tmp{}", std::process::id()));
    std::fs::write(&tmp, serde_json::to_string_pretty(&all)? + "\n")
        .with_context(|| format!("writing {}", tmp.display()))?;
    std::fs::rename(&tmp, &path).with_context(|| format!("writing {}", path.display()))?;
    Ok(())
}

/// The median of the runs cached under `key`, and how many there were.
pub(crate) fn measured(home: &Path, key: &str) -> Option<(f64, usize)> {
    let all: Value = serde_json::from_str(&std::fs::read_to_string(file(home)).ok()?).ok()?;
    let mut v: Vec<f64> = all[key]
        .as_array()?
        .iter()
        .filter_map(Value::as_f64)
        .collect();
    if v.is_empty() {
        return None;
    }
    v.sort_by(f64::total_cmp);
    let n = v.len();
    let median = if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    };
    Some((median, n))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_the_last_runs_and_gives_their_median() {
        let home = std::env::temp_dir().join(format!("hotlab-churn-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&home);
        let k = key("s", "scaled", 2, 2);
        assert_eq!(measured(&home, &k), None);
        for v in [1.0, 100.0, 30.0, 20.0, 25.0, 21.0, 22.0, 23.0] {
            record(&home, &k, v).unwrap();
        }
        // The last six: 30, 20, 25, 21, 22, 23 -> median 22.5.
        assert_eq!(measured(&home, &k), Some((22.5, 6)));
        assert_eq!(measured(&home, &key("s", "scaled", 4, 2)), None);
        std::fs::remove_dir_all(&home).unwrap();
    }
}
