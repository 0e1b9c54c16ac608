//! The scale rule: a study size derived from an article size so that a smaller machine reproduces
//! the article's regime, not only its workload. Everything that is bytes scales with the data
//! (the warehouse count): shared_buffers, effective_cache_size, maintenance_work_mem,
//! max_wal_size, min_wal_size. Everything that is time scales with how fast this machine churns
//! each warehouse against the article (new orders per warehouse per minute): ramp-up, measured
//! window, snapshot interval, checkpoint_timeout. So a warehouse receives about the article's
//! number of new orders per window, the data grows out of shared buffers the way the article's
//! did, and checkpoints come at the article's rate per unit of WAL. Pure: reads nothing.

use std::collections::BTreeMap;

use anyhow::{bail, Context, Result};
use serde::{Deserialize, Serialize};

use crate::workload::script::size::{PgbenchScale, PgbenchSize};
use crate::workload::tprocc::size::{Scale, TproccSize as Size};

/// Settings that are bytes: they follow the data.
pub(crate) const BYTE_SETTINGS: &[&str] = &[
    "shared_buffers",
    "effective_cache_size",
    "maintenance_work_mem",
    "max_wal_size",
    "min_wal_size",
];
/// Settings that are time: they follow the churn. (work_mem is per operation, not per byte of
/// data, and stays as it is.)
pub(crate) const TIME_SETTINGS: &[&str] = &["checkpoint_timeout"];

/// PostgreSQL's smallest useful buffer pool for this study, and its smallest checkpoint_timeout.
pub(crate) const MIN_SHARED_BUFFERS_KB: f64 = 128.0 * 1024.0;
pub(crate) const MIN_CHECKPOINT_TIMEOUT_S: f64 = 30.0;

/// What the rule derived, for meta.json, sweep.json and the report.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Derived {
    pub(crate) from: String,
    /// What the data is counted in (warehouses, users) and how many the article size and the
    /// model have.
    pub(crate) unit: String,
    pub(crate) from_count: i64,
    pub(crate) count: i64,
    pub(crate) bytes_factor: f64,
    pub(crate) time_factor: f64,
    /// Where the time factor came from: "time_factor", "nopm_per_warehouse N" or a flag.
    pub(crate) time_factor_source: String,
    /// Every derived value: setting or size field → (article value, model value).
    pub(crate) values: BTreeMap<String, (String, String)>,
}

impl Derived {
    /// One line per derived value, for stderr and the report.
    pub(crate) fn describe(&self) -> String {
        let mut s = format!(
            "scale model of {} ({} → {} {}): bytes × {:.4}, time × {:.4} ({})\n",
            self.from,
            self.from_count,
            self.count,
            self.unit,
            self.bytes_factor,
            self.time_factor,
            self.time_factor_source
        );
        for (k, (a, b)) in &self.values {
            s.push_str(&format!("  {k:<22} {a:>8} -> {b}\n"));
        }
        s
    }
}

/// A number with one of `units` (name, multiplier; "" is the bare number's unit).
fn parse_unit(v: &str, what: &str, units: &[(&str, f64)]) -> Result<f64> {
    let v = v.trim();
    let split = v.find(|c: char| c.is_ascii_alphabetic()).unwrap_or(v.len());
    let (n, unit) = v.split_at(split);
    let n: f64 = n
        .trim()
        .parse()
        .with_context(|| format!("{v:?} is not a {what}"))?;
    match units.iter().find(|(u, _)| *u == unit.trim()) {
        Some((_, mult)) => Ok(n * mult),
        None => bail!(
            "{v:?}: unknown {what} unit {:?} (use {})",
            unit.trim(),
            units
                .iter()
                .filter(|(u, _)| !u.is_empty())
                .map(|(u, _)| *u)
                .collect::<Vec<_>>()
                .join(", ")
        ),
    }
}

/// A PostgreSQL memory or size setting in kB ("2GB", "512MB", "64kB", "8192" = kB).
pub(crate) fn parse_kb(v: &str) -> Result<f64> {
    let k = 1024.0;
    parse_unit(
        v,
        "size",
        &[
            ("", 1.0),
            ("kB", 1.0),
            ("MB", k),
            ("GB", k * k),
            ("TB", k * k * k),
        ],
    )
}

