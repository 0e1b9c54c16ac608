//! hotlab's steps: one module per `cargo xtask` subcommand, plus the rooms they share
//! (server, run directory, study files, workloads). See README.md.

pub mod analyze;
pub mod apply_fillfactor;
pub mod bench;
pub mod build;
pub mod check;
pub mod churn;
pub mod ctx;
pub mod env;
pub mod experiment;
pub mod init;
pub mod reset_cold;
pub mod run;
pub mod rundir;
pub mod scale;
pub mod server;
pub mod snapshot;
pub mod testing;
pub mod vacuum_timing;
pub mod workload;

pub use ctx::Ctx;
