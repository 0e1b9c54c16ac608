//! The pgbench-script workload (`workload: pgbench`): study 001's upsert, and a user's own
//! table. The study's files (schema, load, scripts) come from the arm's plan; the size gives
//! clients, jobs, ramp-up and duration (or transactions), and the variables: `:name` in the load
//! SQL, `-D name=value` for the scripts. An arm may hash-partition a table: the partitioning runs
//! between the schema and the load, so the load writes into the leaves.

pub(crate) mod files;
pub(crate) mod run;
pub(crate) mod size;
pub(crate) mod tables;

use anyhow::{Context, Result};

use crate::study::pgbench::{substitute, PgbenchFiles};
use crate::study::SizeKind;
use crate::study::{Arm, BuildRoute};
use size::PgbenchSize;

pub(crate) struct Shape {
    pub(crate) clients: u32,
    pub(crate) jobs: u32,
    pub(crate) rampup_s: f64,
    /// Measured seconds (pgbench -T is ramp-up + this), or None with `transactions`.
    pub(crate) duration_s: Option<f64>,
    /// Transactions in all (-t is this / clients).
    pub(crate) transactions: Option<u64>,
    pub(crate) snapshot_every_s: f64,
    pub(crate) random_seed: u64,
    pub(crate) vars: Vec<(String, String)>,
}

impl Shape {
    pub(crate) fn of(size: &PgbenchSize) -> Result<Shape> {
        size.check()?;
        Ok(Shape {
            clients: size.clients,
            jobs: size.jobs.unwrap_or(1),
            rampup_s: size.rampup_s.unwrap_or(0.0),
            duration_s: size.duration_s,
            transactions: size.transactions,
            snapshot_every_s: size.snapshot_every_s.unwrap_or(5.0),
            random_seed: size.random_seed.unwrap_or(1),
            vars: size
                .vars
                .keys()
                .map(|k| (k.clone(), size.var(k).unwrap_or_default()))
                .collect(),
        })
    }

    /// The template machinery's view of an arm: the study's files and the arm's partitioning
    /// (part of the schema, so part of the template's key); every table must end non-empty.
    pub(crate) fn loader(&self, plan: &crate::study::ArmPlan) -> Result<super::Loader> {
        Ok(super::Loader {
            workload: "pgbench",
            expected: plan.tables.iter().map(|t| (t.clone(), None)).collect(),
            own: None,
            parts: self.parts(files_of(plan)?, &plan.arm),
        })
    }

    /// The build in pieces, each named by the file it came from and headed by a comment saying
    /// so: the schema, the arm's partitioning, the load with the size's variables in place. Their
    /// text is what the template cache keys on.
    pub(crate) fn parts(&self, files: &PgbenchFiles, arm: &Arm) -> Vec<(String, String)> {
        let mut v = vec![(files.schema_file.clone(), files.schema.clone())];
        if let Some(p) = &arm.partition {
            v.push((
                format!("the partitioning of arm {} ({})", arm.name, p.table),
                p.sql(),
            ));
        }
        if arm.build == BuildRoute::CreateWith {
            v.push((
                format!("the fillfactor of arm {} (build create-with)", arm.name),
                create_with_sql(arm),
            ));
        }
        v.push((files.load_file.clone(), substitute(&files.load, &self.vars)));
        v.into_iter()
            .map(|(f, sql)| {
                let text = format!("-- {f}\n{}\n", sql.trim_end());
                (f, text)
            })
            .collect()
    }

    /// pgbench arguments; `scripts` are (path, weight), the database comes last.
    pub(crate) fn pgbench_args(
        &self,
        files: &PgbenchFiles,
        scripts: &[(String, u32)],
        db: &str,
    ) -> Vec<String> {
        let mut a: Vec<String> = vec![
            "-n".into(),
            "-c".into(),
            self.clients.to_string(),
            "-j".into(),
            self.jobs.to_string(),
            "-M".into(),
            files.protocol.name().into(),
            "-P".into(),
            "5".into(),
            format!("--random-seed={}", self.random_seed),
        ];
        match (self.duration_s, self.transactions) {
            (Some(d), _) => {
                a.push("-T".into());
                a.push(format!("{}", (self.rampup_s + d).ceil() as u64));
            }
            (None, Some(t)) => {
                a.push("-t".into());
                a.push((t / self.clients as u64).to_string());
            }
            (None, None) => unreachable!("checked by PgbenchSize::check"),
        }
        for (k, v) in &self.vars {
            a.push("-D".into());
            a.push(format!("{k}={v}"));
        }
        for (path, w) in scripts {
            a.push("-f".into());
            a.push(format!("{path}@{w}"));
        }
        a.push(db.into());
        a
    }
}

