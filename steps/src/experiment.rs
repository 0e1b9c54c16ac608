//! The study file model (`data/studies/<name>.yaml`) and its validation into a typed plan:
//! which workload, which sizes, which arms (per-table fillfactor), which tables are rewritten in
//! every arm and which are timed by VACUUM. Reads the YAML; writes nothing.

use std::collections::BTreeMap;
use std::path::Path;

use anyhow::{bail, Context, Result};
use serde::{Deserialize, Serialize};

use crate::ctx::Ctx;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Workload {
    /// Study 003: many-row UPDATE statements through pgbench on one small table.
    Spv,
    /// Study 000: HammerDB-compatible TPC-C (TPROC-C).
    Tprocc,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Study {
    pub name: String,
    pub title: String,
    /// The seed article this study reproduces.
    #[serde(default)]
    pub article: Option<String>,
    pub workload: Workload,
    pub default_size: String,
    /// Server settings (ALTER SYSTEM) for every size.
    #[serde(default)]
    pub server: BTreeMap<String, String>,
    pub sizes: BTreeMap<String, Size>,
    /// Tables the workload updates: the ones a fillfactor can help.
    pub tables: Vec<String>,
    /// Tables rewritten with VACUUM FULL in every arm, the baseline too.
    pub rewrite: Vec<String>,
    /// Tables whose post-run VACUUM is timed.
    #[serde(default)]
    pub vacuum_timing: Vec<String>,
    pub arms: Vec<Arm>,
}

/// One size of a study. Each workload reads the fields it needs; validation says which.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Size {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rows: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pad_chars: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub statements: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rows_per_statement: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub clients: Option<u32>,
    /// Seconds between statistics snapshots during `run`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub snapshot_every_s: Option<f64>,
    /// pgbench --random-seed, the same in every arm so arms see the same update sequence.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub random_seed: Option<u64>,
    /// TPROC-C: warehouses, virtual users, ramp-up and measured seconds, profile.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub warehouses: Option<i64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub vus: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rampup_s: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub duration_s: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub profile: Option<crate::workload::tprocc::Profile>,
    /// HammerDB's "use all warehouses": each VU spreads over a list of warehouses.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub all_warehouses: Option<bool>,
    /// Server settings for this size, on top of the study's.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub server: BTreeMap<String, String>,
    /// TPROC-C article sizes: new orders per warehouse per minute the article's default arm
    /// ran (its churn), the time base of a scale model.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nopm_per_warehouse: Option<f64>,
    /// The RAM of the machine this size stands for. `run` confines a server on this machine to
    /// it (page cache included) where the platform allows; a scale model scales it as bytes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ram: Option<String>,
    /// A scale model of an article size (see `scale.rs` and the README's "Scale models").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scale: Option<crate::scale::Scale>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Arm {
    pub name: String,
    /// Heap fillfactor per table; tables not named keep what the build gave them.
    #[serde(default)]
    pub fillfactor: BTreeMap<String, u32>,
    /// Index fillfactor per index.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub index_fillfactor: BTreeMap<String, u32>,
}

/// A validated study, size and arm list.
#[derive(Debug, Clone)]
pub struct Plan {
    pub study: Study,
    pub size_name: String,
    pub size: Size,
    pub arms: Vec<Arm>,
    pub repeats: u32,
    /// A fillfactor sweep of one table: (table, values in the order asked).
    pub sweep: Option<(String, Vec<u32>)>,
    /// What the scale rule derived, when the size is a scale model.
    pub scale: Option<crate::scale::Derived>,
}

impl Plan {
    /// Arm runs in order, alternating direction on every repeat (A B, B A, A B …) so that no
    /// arm always runs second. Directory names carry `-r<k>` when there are repeats.
    pub fn order(&self) -> Vec<(String, Arm)> {
        let mut out = vec![];
        for k in 0..self.repeats {
            let mut arms = self.arms.clone();
            if k % 2 == 1 {
                arms.reverse();
            }
            for a in arms {
                let dir = if self.repeats > 1 {
                    format!("{}-r{}", a.name, k + 1)
                } else {
                    a.name.clone()
                };
                out.push((dir, a));
            }
        }
        out
    }

    /// Server settings of this study and size.
    pub fn server_settings(&self) -> BTreeMap<String, String> {
        let mut s = self.study.server.clone();
        s.extend(self.size.server.clone());
        s
    }
}

/// Names of the studies in `data/studies/`.
pub fn known_studies(ctx: &Ctx) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(ctx.studies_dir())
        .map(|rd| {
            rd.filter_map(|e| e.ok())
                .filter_map(|e| {
                    let p = e.path();
                    if p.extension()? == "yaml" {
                        Some(p.file_stem()?.to_string_lossy().into_owned())
                    } else {
                        None
                    }
                })
                .collect()
        })
        .unwrap_or_default();
    v.sort();
    v
}

