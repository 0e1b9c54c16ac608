//! The study model: a study file (`data/studies/<name>.yaml`) parsed into typed parts (one size
//! type per workload, arms with per-table fillfactor, the tables rewritten in every arm and the
//! ones whose VACUUM is timed), and its resolution by `init` into one `ArmPlan` per arm run: the
//! typed, fully resolved plan every later step reads from the arm's meta.json. Reads the YAML;
//! writes nothing. Sits under the run directory, the server and the workloads.

pub(crate) mod bounds;
pub(crate) mod kind;
pub(crate) mod pgbench;
pub(crate) mod plan;
pub(crate) mod scale;
pub(crate) mod size;

use std::collections::BTreeMap;
use std::path::Path;

use anyhow::{bail, Context, Result};
use serde::{Deserialize, Serialize};

use crate::ctx::Ctx;
pub(crate) use kind::SizeKind;
pub(crate) use pgbench::{Partition, PgbenchFiles, PgbenchSpec};
pub use plan::{parse_adhoc_arm, resolve_size, sweep_values, ArmPlan, Plan, PlanArgs};
pub(crate) use size::{each_size, each_workload};
pub use size::{Size, Workload};

#[derive(Debug, Clone, Deserialize)]
#[serde(try_from = "RawStudy")]
pub struct Study {
    pub name: String,
    pub(crate) title: String,
    /// The seed article this study reproduces (the study file says it; no step reads it yet).
    #[allow(dead_code)]
    pub(crate) article: Option<String>,
    pub(crate) workload: Workload,
    pub(crate) default_size: String,
    /// Server settings (ALTER SYSTEM) for every size.
    pub(crate) server: BTreeMap<String, String>,
    /// The sizes, typed by the workload.
    pub(crate) sizes: Sizes,
    /// Tables the workload updates: the ones a fillfactor can help.
    pub(crate) tables: Vec<String>,
    /// Tables rewritten with VACUUM FULL in every arm, the baseline too.
    pub(crate) rewrite: Vec<String>,
    /// Tables whose post-run VACUUM is timed.
    pub(crate) vacuum_timing: Vec<String>,
    pub(crate) arms: Vec<Arm>,
    /// The arms `init` runs when none are named (default: every arm).
    pub(crate) default_arms: Vec<String>,
    /// `workload: pgbench`: the files (`pgbench:`), and their texts once `parse_study` read them.
    pub(crate) pgbench: Option<PgbenchSpec>,
    pub(crate) pgbench_files: Option<PgbenchFiles>,
}

/// A study's sizes by name, each of the study's workload's type.
#[derive(Debug, Clone)]
pub(crate) struct Sizes(pub(crate) BTreeMap<String, Size>);

impl Sizes {
    pub(crate) fn names(&self) -> Vec<String> {
        self.0.keys().cloned().collect()
    }

    pub(crate) fn get(&self, name: &str) -> Option<Size> {
        self.0.get(name).cloned()
    }
}

/// The study file as written; `Study` is it with each size parsed by its workload's type.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawStudy {
    name: String,
    title: String,
    #[serde(default)]
    article: Option<String>,
    workload: Workload,
    default_size: String,
    #[serde(default)]
    server: BTreeMap<String, String>,
    // YAML values, not JSON ones: JSON has no NaN or infinity, and would turn `.nan` into null
    // (a missing field) instead of a value the size's checks refuse.
    sizes: BTreeMap<String, serde_norway::Value>,
    tables: Vec<String>,
    rewrite: Vec<String>,
    #[serde(default)]
    vacuum_timing: Vec<String>,
    arms: Vec<Arm>,
    #[serde(default)]
    default_arms: Vec<String>,
    #[serde(default)]
    pgbench: Option<PgbenchSpec>,
}

impl TryFrom<RawStudy> for Study {
    type Error = String;

