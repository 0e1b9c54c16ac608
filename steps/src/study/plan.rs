//! What `init` was asked (`PlanArgs` → `Plan`: study, size, arms, repeats, sweep) and what it
//! resolves for each arm run (`ArmPlan`, written into the arm's meta.json): the size with a scale
//! model applied, the merged server settings, the tables, the rewrite and vacuum lists.

use std::collections::BTreeMap;

use anyhow::{bail, Context, Result};
use serde::{Deserialize, Serialize};

use super::{
    check_fillfactor, known_studies, load_study, merge_settings, scale, validate_arm,
    validate_size, Arm, Size, Study, Workload,
};
use crate::ctx::Ctx;

/// A validated study, size and arm list.
#[derive(Debug, Clone)]
pub struct Plan {
    pub study: Study,
    pub(crate) size_name: String,
    pub size: Size,
    pub arms: Vec<Arm>,
    pub repeats: u32,
    /// A fillfactor sweep of one table: (table, values in the order asked).
    pub sweep: Option<(String, Vec<u32>)>,
    /// What the scale rule derived, when the size is a scale model.
    pub(crate) scale: Option<scale::Derived>,
    /// The arms run at the same time on one server (`--together`), the size's clients split.
    pub together: bool,
}

impl Plan {
    /// Arm runs in order, alternating direction on every repeat (A B, B A, A B …) so that no
    /// arm always runs second. Directory names carry `-r<k>` when there are repeats.
    pub(crate) fn order(&self) -> Vec<(String, Arm)> {
        crate::stats::alternating(&self.arms, self.repeats)
            .into_iter()
            .map(|(k, a)| {
                let dir = if self.repeats > 1 {
                    format!("{}-r{}", a.name, k + 1)
                } else {
                    a.name.clone()
                };
                (dir, a)
            })
            .collect()
    }

    /// Server settings of this study and size: the study's, then the size's on top. The one
    /// place they are merged.
    pub(crate) fn server_settings(&self) -> BTreeMap<String, String> {
        merge_settings(&self.study.server, self.size.server())
    }

    /// The resolved plan of one arm run, as `init` writes it into the arm's meta.json.
    pub(crate) fn arm_plan(&self, run: &str, arm: &Arm, database: &str) -> ArmPlan {
        // An arm's variables override the size's: the arm's size_spec is the size as this arm
        // runs it (its load, hence its template, and its scripts' -D values).
        let mut size = self.size.clone();
        if let Size::Pgbench(p) = &mut size {
            p.vars
                .extend(arm.vars.iter().map(|(k, v)| (k.clone(), v.clone())));
        }
        ArmPlan {
            plan_version: ArmPlan::VERSION,
            study: self.study.name.clone(),
            title: self.study.title.clone(),
            workload: self.study.workload,
            size: self.size_name.clone(),
            size_spec: Some(size),
            scale: self.scale.clone(),
            arm: arm.clone(),
            run: run.to_string(),
            server_settings: self.server_settings(),
            tables: self.study.tables.clone(),
            rewrite: self.study.rewrite.clone(),
            vacuum_timing: self.study.vacuum_timing.clone(),
            sweep_table: self.sweep.as_ref().map(|(t, _)| t.clone()),
            database: database.to_string(),
            pgbench: self.study.pgbench_files.clone(),
            together: if self.together {
                self.arms.iter().map(|a| a.name.clone()).collect()
            } else {
                vec![]
            },
        }
    }
}

/// Everything a step needs to know about its arm run, resolved once by `init` and stored in the
/// arm's meta.json (top-level keys, beside the keys steps add). Steps read it with
/// `RunDir::plan()` and never the study file: editing a study mid-sweep changes nothing.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(try_from = "RawArmPlan")]
pub struct ArmPlan {
    /// 1 for plans written by `init` since the plan became typed; 0 (absent) for older run
    /// directories, which `analyze` still reads and the other steps refuse.
    pub(crate) plan_version: u32,
    pub study: String,
    pub(crate) title: String,
    pub(crate) workload: Workload,
    /// The size's name.
    pub size: String,
    /// The size's parameters, a scale model already resolved.
    pub size_spec: Option<Size>,
    /// What the scale rule derived (`scale::Derived`), when the size is a scale model.
    pub(crate) scale: Option<scale::Derived>,
    pub(crate) arm: Arm,
    /// The arm directory's name (`<arm>` or `<arm>-r<k>`).
    pub(crate) run: String,
    /// The study's and the size's server settings, merged.
    pub(crate) server_settings: BTreeMap<String, String>,
    pub(crate) tables: Vec<String>,
    pub(crate) rewrite: Vec<String>,
    pub(crate) vacuum_timing: Vec<String>,
    /// The table a sweep varies, when the arm belongs to one.
    pub(crate) sweep_table: Option<String>,
    /// This arm run's own database, derived from its run directory (unique, at most 63 bytes);
    /// every step uses this name. Empty in run directories made before it was recorded.
    pub(crate) database: String,
    /// `workload: pgbench`: the schema, load and scripts, as text.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) pgbench: Option<super::PgbenchFiles>,
    /// The arms that ran at the same time as this one on one server (`init --together`); empty
    /// when the arm ran alone.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub together: Vec<String>,
}

