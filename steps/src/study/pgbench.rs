//! The study-file parts of a pgbench-script workload (`workload: pgbench`): which files hold the
//! schema, the load and the scripts (`PgbenchSpec`, paths beside the study), and what `init`
//! resolves them into for an arm's plan (`PgbenchFiles`, the texts themselves: a study edited
//! half-way through a sweep changes nothing in it). Also an arm's partitioning (`Partition`).
//! Reads the files; writes nothing.

use std::path::Path;

use anyhow::{bail, Context, Result};
use serde::{Deserialize, Serialize};

/// `pgbench:` in a study file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct PgbenchSpec {
    /// The directory of the files, beside the study file (default: the study's name).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) dir: Option<String>,
    /// SQL that creates the tables (run once per template).
    pub(crate) schema: String,
    /// SQL that fills them; `:name` is replaced by the size's variable `name`.
    pub(crate) load: String,
    /// pgbench scripts and their weights (`-f file@weight`).
    pub(crate) scripts: Vec<ScriptRef>,
    /// pgbench -M: simple (the default), extended or prepared.
    #[serde(default)]
    pub(crate) protocol: Protocol,
    /// An invariant `run` checks: the rows a transaction inserts or updates in a table.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) check: Option<RowCheck>,
    /// Where the rows the scripts hit sit: a query returning their `tableoid, ctid`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) hot_rows: Option<HotRowsRef>,
}

/// `hot_rows: {file, table}`: the pages of `table` holding a row the query returns are counted
/// after the build (`apply-fillfactor`) and after the run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct HotRowsRef {
    pub(crate) file: String,
    pub(crate) table: String,
}

/// The hot-rows query as text, with its table.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct HotRows {
    pub(crate) file: String,
    pub(crate) table: String,
    pub(crate) sql: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct ScriptRef {
    pub(crate) file: String,
    #[serde(default = "one")]
    pub(crate) weight: u32,
}

fn one() -> u32 {
    1
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub(crate) enum Protocol {
    /// Needed when a variable is substituted inside a `DO` block or a literal.
    #[default]
    Simple,
    Extended,
    Prepared,
}

impl Protocol {
    pub(crate) fn name(self) -> &'static str {
        match self {
            Protocol::Simple => "simple",
            Protocol::Extended => "extended",
            Protocol::Prepared => "prepared",
        }
    }
}

/// Δ(n_tup_ins + n_tup_upd) of `table` (its partitions added up) must equal
/// `rows_per_transaction` × the transactions pgbench committed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RowCheck {
    pub(crate) table: String,
    pub(crate) rows_per_transaction: u64,
}

/// What `init` resolved: the files' texts, in the arm's plan.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct PgbenchFiles {
    /// Where the texts came from (for the record).
    pub(crate) dir: String,
    pub(crate) schema_file: String,
    pub(crate) schema: String,
    pub(crate) load_file: String,
    pub(crate) load: String,
    pub(crate) scripts: Vec<ScriptText>,
    pub(crate) protocol: Protocol,
    pub(crate) check: Option<RowCheck>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) hot_rows: Option<HotRows>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct ScriptText {
    /// The file name (pgbench reports transactions per script by it).
    pub(crate) name: String,
    pub(crate) weight: u32,
    pub(crate) text: String,
}

impl PgbenchSpec {
    /// The directory holding the files of a study at `study_path`.
    pub(crate) fn dir_of(&self, study_path: &Path, study_name: &str) -> std::path::PathBuf {
        let base = study_path.parent().unwrap_or(Path::new("."));
        base.join(self.dir.as_deref().unwrap_or(study_name))
    }

    /// Reads every file; a missing one is named, with the study file that names it.
    pub(crate) fn resolve(&self, study_path: &Path, study_name: &str) -> Result<PgbenchFiles> {
        let dir = self.dir_of(study_path, study_name);
        let read = |f: &str| -> Result<String> {
            let p = dir.join(f);
            std::fs::read_to_string(&p).with_context(|| {
                format!(
                    "{} (named in {}) cannot be read; create it or fix the study file",
                    p.display(),
                    study_path.display()
                )
            })
        };
        if self.scripts.is_empty() {
            bail!("{}: pgbench.scripts names no script", study_path.display());
        }
        let mut scripts = vec![];
        for s in &self.scripts {
            if s.weight == 0 {
                bail!("script {}: weight must be at least 1", s.file);
            }
            scripts.push(ScriptText {
                name: s.file.clone(),
                weight: s.weight,
                text: read(&s.file)?,
            });
        }
        Ok(PgbenchFiles {
            dir: dir.display().to_string(),
            schema_file: self.schema.clone(),
            schema: read(&self.schema)?,
            load_file: self.load.clone(),
            load: read(&self.load)?,
            scripts,
            protocol: self.protocol,
            check: self.check.clone(),
            hot_rows: match &self.hot_rows {
                Some(h) => Some(HotRows {
                    file: h.file.clone(),
                    table: h.table.clone(),
                    sql: read(&h.file)?,
                }),
                None => None,
            },
        })
    }
}

/// An arm's partitioning of one of the study's tables: the same table, hash-partitioned.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct Partition {
    pub(crate) table: String,
    /// Only `hash` for now.
    #[serde(default = "hash")]
    pub(crate) by: String,
    /// The partition key: one column of the primary key.
    pub(crate) key: String,
    /// Number of partitions, 2 to 1024.
    pub(crate) count: u32,
}

fn hash() -> String {
    "hash".into()
}

