//! The PostgreSQL server behind every step: which backend, how to reach it, how to restart it.
//! `embedded` provisions and runs PostgreSQL 18 itself; `compose` drives docker-compose.yml;
//! `external` uses DATABASE_URL or the PG* variables. Writes server state under the cluster
//! directory (embedded) and nothing else.

pub(crate) mod compose;
pub(crate) mod conn;
pub(crate) mod embedded;
pub(crate) mod external;
pub(crate) mod lease;
pub(crate) mod memlimit;
pub(crate) mod procfs;
pub(crate) mod provision;
pub(crate) mod settings;
pub mod staging;
pub(crate) mod tls;

use std::path::PathBuf;

use anyhow::{bail, Context, Result};

pub(crate) use crate::ctx::BackendKind;
use crate::ctx::Ctx;
use crate::env;

/// The comment hotlab puts on every database it creates; only such databases are ever dropped.
pub(crate) const OWNED_COMMENT: &str = "hotlab";
/// An arm run's database carries `hotlab run=<arm directory>`, so `server gc` can tell whether
/// its run directory still exists.
pub(crate) const RUN_COMMENT_PREFIX: &str = "hotlab run=";

/// The empty database with hotlab's extensions that a superuser makes for a role that is not one
/// (data/sql/grants.sql).
pub(crate) const BASE_DATABASE: &str = "hotlab_base";

/// What `database_state` finds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DbState {
    Missing,
    /// Created by hotlab: hotlab may drop or replace it.
    Ours,
    /// Someone else's: never dropped.
    Foreign,
}

pub(crate) use conn::ConnInfo;

/// A reachable server, whatever the backend.
pub struct Server {
    pub(crate) kind: BackendKind,
    pub conn: ConnInfo,
    /// Where client binaries (pgbench, psql) come from.
    pub(crate) bin_dir: PathBuf,
    /// The embedded cluster, when there is one.
    pub embedded: Option<embedded::Embedded>,
}

impl Server {
    /// Makes sure the server runs (starting the embedded or compose one when needed) and
    /// answers a query.
    pub fn ensure(ctx: &Ctx) -> Result<Server> {
        let server = match ctx.backend {
            BackendKind::Embedded => {
                let e = embedded::Embedded::open(ctx)?;
                e.ensure_started()?;
                Server {
                    kind: BackendKind::Embedded,
                    conn: e.conn_info()?,
                    bin_dir: e.bin_dir.clone(),
                    embedded: Some(e),
                }
            }
            BackendKind::Compose => compose::ensure(ctx)?,
            BackendKind::External => external::open(ctx)?,
        };
        // hotlab's own server may be half-way through a stop or a start another process began
        // (a reset-cold interrupted while pg_ctl ran): wait for it to settle, start it again if
        // it stopped, for up to a minute.
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
        loop {
            let e = match server.connect(&server.conn.admin_db) {
                Ok(_) => return Ok(server),
                Err(e) => e,
            };
            match &server.embedded {
                Some(em) if std::time::Instant::now() < deadline => {
                    std::thread::sleep(std::time::Duration::from_millis(500));
                    em.ensure_started()?;
                }
                _ => return Err(e).with_context(|| server.unreachable_hint()),
            }
        }
    }

    fn unreachable_hint(&self) -> String {
        match self.kind {
            BackendKind::External => format!(
                "the external server at {} does not answer; start it or fix DATABASE_URL/PG*",
                self.conn.endpoint()
            ),
            _ => format!(
                "the server at {} does not answer; see `cargo xtask server status`",
                self.conn.endpoint()
            ),
        }
    }

    pub fn connect(&self, dbname: &str) -> Result<postgres::Client> {
        tls::connect(&self.conn, self.conn.config(dbname)).with_context(|| {
            format!(
                "connecting to database {dbname} at {}",
                self.conn.endpoint()
            )
        })
    }

    pub(crate) fn bin(&self, name: &str) -> PathBuf {
        self.bin_dir.join(name)
    }

    /// Restarts the server. Returns what was done, for reset.jsonl.
    pub(crate) fn restart(&self) -> Result<String> {
        match (&self.embedded, self.kind) {
            (Some(e), _) => {
                e.stop()?;
                e.start()?;
                Ok("restarted (pg_ctl)".into())
            }
            (None, BackendKind::Compose) => compose::restart(),
            _ => external::restart(),
        }
    }