pub fn load_study(ctx: &Ctx, name: &str) -> Result<Study> {
    let path = ctx.studies_dir().join(format!("{name}.yaml"));
    if !path.exists() {
        bail!(
            "unknown study {name:?}; known: {} (files in {})",
            known_studies(ctx).join(", "),
            ctx.studies_dir().display()
        );
    }
    parse_study(&path)
}

pub fn parse_study(path: &Path) -> Result<Study> {
    let text =
        std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
    let study: Study = serde_norway::from_str(&text).map_err(|e| {
        anyhow::anyhow!(
            "{}: {}; fix the study file",
            path.display(),
            e.to_string().replace('\n', " ")
        )
    })?;
    validate_study(&study).with_context(|| format!("{}", path.display()))?;
    Ok(study)
}

pub fn check_fillfactor(what: &str, ff: u32) -> Result<()> {
    if !(10..=100).contains(&ff) {
        bail!("fillfactor {ff} for {what} is out of range: PostgreSQL accepts 10 to 100");
    }
    Ok(())
}

fn validate_study(s: &Study) -> Result<()> {
    if !s.sizes.contains_key(&s.default_size) {
        bail!("default_size {:?} is not one of the sizes", s.default_size);
    }
    for (name, size) in &s.sizes {
        if size.scale.is_some() {
            // Checked when it is resolved, against this machine (`resolve_size`).
            continue;
        }
        validate_size(s.workload, size).with_context(|| format!("size {name}"))?;
    }
    let mut seen = std::collections::BTreeSet::new();
    for a in &s.arms {
        if !seen.insert(&a.name) {
            bail!("arm {} appears twice", a.name);
        }
        validate_arm(s, a)?;
    }
    for t in s.rewrite.iter().chain(&s.vacuum_timing) {
        if !s.tables.contains(t) {
            bail!("table {t} in rewrite/vacuum_timing is not in the study's tables");
        }
    }
    Ok(())
}

fn validate_size(w: Workload, size: &Size) -> Result<()> {
    match w {
        Workload::Spv => {
            let rows = size.rows.context("spv sizes need rows")?;
            let per = size
                .rows_per_statement
                .context("spv sizes need rows_per_statement")?;
            size.statements.context("spv sizes need statements")?;
            size.pad_chars.context("spv sizes need pad_chars")?;
            if per == 0 || per > rows {
                bail!("rows_per_statement {per} must be between 1 and rows ({rows})");
            }
        }
        Workload::Tprocc => {
            let shape = crate::workload::tprocc::Shape::of(size)?;
            if shape.snapshot_every_s > shape.duration_s {
                eprintln!(
                    "hotlab: warning: snapshot_every_s ({}) is longer than the measured window ({} s); \
                     only the begin and end samples will be taken",
                    shape.snapshot_every_s, shape.duration_s
                );
            }
        }
    }
    if let Some(e) = size.snapshot_every_s {
        if e <= 0.0 {
            bail!("snapshot_every_s must be positive");
        }
    }
    Ok(())
}

/// An arm may only set fillfactor on the study's tables, within PostgreSQL's range.
pub fn validate_arm(s: &Study, a: &Arm) -> Result<()> {
    for (t, ff) in &a.fillfactor {
        if !s.tables.contains(t) {
            bail!(
                "table {t} is not in study {}; its tables are: {}",
                s.name,
                s.tables.join(", ")
            );
        }
        check_fillfactor(t, *ff)?;
    }
    for (i, ff) in &a.index_fillfactor {
        check_fillfactor(i, *ff)?;
    }
    Ok(())
}

/// What `init` (and the steps that create a run) accept to pick a study, a size and arms.
#[derive(clap::Args, Debug, Clone, Default)]
pub struct PlanArgs {
    /// Study name (a file in data/studies/)
    #[arg(long, env = "HOTLAB_STUDY")]
    pub study: Option<String>,
    /// Size from the study file (default: the study's default_size)
    #[arg(long, env = "HOTLAB_SIZE")]
    pub size: Option<String>,
    /// Arms to run, by name (default: every arm of the study)
    #[arg(long, value_delimiter = ',')]
    pub arms: Vec<String>,
    /// Extra ad-hoc arm: TABLE=FF[,TABLE=FF…], repeatable (its name is built from the values)
    #[arg(long = "fillfactor", value_name = "TABLE=FF")]
    pub fillfactor: Vec<String>,
    /// Run every arm this many times, alternating the order (A B, B A, …)
    #[arg(long, default_value_t = 1)]
    pub repeats: u32,
    /// Sweep one table over fillfactor values (see --values): one arm per value, only that
    /// table's fillfactor changes, the rewrite list stays the same
    #[arg(long, value_name = "TABLE")]
    pub sweep: Option<String>,
    /// Fillfactor values for --sweep, e.g. 100,90,80
    #[arg(long, value_delimiter = ',', value_name = "FF")]
    pub values: Vec<u32>,
    /// Scale models: this machine's new orders per warehouse per minute at the model's size
    /// (every TPROC-C run prints NOPM; divide by its warehouses). Sets the time factor; default:
    /// the value measured here, in the study file
    #[arg(long, env = "HOTLAB_NOPM_PER_WAREHOUSE")]
    pub nopm_per_warehouse: Option<f64>,
}