/// kB as PostgreSQL writes them: the largest unit that divides evenly, whole MB at least.
pub(crate) fn format_kb(kb: f64) -> String {
    let mb = (kb / 1024.0).round() as i64;
    if mb % (1024 * 1024) == 0 && mb > 0 {
        format!("{}TB", mb / (1024 * 1024))
    } else if mb % 1024 == 0 && mb > 0 {
        format!("{}GB", mb / 1024)
    } else {
        format!("{mb}MB")
    }
}

/// A PostgreSQL time setting in seconds ("15min", "300s", "1h", "300" = s).
pub(crate) fn parse_s(v: &str) -> Result<f64> {
    parse_unit(
        v,
        "duration",
        &[
            ("", 1.0),
            ("s", 1.0),
            ("ms", 0.001),
            ("min", 60.0),
            ("h", 3600.0),
            ("d", 86400.0),
        ],
    )
}

/// Whole seconds as PostgreSQL writes them: minutes when they divide evenly.
pub(crate) fn format_s(s: f64) -> String {
    let s = s.round() as i64;
    if s % 60 == 0 && s > 0 {
        format!("{}min", s / 60)
    } else {
        format!("{s}s")
    }
}

/// The time factor of a scale model and where it came from: the article's churn over this
/// machine's (measured, `--nopm-per-warehouse`, or the study file's), or the study's
/// `time_factor`.
fn time_factor(from: &Size, scale: &Scale, churn: Option<(f64, String)>) -> Result<(f64, String)> {
    if scale.nopm_per_warehouse.is_some() && scale.time_factor.is_some() {
        bail!("scale: give nopm_per_warehouse or time_factor, not both");
    }
    let given = churn.or_else(|| {
        scale
            .nopm_per_warehouse
            .map(|n| (n, "nopm_per_warehouse in the study file".to_string()))
    });
    Ok(match (given, scale.time_factor) {
        (Some((n, src)), _) => {
            let article = from.nopm_per_warehouse.with_context(|| {
                format!("size {} has no nopm_per_warehouse (the article's churn)", scale.from)
            })?;
            super::bounds::count("nopm_per_warehouse", n, 1e-6, 1e9)?;
            (article / n, format!("{article} / {n:.0} new orders per warehouse per minute, {src}"))
        }
        (None, Some(t)) => (t, "time_factor from the study file".to_string()),
        (None, None) => bail!(
            "scale: needs nopm_per_warehouse (this machine's new orders per warehouse per minute) or time_factor"
        ),
    })
}

/// The model of `from` (an article size, with the study's server settings merged in) at
/// `scale`, with this machine's memory (`mem_kb`, None to skip the check). Fields the scaled
/// size sets itself (`own`) win over derived ones.
pub(crate) fn derive(
    study_server: &BTreeMap<String, String>,
    from: &Size,
    own: &Size,
    scale: &Scale,
    churn: Option<(f64, String)>,
    mem_kb: Option<f64>,
) -> Result<(Size, Derived)> {
    let from_wh = from
        .warehouses
        .with_context(|| format!("size {} has no warehouses to scale from", scale.from))?;
    if scale.warehouses < 1 {
        bail!(
            "scale.warehouses must be at least 1 (got {})",
            scale.warehouses
        );
    }
    let b = scale.warehouses as f64 / from_wh as f64;
    let (t, source) = time_factor(from, scale, churn)?;
    super::bounds::count("the time factor", t, 1e-6, 1e6)?;
    let server = super::merge_settings(study_server, &from.server);
    let mut values = BTreeMap::new();
    let mut out_server = BTreeMap::new();
    for (k, v) in &server {
        let scaled = if BYTE_SETTINGS.contains(&k.as_str()) {
            format_kb(parse_kb(v).with_context(|| format!("server setting {k}"))? * b)
        } else if TIME_SETTINGS.contains(&k.as_str()) {
            format_s(parse_s(v).with_context(|| format!("server setting {k}"))? * t)
        } else {
            continue;
        };
        values.insert(k.clone(), (v.clone(), scaled.clone()));
        out_server.insert(k.clone(), scaled);
    }
    let mut size = from.clone();
    if let Some(ram) = &from.ram {
        let scaled = format_kb(parse_kb(ram).context("ram")? * b);
        values.insert("ram".into(), (ram.clone(), scaled.clone()));
        size.ram = Some(scaled);
    }
    size.nopm_per_warehouse = None;
    size.scale = None;
    size.warehouses = Some(scale.warehouses);
    let mut time = |name: &str, v: Option<f64>| -> Option<f64> {
        let v = v?;
        let m = (v * t).round().max(1.0);
        values.insert(name.into(), (format!("{v}"), format!("{m}")));
        Some(m)
    };
    size.rampup_s = time("rampup_s", from.rampup_s);
    size.duration_s = time("duration_s", from.duration_s);
    size.snapshot_every_s = time("snapshot_every_s", from.snapshot_every_s);
    values.insert(
        "warehouses".into(),
        (from_wh.to_string(), scale.warehouses.to_string()),
    );
    // The scaled size's own fields win.
    size.server = out_server;
    size.server.extend(own.server.clone());
    macro_rules! own {
        ($($f:ident),*) => { $( if own.$f.is_some() { size.$f = own.$f.clone(); } )* };
    }
    own!(
        vus,
        rampup_s,
        duration_s,
        snapshot_every_s,
        profile,
        all_warehouses
    );
    check(&size, &server, t, from_wh, from.nopm_per_warehouse, mem_kb)?;
    Ok((
        size,
        Derived {
            from: scale.from.clone(),
            unit: "warehouses".into(),
            from_count: from_wh,
            count: scale.warehouses,
            bytes_factor: b,
            time_factor: t,
            time_factor_source: source,
            values,
        },
    ))
}

