//! The `external` backend: a server the user runs, reached through DATABASE_URL or the standard
//! PG* variables. hotlab never restarts it unless HOTLAB_RESTART_CMD says how, and never drops
//! a database it did not create.

use std::path::PathBuf;

use anyhow::{bail, Context, Result};

use super::{BackendKind, ConnInfo, Server};
use crate::env;

/// hotlab's own connections carry no TLS (the client is built without a TLS stack, to keep
/// HTTP/TLS crates out of the build). An sslmode that requires TLS is refused in one line rather
/// than silently connecting in plain text; pgbench (libpq) would honour it on its own.
fn refuse_required_tls(mode: Option<String>, from: &str) -> Result<()> {
    if let Some(m) = mode.map(|m| m.to_lowercase()) {
        if matches!(m.as_str(), "require" | "verify-ca" | "verify-full") {
            bail!(
                "{from} asks for sslmode={m}, and hotlab's client connects without TLS; reach the server through a local socket or an SSH tunnel and unset it"
            );
        }
    }
    Ok(())
}

pub fn conn_info() -> Result<ConnInfo> {
    refuse_required_tls(env::var("PGSSLMODE"), "PGSSLMODE")?;
    if let Some(url) = env::var(env::DATABASE_URL) {
        return parse_conninfo(&url, "DATABASE_URL");
    }
    let Some(host) = env::var("PGHOST") else {
        bail!("HOTLAB_BACKEND=external needs DATABASE_URL or PGHOST (with PGPORT, PGUSER, PGPASSWORD)");
    };
    from_pg_env(host)
}

/// The connection the PG* variables describe, on `host` (PGHOST's, or a flag's).
pub fn from_pg_env(host: String) -> Result<ConnInfo> {
    Ok(ConnInfo {
        host,
        port: match env::var("PGPORT") {
            None => 5432,
            Some(p) => p.trim().parse().ok().filter(|p| *p > 0).with_context(|| {
                format!("PGPORT {p:?} is not a port number; fix or unset PGPORT")
            })?,
        },
        user: env::var("PGUSER").unwrap_or_else(|| "postgres".into()),
        password: env::var("PGPASSWORD"),
        admin_db: env::var("PGDATABASE").unwrap_or_else(|| "postgres".into()),
    })
}

/// A connection string (a URL or libpq's `key=value` form), as `what` (DATABASE_URL, or the
/// argument of `advise`) gave it; an sslmode that needs TLS is refused.
pub fn parse_conninfo(url: &str, what: &str) -> Result<ConnInfo> {
    let mode = url
        .split(['?', '&'])
        .find_map(|kv| kv.strip_prefix("sslmode="))
        .or_else(|| {
            url.split_whitespace()
                .find_map(|kv| kv.strip_prefix("sslmode="))
        })
        .map(str::to_string);
    refuse_required_tls(mode, what)?;
    let cfg: postgres::Config = url
        .parse()
        .with_context(|| format!("{what} is not a valid PostgreSQL connection string"))?;
    let host = match cfg.get_hosts().first() {
        Some(postgres::config::Host::Tcp(h)) => h.clone(),
        Some(postgres::config::Host::Unix(p)) => p.display().to_string(),
        None => "localhost".into(),
    };
    Ok(ConnInfo {
        host,
        port: cfg.get_ports().first().copied().unwrap_or(5432),
        user: cfg.get_user().unwrap_or("postgres").to_string(),
        password: cfg
            .get_password()
            .map(|p| String::from_utf8_lossy(p).into_owned()),
        admin_db: cfg.get_dbname().unwrap_or("postgres").to_string(),
    })
}

pub fn open() -> Result<Server> {
    let conn = conn_info()?;
    // Client programs: the user's own if HOTLAB_PG_BIN says so, else whatever is on PATH.
    let bin_dir = env::var(env::PG_BIN)
        .map(PathBuf::from)
        .or_else(|| which("pgbench").and_then(|p| p.parent().map(|d| d.to_path_buf())))
        .unwrap_or_else(|| PathBuf::from("/usr/bin"));
    Ok(Server {
        kind: BackendKind::External,
        conn,
        bin_dir,
        embedded: None,
    })
}

fn which(prog: &str) -> Option<PathBuf> {
    std::env::var_os("PATH").and_then(|paths| {
        std::env::split_paths(&paths)
            .map(|d| d.join(prog))
            .find(|p| p.is_file())
    })
}

/// Runs HOTLAB_RESTART_CMD, or reports the restart as skipped.
pub fn restart() -> Result<String> {
    match env::var(env::RESTART_CMD) {
        Some(cmd) => {
            // The user's command line, run by sh as they wrote it.
            let sh = crate::proc::shell()?;
            xshell::cmd!(sh, "sh -c {cmd}")
                .quiet()
                .run()
                .with_context(|| format!("{} ({cmd}) failed", env::RESTART_CMD))?;
            Ok(format!("restarted ({cmd})"))
        }
        None => Ok(format!(
            "skipped: external server and no {}",
            env::RESTART_CMD
        )),
    }
}
