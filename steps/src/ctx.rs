//! The context every step receives: where the project's data lives and which server to use.
//! Reads the environment once (see `env.rs`); writes nothing.

use std::path::{Path, PathBuf};

use anyhow::{bail, Result};
use serde::Serialize;

use crate::env;

/// Which server the steps use (`HOTLAB_BACKEND`); `server/` implements each.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub(crate) enum BackendKind {
    Embedded,
    Compose,
    External,
}

impl BackendKind {
    /// The name `HOTLAB_BACKEND` and meta.json give it.
    pub(crate) fn name(self) -> &'static str {
        match self {
            BackendKind::Embedded => "embedded",
            BackendKind::Compose => "compose",
            BackendKind::External => "external",
        }
    }

    pub(crate) fn from_env() -> Result<BackendKind> {
        match env::var(env::BACKEND).as_deref() {
            None | Some("embedded") => Ok(BackendKind::Embedded),
            Some("compose") => Ok(BackendKind::Compose),
            Some("external") => Ok(BackendKind::External),
            Some(other) => bail!(
                "unknown backend {other:?} in {}; use embedded, compose or external",
                env::BACKEND
            ),
        }
    }
}

#[derive(Debug, Clone)]
pub struct Ctx {
    /// `data/`: studies, reference figures, runs.
    pub data_dir: PathBuf,
    /// `$HOTLAB_HOME`: binaries and the embedded cluster.
    pub home: PathBuf,
    /// Directory of the embedded cluster (state, data, socket, log).
    pub cluster_dir: PathBuf,
    pub(crate) backend: BackendKind,
    /// Wait for the server when another arm holds it, instead of refusing (`--wait`).
    pub wait: bool,
    /// Seconds an arm keeps the server between two of its steps (`HOTLAB_LEASE_IDLE_S`).
    pub(crate) lease_idle_s: u64,
}

/// The default of `lease_idle_s`.
pub(crate) const LEASE_IDLE_S: u64 = 300;

/// The repository root: the nearest directory at or above the working directory that holds the
/// justfile and `steps/`, else the checkout this crate was compiled in. Never the running
/// binary's location: with a shared `CARGO_TARGET_DIR` (or a symlinked `target/`) that is another
/// checkout, and run directories would land there.
pub fn project_root() -> PathBuf {
    let is_root = |d: &Path| d.join("justfile").is_file() && d.join("steps/Cargo.toml").is_file();
    if let Ok(cwd) = std::env::current_dir() {
        if let Some(found) = cwd.ancestors().find(|d| is_root(d)) {
            return found.to_path_buf();
        }
    }
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("steps/ has a parent")
        .to_path_buf()
}

/// True when this process runs as root.
pub fn is_root() -> bool {
    // SAFETY: geteuid has no preconditions and cannot fail.
    unsafe { libc::geteuid() == 0 }
}

/// `$HOTLAB_HOME`, else `/var/lib/hotlab` for root (the unprivileged server user must be able to
/// reach the binaries, and root's home is private), else `$XDG_CACHE_HOME/hotlab` or
/// `~/.cache/hotlab`.
pub(crate) fn default_home() -> PathBuf {
    if let Some(h) = env::var(env::HOME) {
        return PathBuf::from(h);
    }
    if is_root() {
        return PathBuf::from("/var/lib/hotlab");
    }
    if let Some(x) = env::var("XDG_CACHE_HOME") {
        return PathBuf::from(x).join("hotlab");
    }
    let home = env::var("HOME").unwrap_or_else(|| "/tmp".into());
    PathBuf::from(home).join(".cache/hotlab")
}

impl Ctx {
    pub fn from_env() -> anyhow::Result<Ctx> {
        let home = default_home();
        let cluster_dir = env::var(env::CLUSTER)
            .map(PathBuf::from)
            .unwrap_or_else(|| home.join("cluster"));
        let data_dir = env::var(env::DATA_DIR)
            .map(PathBuf::from)
            .unwrap_or_else(|| project_root().join("data"));
        let backend = BackendKind::from_env()?;
        let lease_idle_s = match env::var(env::LEASE_IDLE_S) {
            None => LEASE_IDLE_S,
            Some(v) => v.parse().ok().filter(|s| *s <= 86_400).ok_or_else(|| {
                anyhow::anyhow!(
                    "{}={v:?} is not a number of seconds from 0 to 86400; unset it for {LEASE_IDLE_S}",
                    env::LEASE_IDLE_S
                )
            })?,
        };
        Ok(Ctx {
            data_dir,
            home,
            cluster_dir,
            backend,
            wait: env::var(env::WAIT).is_some_and(|v| v != "0"),
            lease_idle_s,
        })
    }

    pub fn studies_dir(&self) -> PathBuf {
        self.data_dir.join("studies")
    }

    pub fn runs_dir(&self) -> PathBuf {
        self.data_dir.join("runs")
    }
}
