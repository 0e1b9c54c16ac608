//! `reset-cold`: brings the server to a cold start and records what each action really did.
//!
//! Order (each step matters for the next):
//! 1. CHECKPOINT, so dirty shared buffers reach the files (dropping a cache never drops dirty data);
//! 2. stop the server, which empties shared_buffers;
//! 3. sync, so the kernel writes its dirty pages;
//! 4. drop the OS page cache: `/proc/sys/vm/drop_caches` when permitted, else
//!    `posix_fadvise(DONTNEED)` on every file of the data directory, else "skipped";
//! 5. fstrim the data directory's filesystem when permitted;
//! 6. start the server;
//! 7. confirm with pg_buffercache that no page of a user relation is in shared buffers.
//!
//! Appends one line per reset to reset.jsonl (when given a run directory) and prints it. For an
//! arm built `create-with`, the reset after its build is not done: the line says so and records
//! what the cache holds.

use std::fs;
use std::io::Write;
use std::os::fd::AsRawFd;
use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::Result;
use serde_json::{json, Value};

use crate::ctx::{is_root, BackendKind, Ctx};
use crate::io::now_rfc3339;
use crate::rundir::RunDir;
use crate::server::{compose, DbState, Server};
use crate::study::BuildRoute;

#[derive(clap::Args, Debug)]
pub struct Args {
    /// Arm run directory; the reset is appended to its reset.jsonl
    #[arg(long, env = crate::env::RUN)]
    pub run: Option<PathBuf>,
}

pub fn run(ctx: &Ctx, args: &Args) -> Result<()> {
    match &args.run {
        Some(dir) => {
            let rd = RunDir::open(dir)?;
            let db = rd.database().ok();
            // An arm built create-with starts its run with the cache as its load left it: the
            // reset after its build is recorded, not done.
            let keep = match rd.plan() {
                Ok(plan) if plan.arm.build == BuildRoute::CreateWith => {
                    rd.meta()?.steps.get("build").and_then(|s| s.status)
                        == Some(crate::rundir::StepStatus::Complete)
                }
                _ => false,
            };
            crate::server::lease::step(ctx, &rd, "reset-cold", || {
                let line = if keep {
                    kept(ctx, db.as_deref())?
                } else {
                    reset(ctx, db.as_deref())?
                };
                let mut f = fs::OpenOptions::new()
                    .create(true)
                    .append(true)
                    .open(rd.file("reset.jsonl"))?;
                writeln!(f, "{}", serde_json::to_string(&line)?)?;
                f.flush()?;
                report(&line);
                Ok(())
            })
        }
        None => {
            crate::server::lease::ensure_free(ctx)?;
            let line = reset(ctx, None)?;
            println!("{}", serde_json::to_string(&line)?);
            report(&line);
            Ok(())
        }
    }
}

fn report(line: &Value) {
    if line["kept_warm"] == true {
        eprintln!(
            "hotlab: reset-cold: skipped (build create-with); {} user-relation buffers kept",
            line["user_buffers"]
        );
        return;
    }
    let cold = line["cold"].as_bool().unwrap_or(false);
    let os = line["actions"]
        .as_array()
        .and_then(|a| a.iter().find(|x| x["action"] == "os_cache"))
        .and_then(|x| x["outcome"].as_str())
        .unwrap_or("?")
        .to_string();
    eprintln!(
        "hotlab: reset-cold: {}; OS cache: {os}",
        if cold {
            "shared buffers cold"
        } else {
            "NOT cold"
        }
    );
}

struct Log(Vec<Value>);

impl Log {
    fn act<F: FnOnce() -> Result<String>>(&mut self, action: &str, f: F) -> bool {
        let t = Instant::now();
        let (outcome, ok) = match f() {
            Ok(o) => (o, true),
            Err(e) => (format!("failed: {e:#}"), false),
        };
        self.0.push(json!({
            "action": action,
            "outcome": outcome,
            "seconds": (t.elapsed().as_secs_f64() * 1000.0).round() / 1000.0,
        }));
        ok
    }
}

