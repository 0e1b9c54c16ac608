//! `vacuum-timing`: after the run, `VACUUM (VERBOSE)` of each table on the study's list (and of
//! the swept table in a sweep), timed,
//! with the pages and tuples it removed (parsed from its report), then a `post` snapshot.
//! Appends to vacuum.csv.

use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Instant;

use anyhow::{Context, Result};

use crate::ctx::Ctx;
use crate::io::CsvAppender;
use crate::rundir::RunDir;
use crate::server::Server;
use crate::snapshot::Sampler;

pub(crate) const VACUUM_HEADER: &[&str] = &[
    "table",
    "seconds",
    "heap_bytes_before",
    "heap_bytes_after",
    "pages_removed",
    "pages_remain",
    "tuples_removed",
    "tuples_remain",
    "dead_not_removable",
];

#[derive(clap::Args, Debug)]
pub struct Args {
    /// Arm run directory (after `cargo xtask run`)
    #[arg(long, env = crate::env::RUN)]
    pub run: PathBuf,
    /// Keep the arm's database after its last sample (default: drop it; arm databases are
    /// large and pile up)
    #[arg(long, env = crate::env::KEEP_DB, value_parser = clap::builder::BoolishValueParser::new())]
    pub(crate) keep_db: bool,
}

pub fn run(ctx: &Ctx, args: &Args) -> Result<()> {
    let rd = RunDir::open(&args.run)?;
    let db = rd.database()?;
    rd.plan()?;
    crate::server::lease::step(ctx, &rd, "vacuum-timing", || {
        let plan = rd.plan()?;
        let server = Server::ensure(ctx)?;
        let notices = Arc::new(Mutex::new(Vec::<String>::new()));
        let sink = notices.clone();
        let mut cfg = server.conn.config(&db);
        cfg.notice_callback(move |n| sink.lock().unwrap().push(n.message().to_string()));
        let mut c =
            crate::server::tls::connect(&server.conn, cfg).context("connecting for VACUUM")?;
        let mut csv = CsvAppender::open(&rd.file("vacuum.csv"), VACUUM_HEADER)?;
        // In a sweep, the swept table is timed too: the ladder shows its VACUUM seconds.
        let mut tables = plan.vacuum_timing.clone();
        if let Some(t) = plan.sweep_table.clone() {
            if !tables.contains(&t) {
                tables.push(t);
            }
        }
        for t in &tables {
            let size = |c: &mut postgres::Client| -> Result<i64> {
                Ok(
                    c.query_one("SELECT pg_relation_size(to_regclass($1))", &[t])?
                        .get(0),
                )
            };
            let before = size(&mut c)?;
            notices.lock().unwrap().clear();
            let t0 = Instant::now();
            c.batch_execute(&format!("VACUUM (VERBOSE) {t}"))
                .with_context(|| format!("VACUUM {t}"))?;
            let secs = t0.elapsed().as_secs_f64();
            let after = size(&mut c)?;
            let text = notices.lock().unwrap().join("\n");
            let v = parse_verbose(&text);
            csv.row(&[
                t.clone(),
                format!("{secs:.4}"),
                before.to_string(),
                after.to_string(),
                opt(v.pages_removed),
                opt(v.pages_remain),
                opt(v.tuples_removed),
                opt(v.tuples_remain),
                opt(v.dead_not_removable),
            ])?;
            eprintln!("hotlab: VACUUM {t}: {secs:.3} s");
        }
        Sampler::new(&server, &db, &rd)?.take(crate::snapshot::Phase::Post)?;
        drop(c);
        // The arm's last sample is taken: its database has served. Drop it unless kept.
        let kept = args.keep_db;
        if !kept {
            server.drop_own_database(&db)?;
            eprintln!("hotlab: dropped {db} (pass --keep-db or HOTLAB_KEEP_DB=1 to keep it)");
        }
        rd.update_meta(|m| {
            m.database_end = Some(crate::rundir::meta::DatabaseEnd {
                name: db.clone(),
                kept,
                dropped: !kept,
            })
        })?;
        Ok(())
    })
}

fn opt(v: Option<i64>) -> String {
    v.map(|x| x.to_string()).unwrap_or_default()
}

#[derive(Debug, Default, PartialEq)]
pub(crate) struct Verbose {
    pub(crate) pages_removed: Option<i64>,
    pub(crate) pages_remain: Option<i64>,
    pub(crate) tuples_removed: Option<i64>,
    pub(crate) tuples_remain: Option<i64>,
    pub(crate) dead_not_removable: Option<i64>,
}

/// Reads "pages: N removed, M remain" and "tuples: N removed, M remain, K are dead but not
/// yet removable" from VACUUM VERBOSE's report.
pub(crate) fn parse_verbose(text: &str) -> Verbose {
    let mut v = Verbose::default();
    let nums = |s: &str| -> Vec<i64> {
        s.split(|c: char| !c.is_ascii_digit())
            .filter(|x| !x.is_empty())
            .filter_map(|x| x.parse().ok())
            .collect()
    };
    for line in text.lines() {
        let l = line.trim();
        if let Some(rest) = l.strip_prefix("pages:") {
            let n = nums(rest);
            v.pages_removed = n.first().copied();
            v.pages_remain = n.get(1).copied();
        } else if let Some(rest) = l.strip_prefix("tuples:") {
            let n = nums(rest);
            v.tuples_removed = n.first().copied();
            v.tuples_remain = n.get(1).copied();
            v.dead_not_removable = n.get(2).copied();
        }
    }
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_vacuum_verbose() {
        let text = "finished vacuuming \"db.public.spv\": index scans: 1\n\
                    pages: 0 removed, 147 remain, 147 scanned (100.00% of total)\n\
                    tuples: 9985 removed, 10000 remain, 0 are dead but not yet removable\n";
        let v = parse_verbose(text);
        assert_eq!(v.pages_remain, Some(147));
        assert_eq!(v.tuples_removed, Some(9985));
        assert_eq!(v.dead_not_removable, Some(0));
    }
}
