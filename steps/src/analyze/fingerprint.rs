//! A run's identity beyond its arm's name: what must be the same for two runs of an arm to be
//! averaged. Read from meta.json: study and size, the size as resolved (warehouses, clients,
//! VUs, window, scale variables), the arm's fillfactors and partitioning, the server settings
//! as applied, PostgreSQL major.minor, the host (CPU, cores, RAM) and hotlab's revision.
//! `analyze` refuses to average runs of one arm whose fingerprints differ, naming what differs,
//! unless `--mix` pools them on purpose (and the summary says so).

use std::collections::{BTreeMap, BTreeSet};

use serde_json::Value;
use sha2::{Digest, Sha256};

use super::load::ArmRun;

/// The fingerprint's parts, in the order they are named: (part, value as shown).
pub(crate) fn parts(r: &ArmRun) -> BTreeMap<&'static str, String> {
    let (m, plan) = (&r.meta, &r.plan);
    // A part's value as JSON text, keys sorted (as meta.json reads back), `?` for none.
    let text = |v: Value| match v {
        Value::Null => "?".to_string(),
        Value::String(s) => s,
        v => v.to_string(),
    };
    fn json<T: serde::Serialize>(v: &T) -> Value {
        serde_json::to_value(v).unwrap_or(Value::Null)
    }
    let mut arm = json(&plan.arm);
    if let Some(o) = arm.as_object_mut() {
        o.remove("name");
    }
    let version = m
        .server
        .as_ref()
        .map(|s| s.version_num)
        .map(|n| format!("{}.{}", n / 10000, n % 10000))
        .unwrap_or_else(|| "?".into());
    let host = m.host.clone().unwrap_or_default();
    let mut p = BTreeMap::new();
    p.insert("1 study", plan.study.clone());
    p.insert("2 size", plan.size.clone());
    p.insert("3 size as resolved", text(json(&plan.size_spec)));
    p.insert("4 arm", text(arm));
    p.insert("5 server settings", text(json(&plan.server_settings)));
    p.insert("6 PostgreSQL", version);
    p.insert(
        "7 host",
        format!(
            "{}, {} cores, {:.0} GiB",
            host.cpu.unwrap_or_else(|| "?".into()),
            host.cores,
            host.memory_bytes.unwrap_or(0) as f64 / 1073741824.0
        ),
    );
    p.insert(
        "8 hotlab",
        m.hotlab
            .as_ref()
            .and_then(|h| h.git.clone())
            .unwrap_or_else(|| "?".into()),
    );
    p
}

/// The part's name as printed (`2 size` → `size`).
fn label(k: &str) -> &str {
    k.split_once(' ').map(|(_, l)| l).unwrap_or(k)
}

/// The first 8 hex digits of the parts' sha256: what `history` will show.
pub(crate) fn short(parts: &BTreeMap<&'static str, String>) -> String {
    let mut h = Sha256::new();
    for (k, v) in parts {
        h.update(k.as_bytes());
        h.update([0]);
        h.update(v.as_bytes());
        h.update([0]);
    }
    format!("{:x}", h.finalize())[..8].to_string()
}

/// The parts that differ among an arm's runs: (part, its distinct values).
pub(crate) type Diff = Vec<(String, Vec<String>)>;

/// Arms whose runs differ, each with what differs.
pub(crate) fn differences(runs: &[ArmRun]) -> Vec<(String, Diff)> {
    let mut by_arm: BTreeMap<String, Vec<BTreeMap<&'static str, String>>> = BTreeMap::new();
    for r in runs {
        by_arm.entry(r.arm()).or_default().push(parts(r));
    }
    let mut out = vec![];
    for (arm, fps) in by_arm {
        let mut diff = vec![];
        for k in fps[0].keys() {
            let values: BTreeSet<&String> = fps.iter().filter_map(|f| f.get(k)).collect();
            if values.len() > 1 {
                diff.push((label(k).to_string(), values.into_iter().cloned().collect()));
            }
        }
        if !diff.is_empty() {
            out.push((arm, diff));
        }
    }
    out
}