pub(crate) fn reset(ctx: &Ctx, database: Option<&str>) -> Result<Value> {
    let server = Server::ensure(ctx)?;
    let mut log = Log(vec![]);
    let started = now_rfc3339();
    let mut admin = server.connect(&server.conn.admin_db)?;
    let prewarm: String = admin
        .query_one("SELECT current_setting('shared_preload_libraries')", &[])?
        .get(0);
    log.act("checkpoint", || {
        admin.batch_execute("CHECKPOINT")?;
        Ok("done".into())
    });
    drop(admin);
    match (&server.embedded, server.kind) {
        (Some(e), _) => {
            log.act("stop", || {
                e.stop().map(|_| "stopped (pg_ctl -m fast)".into())
            });
            log.act("sync", || {
                // SAFETY: sync has no arguments and cannot fail.
                unsafe { libc::sync() };
                Ok("done".into())
            });
            let data = e.data_dir();
            log.act("os_cache", || Ok(drop_os_cache(&data)));
            log.act("fstrim", || Ok(fstrim(&data)));
            let started_ok = log.act("start", || e.start().map(|_| "started".into()));
            if !started_ok {
                anyhow::bail!("the server did not come back after reset-cold; see `cargo xtask server status`");
            }
        }
        (None, BackendKind::Compose) => {
            log.act("stop", || {
                compose::stop()?;
                Ok("stopped (docker compose stop)".into())
            });
            log.act("sync", || {
                // SAFETY: as above.
                unsafe { libc::sync() };
                Ok("done".into())
            });
            log.act("os_cache", || {
                Ok(match fs::write("/proc/sys/vm/drop_caches", "3") {
                    Ok(()) => "dropped (/proc/sys/vm/drop_caches)".into(),
                    Err(e) => format!(
                        "skipped: the data lives in a Docker volume and drop_caches failed ({e})"
                    ),
                })
            });
            log.act("fstrim", || Ok("skipped: Docker volume".into()));
            log.act("start", compose::restart);
        }
        _ => {
            log.act("restart", || server.restart());
            if crate::env::var(crate::env::RESTART_CMD).is_none() {
                // No restart: PostgreSQL 17+ can still empty shared buffers of the arm's
                // relations, in the arm's own database only.
                log.act("evict", || evict(&server, database));
            }
            log.act("os_cache", || {
                Ok("not done: external server (hotlab cannot drop its OS page cache)".into())
            });
            log.act("fstrim", || Ok("skipped: external server".into()));
        }
    }
    let server = Server::ensure(ctx)?;
    let (user_buffers, used) = confirm(&server, database)?;
    let cold = user_buffers == 0;
    log.0.push(json!({
        "action": "confirm",
        "outcome": format!("{user_buffers} user-relation buffers, {used} buffers in use"),
        "seconds": 0,
    }));
    let mut warnings = vec![];
    if prewarm.contains("pg_prewarm") {
        warnings.push("pg_prewarm is preloaded: autoprewarm may reload buffers after a restart");
    }
    Ok(json!({
        "ts": started,
        "backend": server.kind,
        "database": database,
        "actions": log.0,
        "cold": cold,
        "user_buffers": user_buffers,
        "buffers_used": used,
        "warnings": warnings,
    }))
}

