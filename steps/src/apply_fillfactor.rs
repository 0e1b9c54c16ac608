//! `apply-fillfactor`: sets the arm's heap (and index) fillfactor, rewrites the study's rewrite
//! list with VACUUM FULL in every arm, the baseline too (ALTER TABLE alone does not touch
//! existing pages), then VACUUM ANALYZE and CHECKPOINT, and reads reloptions back.
//! Writes fillfactor.json: per relation, before, asked, read back, rewrite seconds.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Instant;

use anyhow::{bail, Context, Result};
use serde_json::json;

use crate::ctx::Ctx;
use crate::io::write_json_atomic;
use crate::rundir::RunDir;
use crate::server::{ident, Server};
use crate::study::check_fillfactor;

#[derive(clap::Args, Debug)]
pub struct Args {
    /// Arm run directory (made by `cargo xtask init`, built by `cargo xtask build`)
    #[arg(long, env = "HOTLAB_RUN")]
    pub run: PathBuf,
}

pub fn run(ctx: &Ctx, args: &Args) -> Result<()> {
    let rd = RunDir::open(&args.run)?;
    let db = rd.database()?;
    rd.step("apply-fillfactor", || apply(ctx, &rd, &db))
}

fn reloptions(c: &mut postgres::Client, rel: &str) -> Result<(String, Option<i32>)> {
    let row = c
        .query_opt(
            "SELECT coalesce(array_to_string(reloptions, ' '), ''), \
                    (SELECT substr(o, 12)::int FROM unnest(reloptions) o WHERE o LIKE 'fillfactor=%') \
             FROM pg_class WHERE oid = to_regclass($1)",
            &[&rel],
        )?
        .with_context(|| format!("relation {rel} does not exist in this database"))?;
    Ok((row.get(0), row.get(1)))
}

fn apply(ctx: &Ctx, rd: &RunDir, db: &str) -> Result<()> {
    let plan = rd.plan()?;
    let arm = &plan.arm;
    let server = Server::ensure(ctx)?;
    let mut c = server.connect(db)?;
    let mut rels: BTreeMap<String, serde_json::Value> = BTreeMap::new();
    for (t, ff) in &arm.fillfactor {
        check_fillfactor(t, *ff)?;
        let (before, _) = reloptions(&mut c, t)?;
        c.batch_execute(&format!("ALTER TABLE {} SET (fillfactor = {ff})", ident(t)))
            .with_context(|| format!("applying fillfactor {ff} to {t}"))?;
        rels.insert(
            t.clone(),
            json!({"kind": "table", "before": before, "asked": ff}),
        );
    }
    for (i, ff) in &arm.index_fillfactor {
        check_fillfactor(i, *ff)?;
        let (before, _) = reloptions(&mut c, i)?;
        c.batch_execute(&format!("ALTER INDEX {} SET (fillfactor = {ff})", ident(i)))
            .with_context(|| format!("applying fillfactor {ff} to index {i}"))?;
        rels.insert(
            i.clone(),
            json!({"kind": "index", "before": before, "asked": ff}),
        );
    }
    // The rewrite list is the same in every arm, so every arm starts from freshly packed pages.
    for t in &plan.rewrite {
        let t0 = Instant::now();
        c.batch_execute(&format!("VACUUM FULL {}", ident(t)))
            .with_context(|| format!("rewriting {t} with VACUUM FULL"))?;
        let secs = t0.elapsed().as_secs_f64();
        let entry = rels
            .entry(t.clone())
            .or_insert_with(|| json!({"kind": "table", "before": null, "asked": null}));
        entry["rewrite_s"] = json!(secs);
        eprintln!("hotlab: VACUUM FULL {t}: {secs:.2} s");
    }
    for t in &plan.rewrite {
        c.batch_execute(&format!("VACUUM ANALYZE {}", ident(t)))
            .with_context(|| format!("VACUUM ANALYZE {t}"))?;
    }
    c.batch_execute("CHECKPOINT")?;
    for (rel, entry) in rels.iter_mut() {
        let (opts, ff) = reloptions(&mut c, rel)?;
        let heap_bytes: i64 = c
            .query_one("SELECT pg_relation_size(to_regclass($1))", &[rel])?
            .get(0);
        if entry["before"].is_null() {
            entry["before"] = json!(opts);
        }
        entry["reloptions"] = json!(opts);
        entry["read_back"] = json!(ff.unwrap_or(100));
        entry["bytes"] = json!(heap_bytes);
        if let Some(asked) = entry["asked"].as_i64() {
            if asked != ff.unwrap_or(100) as i64 {
                bail!("{rel}: asked fillfactor {asked} but reloptions read back {opts:?}");
            }
        }
    }
    write_json_atomic(
        &rd.file("fillfactor.json"),
        &json!({ "arm": arm.name, "relations": rels }),
    )?;
    Ok(())
}
