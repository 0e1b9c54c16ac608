//! The integration tests of the steps crate, one binary: a module per topic.

mod advise;
mod analyze_golden;
mod history;
mod reliability;
mod small_table;
mod spv;
mod tidy;
mod tprocc;
