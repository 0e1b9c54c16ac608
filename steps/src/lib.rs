//! hotlab's steps. Layers, bottom to top (ARCHITECTURE.md has the code map; a tidy test fails on
//! any import that runs upward or in a loop):
//! 1. leaves: `env`, `ctx`, `io`, `interrupt`, `proc`, `host`, `stats`, `churn`
//! 2. the study model: `study` (with `study::size`, `study::scale`)
//! 3. the run directory: `rundir`
//! 4. the server: `server` (provisioning, cluster lifecycle, backends)
//! 5. measurement: `snapshot` (the statistics sampler, and its step)
//! 6. workloads: `workload`
//! 7. steps: `init`, `reset_cold`, `build`, `apply_fillfactor`, `run`, `vacuum_timing`, `check`,
//!    `restore_settings`,
//!    `analyze`, `history`, `advise`, `bench`
//! 8. `testing` (support for the integration tests), then the `xtask` binary.

pub mod churn;
pub mod ctx;
pub mod env;
pub mod host;
pub mod interrupt;
pub mod io;
pub mod proc;
pub mod stats;

pub mod study;

pub mod rundir;

pub mod server;

pub mod snapshot;

pub mod workload;

pub mod advise;
pub mod analyze;
pub mod apply_fillfactor;
pub mod bench;
pub mod build;
pub mod check;
pub mod history;
pub mod init;
pub mod reset_cold;
pub mod restore_settings;
pub mod run;
pub mod vacuum_timing;

pub mod testing;

pub use ctx::Ctx;
