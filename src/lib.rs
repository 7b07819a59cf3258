//! cmdguard as a library: the engine behind the binary (analysis, rules, decisions), exposed for
//! the binary, the integration tests and the benchmarks. The command line lives in `main.rs`.

pub mod approval;
pub mod blast;
pub mod cli;
pub mod cmd;
pub mod config;
pub mod decide;
pub mod exec;
pub mod exit;
pub mod report;
pub mod rules;
pub mod shell;
pub mod signals;
pub mod state;
pub mod term;