impl ArmPlan {
    pub(crate) const VERSION: u32 = 1;

    /// The study's title, or its name for run directories older than titles in the plan.
    pub(crate) fn label(&self) -> &str {
        if self.title.is_empty() {
            &self.study
        } else {
            &self.title
        }
    }

    /// The size, or why this run directory cannot be run.
    pub(crate) fn size(&self) -> Result<&Size> {
        self.size_spec.as_ref().context(
            "this run directory has no size_spec; create a new one with `cargo xtask init`",
        )
    }
}

#[derive(Deserialize)]
struct RawArmPlan {
    #[serde(default)]
    plan_version: u32,
    study: String,
    #[serde(default)]
    title: String,
    workload: Workload,
    #[serde(default)]
    size: String,
    #[serde(default)]
    size_spec: Option<serde_json::Value>,
    #[serde(default)]
    scale: Option<serde_json::Value>,
    arm: Arm,
    run: String,
    #[serde(default)]
    server_settings: BTreeMap<String, String>,
    #[serde(default)]
    tables: Vec<String>,
    #[serde(default)]
    rewrite: Vec<String>,
    #[serde(default)]
    vacuum_timing: Vec<String>,
    #[serde(default)]
    sweep_table: Option<String>,
    #[serde(default)]
    database: String,
    #[serde(default)]
    pgbench: Option<super::PgbenchFiles>,
    #[serde(default)]
    together: Vec<String>,
}

impl TryFrom<RawArmPlan> for ArmPlan {
    type Error = String;

    fn try_from(r: RawArmPlan) -> Result<ArmPlan, String> {
        let size_spec = match r.size_spec {
            None | Some(serde_json::Value::Null) => None,
            Some(v) => Some(Size::parse(r.workload, v).map_err(|e| format!("size_spec: {e}"))?),
        };
        Ok(ArmPlan {
            plan_version: r.plan_version,
            study: r.study,
            title: r.title,
            workload: r.workload,
            size: r.size,
            size_spec,
            scale: r
                .scale
                .filter(|v| !v.is_null())
                .map(serde_json::from_value)
                .transpose()
                .map_err(|e| format!("scale: {e}"))?,
            arm: r.arm,
            run: r.run,
            server_settings: r.server_settings,
            tables: r.tables,
            rewrite: r.rewrite,
            vacuum_timing: r.vacuum_timing,
            sweep_table: r.sweep_table,
            database: r.database,
            pgbench: r.pgbench,
            together: r.together,
        })
    }
}

/// What `init` (and the steps that create a run) accept to pick a study, a size and arms.
#[derive(clap::Args, Debug, Clone, Default)]
pub struct PlanArgs {
    /// Study name (a file in data/studies/)
    #[arg(long, env = crate::env::STUDY)]
    pub study: Option<String>,
    /// Size from the study file (default: the study's default_size)
    #[arg(long, env = crate::env::SIZE)]
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
    #[arg(long, env = crate::env::NOPM_PER_WAREHOUSE)]
    pub nopm_per_warehouse: Option<f64>,
    /// Run the arms at the same time on one server, each in its own database, the size's clients
    /// and transactions split evenly among them (`just together`); the arms are named
    /// <arm>-together. Isolated runs (the default) are what comparisons should use
    #[arg(long)]
    pub together: bool,
}

/// A sweep: its table and its fillfactor values.
type Sweep = Option<(String, Vec<u32>)>;

