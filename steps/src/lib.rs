//! hotlab's steps. The modules form layers; the one list of them is `LAYERS` in
//! `steps/tests/it/tidy.rs`, which fails on any import that runs upward or in a loop, and
//! ARCHITECTURE.md's code map follows its order.

pub(crate) mod churn;
pub mod ctx;
pub mod env;
pub(crate) mod host;
pub mod interrupt;
pub mod io;
pub(crate) mod proc;
pub(crate) mod stats;

pub mod study;

pub mod rundir;

pub mod server;

pub mod snapshot;

pub(crate) mod workload;

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

#[cfg(feature = "testing")]
pub mod testing;

pub use ctx::Ctx;