    /// Whether a database exists, and if so whether hotlab created it (marked with
    /// `COMMENT ON DATABASE … IS 'hotlab'`), in one query.
    pub fn database_state(&self, name: &str) -> Result<DbState> {
        let mut c = self.connect(&self.conn.admin_db)?;
        let row = c.query_opt(
            "SELECT shobj_description(oid, 'pg_database') FROM pg_database WHERE datname = $1",
            &[&name],
        )?;
        Ok(match row.map(|r| r.get::<_, Option<String>>(0)) {
            None => DbState::Missing,
            Some(Some(c)) if c == OWNED_COMMENT || c.starts_with(RUN_COMMENT_PREFIX) => {
                DbState::Ours
            }
            Some(_) => DbState::Foreign,
        })
    }

    /// Drops a database hotlab created; refuses any other.
    pub fn drop_own_database(&self, name: &str) -> Result<()> {
        match self.database_state(name)? {
            DbState::Missing => return Ok(()),
            DbState::Ours => {}
            DbState::Foreign => bail!(
                "database {name} exists and was not created by hotlab; hotlab will not drop it \
                 (drop or rename it yourself, or use another study database name)"
            ),
        }
        let mut c = self.connect(&self.conn.admin_db)?;
        c.batch_execute(&format!("DROP DATABASE {} WITH (FORCE)", ident(name)))
            .with_context(|| format!("dropping database {name}"))?;
        Ok(())
    }

    /// Whether hotlab's role is a superuser.
    pub(crate) fn is_superuser(&self) -> Result<bool> {
        let mut c = self.connect(&self.conn.admin_db)?;
        Ok(c.query_one(
            "SELECT rolsuper FROM pg_roles WHERE rolname = current_user",
            &[],
        )?
        .get(0))
    }

    /// Creates an empty (or templated) database and marks it as hotlab's. An empty one is a copy
    /// of template0, or, for a role that may not create hotlab's extensions (not a superuser),
    /// of `hotlab_base`, which a superuser made with them (data/sql/grants.sql).
    pub fn create_own_database(&self, name: &str, template: Option<&str>) -> Result<()> {
        let base = match template {
            None if !self.is_superuser()?
                && self.database_state(BASE_DATABASE)? == DbState::Ours =>
            {
                Some(BASE_DATABASE)
            }
            _ => None,
        };
        let mut c = self.connect(&self.conn.admin_db)?;
        let sql = match template.or(base) {
            Some(t) => format!(
                "CREATE DATABASE {} TEMPLATE {} STRATEGY FILE_COPY",
                ident(name),
                ident(t)
            ),
            None => format!("CREATE DATABASE {} TEMPLATE template0", ident(name)),
        };
        c.batch_execute(&sql)
            .with_context(|| format!("creating database {name}"))?;
        c.batch_execute(&format!(
            "COMMENT ON DATABASE {} IS '{OWNED_COMMENT}'",
            ident(name)
        ))?;
        Ok(())
    }

    /// hotlab's own small database for cluster-wide probes (pg_buffercache), created and marked
    /// on first use; refused if someone else's database has its name.
    pub(crate) fn own_probe_database(&self) -> Result<String> {
        let name = "hotlab_probe";
        match self.database_state(name)? {
            DbState::Ours => {}
            DbState::Missing => self.create_own_database(name, None)?,
            DbState::Foreign => bail!(
                "database {name} exists and was not created by hotlab; hotlab will not use it (rename it)"
            ),
        }
        Ok(name.to_string())
    }

    /// Records which arm directory a database of ours belongs to (its comment).
    pub(crate) fn mark_run_database(&self, name: &str, run_dir: &std::path::Path) -> Result<()> {
        let abs = std::fs::canonicalize(run_dir).unwrap_or_else(|_| run_dir.to_path_buf());
        let comment = format!("{RUN_COMMENT_PREFIX}{}", abs.display());
        self.connect(&self.conn.admin_db)?.batch_execute(&format!(
            "COMMENT ON DATABASE {} IS '{}'",
            ident(name),
            comment.replace('\'', "''")
        ))?;
        Ok(())
    }

    /// hotlab's arm-run databases: (name, the arm directory its comment names).
    pub(crate) fn run_databases(&self) -> Result<Vec<(String, std::path::PathBuf)>> {
        let mut c = self.connect(&self.conn.admin_db)?;
        let rows = c.query(
            "SELECT datname, shobj_description(oid, 'pg_database') FROM pg_database \
             WHERE shobj_description(oid, 'pg_database') LIKE $1 ORDER BY datname",
            &[&format!("{RUN_COMMENT_PREFIX}%")],
        )?;
        Ok(rows
            .iter()
            .map(|r| {
                let c: String = r.get(1);
                (
                    r.get(0),
                    std::path::PathBuf::from(&c[RUN_COMMENT_PREFIX.len()..]),
                )
            })
            .collect())
    }

