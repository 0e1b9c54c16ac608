//! The workloads: how each builds its schema and data, and how it generates load.
//! `spv` is study 003; `pgbench` runs scripts through the pgbench binary and parses its output.

pub mod pgbench;
pub mod spv;