/// Refuses a model that cannot hold the regime: too little shared buffers, a window shorter than
/// two snapshot intervals, a checkpoint_timeout below PostgreSQL's minimum, more memory than
/// the machine has. Each message names the smallest (or largest) valid value.
fn check(
    size: &Size,
    article_server: &BTreeMap<String, String>,
    t: f64,
    from_wh: i64,
    article_nopm: Option<f64>,
    mem_kb: Option<f64>,
) -> Result<()> {
    let kb = |k: &str| size.server.get(k).map(|v| parse_kb(v)).transpose();
    if let Some(sb) = kb("shared_buffers")? {
        if sb < MIN_SHARED_BUFFERS_KB {
            let per_wh = parse_kb(&article_server["shared_buffers"])? / from_wh as f64;
            let min_wh = (MIN_SHARED_BUFFERS_KB / per_wh).ceil() as i64;
            bail!(
                "scale to {} warehouses leaves {} of shared buffers, below 128MB; the smallest valid scale is {min_wh} warehouses",
                size.warehouses.unwrap_or(0),
                format_kb(sb)
            );
        }
    }
    if let (Some(d), Some(e)) = (size.duration_s, size.snapshot_every_s) {
        if d < 2.0 * e {
            bail!(
                "the measured window ({d} s) is shorter than two snapshot intervals ({e} s each); the smallest valid window is {} s (or snapshot_every_s {})",
                2.0 * e,
                (d / 2.0).floor()
            );
        }
    }
    if let Some(ct) = size.server.get("checkpoint_timeout") {
        let s = parse_s(ct)?;
        if s < MIN_CHECKPOINT_TIMEOUT_S {
            let article = parse_s(&article_server["checkpoint_timeout"])?;
            let min_t = MIN_CHECKPOINT_TIMEOUT_S / article;
            bail!(
                "the time factor {t:.4} makes checkpoint_timeout {s:.0} s, below PostgreSQL's 30 s; the smallest valid time factor is {min_t:.4}{}",
                article_nopm
                    .map(|n| format!(" (--nopm-per-warehouse at most {:.0})", n / min_t))
                    .unwrap_or_default()
            );
        }
    }
    // The memory a model asks for: its RAM where the article size states one, else its
    // effective_cache_size.
    let asked = match &size.ram {
        Some(r) => Some(("RAM", parse_kb(r)?)),
        None => kb("effective_cache_size")?.map(|k| ("effective_cache_size", k)),
    };
    if let (Some(mem), Some((what, need))) = (mem_kb, asked) {
        if need > mem {
            let per_wh = need / size.warehouses.unwrap_or(1).max(1) as f64;
            bail!(
                "scale to {} warehouses asks for {} of {what}; this machine has {} of memory: the largest scale that fits is {} warehouses",
                size.warehouses.unwrap_or(0),
                format_kb(need),
                format_kb(mem),
                (mem / per_wh).floor() as i64
            );
        }
    }
    Ok(())
}

/// PostgreSQL's defaults of the time settings a pgbench-script model scales when the article
/// left them alone, and the smallest value each accepts.
const PGBENCH_TIME_DEFAULTS: &[(&str, f64, f64)] = &[
    ("checkpoint_timeout", 300.0, MIN_CHECKPOINT_TIMEOUT_S),
    ("autovacuum_naptime", 60.0, 1.0),
];

