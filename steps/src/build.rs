//! `build`: applies the study's server settings, then creates the arm's database from a cached
//! template (same workload, size and schema hash: `CREATE DATABASE … TEMPLATE … STRATEGY
//! FILE_COPY`), or loads the template first. A template is built under a `_partial` name and
//! renamed only after its row counts check out, so an interrupted build is never reused. An arm
//! built `create-with` (docs/your-own-table.md) is loaded in its own database instead, with its
//! fillfactor set on the empty tables, and its pages stay in shared buffers.
//! Writes meta.json (`server`, `build`) and ddl.sql.

use std::path::PathBuf;
use std::time::Instant;

use anyhow::{bail, Context, Result};

use crate::ctx::Ctx;
use crate::rundir::meta::{BuildRecord, SettingsRestore};
use crate::rundir::RunDir;
use crate::server::{ident, DbState, Server};
use crate::study::BuildRoute;
pub use crate::workload::Loader;

const EXTENSIONS: &[&str] = &["pg_stat_statements", "pg_buffercache", "pgstattuple"];

#[derive(clap::Args, Debug)]
pub struct Args {
    /// Arm run directory (made by `cargo xtask init`)
    #[arg(long, env = crate::env::RUN)]
    pub run: PathBuf,
    /// Load the data again even when a template of the same build exists
    #[arg(long)]
    pub no_template: bool,
    /// On a server hotlab does not own (external, compose): apply the study's settings with
    /// ALTER SYSTEM, and restore the previous ones at the end of the arm (`restore-settings`).
    /// Without it such a server's settings are left alone and the differences are recorded
    #[arg(long, env = crate::env::APPLY_SERVER_SETTINGS, value_parser = clap::builder::BoolishValueParser::new())]
    pub apply_server_settings: bool,
}

/// The study's settings on this server: applied on hotlab's own server; on another, applied only
/// when asked (the previous auto.conf values recorded first, for `restore-settings`), else left
/// alone with the differences recorded in meta.json (`server_settings_diff`).
fn settings(
    server: &Server,
    rd: &RunDir,
    wanted: &std::collections::BTreeMap<String, String>,
    apply: bool,
) -> Result<Vec<String>> {
    if server.owned() {
        return server.apply_settings(wanted);
    }
    if !apply {
        let diff = server.settings_diff(wanted)?;
        if !diff.is_empty() {
            eprintln!(
                "hotlab: this {:?} server is not at the study's settings ({}); left alone (pass --apply-server-settings to change them for the arm)",
                server.kind,
                diff.iter()
                    .map(|d| format!("{} {} instead of {}", d.name, d.server, d.study))
                    .collect::<Vec<_>>()
                    .join(", ")
            );
        }
        rd.update_meta(|m| m.server_settings_diff = Some(diff))?;
        return Ok(vec![]);
    }
    server.check_restartable(wanted)?;
    let names: Vec<String> = wanted.keys().cloned().collect();
    let previous = server.auto_conf_values(&names)?;
    // Recorded before anything changes: a failure half-way is still restored.
    rd.update_meta(|m| {
        m.server_settings_restore = Some(SettingsRestore {
            previous,
            restored: false,
            done: None,
        })
    })?;
    server.apply_settings(wanted)
}

/// The template for this loader, loaded unless one exists (or `reload`): (name, reused).
pub(crate) fn ensure_template(
    server: &Server,
    loader: &Loader,
    reload: bool,
) -> Result<(String, bool)> {
    let template = loader.template_name();
    // One builder per template: another arm (a concurrent run, another terminal) that finds the
    // lock taken is refused instead of copying a half-loaded template or loading it twice. The
    // lock is held by this connection until the template is renamed into place.
    let mut lock = server.connect(&server.conn.admin_db)?;
    let got: bool = lock
        .query_one(
            "SELECT pg_try_advisory_lock(hashtext('hotlab template ' || $1))",
            &[&template],
        )?
        .get(0);
    if !got {
        bail!(
            "template {template} is still being built by another hotlab process; wait for it to finish, or run the arms one after another (`just study`)"
        );
    }
    match server.database_state(&template)? {
        DbState::Foreign => {
            bail!("database {template} exists but was not created by hotlab; drop it or rename it")
        }
        DbState::Ours if !reload => {
            eprintln!("hotlab: reusing template {template}");
            return Ok((template, true));
        }
        _ => {}
    }
    load_template(server, &template, loader)?;
    Ok((template, false))
}

pub fn run(ctx: &Ctx, args: &Args) -> Result<()> {
    let rd = RunDir::open(&args.run)?;
    // Check first: a run directory without a plan is refused before anything is recorded.
    rd.plan()?;
    crate::server::lease::step(ctx, &rd, "build", || build(ctx, &rd, args))
}

