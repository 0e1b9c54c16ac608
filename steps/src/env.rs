//! Every environment variable hotlab reads, in one place. Flags fall back to these. The table
//! in docs/safety.md is generated from the doc comments below (`HOTLAB_BLESS=1 cargo test -p
//! steps --test it tidy::env_table_is_generated`), and a tidy test refuses a `HOTLAB_` name in the
//! code that is not declared here.

/// Which server backend to use: `embedded` (default), `compose` or `external`.
pub const BACKEND: &str = "HOTLAB_BACKEND";
/// Root of hotlab's cache: PostgreSQL binaries and the embedded cluster (default
/// `~/.cache/hotlab`; `/var/lib/hotlab` for root).
pub(crate) const HOME: &str = "HOTLAB_HOME";
/// Directory of the embedded cluster (default `$HOTLAB_HOME/cluster`).
pub const CLUSTER: &str = "HOTLAB_CLUSTER";
/// A PostgreSQL (>= 16) `bin` directory to use instead of the pinned wheel (on `external`: where
/// pgbench and psql come from).
pub const PG_BIN: &str = "HOTLAB_PG_BIN";
/// A local copy of the pinned wheel, for machines without PyPI.
pub(crate) const PG_WHEEL: &str = "HOTLAB_PG_WHEEL";
/// TCP port of the embedded server (default: a free port, then remembered).
pub const PORT: &str = "HOTLAB_PORT";
/// The unprivileged OS user that runs the embedded server when hotlab runs as root (default
/// `hotlab`).
pub(crate) const SERVER_USER: &str = "HOTLAB_SERVER_USER";
/// Command that restarts an external server (reset-cold skips the restart without it).
pub(crate) const RESTART_CMD: &str = "HOTLAB_RESTART_CMD";
/// The run (arm) directory a step works on (`--run`).
pub const RUN: &str = "HOTLAB_RUN";
/// The study `init` and the study recipes use (`--study`).
pub(crate) const STUDY: &str = "HOTLAB_STUDY";
/// The study's size (`--size`; default: the study's `default_size`).
pub(crate) const SIZE: &str = "HOTLAB_SIZE";
/// Where `studies/`, `reference/` and `runs/` live (default: the repository's `data/`).
pub const DATA_DIR: &str = "HOTLAB_DATA_DIR";
/// Connections the TPROC-C loader uses (default: the number of cores, at least 2).
pub(crate) const LOAD_THREADS: &str = "HOTLAB_LOAD_THREADS";
/// A scale model's churn on this machine: new orders per warehouse per minute (`init
/// --nopm-per-warehouse`; default: the median in `$HOTLAB_HOME/churn.json`, else the study file).
pub(crate) const NOPM_PER_WAREHOUSE: &str = "HOTLAB_NOPM_PER_WAREHOUSE";
/// The xtask binary `just arm` runs each step with (default `cargo xtask`; `just study` sets it
/// to the one it built).
pub const XTASK: &str = "HOTLAB_XTASK";
/// `1`: keep an arm's database after its last sample (`vacuum-timing --keep-db`).
pub(crate) const KEEP_DB: &str = "HOTLAB_KEEP_DB";
/// `1`: on a server hotlab does not own, apply the study's settings with ALTER SYSTEM and
/// restore them at the end of the arm (`build --apply-server-settings`).
pub(crate) const APPLY_SERVER_SETTINGS: &str = "HOTLAB_APPLY_SERVER_SETTINGS";
/// `1`: wait for the server when another arm holds it (`--wait`), instead of refusing.
pub const WAIT: &str = "HOTLAB_WAIT";
/// Seconds an arm keeps the server between two of its steps (default 300).
pub const LEASE_IDLE_S: &str = "HOTLAB_LEASE_IDLE_S";
/// Directory of the TLS-only staging server (`server staging`; default `$HOTLAB_HOME/staging`).
pub const STAGING_DIR: &str = "HOTLAB_STAGING_DIR";
/// The port the `compose` backend publishes on 127.0.0.1 (read from `.env`; default 55432).
pub(crate) const COMPOSE_PORT: &str = "HOTLAB_COMPOSE_PORT";
/// Tests only: `1` rewrites a checked-in generated file (the JSON Schema, this table) instead of
/// failing when it is stale.
pub const BLESS: &str = "HOTLAB_BLESS";
/// Tests only: `1` makes the tidy layer test print the module import graph.
pub const PRINT_IMPORTS: &str = "HOTLAB_PRINT_IMPORTS";
/// Connection string of an external server. libpq's own variables (`PGHOST`, `PGSSLMODE`, …,
/// `PGSERVICEFILE`) are read where libpq's rules are kept: `steps/src/server/conn.rs`.
pub(crate) const DATABASE_URL: &str = "DATABASE_URL";

pub(crate) fn var(name: &str) -> Option<String> {
    std::env::var(name).ok().filter(|v| !v.is_empty())
}