/// A cold start without a restart (external servers without `HOTLAB_RESTART_CMD`): evicts the
/// shared buffers of every relation of the arm's database (tables, indexes, TOAST, sequences),
/// with PostgreSQL 18's `pg_buffercache_evict_relation`, else 17's `pg_buffercache_evict` per
/// buffer. Only in a database hotlab created; where pg_buffercache cannot be had, or before
/// PostgreSQL 17, says why and leaves the buffers (the confirmation then says "NOT cold").
fn evict(server: &Server, database: Option<&str>) -> Result<String> {
    let Some(db) = database.filter(|d| matches!(server.database_state(d), Ok(DbState::Ours)))
    else {
        return Ok(
            "skipped: no arm database of hotlab's yet (hotlab evicts only in databases it created)"
                .into(),
        );
    };
    // Not a superuser: the function a superuser installed (data/sql/grants.sql), called from
    // hotlab_probe so that nothing connects to the arm's database before its buffers go.
    if !server.is_superuser()? {
        return evict_by_grant(server, db);
    }
    let mut c = server.connect(db)?;
    let version: i32 = c
        .query_one("SELECT current_setting('server_version_num')::int", &[])?
        .get(0);
    if version < 170000 {
        return Ok(format!(
            "skipped: PostgreSQL {} has no pg_buffercache_evict (17 or newer); the arm starts warm",
            version / 10000
        ));
    }
    if let Err(e) = c.batch_execute("CREATE EXTENSION IF NOT EXISTS pg_buffercache") {
        return Ok(format!(
            "skipped: pg_buffercache is not available in {db} ({}); the arm starts warm",
            crate::server::db_error_line(&e)
        ));
    }
    let by_relation: bool = c
        .query_one(
            "SELECT to_regprocedure('pg_buffercache_evict_relation(regclass)') IS NOT NULL",
            &[],
        )?
        .get(0);
    let (evicted, skipped): (i64, i64) = if by_relation {
        let r = c.query_one(
            "SELECT coalesce(sum(e.buffers_evicted), 0)::bigint, coalesce(sum(e.buffers_skipped), 0)::bigint \
             FROM pg_class c, LATERAL pg_buffercache_evict_relation(c.oid) e \
             WHERE c.oid >= 16384 AND c.relkind IN ('r', 'i', 't', 'm', 'S')",
            &[],
        )?;
        (r.get(0), r.get(1))
    } else {
        let r = c.query_one(
            "SELECT count(*) FILTER (WHERE ok), count(*) FILTER (WHERE NOT ok) \
             FROM (SELECT pg_buffercache_evict(b.bufferid) AS ok \
                   FROM pg_buffercache b JOIN pg_class c ON c.relfilenode = b.relfilenode \
                   WHERE b.reldatabase = (SELECT oid FROM pg_database WHERE datname = current_database()) \
                     AND c.oid >= 16384) e",
            &[],
        )?;
        (r.get(0), r.get(1))
    };
    Ok(format!(
        "evicted {evicted} buffers of {db}'s relations ({}){}",
        if by_relation {
            "pg_buffercache_evict_relation"
        } else {
            "pg_buffercache_evict"
        },
        if skipped > 0 {
            format!(", {skipped} skipped (pinned)")
        } else {
            String::new()
        }
    ))
}

/// Eviction for a role that is not a superuser: `hotlab_evict_run_database` in hotlab_probe,
/// which evicts only an arm database of hotlab's. Without it, one line naming the grant.
fn evict_by_grant(server: &Server, db: &str) -> Result<String> {
    const WARM: &str = "skipped: the role is not a superuser and PostgreSQL evicts buffers only for one; a superuser runs data/sql/grants.sql once (docs/staging-server.md); the arm starts warm";
    if server.database_state("hotlab_probe")? != DbState::Ours {
        return Ok(WARM.into());
    }
    let mut c = server.connect("hotlab_probe")?;
    let has: bool = c
        .query_one(
            "SELECT to_regprocedure('public.hotlab_evict_run_database(name)') IS NOT NULL",
            &[],
        )?
        .get(0);
    if !has {
        return Ok(WARM.into());
    }
    let r = c
        .query_one(
            "SELECT evicted, skipped, remaining FROM public.hotlab_evict_run_database($1)",
            &[&db],
        )
        .map_err(|e| anyhow::anyhow!("{}", crate::server::db_error_line(&e)))?;
    let (evicted, skipped, remaining): (i64, i64, i64) = (r.get(0), r.get(1), r.get(2));
    Ok(format!(
        "evicted {evicted} buffers of {db} (hotlab_evict_run_database, granted by data/sql/grants.sql), {remaining} left{}",
        if skipped > 0 {
            format!(", {skipped} skipped (pinned)")
        } else {
            String::new()
        }
    ))
}

/// The reset an arm built create-with does not get: nothing is checkpointed, stopped or dropped,
/// and what the cache holds is recorded.
fn kept(ctx: &Ctx, database: Option<&str>) -> Result<Value> {
    let server = Server::ensure(ctx)?;
    let started = now_rfc3339();
    let (user_buffers, used) = confirm(&server, database)?;
    Ok(json!({
        "ts": started,
        "backend": server.kind,
        "database": database,
        "actions": [
            {"action": "skipped", "outcome": "build create-with: the cache is left as the load left it (no checkpoint, stop, OS cache drop or restart)", "seconds": 0},
            {"action": "confirm", "outcome": format!("{user_buffers} user-relation buffers, {used} buffers in use"), "seconds": 0},
        ],
        "cold": user_buffers == 0,
        "kept_warm": true,
        "user_buffers": user_buffers,
        "buffers_used": used,
        "warnings": [],
    }))
}

