//! The `external` backend: a server the user runs, reached through DATABASE_URL or libpq's
//! conventions (service file, PG* variables, .pgpass, the local socket; `conn.rs`), over TLS
//! when its sslmode says so (`tls.rs`). hotlab never restarts it unless HOTLAB_RESTART_CMD says how, and never drops
//! a database it did not create.

use std::path::PathBuf;

use anyhow::{Context, Result};

use super::conn::Flags;
use super::{BackendKind, ConnInfo, Server};
use crate::env;

/// The server the environment names, resolved as libpq resolves it (`conn.rs`): DATABASE_URL
/// when set, else the service file and `PG*`, else libpq's defaults.
pub(crate) fn conn_info() -> Result<ConnInfo> {
    let url = env::var(env::DATABASE_URL);
    ConnInfo::resolve(url.as_deref(), "DATABASE_URL", &Flags::default())
}

pub(crate) fn open(ctx: &crate::ctx::Ctx) -> Result<Server> {
    let conn = conn_info()?;
    // Client programs (pgbench, psql): the user's own if HOTLAB_PG_BIN says so, else the pinned
    // PostgreSQL 18 built with TLS (the embedded wheel's libpq has none).
    let bin_dir = match env::var(env::PG_BIN) {
        Some(b) => PathBuf::from(b),
        None => super::provision::tls_binaries(&ctx.home)?,
    };
    Ok(Server {
        kind: BackendKind::External,
        conn,
        bin_dir,
        embedded: None,
    })
}

/// Runs HOTLAB_RESTART_CMD, or reports the restart as skipped.
pub(crate) fn restart() -> Result<String> {
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