    fn try_from(r: RawStudy) -> Result<Study, String> {
        let w = r.workload;
        let sizes = r
            .sizes
            .into_iter()
            .map(|(k, v)| {
                Size::parse(w, v)
                    .map(|s| (k.clone(), s))
                    .map_err(|e| format!("sizes.{k} ({} size): {e}", w.name()))
            })
            .collect::<Result<_, String>>()
            .map(Sizes)?;
        if (r.workload == Workload::Pgbench) != r.pgbench.is_some() {
            return Err(if r.pgbench.is_some() {
                "pgbench: is only for workload: pgbench".to_string()
            } else {
                "workload: pgbench needs a pgbench: section (schema, load, scripts)".to_string()
            });
        }
        Ok(Study {
            name: r.name,
            title: r.title,
            article: r.article,
            workload: r.workload,
            default_size: r.default_size,
            server: r.server,
            sizes,
            tables: r.tables,
            rewrite: r.rewrite,
            vacuum_timing: r.vacuum_timing,
            arms: r.arms,
            default_arms: r.default_arms,
            pgbench: r.pgbench,
            pgbench_files: None,
        })
    }
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Arm {
    pub name: String,
    /// Heap fillfactor per table; tables not named keep what the build gave them.
    #[serde(default)]
    pub(crate) fillfactor: BTreeMap<String, u32>,
    /// Index fillfactor per index.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub(crate) index_fillfactor: BTreeMap<String, u32>,
    /// The table hash-partitioned (part of the arm's schema: its own template).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) partition: Option<Partition>,
    /// `workload: pgbench`: variables that override the size's (`:name` in the load and the
    /// scripts), so arms can differ in their data, not only in their storage parameters.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub(crate) vars: BTreeMap<String, serde_json::Value>,
    /// `workload: pgbench`: how the arm's tables get their fillfactor (docs/your-own-table.md).
    #[serde(default, skip_serializing_if = "BuildRoute::is_rewrite")]
    pub(crate) build: BuildRoute,
}

/// How an arm's tables get their fillfactor.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub(crate) enum BuildRoute {
    /// The database is copied from the cached template, `ALTER … SET (fillfactor)`, `VACUUM
    /// FULL` of the rewrite list, and a cold reset before the run: every arm starts cold.
    #[default]
    Rewrite,
    /// The tables are created with the arm's fillfactor (set on the empty tables, as `CREATE
    /// TABLE … WITH`), loaded by the study's own load SQL in the arm's database, and nothing is
    /// rewritten or cleared afterwards: the run starts with the cache as the load left it.
    CreateWith,
}

impl BuildRoute {
    pub(crate) fn is_rewrite(&self) -> bool {
        *self == BuildRoute::Rewrite
    }

    pub(crate) fn name(self) -> &'static str {
        match self {
            BuildRoute::Rewrite => "rewrite",
            BuildRoute::CreateWith => "create-with",
        }
    }
}

/// Server settings: `base`, then `over` on top.
pub(crate) fn merge_settings(
    base: &BTreeMap<String, String>,
    over: &BTreeMap<String, String>,
) -> BTreeMap<String, String> {
    let mut s = base.clone();
    s.extend(over.iter().map(|(k, v)| (k.clone(), v.clone())));
    s
}