impl PlanArgs {
    pub fn plan(&self, ctx: &Ctx) -> Result<Plan> {
        let Some(name) = &self.study else {
            bail!(
                "no study given; pass --study (known: {})",
                known_studies(ctx).join(", ")
            );
        };
        let study = if name == "auto" {
            study_of_table(ctx, self.sweep.as_deref())?
        } else {
            load_study(ctx, name)?
        };
        let size_name = self.size.clone().unwrap_or(study.default_size.clone());
        let Some(size) = study.sizes.get(&size_name) else {
            bail!(
                "unknown size {size_name:?} for study {}; known: {}",
                study.name,
                study.sizes.names().join(", ")
            );
        };
        let churn = self.churn(ctx, &study, &size_name, &size);
        let (size, scale) = resolve_size(&study, &size_name, size, churn, scale::machine_mem_kb())?;
        let (mut arms, sweep) = self.arms(&study)?;
        if self.repeats == 0 {
            bail!("--repeats must be at least 1");
        }
        let size = if self.together {
            together(&mut arms, size, self.repeats, sweep.is_some())?
        } else {
            size
        };
        Ok(Plan {
            study,
            size_name,
            size,
            arms,
            repeats: self.repeats,
            sweep,
            scale,
            together: self.together,
        })
    }

    /// A scale model's churn and where it came from: the flag, else what this machine measured
    /// at this size, else (None) the study file's value.
    fn churn(
        &self,
        ctx: &Ctx,
        study: &Study,
        size_name: &str,
        size: &Size,
    ) -> Option<(f64, String)> {
        // A scale model's churn: the flag, else what this machine measured at this size, else
        // the study file's value.
        let scale_of = |s: &Size| match s {
            Size::Tprocc(t) => t.scale.clone(),
            _ => None,
        };
        match (scale_of(size), self.nopm_per_warehouse) {
            (_, Some(n)) => Some((n, format!("--nopm-per-warehouse {n}"))),
            (Some(sc), None) => {
                let vus = |s: Option<Size>| match s {
                    Some(Size::Tprocc(t)) => t.vus,
                    _ => None,
                };
                let vus = vus(Some(size.clone()))
                    .or_else(|| vus(study.sizes.get(&sc.from)))
                    .unwrap_or(1);
                let key = crate::churn::key(&study.name, size_name, sc.warehouses, vus);
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
        }
    }

    /// The arms to run: the named ones, the ad-hoc ones, the sweep's (and the swept table and
    /// values), else the study's default arms; each name once.
    fn arms(&self, study: &Study) -> Result<(Vec<Arm>, Sweep)> {
        let mut seen = std::collections::BTreeSet::new();
        if let Some(a) = self.arms.iter().find(|a| !seen.insert(a.as_str())) {
            bail!("arm {a} is given twice in --arms; name each arm once");
        }
        if self.sweep.is_none() && !self.values.is_empty() {
            bail!("--values needs --sweep TABLE (e.g. --sweep stock --values 100,90,80)");
        }
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
            validate_arm(study, &arm)?;
            arms.push(arm);
        }
        let sweep = match &self.sweep {
            None => None,
            Some(t) => {
                let values = sweep_values(study, t, &self.values)?;
                for v in &values {
                    arms.push(Arm {
                        name: format!("{t}-ff{v}"),
                        fillfactor: BTreeMap::from([(t.clone(), *v)]),
                        ..Default::default()
                    });
                }
                Some((t.clone(), values))
            }
        };
        if arms.is_empty() {
            arms = if study.default_arms.is_empty() {
                study.arms.clone()
            } else {
                study
                    .arms
                    .iter()
                    .filter(|a| study.default_arms.contains(&a.name))
                    .cloned()
                    .collect()
            };
        }
        let mut names = std::collections::BTreeSet::new();
        if let Some(a) = arms.iter().find(|a| !names.insert(a.name.clone())) {
            bail!(
                "two arms would both be named {} (and share one directory); drop one of them",
                a.name
            );
        }
        Ok((arms, sweep))
    }
}

/// `--together`: the arms renamed `<arm>-together` and the size each of them runs, the clients
/// and transactions split evenly (so the server carries the load an isolated arm gets).
fn together(arms: &mut [Arm], size: Size, repeats: u32, sweep: bool) -> Result<Size> {
    let Size::Pgbench(mut p) = size else {
        bail!("--together is for pgbench-script studies (workload: pgbench)");
    };
    let n = arms.len() as u32;
    if n < 2 || sweep || repeats != 1 {
        bail!("--together runs two or more arms once, side by side; pass --arms a,b (no --sweep, no --repeats)");
    }
    if let Some(a) = arms
        .iter()
        .find(|a| a.build == super::BuildRoute::CreateWith)
    {
        bail!(
            "arm {} is built create-with, whose cache the other arms' cold resets would clear; run it alone (`just compare`)",
            a.name
        );
    }
    if p.clients % n != 0 {
        bail!(
            "{} clients cannot be split evenly among {n} arms; pick {n} arms that divide {} (e.g. --arms ori,onlyff)",
            p.clients,
            p.clients
        );
    }
    p.clients /= n;
    p.jobs = p.jobs.map(|j| (j / n).max(1));
    if let Some(t) = p.transactions {
        p.transactions = Some((t / n as u64 / p.clients as u64).max(1) * p.clients as u64);
    }
    for a in arms.iter_mut() {
        a.name = format!("{}-together", a.name);
    }
    Ok(Size::Pgbench(p))
}