fn build(ctx: &Ctx, rd: &RunDir, args: &Args) -> Result<()> {
    let plan = rd.plan()?;
    let started = Instant::now();
    let server = Server::ensure(ctx)?;
    let changed = settings(
        &server,
        rd,
        &plan.server_settings,
        args.apply_server_settings,
    )?;
    let info = server.describe()?;
    rd.update_meta(|m| m.server = Some(info))?;
    let loader = Loader::for_plan(&plan)?;
    std::fs::write(rd.file("ddl.sql"), loader.ddl())?;
    if plan.database.is_empty() {
        bail!(
            "{} records no database name; create a new run with `cargo xtask init --study {}`",
            rd.path.display(),
            plan.study
        );
    }
    let db = plan.database.clone();
    let route = plan.arm.build;
    let (template, reused, copy_s) = match route {
        BuildRoute::Rewrite => {
            let (template, reused) = ensure_template(&server, &loader, args.no_template)?;
            server.drop_own_database(&db)?;
            let t = Instant::now();
            server.create_own_database(&db, Some(&template))?;
            server.mark_run_database(&db, &rd.path)?;
            (Some(template), reused, Some(t.elapsed().as_secs_f64()))
        }
        BuildRoute::CreateWith => {
            // No template: the pages must be written by this server's backends, through shared
            // buffers, as a table created and loaded on a running server is.
            server.drop_own_database(&db)?;
            server.create_own_database(&db, None)?;
            server.mark_run_database(&db, &rd.path)?;
            if let Err(e) = load_into(&server, &db, &loader) {
                // Nothing half-built is left behind: the arm's database is ours, and dropped.
                server.drop_own_database(&db)?;
                return Err(e);
            }
            (None, false, None)
        }
    };
    let rows = verify(&server, &db, &loader)?;
    let mut c = server.connect(&db)?;
    let bytes: i64 = c
        .query_one("SELECT pg_database_size(current_database())", &[])?
        .get(0);
    rd.update_meta(|m| {
        m.build = Some(BuildRecord {
            database: db.clone(),
            route: route.name().into(),
            cache: match route {
                BuildRoute::Rewrite => "cleared by the next reset-cold",
                BuildRoute::CreateWith => "left as the load left it (create-with)",
            }
            .into(),
            template,
            template_reused: reused,
            copy_seconds: copy_s,
            seconds: started.elapsed().as_secs_f64(),
            rows,
            database_bytes: bytes,
            settings_changed: changed,
        })
    })?;
    eprintln!(
        "hotlab: built {db} ({} MiB) in {:.1} s",
        bytes / 1048576,
        started.elapsed().as_secs_f64()
    );
    Ok(())
}

/// Loads `template` from scratch (under a `_partial` name until its row counts check out).
pub(crate) fn load_template(server: &Server, template: &str, loader: &Loader) -> Result<()> {
    let partial = format!("{template}_partial");
    server.drop_own_database(&partial)?;
    server.drop_own_database(template)?;
    server.create_own_database(&partial, None)?;
    eprintln!("hotlab: loading {partial}");
    load_into(server, &partial, loader).map_err(|e| {
        anyhow::anyhow!("{e:#}; the half-built template stays {partial} and is never used")
    })?;
    verify(server, &partial, loader)?;
    let mut admin = server.connect(&server.conn.admin_db)?;
    admin.batch_execute(&format!(
        "ALTER DATABASE {} RENAME TO {}",
        ident(&partial),
        ident(template)
    ))?;
    Ok(())
}

/// Creates the extensions and runs the loader in the (empty) database `db`.
fn load_into(server: &Server, db: &str, loader: &Loader) -> Result<()> {
    {
        let mut c = server.connect(db)?;
        for e in EXTENSIONS {
            c.batch_execute(&format!("CREATE EXTENSION IF NOT EXISTS {e}"))
                .map_err(|err| {
                    anyhow::anyhow!(
                        "creating extension {e}: {}; the server needs PostgreSQL contrib, and a role that is not a superuser needs a superuser to run data/sql/grants.sql once",
                        crate::server::db_error_line(&err)
                    )
                })?;
        }
        loader.load(server, db, &mut c)?;
    }
    Ok(())
}

/// Row counts must be exactly what the loader promised; a half-built database is refused.
fn verify(
    server: &Server,
    db: &str,
    loader: &Loader,
) -> Result<std::collections::BTreeMap<String, i64>> {
    let mut c = server.connect(db)?;
    let mut out = std::collections::BTreeMap::new();
    for (t, want) in &loader.expected {
        let got: i64 = c
            .query_one(&format!("SELECT count(*) FROM {t}"), &[])
            .with_context(|| format!("counting {t} in {db}"))?
            .get(0);
        match want {
            Some(want) if got != *want => bail!("{db}.{t} has {got} rows, expected {want}; the build is incomplete: run `cargo xtask build --no-template` again"),
            None if got == 0 => bail!("{db}.{t} is empty after the load; the load SQL fills nothing: fix it and run `cargo xtask build --no-template`"),
            _ => {}
        }
        out.insert(t.clone(), got);
    }
    loader.verify(&mut c, db, &mut out)?;
    Ok(out)
}
