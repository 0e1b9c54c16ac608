//! `apply-fillfactor`: sets the arm's heap (and index) fillfactor, rewrites the study's rewrite
//! list with VACUUM FULL in every arm, the baseline too (ALTER TABLE alone does not touch
//! existing pages), then VACUUM ANALYZE and CHECKPOINT, and reads reloptions back. An arm built
//! `create-with` already has its fillfactor and is not rewritten (recorded as skipped).
//! Writes fillfactor.json: per relation, before, asked, read back, rewrite seconds.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Instant;

use anyhow::{bail, Context, Result};

use crate::ctx::Ctx;
use crate::io::write_json_atomic;
use crate::rundir::{FillfactorJson, Relation, RunDir};
use crate::server::Server;
use crate::study::{check_fillfactor, BuildRoute};

#[derive(clap::Args, Debug)]
pub struct Args {
    /// Arm run directory (made by `cargo xtask init`, built by `cargo xtask build`)
    #[arg(long, env = crate::env::RUN)]
    pub run: PathBuf,
}

pub fn run(ctx: &Ctx, args: &Args) -> Result<()> {
    let rd = RunDir::open(&args.run)?;
    let db = rd.database()?;
    rd.plan()?;
    crate::server::lease::step(ctx, &rd, "apply-fillfactor", || apply(ctx, &rd, &db))
}

fn reloptions(c: &mut postgres::Client, rel: &str) -> Result<(String, Option<i32>)> {
    let row = c
        .query_opt(
            "SELECT coalesce(array_to_string(reloptions, ' '), ''), \
                    (SELECT substr(o, 12)::int FROM unnest(reloptions) o WHERE o LIKE 'fillfactor=%') \
             FROM pg_class WHERE oid = to_regclass($1)",
            &[&rel],
        )?
        .with_context(|| format!("relation {rel} does not exist in this database (names are SQL identifiers as in the DDL: a quoted name stays quoted in the study)"))?;
    Ok((row.get(0), row.get(1)))
}

/// `rel` itself, or the leaf partitions of a partitioned table or index.
fn leaves(c: &mut postgres::Client, rel: &str) -> Result<Vec<String>> {
    let kind: Option<i8> = c
        .query_opt(
            "SELECT relkind FROM pg_class WHERE oid = to_regclass($1)",
            &[&rel],
        )?
        .map(|r| r.get(0));
    match kind.map(|k| k as u8 as char) {
        None => {
            bail!("relation {rel} does not exist in this database; fix the arm's fillfactor names (SQL identifiers as in the DDL: write a quoted name quoted, '\"MyTable\"')")
        }
        Some('p' | 'I') => Ok(c
            .query(
                "SELECT t.relid::regclass::text FROM pg_partition_tree(to_regclass($1)) t \
                 WHERE t.isleaf ORDER BY 1",
                &[&rel],
            )?
            .iter()
            .map(|r| r.get::<_, String>(0))
            .collect()),
        Some(_) => Ok(vec![rel.to_string()]),
    }
}

fn apply(ctx: &Ctx, rd: &RunDir, db: &str) -> Result<()> {
    let plan = rd.plan()?;
    let arm = &plan.arm;
    let server = Server::ensure(ctx)?;
    let mut c = server.connect(db)?;
    let mut rels: BTreeMap<String, Relation> = BTreeMap::new();
    // A partitioned parent takes no fillfactor (PostgreSQL refuses it): the value goes to every
    // leaf partition, and of a partitioned index to every leaf index.
    let asked = arm
        .fillfactor
        .iter()
        .map(|(t, ff)| (t, ff, "table"))
        .chain(arm.index_fillfactor.iter().map(|(i, ff)| (i, ff, "index")));
    for (rel, ff, kind) in asked {
        check_fillfactor(rel, *ff)?;
        let leaves = leaves(&mut c, rel)?;
        for leaf in &leaves {
            let (before, _) = reloptions(&mut c, leaf)?;
            let what = if kind == "table" { "TABLE" } else { "INDEX" };
            c.batch_execute(&format!("ALTER {what} {leaf} SET (fillfactor = {ff})"))
                .with_context(|| format!("applying fillfactor {ff} to {kind} {leaf}"))?;
            let e = Relation {
                kind: kind.into(),
                before: Some(before),
                asked: Some(*ff as i64),
                partition_of: (leaf != rel).then(|| rel.clone()),
                ..Default::default()
            };
            rels.insert(leaf.clone(), e);
        }
    }
    let table = || Relation {
        kind: "table".into(),
        ..Default::default()
    };
    // The rewrite list is the same in every arm, so every arm starts from freshly packed pages;
    // except an arm built create-with, whose pages are the load's own and stay where the load
    // left them (a VACUUM FULL writes new files past shared buffers).
    for t in &plan.rewrite {
        if plan.arm.build == BuildRoute::CreateWith {
            let entry = rels.entry(t.clone()).or_insert_with(table);
            entry.rewrite_s = None;
            entry.rewrite = Some("skipped: build create-with (the load's pages are kept)".into());
            eprintln!("hotlab: {t} not rewritten (build create-with)");
            continue;
        }
        let t0 = Instant::now();
        c.batch_execute(&format!("VACUUM FULL {t}"))
            .with_context(|| format!("rewriting {t} with VACUUM FULL"))?;
        let secs = t0.elapsed().as_secs_f64();
        rels.entry(t.clone()).or_insert_with(table).rewrite_s = Some(secs);
        eprintln!("hotlab: VACUUM FULL {t}: {secs:.2} s");
    }
    for t in &plan.rewrite {
        c.batch_execute(&format!("VACUUM ANALYZE {t}"))
            .with_context(|| format!("VACUUM ANALYZE {t}"))?;
    }
    c.batch_execute("CHECKPOINT")?;
    for (rel, entry) in rels.iter_mut() {
        let (opts, ff) = reloptions(&mut c, rel)?;
        let heap_bytes: i64 = c
            .query_one("SELECT pg_relation_size(to_regclass($1))", &[rel])?
            .get(0);
        if entry.before.is_none() {
            entry.before = Some(opts.clone());
        }
        entry.reloptions = Some(opts.clone());
        entry.read_back = Some(ff.unwrap_or(100) as i64);
        entry.bytes = Some(heap_bytes);
        if let Some(asked) = entry.asked {
            if asked != ff.unwrap_or(100) as i64 {
                bail!("{rel}: asked fillfactor {asked} but reloptions read back {opts:?}");
            }
        }
    }
    // Where the rows the scripts hit sit as the run will find them (before the cold reset: the
    // query reads the table).
    if let Some(h) = plan.pgbench.as_ref().and_then(|f| f.hot_rows.as_ref()) {
        crate::snapshot::record_hot_rows(&mut c, rd, h, "start")?;
    }
    write_json_atomic(
        &rd.file("fillfactor.json"),
        &FillfactorJson {
            arm: arm.name.clone(),
            build: arm.build.name().into(),
            relations: rels,
        },
    )?;
    Ok(())
}