/// "size (ci vs quick), PostgreSQL (18.6 vs 18.7)": long values cut to their first 40 chars.
pub(crate) fn describe(diff: &[(String, Vec<String>)]) -> String {
    diff.iter()
        .map(|(k, vs)| {
            let short: Vec<String> = vs.iter().map(|v| cut(v, 40)).collect();
            format!("{k} ({})", short.join(" vs "))
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// The pooled arms' runs, one row each: the run, its fingerprint's short hash and the value of
/// every part that differs (the tables below it average these rows).
pub(crate) fn runs_table(runs: &[ArmRun], pooled: &[(String, Diff)]) -> String {
    let mut differing: Vec<String> = vec![];
    for (_, diff) in pooled {
        for (k, _) in diff {
            if !differing.contains(k) {
                differing.push(k.clone());
            }
        }
    }
    let mut header = vec!["run", "fingerprint"];
    header.extend(differing.iter().map(String::as_str));
    let rows: Vec<Vec<String>> = runs
        .iter()
        .filter(|r| pooled.iter().any(|(a, _)| *a == r.arm()))
        .map(|r| {
            let p = parts(r);
            let mut row = vec![r.name(), short(&p)];
            for k in &differing {
                let v = p
                    .iter()
                    .find(|(pk, _)| label(pk) == k)
                    .map(|(_, v)| v.clone())
                    .unwrap_or_default();
                row.push(cut(&v, 40));
            }
            row
        })
        .collect();
    super::md_table(&header, &rows)
}

/// A long value cut to its first `n` characters.
pub(crate) fn cut(v: &str, n: usize) -> String {
    if v.chars().count() > n {
        format!("{}…", v.chars().take(n).collect::<String>())
    } else {
        v.to_string()
    }
}

/// An arm pooled on purpose, and what differs among its runs (summary.json `pooled`).
#[derive(Debug, Clone, serde::Serialize)]
pub(crate) struct PooledArm {
    arm: String,
    differs: Vec<PartValues>,
}

/// A fingerprint part and the distinct values the runs have.
#[derive(Debug, Clone, serde::Serialize)]
pub(crate) struct PartValues {
    part: String,
    values: Vec<String>,
}

/// The differences as summary.json's `pooled`.
pub(crate) fn pooled(d: &[(String, Diff)]) -> Vec<PooledArm> {
    d.iter()
        .map(|(arm, diff)| PooledArm {
            arm: arm.clone(),
            differs: diff
                .iter()
                .map(|(k, v)| PartValues {
                    part: k.clone(),
                    values: v.clone(),
                })
                .collect(),
        })
        .collect()
}

/// The identity of a run as its rows of `runs` carry it, and the runs table's first columns.
#[derive(Debug, Clone, serde::Serialize)]
pub(crate) struct Identity {
    pub(crate) study: String,
    pub(crate) size: String,
    /// The sweep directory's name (`<YYYYMMDD-HHMMSS>-<label>`).
    pub(crate) sweep: String,
    /// The arm directory's name (`tuned-r2`).
    pub(crate) run: String,
    pub(crate) arm: String,
    /// The first 8 hex digits of the fingerprint's sha256 (`analyze/fingerprint.rs`).
    pub(crate) fingerprint: String,
    pub(crate) start: String,
    pub(crate) end: String,
    pub(crate) postgres: String,
    pub(crate) host: String,
    pub(crate) hotlab: String,
}

impl Identity {
    /// From the run and its fingerprint's parts (`fingerprint::parts`).
    pub(crate) fn of(r: &ArmRun, parts: &BTreeMap<&'static str, String>) -> Identity {
        let part = |k: &str| parts.get(k).cloned().unwrap_or_default();
        Identity {
            study: r.plan.study.clone(),
            size: r.plan.size.clone(),
            sweep: r
                .dir
                .parent()
                .and_then(|p| p.file_name())
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default(),
            run: r.name(),
            arm: r.arm(),
            fingerprint: short(parts),
            start: r.meta.start.clone().unwrap_or_default(),
            end: r.meta.end.clone().unwrap_or_default(),
            postgres: part("6 PostgreSQL"),
            host: part("7 host"),
            hotlab: part("8 hotlab"),
        }
    }
}

/// A run's identity, for its rows of `runs`.
pub(crate) fn identity(r: &ArmRun) -> Identity {
    Identity::of(r, &parts(r))
}
