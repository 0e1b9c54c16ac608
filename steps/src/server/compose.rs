//! The `compose` backend: `docker compose up -d --wait` with the repository's
//! docker-compose.yml (postgres:18 bound to 127.0.0.1, password from `.env`). No Docker engine
//! runs on hotlab's own machines, so this path is checked by parsing the file in tests.

use std::collections::BTreeMap;
use std::path::PathBuf;

use anyhow::{bail, Context, Result};

use super::{BackendKind, ConnInfo, Server};
use crate::ctx::{project_root, Ctx};

/// Port the compose file publishes on 127.0.0.1 unless `.env` sets HOTLAB_COMPOSE_PORT.
pub(crate) const DEFAULT_PORT: u16 = 55432;

pub(crate) fn compose_file() -> PathBuf {
    project_root().join("docker-compose.yml")
}

/// `KEY=value` lines of the repository's `.env`.
pub(crate) fn dotenv() -> BTreeMap<String, String> {
    let text = std::fs::read_to_string(project_root().join(".env")).unwrap_or_default();
    text.lines()
        .filter(|l| !l.trim_start().starts_with('#'))
        .filter_map(|l| l.split_once('='))
        .map(|(k, v)| (k.trim().to_string(), v.trim().trim_matches('"').to_string()))
        .collect()
}

fn docker(args: &[&str]) -> Result<()> {
    let sh = crate::proc::shell()?;
    let file = compose_file();
    let st = xshell::cmd!(sh, "docker compose -f {file} {args...}")
        .quiet()
        .ignore_status()
        .output()
        .context("running docker compose (is Docker installed?)")?;
    if !st.status.success() {
        bail!(
            "docker compose {} failed ({}); is the Docker engine running?",
            args.join(" "),
            String::from_utf8_lossy(&st.stderr).trim()
        );
    }
    Ok(())
}

pub(crate) fn ensure(_ctx: &Ctx) -> Result<Server> {
    let env = dotenv();
    let Some(password) = env.get("POSTGRES_PASSWORD").cloned() else {
        bail!("no POSTGRES_PASSWORD in .env; write one (echo POSTGRES_PASSWORD=$(openssl rand -hex 16) > .env)");
    };
    docker(&["up", "-d", "--wait"])?;
    let port = env
        .get(crate::env::COMPOSE_PORT)
        .and_then(|p| p.parse().ok())
        .unwrap_or(DEFAULT_PORT);
    Ok(Server {
        kind: BackendKind::Compose,
        conn: ConnInfo::own("127.0.0.1", port, "postgres", password, "postgres"),
        // Client programs come from the same pinned PostgreSQL 18 as the embedded backend.
        bin_dir: super::provision::binaries(&_ctx.home)?,
        embedded: None,
    })
}

pub(crate) fn restart() -> Result<String> {
    docker(&["restart"])?;
    docker(&["up", "-d", "--wait"])?;
    Ok("restarted (docker compose restart)".into())
}

pub(crate) fn stop() -> Result<()> {
    docker(&["stop"])
}
