//! The registry of workloads: one line per workload, its kind's name and its size type (in the
//! workload's room). Everything that differs by workload dispatches through what this generates
//! (`kind.rs`); adding a workload is its room plus one line here.

super::kind::workloads! {$
    /// Study 003: many-row UPDATE statements through pgbench on one small table.
    Spv(crate::workload::spv::size::SpvSize) = "spv";
    /// Study 000: HammerDB-compatible TPC-C (TPROC-C).
    Tprocc(crate::workload::tprocc::size::TproccSize) = "tprocc";
    /// Study 001, and a user's own table: schema, load and pgbench scripts from files.
    Pgbench(crate::workload::script::size::PgbenchSize) = "pgbench";
}