impl PlanArgs {
    pub fn plan(&self, ctx: &Ctx) -> Result<Plan> {
        let Some(name) = &self.study else {
            bail!(
                "no study given; pass --study (known: {})",
                known_studies(ctx).join(", ")
            );
        };
        let study = load_study(ctx, name)?;
        let size_name = self.size.clone().unwrap_or(study.default_size.clone());
        let Some(size) = study.sizes.get(&size_name).cloned() else {
            bail!(
                "unknown size {size_name:?} for study {}; known: {}",
                study.name,
                study.sizes.keys().cloned().collect::<Vec<_>>().join(", ")
            );
        };
        // A scale model's churn: the flag, else what this machine measured at this size, else
        // the study file's value.
        let churn = match (&size.scale, self.nopm_per_warehouse) {
            (_, Some(n)) => Some((n, format!("--nopm-per-warehouse {n}"))),
            (Some(sc), None) => {
                let vus = size
                    .vus
                    .or_else(|| study.sizes.get(&sc.from).and_then(|f| f.vus))
                    .unwrap_or(1);
                let key = crate::churn::key(&study.name, &size_name, sc.warehouses, vus);
                crate::churn::measured(&ctx.home, &key).map(|(n, k)| {
                    (
                        n,
                        format!(
                            "the median of {k} run(s) measured here ({})",
                            ctx.home.join("churn.json").display()
                        ),
                    )
                })
            }
            (None, None) => None,
        };
        let (size, scale) = resolve_size(
            &study,
            &size_name,
            size,
            churn,
            crate::scale::machine_mem_kb(),
        )?;
        let mut arms = vec![];
        for a in &self.arms {
            match study.arms.iter().find(|x| &x.name == a) {
                Some(x) => arms.push(x.clone()),
                None => bail!(
                    "unknown arm {a:?} in study {}; known: {}",
                    study.name,
                    study
                        .arms
                        .iter()
                        .map(|x| x.name.clone())
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            }
        }
        for spec in &self.fillfactor {
            let arm = parse_adhoc_arm(spec)?;
            validate_arm(&study, &arm)?;
            arms.push(arm);
        }
        let sweep = match &self.sweep {
            None => None,
            Some(t) => {
                let values = sweep_values(&study, t, &self.values)?;
                for v in &values {
                    arms.push(Arm {
                        name: format!("{t}-ff{v}"),
                        fillfactor: BTreeMap::from([(t.clone(), *v)]),
                        index_fillfactor: BTreeMap::new(),
                    });
                }
                Some((t.clone(), values))
            }
        };
        if arms.is_empty() {
            arms = study.arms.clone();
        }
        if self.repeats == 0 {
            bail!("--repeats must be at least 1");
        }
        Ok(Plan {
            study,
            size_name,
            size,
            arms,
            repeats: self.repeats,
            sweep,
            scale,
        })
    }
}

/// A size as the steps use it: a scale model becomes the concrete size the rule derives from its
/// article size (then validated like any other size); any other size is returned as it is.
pub fn resolve_size(
    study: &Study,
    size_name: &str,
    size: Size,
    churn: Option<(f64, String)>,
    mem_kb: Option<f64>,
) -> Result<(Size, Option<crate::scale::Derived>)> {
    let Some(scale) = size.scale.clone() else {
        return Ok((size, None));
    };
    let Some(from) = study.sizes.get(&scale.from) else {
        bail!(
            "size {size_name} scales from {:?}, which is not a size of study {}; fix the study file",
            scale.from,
            study.name
        );
    };
    if from.scale.is_some() {
        bail!(
            "size {size_name} scales from {}, itself a scale model; scale from an article size",
            scale.from
        );
    }
    let (resolved, derived) =
        crate::scale::derive(&study.server, from, &size, &scale, churn, mem_kb)
            .with_context(|| format!("size {size_name}"))?;
    validate_size(study.workload, &resolved).with_context(|| format!("size {size_name}"))?;
    Ok((resolved, Some(derived)))
}

/// The values of a sweep of `table`: at least two, none repeated, each in range, and the table
/// must be one the workload updates.
pub fn sweep_values(study: &Study, table: &str, values: &[u32]) -> Result<Vec<u32>> {
    if !study.tables.iter().any(|t| t == table) {
        bail!(
            "{table} is never updated by {} (study {}); fillfactor cannot help it. Updated tables: {}",
            serde_json::to_value(study.workload)?.as_str().unwrap_or("this workload"),
            study.name,
            study.tables.join(", ")
        );
    }
    if values.len() < 2 {
        bail!("a sweep needs at least two fillfactor values, e.g. --values 100,90,80 (just sweep {table} 100 90 80)");
    }
    let mut seen = std::collections::BTreeSet::new();
    for v in values {
        check_fillfactor(table, *v)?;
        if !seen.insert(*v) {
            bail!("fillfactor {v} appears twice in the sweep of {table}; give each value once");
        }
    }
    Ok(values.to_vec())
}

/// `stock=90,order_line=80` → an arm named `stock90-order_line80`.
pub fn parse_adhoc_arm(spec: &str) -> Result<Arm> {
    let mut ff = BTreeMap::new();
    for part in spec.split(',').filter(|p| !p.is_empty()) {
        let Some((t, v)) = part.split_once('=') else {
            bail!("--fillfactor {spec:?}: expected TABLE=FF, e.g. --fillfactor stock=90");
        };
        let v: u32 = v
            .trim()
            .parse()
            .with_context(|| format!("--fillfactor {spec:?}: {v:?} is not a number"))?;
        check_fillfactor(t.trim(), v)?;
        ff.insert(t.trim().to_string(), v);
    }
    let name = ff
        .iter()
        .map(|(t, v)| format!("{t}{v}"))
        .collect::<Vec<_>>()
        .join("-");
    Ok(Arm {
        name,
        fillfactor: ff,
        index_fillfactor: BTreeMap::new(),
    })
}

/// The study, size and arm an arm directory was made for (from its meta.json).
pub fn for_run(ctx: &Ctx, rd: &crate::rundir::RunDir) -> Result<(Study, Size, Arm)> {
    let meta = rd.meta()?;
    let study = load_study(ctx, meta["study"].as_str().unwrap_or_default())?;
    let size: Size = serde_json::from_value(meta["size_spec"].clone())
        .with_context(|| format!("size_spec in {}", rd.file("meta.json").display()))?;
    let arm = rd.arm()?;
    Ok((study, size, arm))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plan(arms: &[&str], repeats: u32) -> Plan {
        Plan {
            study: serde_norway::from_str(
                "name: t\ntitle: t\nworkload: spv\ndefault_size: s\nsizes: {s: {rows: 10, pad_chars: 1, statements: 1, rows_per_statement: 1}}\ntables: [a]\nrewrite: [a]\narms: []\n",
            )
            .unwrap(),
            size_name: "s".into(),
            size: Size::default(),
            arms: arms
                .iter()
                .map(|n| Arm { name: n.to_string(), fillfactor: BTreeMap::new(), index_fillfactor: BTreeMap::new() })
                .collect(),
            repeats,
            sweep: None,
            scale: None,
        }
    }

    #[test]
    fn repeats_alternate_order() {
        let names: Vec<String> = plan(&["a", "b"], 3)
            .order()
            .into_iter()
            .map(|x| x.0)
            .collect();
        assert_eq!(names, ["a-r1", "b-r1", "b-r2", "a-r2", "a-r3", "b-r3"]);
        let single: Vec<String> = plan(&["a", "b"], 1)
            .order()
            .into_iter()
            .map(|x| x.0)
            .collect();
        assert_eq!(single, ["a", "b"]);
    }

    #[test]
    fn adhoc_arms_are_checked() {
        let a = parse_adhoc_arm("stock=90,order_line=80").unwrap();
        assert_eq!(a.name, "order_line80-stock90");
        assert!(parse_adhoc_arm("stock=5")
            .unwrap_err()
            .to_string()
            .contains("out of range"));
        assert!(parse_adhoc_arm("stock=101").is_err());
        assert!(parse_adhoc_arm("stock").is_err());
    }

    #[test]
    fn unknown_keys_are_refused() {
        let r: Result<Study, _> = serde_norway::from_str(
            "name: t\ntitle: t\nworkload: spv\ndefault_size: s\nsizes: {}\ntables: []\nrewrite: []\narms: []\nbogus: 1\n",
        );
        assert!(r.unwrap_err().to_string().contains("bogus"));
    }
}