    /// `version()`, the short server version number, and the non-default settings.
    pub(crate) fn describe(&self) -> Result<crate::rundir::meta::ServerInfo> {
        let mut c = self.connect(&self.conn.admin_db)?;
        let version: String = c.query_one("SELECT version()", &[])?.get(0);
        let num: String = c.query_one("SHOW server_version_num", &[])?.get(0);
        let rows = c.query(
            "SELECT name, setting || coalesce(unit, '') FROM pg_settings \
             WHERE source NOT IN ('default', 'override', 'client', 'session') ORDER BY name",
            &[],
        )?;
        let settings = rows
            .iter()
            .map(|r| (r.get::<_, String>(0), r.get::<_, String>(1)))
            .collect();
        Ok(crate::rundir::meta::ServerInfo {
            version,
            version_num: num.parse::<i64>().unwrap_or(0),
            backend: Some(self.kind),
            host: self.conn.first_host(),
            port: self.conn.first_port(),
            settings,
        })
    }

    /// Applies study settings with ALTER SYSTEM; restarts when one needs it. Returns the
    /// settings that changed.
    pub(crate) fn apply_settings(
        &self,
        settings: &std::collections::BTreeMap<String, String>,
    ) -> Result<Vec<String>> {
        if settings.is_empty() && !self.owned() {
            return Ok(vec![]);
        }
        let mut c = self.connect(&self.conn.admin_db)?;
        let mut changed = vec![];
        if self.owned() {
            // hotlab's own server: its postgresql.auto.conf holds only what studies set (the
            // server's own configuration is in postgresql.conf), so a setting an earlier study or
            // size set and this one does not goes back to its default instead of leaking into
            // this run (a quick size's checkpoint_timeout = 30s into an article-size run).
            let stale = c.query(
                "SELECT DISTINCT name FROM pg_file_settings WHERE sourcefile LIKE '%postgresql.auto.conf'",
                &[],
            )?;
            for r in stale {
                let k: String = r.get(0);
                if !settings.contains_key(&k) {
                    settings::alter_system_set(&mut c, &k, None)
                        .with_context(|| format!("resetting {k}"))?;
                    changed.push(format!("{k} (reset to its default)"));
                }
            }
        }
        for (k, v) in settings {
            let cur: Option<String> = c
                .query_opt(
                    "SELECT setting || coalesce(unit, '') FROM pg_settings WHERE name = $1",
                    &[k],
                )?
                .map(|r| r.get(0));
            if cur.is_none() {
                bail!("study sets unknown server setting {k}; fix the study file");
            }
            settings::alter_system_set(&mut c, k, Some(v))
                .with_context(|| format!("setting {k} = {v}"))?;
            changed.push(k.clone());
        }
        let pending = settings::reload(&mut c)?;
        drop(c);
        if pending > 0 {
            if !self.can_restart() {
                bail!(
                    "the study's settings need a server restart; restart the external server or set {}",
                    env::RESTART_CMD
                );
            }
            self.restart()?;
        }
        Ok(changed)
    }
}

/// A database error as one line: the server's message (and detail), or the client's error.
pub(crate) fn db_error_line(e: &postgres::Error) -> String {
    match e.as_db_error() {
        Some(d) => match d.detail() {
            Some(detail) => format!("{} ({detail})", d.message()),
            None => d.message().to_string(),
        },
        None => e.to_string().replace('\n', " "),
    }
}

/// Quotes an SQL identifier.
pub(crate) fn ident(name: &str) -> String {
    format!("\"{}\"", name.replace('"', "\"\""))
}

// ---- the `server` subcommand ----

#[derive(clap::Args, Debug)]
pub struct Args {
    #[command(subcommand)]
    pub(crate) action: Action,
}

#[derive(clap::Subcommand, Debug)]
pub(crate) enum Action {
    /// Provision (first time) and start the server
    Start,
    /// Stop the embedded server
    Stop,
    /// Show whether the server runs, its version, port and data directory
    Status {
        /// Print JSON instead of text
        #[arg(long)]
        json: bool,
    },
    /// List hotlab's arm databases whose run directory is gone, and drop them
    Gc {
        /// Only list them
        #[arg(long)]
        dry_run: bool,
        /// Drop hotlab's loaded templates (`hotlab_tpl_*`) too: the next build loads again (on a
        /// server you do not own, what leaves it as it was)
        #[arg(long)]
        templates: bool,
    },
    /// Open psql on the server, on this terminal (`server psql -- -c 'select 1'` passes
    /// arguments through)
    Psql {
        /// Database to open (default: postgres)
        #[arg(long, default_value = "postgres")]
        db: String,
        /// Arguments for psql
        #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
        args: Vec<String>,
    },
    /// A TLS-only PostgreSQL 18 to try the external backend on (docs/staging-server.md, "Your staging
    /// server"): start | stop | env
    Staging(staging::Args),
    /// Free the server's workload lease left by an arm whose process is gone (refused while a
    /// step runs)
    Release,
}

