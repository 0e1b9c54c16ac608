//! The workloads: how each builds its schema and data, and how it generates load.
//! `spv` is study 003; `tprocc` is study 000 (HammerDB-compatible TPC-C); `pgbench` runs scripts through the pgbench binary and parses its output; `script` is the
//! pgbench-script workload (study 001 and a user's own table).

pub mod pgbench;
pub mod script;
pub mod spv;
pub mod tprocc;
