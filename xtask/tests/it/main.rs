//! The command-line tests of xtask, one binary: a module per topic.

mod cli;
mod foreign;
mod recipes;