/// The arm's fillfactor set on its tables and indexes while they are still empty, before the
/// load: the pages the load writes are the same as under `CREATE TABLE … WITH (fillfactor = N)`
/// (and for a B-tree filled in key order, as the load does, the same as an index built `WITH`).
fn create_with_sql(arm: &Arm) -> String {
    let mut sql = String::from(
        "-- hotlab: build create-with: the arm's fillfactor on the empty relations, before the load\n",
    );
    for (t, ff) in &arm.fillfactor {
        // Names as the study writes them (checked SQL identifiers, quoted where they need it).
        sql.push_str(&format!("ALTER TABLE {t} SET (fillfactor = {ff});\n"));
    }
    for (i, ff) in &arm.index_fillfactor {
        sql.push_str(&format!("ALTER INDEX {i} SET (fillfactor = {ff});\n"));
    }
    sql
}

/// The tables of the plan the build must have filled (each non-empty).
pub(crate) fn files_of(plan: &crate::study::ArmPlan) -> Result<&PgbenchFiles> {
    plan.pgbench.as_ref().context(
        "this run directory records no pgbench files; create a new one with `cargo xtask init`",
    )
}

/// Per-interval figures and latency percentiles from pgbench's per-transaction logs.
pub(crate) mod txlog {
    use std::path::Path;

    use anyhow::Result;

    /// One transaction: when it ended (µs since the epoch) and its latency (µs), or None
    /// when it failed.
    #[derive(Debug, Clone, Copy, PartialEq)]
    pub(crate) struct Txn {
        pub(crate) end_us: i64,
        pub(crate) latency_us: Option<u64>,
    }

    /// Parses one line of `pgbench -l`: client_id transaction_no time script_no time_epoch
    /// time_us [...]; `time` is the latency in µs, `failed`/`serialization`/`deadlock` for a
    /// failure, `skipped` for a skipped transaction (left out).
    pub(crate) fn parse(line: &str) -> Option<Txn> {
        let f: Vec<&str> = line.split_whitespace().collect();
        if f.len() < 6 {
            return None;
        }
        let end_us = f[4].parse::<i64>().ok()? * 1_000_000 + f[5].parse::<i64>().ok()?;
        match f[2] {
            "skipped" => None,
            t => Some(Txn {
                end_us,
                latency_us: t.parse().ok(),
            }),
        }
    }

    /// Every transaction of every log file `<prefix>.<pid>[.<thread>]`, in end order.
    pub(crate) fn read(prefix: &Path) -> Result<Vec<Txn>> {
        let mut out = vec![];
        for p in crate::workload::pgbench::log_files(prefix)? {
            out.extend(std::fs::read_to_string(&p)?.lines().filter_map(parse));
        }
        out.sort_by_key(|t| t.end_us);
        Ok(out)
    }

    /// The `q`-quantile (0..1) of sorted values, nearest rank.
    pub(crate) fn quantile(sorted: &[u64], q: f64) -> Option<f64> {
        if sorted.is_empty() {
            return None;
        }
        let rank = ((q * sorted.len() as f64).ceil() as usize).clamp(1, sorted.len());
        Some(sorted[rank - 1] as f64)
    }

    /// Figures of a set of transactions: count, failures, mean and p50/p95/p99/max latency (ms).
    #[derive(Debug, Clone, Default, PartialEq, serde::Serialize)]
    pub(crate) struct Figures {
        pub(crate) transactions: u64,
        pub(crate) failures: u64,
        pub(crate) latency_avg_ms: Option<f64>,
        pub(crate) latency_p50_ms: Option<f64>,
        pub(crate) latency_p95_ms: Option<f64>,
        pub(crate) latency_p99_ms: Option<f64>,
        pub(crate) latency_max_ms: Option<f64>,
    }

    pub(crate) fn figures(txns: &[Txn]) -> Figures {
        let mut lat: Vec<u64> = txns.iter().filter_map(|t| t.latency_us).collect();
        lat.sort_unstable();
        let ms = |v: Option<f64>| v.map(|x| x / 1000.0);
        Figures {
            transactions: lat.len() as u64,
            failures: txns.iter().filter(|t| t.latency_us.is_none()).count() as u64,
            latency_avg_ms: (!lat.is_empty())
                .then(|| lat.iter().sum::<u64>() as f64 / lat.len() as f64 / 1000.0),
            latency_p50_ms: ms(quantile(&lat, 0.50)),
            latency_p95_ms: ms(quantile(&lat, 0.95)),
            latency_p99_ms: ms(quantile(&lat, 0.99)),
            latency_max_ms: ms(lat.last().map(|x| *x as f64)),
        }
    }

    #[cfg(test)]
    mod tests {
        use super::*;

        #[test]
        fn parses_transaction_lines_and_percentiles() {
            let t = parse("0 199 2241 0 1175850568 995598").unwrap();
            assert_eq!(t.latency_us, Some(2241));
            assert_eq!(t.end_us, 1_175_850_568_995_598);
            assert_eq!(
                parse("3 7 failed 0 1175850569 1000").unwrap().latency_us,
                None
            );
            assert!(parse("0 1 skipped 0 1175850569 1000").is_none());
            let v: Vec<u64> = (1..=100).collect();
            assert_eq!(quantile(&v, 0.5), Some(50.0));
            assert_eq!(quantile(&v, 0.99), Some(99.0));
            assert_eq!(quantile(&[], 0.5), None);
        }
    }
}