/// A pgbench-script model of the article size `from` (the study's settings merged in) by one
/// factor: the data variables named in `scale.vars` and the byte settings × factor; the ramp-up,
/// checkpoint_timeout and autovacuum_naptime (PostgreSQL's defaults where the article kept them)
/// × factor, at PostgreSQL's floors; and the transactions: the article's throughput over its
/// whole run × factor, so each row is updated as often as in the article whatever this machine's
/// speed. The model's own clients, jobs, snapshot interval, seed and server settings win.
pub(crate) fn derive_pgbench(
    study_server: &BTreeMap<String, String>,
    from: &PgbenchSize,
    own: &PgbenchSize,
    scale: &PgbenchScale,
) -> Result<(PgbenchSize, Derived)> {
    let f = scale.factor;
    if !(f > 0.0 && f <= 1.0) {
        bail!("scale.factor must be above 0 and at most 1 (got {f})");
    }
    super::bounds::count("scale.article_tps", scale.article_tps, 1e-6, 1e9)?;
    let from_duration = from.duration_s.with_context(|| {
        format!(
            "size {} has no duration_s: the article's run time is what the transactions scale from",
            scale.from
        )
    })?;
    let mut values = BTreeMap::new();
    let mut size = from.clone();
    size.scale = None;
    let unit = scale_vars(from, own, scale, &mut size, &mut values)?;
    size.vars.extend(own.vars.clone());
    let out = scale_server(study_server, from, f, &mut values)?;
    let rampup = from.rampup_s.unwrap_or(0.0);
    size.rampup_s = Some((rampup * f * 1000.0).round() / 1000.0);
    values.insert(
        "rampup_s".into(),
        (
            format!("{rampup}"),
            format!("{}", size.rampup_s.unwrap_or(0.0)),
        ),
    );
    let clients = own.clients;
    let whole = scale.article_tps * (rampup + from_duration) * f;
    let txns = ((whole / clients as f64).round() as u64).max(1) * clients as u64;
    values.insert(
        "transactions".into(),
        (
            format!("{} TPS × {} s", scale.article_tps, rampup + from_duration),
            txns.to_string(),
        ),
    );
    size.duration_s = None;
    size.transactions = Some(txns);
    size.clients = clients;
    size.jobs = own.jobs.or(from.jobs);
    size.snapshot_every_s = own.snapshot_every_s.or(from.snapshot_every_s);
    size.random_seed = own.random_seed.or(from.random_seed);
    size.server = out;
    size.server.extend(own.server.clone());
    if let Some(ram) = &from.ram {
        let m = format_kb(parse_kb(ram).context("ram")? * f);
        values.insert("ram".into(), (ram.clone(), m.clone()));
        size.ram = Some(m);
    }
    if own.ram.is_some() {
        size.ram = own.ram.clone();
    }
    if own.duration_s.is_some() || own.transactions.is_some() || own.rampup_s.is_some() {
        bail!("a scaled size derives rampup_s and transactions; remove them (or drop scale:)");
    }
    if let Some(sb) = size.server.get("shared_buffers") {
        if parse_kb(sb)? < MIN_SHARED_BUFFERS_KB {
            bail!(
                "scale factor {f} leaves {sb} of shared buffers, below 128MB; raise scale.factor"
            );
        }
    }
    Ok((
        size,
        Derived {
            from: scale.from.clone(),
            unit: unit.0,
            from_count: unit.1,
            count: unit.2,
            bytes_factor: f,
            time_factor: f,
            time_factor_source: "the bytes factor: transactions scale with the rows, so each row churns as in the article".into(),
            values,
        },
    ))
}

/// The old and new value of each scaled figure, by name (`Derived::values`).
type Values = BTreeMap<String, (String, String)>;

/// The data variables × factor into `size` (the first is the model's unit: name, from, to); a
/// scaled variable the model also sets is refused.
fn scale_vars(
    from: &PgbenchSize,
    own: &PgbenchSize,
    scale: &PgbenchScale,
    size: &mut PgbenchSize,
    values: &mut Values,
) -> Result<(String, i64, i64)> {
    let f = scale.factor;
    let mut unit = (String::new(), 0, 0);
    for v in &scale.vars {
        let n = from.vars.get(v).and_then(|x| x.as_f64()).with_context(|| {
            format!(
                "scale.vars: {v} is not a numeric variable of size {}",
                scale.from
            )
        })?;
        let m = (n * f).round().max(1.0);
        values.insert(format!("vars.{v}"), (format!("{n}"), format!("{m}")));
        size.vars.insert(v.clone(), serde_json::json!(m as i64));
        if unit.0.is_empty() {
            unit = (v.clone(), n as i64, m as i64);
        }
    }
    for k in own.vars.keys() {
        if scale.vars.contains(k) {
            bail!("vars.{k} is derived by the scale rule (scale.vars); remove it from the scaled size");
        }
    }
    Ok(unit)
}