/// Names of the studies in `data/studies/`.
pub(crate) fn known_studies(ctx: &Ctx) -> Vec<String> {
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

pub(crate) fn load_study(ctx: &Ctx, name: &str) -> Result<Study> {
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

pub(crate) fn parse_study(path: &Path) -> Result<Study> {
    let text =
        std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
    let mut study: Study = serde_norway::from_str(&text).map_err(|e| {
        anyhow::anyhow!(
            "{}: {}; fix the study file",
            path.display(),
            e.to_string().replace('\n', " ")
        )
    })?;
    validate_study(&study).with_context(|| format!("{}", path.display()))?;
    if let Some(spec) = &study.pgbench {
        let files = spec.resolve(path, &study.name)?;
        for a in &study.arms {
            check_arm_vars(a, &files).with_context(|| format!("{}", path.display()))?;
        }
        study.pgbench_files = Some(files);
    }
    Ok(study)
}

pub(crate) fn check_fillfactor(what: &str, ff: u32) -> Result<()> {
    if !(10..=100).contains(&ff) {
        bail!("fillfactor {ff} for {what} is out of range: PostgreSQL accepts 10 to 100");
    }
    Ok(())
}

fn validate_study(s: &Study) -> Result<()> {
    if s.sizes.get(&s.default_size).is_none() {
        bail!("default_size {:?} is not one of the sizes", s.default_size);
    }
    for name in s.sizes.names() {
        let size = s.sizes.get(&name).expect("a listed size");
        if size.kind().scale_from().is_some() {
            // Checked when it is resolved, against this machine (`resolve_size`).
            continue;
        }
        validate_size(&size).with_context(|| format!("size {name}"))?;
    }
    let mut seen = std::collections::BTreeSet::new();
    for a in &s.arms {
        if !seen.insert(&a.name) {
            bail!("arm {} appears twice", a.name);
        }
        validate_arm(s, a)?;
    }
    for a in &s.default_arms {
        if !s.arms.iter().any(|x| &x.name == a) {
            bail!("default_arms names {a}, which is not an arm of the study; fix the study file");
        }
    }
    for t in s.rewrite.iter().chain(&s.vacuum_timing) {
        if !s.tables.contains(t) {
            bail!("table {t} in rewrite/vacuum_timing is not in the study's tables");
        }
    }
    for t in &s.tables {
        check_ident("table", t)?;
    }
    for a in &s.arms {
        for i in a.index_fillfactor.keys() {
            check_ident("index", i)?;
        }
    }
    check_settings("server", &s.server)?;
    for name in s.sizes.names() {
        let size = s.sizes.get(&name).expect("a listed size");
        check_settings(&format!("sizes.{name}.server"), size.server())?;
    }
    Ok(())
}

/// Settings a study may not touch: how the server is reached and where its files are. hotlab
/// sets these itself (loopback only, its own socket directory), and a study that changed them
/// would change them for every later study.
pub(crate) const FORBIDDEN_SETTINGS: &[&str] = &[
    "listen_addresses",
    "port",
    "hba_file",
    "ident_file",
    "data_directory",
    "config_file",
];

/// The libraries hotlab itself preloads; a study may name no other.
pub(crate) const PRELOADED: &[&str] = &["pg_stat_statements"];

fn check_settings(where_: &str, settings: &BTreeMap<String, String>) -> Result<()> {
    for (k, v) in settings {
        let key = k.to_ascii_lowercase();
        let forbidden = FORBIDDEN_SETTINGS.contains(&key.as_str())
            || key.starts_with("unix_socket_")
            || key.starts_with("ssl");
        if forbidden {
            bail!(
                "{where_}: {k} is the server's own (how it is reached, or where its files are); a study may not set it: remove it from the study file"
            );
        }
        if key == "shared_preload_libraries" {
            let extra: Vec<&str> = v
                .split(',')
                .map(|l| l.trim().trim_matches('\'').trim_matches('"'))
                .filter(|l| !l.is_empty() && !PRELOADED.contains(l))
                .collect();
            if !extra.is_empty() {
                bail!(
                    "{where_}: shared_preload_libraries may hold only what hotlab loads ({}), not {}: remove it from the study file",
                    PRELOADED.join(", "),
                    extra.join(", ")
                );
            }
        }
    }
    Ok(())
}

/// A relation name as a study writes it: an SQL identifier exactly as in its DDL, optionally
/// schema-qualified; unquoted (`small_table`, folded to lower case as SQL does) or quoted
/// (`"MyTable"`, `"odd;name"`, a quote doubled). Every step uses the name as written, so it
/// resolves the same way everywhere; anything else is refused here, in one line.
pub(crate) fn check_ident(what: &str, name: &str) -> Result<()> {
    fn part(s: &str) -> Option<&str> {
        // One identifier at the start of `s`; returns the rest.
        if let Some(q) = s.strip_prefix('"') {
            let b = q.as_bytes();
            let mut i = 0;
            while i < b.len() {
                if b[i] == b'"' {
                    if b.get(i + 1) == Some(&b'"') {
                        i += 2;
                        continue;
                    }
                    return (i > 0).then(|| &q[i + 1..]);
                }
                i += 1;
            }
            return None;
        }
        let end = s
            .char_indices()
            .find(|(_, c)| !(c.is_ascii_alphanumeric() || *c == '_' || *c == '$'))
            .map(|(i, _)| i)
            .unwrap_or(s.len());
        let first = s.chars().next()?;
        (end > 0 && (first.is_ascii_alphabetic() || first == '_')).then(|| &s[end..])
    }
    let ok = part(name)
        .is_some_and(|rest| rest.is_empty() || rest.strip_prefix('.').and_then(part) == Some(""));
    if !ok || name.len() > 2 * 63 + 5 {
        bail!(
            "{what} name {name} is not an SQL identifier; write it as in the DDL: a plain name, or quoted like '\"{}\"' (in YAML, inside single quotes)",
            name.replace('"', "\"\"")
        );
    }
    Ok(())
}

pub(crate) fn validate_size(size: &Size) -> Result<()> {
    size.kind().check()
}

/// An arm may only set fillfactor on the study's tables, within PostgreSQL's range.
pub(crate) fn validate_arm(s: &Study, a: &Arm) -> Result<()> {
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
    if let Some(p) = &a.partition {
        if s.workload != Workload::Pgbench {
            bail!("arm {}: partition is only for workload: pgbench", a.name);
        }
        if !s.tables.contains(&p.table) {
            bail!(
                "arm {}: partitioned table {} is not in study {}; its tables are: {}",
                a.name,
                p.table,
                s.name,
                s.tables.join(", ")
            );
        }
        p.check().with_context(|| format!("arm {}", a.name))?;
    }
    if s.workload != Workload::Pgbench && (!a.vars.is_empty() || !a.build.is_rewrite()) {
        bail!(
            "arm {}: vars and build are only for workload: pgbench; remove them from the arm",
            a.name
        );
    }
    crate::workload::script::size::check_vars(&a.vars)
        .with_context(|| format!("arm {}", a.name))?;
    if a.build == BuildRoute::CreateWith && a.partition.is_some() {
        bail!(
            "arm {}: build create-with cannot create a partitioned table (a fillfactor goes to each leaf after the partitioning); use build: rewrite for this arm",
            a.name
        );
    }
    Ok(())
}

/// Every variable an arm sets must be used by the load or a script: a misspelt name would
/// otherwise change nothing and still look like a variant.
pub(crate) fn check_arm_vars(a: &Arm, files: &PgbenchFiles) -> Result<()> {
    for k in a.vars.keys() {
        let used = pgbench::uses_var(&files.load, k)
            || files.scripts.iter().any(|s| pgbench::uses_var(&s.text, k));
        if !used {
            bail!(
                "arm {}: variable {k} is used neither by {} nor by a script (no :{k} in them); fix the name in the arm's vars",
                a.name,
                files.load_file
            );
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn relation_names_are_sql_identifiers_as_written() {
        for ok in [
            "small_table",
            "MyTable",
            "\"MyTable\"",
            "\"my;table\"",
            "\"a\"\"b\"",
            "s.t",
            "\"S\".\"T\"",
        ] {
            assert!(check_ident("table", ok).is_ok(), "{ok}");
        }
        for bad in [
            "my;table",
            "a b",
            "\"open",
            "\"\"",
            "1abc",
            "s.",
            ".t",
            "t; DROP TABLE x",
            "",
        ] {
            let e = check_ident("table", bad).unwrap_err().to_string();
            assert!(e.contains("not an SQL identifier"), "{bad}: {e}");
        }
    }

    #[test]
    fn a_study_may_not_move_the_server() {
        let m = |k: &str, v: &str| BTreeMap::from([(k.to_string(), v.to_string())]);
        for k in [
            "listen_addresses",
            "port",
            "unix_socket_directories",
            "ssl",
            "ssl_cert_file",
            "hba_file",
            "data_directory",
        ] {
            assert!(check_settings("server", &m(k, "x")).is_err(), "{k}");
        }
        assert!(check_settings(
            "server",
            &m("shared_preload_libraries", "pg_stat_statements")
        )
        .is_ok());
        assert!(check_settings(
            "server",
            &m(
                "shared_preload_libraries",
                "pg_stat_statements,auto_explain"
            )
        )
        .is_err());
        assert!(check_settings("server", &m("shared_buffers", "200MB")).is_ok());
    }

    #[test]
    fn unknown_keys_are_refused() {
        let r: Result<Study, _> = serde_norway::from_str(
            "name: t\ntitle: t\nworkload: spv\ndefault_size: s\nsizes: {}\ntables: []\nrewrite: []\narms: []\nbogus: 1\n",
        );
        assert!(r.unwrap_err().to_string().contains("bogus"));
    }
}