/// `--study auto` (what `just sweep` passes when STUDY is not set): the one study whose workload
/// updates the swept table.
fn study_of_table(ctx: &Ctx, table: Option<&str>) -> Result<Study> {
    let Some(table) = table else {
        bail!("--study auto needs --sweep TABLE; or name the study: --study NAME");
    };
    let mut found = vec![];
    for name in known_studies(ctx) {
        if let Ok(s) = load_study(ctx, &name) {
            if s.tables.iter().any(|t| t == table) {
                found.push(s);
            }
        }
    }
    match found.len() {
        1 => Ok(found.remove(0)),
        0 => bail!(
            "no study updates {table}; name one: STUDY=<study> just sweep {table} … (known: {})",
            known_studies(ctx).join(", ")
        ),
        _ => bail!(
            "{table} is updated by several studies ({}); name one: STUDY=<study> just sweep {table} …",
            found.iter().map(|s| s.name.clone()).collect::<Vec<_>>().join(", ")
        ),
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
) -> Result<(Size, Option<scale::Derived>)> {
    if let Size::Pgbench(own) = &size {
        let Some(sc) = own.scale.clone() else {
            return Ok((size, None));
        };
        let Size::Pgbench(from) = scale_source(study, size_name, &sc.from)? else {
            unreachable!("a study's sizes share its workload")
        };
        let (resolved, derived) = scale::derive_pgbench(&study.server, &from, own, &sc)
            .with_context(|| format!("size {size_name}"))?;
        let resolved = Size::Pgbench(resolved);
        validate_size(&resolved).with_context(|| format!("size {size_name}"))?;
        return Ok((resolved, Some(derived)));
    }
    let Size::Tprocc(own) = &size else {
        return Ok((size, None));
    };
    let Some(sc) = own.scale.clone() else {
        return Ok((size, None));
    };
    let Size::Tprocc(from) = scale_source(study, size_name, &sc.from)? else {
        unreachable!("a study's sizes share its workload")
    };
    let (resolved, derived) = scale::derive(&study.server, &from, own, &sc, churn, mem_kb)
        .with_context(|| format!("size {size_name}"))?;
    let resolved = Size::Tprocc(resolved);
    validate_size(&resolved).with_context(|| format!("size {size_name}"))?;
    Ok((resolved, Some(derived)))
}

/// The article size a scale model names: a size of the study that is not itself a model.
fn scale_source(study: &Study, size_name: &str, from: &str) -> Result<Size> {
    let Some(s) = study.sizes.get(from) else {
        bail!(
            "size {size_name} scales from {from:?}, which is not a size of study {}; fix the study file",
            study.name
        );
    };
    if s.kind().scale_from().is_some() {
        bail!(
            "size {size_name} scales from {from}, itself a scale model; scale from an article size"
        );
    }
    Ok(s)
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
    if spec.split(',').all(|p| p.trim().is_empty()) {
        bail!(
            "--fillfactor {spec:?} names no table; expected TABLE=FF, e.g. --fillfactor stock=90"
        );
    }
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
        ..Default::default()
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::spv::size::SpvSize;

    fn plan(arms: &[&str], repeats: u32) -> Plan {
        Plan {
            study: serde_norway::from_str(
                "name: t\ntitle: t\nworkload: spv\ndefault_size: s\nsizes: {s: {rows: 10, pad_chars: 1, statements: 1, rows_per_statement: 1}}\ntables: [a]\nrewrite: [a]\narms: []\n",
            )
            .unwrap(),
            size_name: "s".into(),
            size: Size::Spv(SpvSize::default()),
            arms: arms
                .iter()
                .map(|n| Arm { name: n.to_string(), ..Default::default() })
                .collect(),
            repeats,
            sweep: None,
            scale: None,
            together: false,
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
}