/// The byte settings × factor, and the time settings × factor at their floors.
fn scale_server(
    study_server: &BTreeMap<String, String>,
    from: &PgbenchSize,
    f: f64,
    values: &mut Values,
) -> Result<BTreeMap<String, String>> {
    let server = super::merge_settings(study_server, &from.server);
    let mut out = BTreeMap::new();
    for (k, v) in &server {
        if BYTE_SETTINGS.contains(&k.as_str()) {
            let m = format_kb(parse_kb(v).with_context(|| format!("server setting {k}"))? * f);
            values.insert(k.clone(), (v.clone(), m.clone()));
            out.insert(k.clone(), m);
        }
    }
    for (k, default, floor) in PGBENCH_TIME_DEFAULTS {
        let a = match server.get(*k) {
            Some(v) => parse_s(v).with_context(|| format!("server setting {k}"))?,
            None => *default,
        };
        let m = format_s((a * f).round().max(*floor));
        values.insert(k.to_string(), (format_s(a), m.clone()));
        out.insert(k.to_string(), m);
    }
    Ok(out)
}

/// This machine's memory in kB (MemTotal), if /proc says.
pub(crate) fn machine_mem_kb() -> Option<f64> {
    std::fs::read_to_string("/proc/meminfo")
        .ok()?
        .lines()
        .find(|l| l.starts_with("MemTotal:"))?
        .split_whitespace()
        .nth(1)?
        .parse()
        .ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Study 000's server settings and article-small, as in data/studies/hexacluster-tprocc.yaml.
    fn article() -> (BTreeMap<String, String>, Size) {
        let study: crate::study::Study = serde_norway::from_str(
            &std::fs::read_to_string(
                crate::ctx::project_root().join("data/studies/hexacluster-tprocc.yaml"),
            )
            .unwrap(),
        )
        .unwrap();
        let Some(crate::study::Size::Tprocc(size)) = study.sizes.get("article-small") else {
            panic!("study 000 is tprocc")
        };
        (study.server.clone(), size)
    }

    fn scale(wh: i64, t: f64) -> Scale {
        Scale {
            from: "article-small".into(),
            warehouses: wh,
            nopm_per_warehouse: None,
            time_factor: Some(t),
        }
    }

    /// Study 001's quick size is derived from its article size by the rule, and the values are
    /// those docs/study-001-small-table.md ("Sizes and the scale rule") states.
    #[test]
    fn small_table_quick_is_the_article_at_one_twentieth() {
        let path = crate::ctx::project_root().join("data/studies/small-table.yaml");
        let study = crate::study::parse_study(&path).unwrap();
        let size = study.sizes.get("quick").unwrap();
        let (size, d) = crate::study::resolve_size(&study, "quick", size, None, None).unwrap();
        let crate::study::Size::Pgbench(q) = size else {
            panic!("a pgbench size")
        };
        let s = |k: &str| q.server.get(k).cloned().unwrap_or_default();
        assert_eq!(s("shared_buffers"), "205MB");
        assert_eq!(s("max_wal_size"), "205MB");
        assert_eq!(s("checkpoint_timeout"), "30s");
        assert_eq!(s("autovacuum_naptime"), "3s");
        assert_eq!(q.rampup_s, Some(3.0));
        assert_eq!(q.transactions, Some(165_480));
        assert_eq!(q.duration_s, None);
        assert_eq!(q.var("users").as_deref(), Some("5000"));
        assert_eq!(q.var("groups").as_deref(), Some("100"));
        assert_eq!(
            (q.clients, q.jobs, q.snapshot_every_s),
            (4, Some(2), Some(1.0))
        );
        let d = d.unwrap();
        assert_eq!(
            (d.unit.as_str(), d.from_count, d.count),
            ("users", 100_000, 5_000)
        );
        // The fillfactor-50 heap (2 x ~25 MiB) stays below a quarter of shared_buffers, where
        // PostgreSQL would switch sequential scans to a small ring: 205MB / 4 = 6,560 pages.
        assert!(parse_kb("205MB").unwrap() / 8.0 / 4.0 > 6_413.0);
        // A model cannot also set what the rule derives.
        let mut own = match study.sizes.get("quick").unwrap() {
            crate::study::Size::Pgbench(p) => p,
            _ => unreachable!(),
        };
        own.transactions = Some(1000);
        let crate::study::Size::Pgbench(from) = study.sizes.get("article").unwrap() else {
            unreachable!()
        };
        let e =
            derive_pgbench(&study.server, &from, &own, own.scale.as_ref().unwrap()).unwrap_err();
        assert!(
            e.to_string().contains("derives rampup_s and transactions"),
            "{e}"
        );
    }

    #[test]
    fn article_small_at_20_warehouses_is_the_article() {
        let (server, from) = article();
        let (size, d) = derive(
            &server,
            &from,
            &Size::default(),
            &scale(20, 1.0),
            None,
            None,
        )
        .unwrap();
        for (k, v) in &server {
            if BYTE_SETTINGS.contains(&k.as_str()) || TIME_SETTINGS.contains(&k.as_str()) {
                assert_eq!(&size.server[k], v, "{k}");
            }
        }
        assert_eq!(size.warehouses, Some(20));
        assert_eq!(size.rampup_s, Some(300.0));
        assert_eq!(size.duration_s, Some(3600.0));
        assert_eq!(size.snapshot_every_s, Some(300.0));
        assert_eq!(d.bytes_factor, 1.0);
    }

    #[test]
    fn article_small_at_4_warehouses() {
        let (server, from) = article();
        // This machine's documented churn: 22,000 new orders per warehouse per minute.
        let s = Scale {
            from: "article-small".into(),
            warehouses: 4,
            nopm_per_warehouse: Some(22_000.0),
            time_factor: None,
        };
        let (size, d) = derive(&server, &from, &Size::default(), &s, None, None).unwrap();
        let want = [
            ("shared_buffers", "410MB"),
            ("effective_cache_size", "1229MB"),
            ("maintenance_work_mem", "102MB"),
            ("max_wal_size", "819MB"),
            ("min_wal_size", "205MB"),
            ("checkpoint_timeout", "75s"),
        ];
        for (k, v) in want {
            assert_eq!(size.server[k], v, "{k}");
        }
        assert!((d.time_factor - 1830.0 / 22_000.0).abs() < 1e-9);
        assert_eq!(size.rampup_s, Some(25.0));
        assert_eq!(size.duration_s, Some(299.0));
        assert_eq!(size.snapshot_every_s, Some(25.0));
        assert!(
            !size.server.contains_key("work_mem"),
            "work_mem is not scaled"
        );
    }

    #[test]
    fn bad_scales_are_refused_with_the_valid_bound() {
        let (server, from) = article();
        let e = derive(&server, &from, &Size::default(), &scale(1, 0.1), None, None)
            .unwrap_err()
            .to_string();
        assert!(e.contains("smallest valid scale is 2 warehouses"), "{e}");
        let e = derive(
            &server,
            &from,
            &Size::default(),
            &scale(4, 0.01),
            None,
            None,
        )
        .unwrap_err()
        .to_string();
        assert!(e.contains("smallest valid time factor is 0.0333"), "{e}");
        let own = Size {
            snapshot_every_s: Some(200.0),
            ..Size::default()
        };
        let e = derive(&server, &from, &own, &scale(4, 0.1), None, None)
            .unwrap_err()
            .to_string();
        assert!(e.contains("smallest valid window is 400 s"), "{e}");
        // 8 GiB of memory: 20 warehouses ask for the article's 7.8 GB of RAM, 40 for 15.6 GB.
        let e = derive(
            &server,
            &from,
            &Size::default(),
            &scale(40, 1.0),
            None,
            Some(8.0 * 1024.0 * 1024.0),
        )
        .unwrap_err()
        .to_string();
        assert!(
            e.contains("this machine has 8GB")
                && e.contains("largest scale that fits is 20 warehouses"),
            "{e}"
        );
    }

    #[test]
    fn units() {
        assert_eq!(parse_kb("2GB").unwrap(), 2.0 * 1024.0 * 1024.0);
        assert_eq!(format_kb(parse_kb("2GB").unwrap() * 0.1), "205MB");
        assert_eq!(parse_s("15min").unwrap(), 900.0);
        assert_eq!(format_s(900.0), "15min");
        assert!(parse_kb("2XB").is_err());
    }
}