/// Shared buffers holding pages of user relations (of `database`, or of every database when it
/// does not exist yet), and buffers in use.
fn confirm(server: &Server, database: Option<&str>) -> Result<(i64, i64)> {
    Ok(match database {
        Some(db) if server.database_state(db)? != DbState::Missing => {
            let mut c = server.connect(db)?;
            let r = c.query_one(
                "SELECT (SELECT count(*) FROM pg_buffercache b JOIN pg_class c \
                           ON c.relfilenode = b.relfilenode \
                          WHERE b.reldatabase = (SELECT oid FROM pg_database WHERE datname = current_database()) \
                            AND c.oid >= 16384), \
                        (SELECT buffers_used FROM pg_buffercache_summary())::bigint",
                &[],
            )?;
            (r.get(0), r.get(1))
        }
        _ => {
            // No arm database yet: pg_buffercache sees the whole cluster from any database, so
            // it is created in a database of hotlab's own, never in the server's admin database.
            let probe = server.own_probe_database()?;
            let mut c = server.connect(&probe)?;
            c.batch_execute("CREATE EXTENSION IF NOT EXISTS pg_buffercache")?;
            let r = c.query_one(
                "SELECT count(*) FILTER (WHERE relfilenode >= 16384 AND reldatabase <> 0), \
                        count(*) FILTER (WHERE relfilenode IS NOT NULL) FROM pg_buffercache",
                &[],
            )?;
            (r.get(0), r.get(1))
        }
    })
}

/// Drops the page cache: globally when permitted, else per file of the data directory.
fn drop_os_cache(data: &Path) -> String {
    if is_root() {
        match fs::write("/proc/sys/vm/drop_caches", "3") {
            Ok(()) => return "dropped (/proc/sys/vm/drop_caches)".into(),
            Err(e) => {
                let (n, bytes, failed) = fadvise_tree(data);
                return format!(
                    "fadvise: {n} files, {} MiB (drop_caches: {e}){}",
                    bytes / 1048576,
                    if failed > 0 {
                        format!(", {failed} files failed")
                    } else {
                        String::new()
                    }
                );
            }
        }
    }
    let (n, bytes, failed) = fadvise_tree(data);
    if n == 0 {
        return "skipped: cannot read the data directory".into();
    }
    format!(
        "fadvise: {n} files, {} MiB (drop_caches needs root){}",
        bytes / 1048576,
        if failed > 0 {
            format!(", {failed} files failed")
        } else {
            String::new()
        }
    )
}

/// posix_fadvise(DONTNEED) on every regular file under `dir`: (files, bytes, failures).
fn fadvise_tree(dir: &Path) -> (u64, u64, u64) {
    let (mut n, mut bytes, mut failed) = (0, 0, 0);
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(rd) = fs::read_dir(&d) else {
            failed += 1;
            continue;
        };
        for e in rd.flatten() {
            let p = e.path();
            let Ok(md) = e.metadata() else { continue };
            if md.is_dir() {
                stack.push(p);
            } else if md.is_file() {
                match fs::File::open(&p) {
                    Ok(f) => {
                        // SAFETY: a valid descriptor; offset 0 and length 0 mean the whole file.
                        let rc = unsafe {
                            libc::posix_fadvise(f.as_raw_fd(), 0, 0, libc::POSIX_FADV_DONTNEED)
                        };
                        if rc == 0 {
                            n += 1;
                            bytes += md.len();
                        } else {
                            failed += 1;
                        }
                    }
                    Err(_) => failed += 1,
                }
            }
        }
    }
    (n, bytes, failed)
}

fn fstrim(data: &Path) -> String {
    if !is_root() {
        return "skipped: needs root".into();
    }
    let Ok(sh) = crate::proc::shell() else {
        return "skipped: no shell".into();
    };
    let Ok(target) = xshell::cmd!(sh, "findmnt -n -o TARGET --target {data}")
        .quiet()
        .ignore_stderr()
        .read()
    else {
        return "skipped: findmnt not available".into();
    };
    if target.is_empty() {
        return "skipped: mount point not found".into();
    }
    match xshell::cmd!(sh, "fstrim -v {target}")
        .quiet()
        .ignore_status()
        .output()
    {
        Ok(o) if o.status.success() => {
            format!("trimmed: {}", String::from_utf8_lossy(&o.stdout).trim())
        }
        Ok(o) => format!(
            "skipped: fstrim {target}: {}",
            String::from_utf8_lossy(&o.stderr).trim().replace('\n', " ")
        ),
        Err(e) => format!("skipped: fstrim not available ({e})"),
    }
}