pub fn run(ctx: &Ctx, args: &Args) -> Result<()> {
    match &args.action {
        Action::Start => {
            let s = Server::ensure(ctx)?;
            eprintln!("server running on {} ({:?})", s.conn.endpoint(), s.kind);
            Ok(())
        }
        Action::Stop => match ctx.backend {
            BackendKind::Embedded => embedded::Embedded::open(ctx)?.stop(),
            BackendKind::Compose => compose::stop(),
            BackendKind::External => bail!("hotlab does not stop an external server"),
        },
        Action::Status { json } => status(ctx, *json),
        Action::Gc { dry_run, templates } => gc(ctx, *dry_run, *templates),
        Action::Psql { db, args } => {
            let s = Server::ensure(ctx)?;
            // duct inherits stdin, stdout and stderr: psql talks to the terminal.
            let out = duct::cmd(s.bin("psql"), args)
                .unchecked()
                .full_env(s.conn.child_env(db))
                .run()
                .context("starting psql")?;
            if !out.status.success() {
                bail!("psql exited with {}", out.status);
            }
            Ok(())
        }
        Action::Staging(a) => staging::run(ctx, a),
        Action::Release => {
            let was = lease::release(ctx)?;
            eprintln!("hotlab: server lease released (it was: {was})");
            Ok(())
        }
    }
}

/// Drops the arm databases of ours whose arm directory (named in their comment) no longer holds
/// a meta.json, and with `templates` hotlab's loaded templates; keeps every other database.
fn gc(ctx: &Ctx, dry_run: bool, templates: bool) -> Result<()> {
    let s = Server::ensure(ctx)?;
    let mut dropped = 0;
    if templates {
        let rows = s.connect(&s.conn.admin_db)?.query(
            "SELECT datname FROM pg_database WHERE datname LIKE 'hotlab\\_tpl\\_%' \
             AND shobj_description(oid, 'pg_database') = $1 ORDER BY datname",
            &[&OWNED_COMMENT],
        )?;
        for r in rows {
            let db: String = r.get(0);
            if !dry_run {
                s.drop_own_database(&db)?;
                dropped += 1;
            }
            println!(
                "{:10} {db}  (template)",
                if dry_run { "would drop" } else { "dropped" }
            );
        }
    }
    for (db, dir) in s.run_databases()? {
        let gone = !dir.join("meta.json").exists();
        let verb = match (gone, dry_run) {
            (false, _) => "keep",
            (true, true) => "would drop",
            (true, false) => {
                s.drop_own_database(&db)?;
                dropped += 1;
                "dropped"
            }
        };
        println!("{verb:10} {db}  ({})", dir.display());
    }
    eprintln!("hotlab: server gc: {dropped} database(s) dropped");
    Ok(())
}

fn status(ctx: &Ctx, json: bool) -> Result<()> {
    let mut out = serde_json::json!({ "backend": ctx.backend, "running": false });
    if ctx.backend == BackendKind::Embedded {
        let e = embedded::Embedded::open_existing(ctx)?;
        out["data_directory"] = serde_json::json!(e.data_dir());
        out["pid"] = serde_json::json!(e.pid());
        if let Ok(state) = e.state() {
            out["port"] = serde_json::json!(state.port);
        }
        out["bin_dir"] = serde_json::json!(e.bin_dir);
        if e.pid().is_some() {
            let ci = e.conn_info()?;
            if let Ok(mut c) = tls::connect(&ci, ci.config(&ci.admin_db)) {
                let v: String = c.query_one("SELECT version()", &[])?.get(0);
                out["version"] = serde_json::json!(v);
                out["running"] = serde_json::json!(true);
            }
        }
    } else if let Ok(s) = Server::ensure(ctx) {
        let d = s.describe()?;
        out["version"] = serde_json::json!(d.version);
        out["port"] = serde_json::json!(d.port);
        out["running"] = serde_json::json!(true);
    }
    if let Ok(r) = lease::current(ctx) {
        out["workload_lease"] = serde_json::json!(if r.live(ctx.lease_idle_s) {
            r.describe()
        } else {
            "free".to_string()
        });
    }
    if json {
        println!("{}", serde_json::to_string_pretty(&out)?);
    } else {
        for (k, v) in out.as_object().unwrap() {
            println!(
                "{k:15} {}",
                v.as_str().map(String::from).unwrap_or(v.to_string())
            );
        }
    }
    Ok(())
}