impl Partition {
    pub(crate) fn check(&self) -> Result<()> {
        if self.by != "hash" {
            bail!(
                "partition of {}: by {:?} is not supported; use hash",
                self.table,
                self.by
            );
        }
        if !(2..=1024).contains(&self.count) {
            bail!(
                "partition of {}: count {} is out of range; use 2 to 1024 partitions",
                self.table,
                self.count
            );
        }
        if self.key.is_empty() {
            bail!("partition of {}: the key names no column", self.table);
        }
        Ok(())
    }

    /// SQL that turns the (empty) table into a hash-partitioned one with the same columns,
    /// defaults, constraints and index names, and creates the partitions. Refuses, with one
    /// line, a key outside the primary key (PostgreSQL requires it in every unique index).
    pub(crate) fn sql(&self) -> String {
        let t = self.table.replace('\'', "''");
        let k = self.key.replace('\'', "''");
        let tq = format!("\"{}\"", t.replace('"', "\"\""));
        format!(
            r#"-- hotlab: {t} hash-partitioned on {k} into {n} partitions (the arm's partition)
DO $hotlab$
DECLARE
    tbl regclass := '{tq}'::regclass;
    cons text[];
    idxs text[];
    stmt text;
BEGIN
    IF EXISTS (SELECT 1 FROM pg_constraint c WHERE c.conrelid = tbl AND c.contype IN ('p', 'u')
               AND NOT EXISTS (SELECT 1 FROM pg_attribute a WHERE a.attrelid = tbl
                               AND a.attname = '{k}' AND a.attnum = ANY (c.conkey))) THEN
        RAISE EXCEPTION 'partition key {k} is not in the primary key (or a unique constraint) of {t}; pick one of its columns';
    END IF;
    IF NOT EXISTS (SELECT 1 FROM pg_attribute WHERE attrelid = tbl AND attname = '{k}' AND attnum > 0) THEN
        RAISE EXCEPTION 'partition key {k} is not a column of {t}';
    END IF;
    SELECT coalesce(array_agg(format('ALTER TABLE %s ADD CONSTRAINT %I %s', tbl, conname,
                                     pg_get_constraintdef(oid)) ORDER BY conname), '{{}}')
      INTO cons FROM pg_constraint WHERE conrelid = tbl AND contype IN ('p', 'u');
    SELECT coalesce(array_agg(pg_get_indexdef(i.indexrelid) ORDER BY i.indexrelid), '{{}}')
      INTO idxs FROM pg_index i
     WHERE i.indrelid = tbl
       AND NOT EXISTS (SELECT 1 FROM pg_constraint c WHERE c.conindid = i.indexrelid);
    EXECUTE format('CREATE TABLE hotlab_partitioned (LIKE %s INCLUDING ALL EXCLUDING INDEXES) PARTITION BY HASH (%I)', tbl, '{k}');
    EXECUTE format('DROP TABLE %s', tbl);
    EXECUTE format('ALTER TABLE hotlab_partitioned RENAME TO %I', '{t}');
    FOREACH stmt IN ARRAY cons LOOP EXECUTE stmt; END LOOP;
    FOREACH stmt IN ARRAY idxs LOOP EXECUTE stmt; END LOOP;
    FOR i IN 0..{last} LOOP
        EXECUTE format('CREATE TABLE %I PARTITION OF %I FOR VALUES WITH (MODULUS {n}, REMAINDER %s)',
                       '{t}_p' || i, '{t}', i);
    END LOOP;
END
$hotlab$;
"#,
            n = self.count,
            last = self.count - 1,
        )
    }
}

/// `text` with every `:name` of `vars` replaced by its value: a name ends at the first character
/// that cannot be in one, and `::type` casts are left alone.
pub(crate) fn substitute(text: &str, vars: &[(String, String)]) -> String {
    let b = text.as_bytes();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    let ident = |c: u8| c.is_ascii_alphanumeric() || c == b'_';
    while i < b.len() {
        if b[i] == b':' && (i == 0 || b[i - 1] != b':') && b.get(i + 1).is_some_and(|c| *c != b':')
        {
            let mut j = i + 1;
            while j < b.len() && ident(b[j]) {
                j += 1;
            }
            let name = &text[i + 1..j];
            if let Some((_, v)) = vars.iter().find(|(k, _)| k == name) {
                out.push_str(v);
                i = j;
                continue;
            }
        }
        let ch = text[i..].chars().next().expect("a char");
        out.push(ch);
        i += ch.len_utf8();
    }
    out
}

/// Whether `text` uses the variable `name` (as `:name`, the way `substitute` reads it).
pub(crate) fn uses_var(text: &str, name: &str) -> bool {
    substitute(text, &[(name.to_string(), String::new())]) != text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn variables_are_replaced_and_casts_kept() {
        let v = vec![
            ("users".to_string(), "100".to_string()),
            ("u".to_string(), "7".to_string()),
        ];
        assert_eq!(
            substitute("SELECT :users, :u, :users_x, 1::int, :'u'", &v),
            "SELECT 100, 7, :users_x, 1::int, :'u'"
        );
        assert!(uses_var("WHERE ':layout' = 'x'", "layout"));
        assert!(!uses_var("SELECT :users_x, 1::layout", "layout"));
    }

    #[test]
    fn partitions_are_checked() {
        let p = |count| Partition {
            table: "t".into(),
            by: "hash".into(),
            key: "k".into(),
            count,
        };
        assert!(p(1).check().unwrap_err().to_string().contains("2 to 1024"));
        assert!(p(1025).check().is_err());
        assert!(p(8).check().is_ok());
        assert!(p(8).sql().contains("MODULUS 8"));
    }
}
